"""build_server(): the 9plan MCP server over the use cases."""

import json
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import pydantic
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.types import CallToolResult, Resource

from nineplan_adapters.changes import SessionChanges
from nineplan_adapters.mcp import views
from nineplan_adapters.mcp.clients import CurrentSessions
from nineplan_adapters.mcp.results import error_result, error_text, label_for
from nineplan_adapters.mcp.text import INSTRUCTIONS, bootstrap_prompt
from nineplan_adapters.mcp.tools import register_tools
from nineplan_adapters.mcp.uris import PLAN_URI, STATE_URI
from nineplan_adapters.mcp.wayback import Notifier, Subscribers, following, install
from nineplan_core.errors import NinePlanError
from nineplan_core.service import NinePlan

SERVER_NAME = "9plan"
_NOT_FOUND = {"SESSION_NOT_FOUND", "PLAN_NOT_FOUND", "VALIDATION_ERROR"}


def package_version() -> str:
    try:
        return version("nineplan")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0"


class NineplanServer(MCPServer[Any]):
    """MCPServer whose argument-validation failures come back in nineplan's error format."""

    def __init__(
        self, service: NinePlan, sessions: CurrentSessions, changes: SessionChanges | None = None
    ) -> None:
        bus = InMemorySubscriptionBus()
        self.notifier = Notifier(changes, bus, Subscribers(), sessions.in_use)
        super().__init__(
            SERVER_NAME,
            version=package_version(),
            instructions=INSTRUCTIONS,
            subscriptions=bus,
            lifespan=lambda _: following(self.notifier),
        )
        self.service = service
        self.sessions = sessions

    async def run_stdio_async(self) -> None:
        """Serve stdio, telling legacy clients that resources/list_changed is sent."""
        low = self._lowlevel_server
        options = low.create_initialization_options(NotificationOptions(resources_changed=True))
        async with stdio_server() as (read_stream, write_stream):
            await low.run(read_stream, write_stream, options)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError):
                raise
            headers = context.headers if context is not None else None
            label = label_for(arguments.get("session_name"), headers, self.sessions)
            cause = exc.__cause__
            if isinstance(cause, pydantic.ValidationError):
                return error_result(
                    label,
                    "VALIDATION_ERROR",
                    _describe(cause),
                    "Correct the named arguments and call again.",
                )
            return error_result(
                label, "VALIDATION_ERROR", str(exc), "Call one of the tools that tools/list names."
            )

    async def list_resources(self) -> list[Resource]:
        """The static resources, each session's state, and the plan files of current sessions."""
        listed = await super().list_resources()
        try:
            names = [summary.session.name for summary in await self.service.list_sessions()]
            listed += [_state_resource(name) for name in names]
            for name in sorted(self.sessions.in_use() & set(names)):
                state = await self.service.session_state(name)
                plans = [(entry.id, entry.goal) for entry in state.queue]
                if state.active_plan is not None:
                    plans.insert(0, (state.active_plan.id, state.active_plan.goal))
                listed += [_plan_resource(name, plan_id, goal) for plan_id, goal in plans]
        except NinePlanError:
            pass  # a listing is best effort; reading a resource reports its own error
        return listed


def _describe(error: pydantic.ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
        for item in error.errors()
    )


def _state_resource(name: str) -> Resource:
    return Resource(
        uri=STATE_URI.format(session=name),
        name=f"{name} state",
        description=f"Queue, active plan and counts of session {name}",
        mime_type="application/json",
    )


def _plan_resource(name: str, plan_id: str, goal: str) -> Resource:
    return Resource(
        uri=PLAN_URI.format(session=name, plan_id=plan_id),
        name=f"{name} plan {plan_id}",
        description=goal[:200],
        mime_type="text/markdown",
    )


def _resource_error(exc: NinePlanError, session: str) -> ResourceError:
    text = error_text(session, exc.category, exc.message, exc.suggestion)
    return ResourceNotFoundError(text) if exc.category in _NOT_FOUND else ResourceError(text)


def build_server(
    service: NinePlan,
    sessions: CurrentSessions | None = None,
    *,
    workspace: str | None = None,
    changes: SessionChanges | None = None,
) -> NineplanServer:
    """A fresh 9plan server over `service`; `sessions` keeps each client's current session.

    `workspace`: the folder the sessions this server creates belong to (a stdio server's
    working directory; None over HTTP, where the server's folder says nothing of its clients').
    `changes`: where subscribers' notifications come from (none: subscriptions never fire).
    """
    server = NineplanServer(service, sessions or CurrentSessions(), changes)
    register_tools(server, service, server.sessions, workspace=workspace)

    @server.prompt(
        name="bootstrap",
        description="Set up a 9plan session for a complex task: the planning workflow.",
    )
    def bootstrap(task: str | None = None) -> str:
        return bootstrap_prompt(task)

    @server.resource(
        PLAN_URI,
        name="plan",
        description="A queued or active plan's file",
        mime_type="text/markdown",
    )
    async def plan_file(session: str, plan_id: str) -> str:
        try:
            return await service.plan_file_text(session, plan_id)
        except NinePlanError as exc:
            raise _resource_error(exc, session) from exc

    @server.resource(
        STATE_URI,
        name="state",
        description="A session's state as JSON",
        mime_type="application/json",
    )
    async def session_state(session: str) -> str:
        try:
            return json.dumps(views.admin_state(await service.session_state(session)), indent=2)
        except NinePlanError as exc:
            raise _resource_error(exc, session) from exc

    install(server, service, server.notifier)
    return server


__all__ = ["CallToolResult", "NineplanServer", "build_server"]
