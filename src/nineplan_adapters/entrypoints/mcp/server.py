"""build_server(): the 9plan MCP server over the use cases."""

import json
import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager, nullcontext
from typing import Any

import pydantic
from mcp import MCPError
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    GetPromptResult,
    InputRequiredResult,
    Resource,
    Tool,
)
from pydantic import AnyUrl

from nineplan_adapters.entrypoints import views
from nineplan_adapters.entrypoints.journal_views import journal_entry
from nineplan_adapters.entrypoints.mcp.changes import JournalChanges, SessionChanges
from nineplan_adapters.entrypoints.mcp.clients import CurrentSessions
from nineplan_adapters.entrypoints.mcp.leases import LeaseKeeper
from nineplan_adapters.entrypoints.mcp.results import (
    ERROR_SCHEMA,
    ToolDeps,
    error_result,
    error_text,
    label_for,
)
from nineplan_adapters.entrypoints.mcp.stdio import serve_stdio
from nineplan_adapters.entrypoints.mcp.suggestions import for_agents
from nineplan_adapters.entrypoints.mcp.text import bootstrap_prompt, instructions
from nineplan_adapters.entrypoints.mcp.tools import PLAN_ID_PATTERN, WORKER_PATTERN, built_tools
from nineplan_adapters.entrypoints.mcp.uris import LOG_URI, PLAN_MIME_TYPE, PLAN_URI, STATE_URI
from nineplan_adapters.entrypoints.mcp.wayback import Notifier, Subscribers, following, install
from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES, ToolNames
from nineplan_adapters.entrypoints.workspace import WorkspaceSources
from nineplan_adapters.version import package_version
from nineplan_core.errors import NinePlanError
from nineplan_core.journal import EventQuery
from nineplan_core.model import PLAN_ID_RULE
from nineplan_core.service import NinePlan
from nineplan_core.workers import WORKER_RULE

log = logging.getLogger("nineplan.mcp")

SERVER_NAME = "9plan"
#: How many events the log resource holds (the newest; as `nineplan log` prints by default).
LOG_EVENTS = 100
_NOT_FOUND = {"SESSION_NOT_FOUND", "PLAN_NOT_FOUND", "VALIDATION_ERROR"}
# MCP's "resource not found" until 2025-11-25; the 2026-07-28 protocol retires it for -32602.
RESOURCE_NOT_FOUND = -32002
SESSIONLESS_ERA = "2026-07-28"


class NineplanServer(MCPServer[ToolDeps]):
    """MCPServer whose argument-validation failures come back in nineplan's error format.

    Its lifespan runs the notifier and yields the ToolDeps (the use cases, each client's
    current session, the workspace, the tools' names): the tools read them from their context.
    """

    def __init__(
        self,
        service: NinePlan,
        sessions: CurrentSessions,
        changes: SessionChanges | None = None,
        *,
        workspace: WorkspaceSources | None = None,
        names: ToolNames = DEFAULT_NAMES,
    ) -> None:
        bus = InMemorySubscriptionBus()
        self.notifier = Notifier(changes, bus, Subscribers(), sessions.in_use)
        self.deps = ToolDeps(
            service, sessions, workspace or WorkspaceSources(), names, LeaseKeeper(service)
        )
        super().__init__(
            SERVER_NAME,
            version=package_version(),
            instructions=instructions(names),
            subscriptions=bus,
            lifespan=self._lifespan,
            tools=list(built_tools(names)),
        )
        self.service = service
        self.sessions = sessions
        _announce_list_changes(self._lowlevel_server)
        self._tools: list[Tool] | None = None
        self._arguments: dict[str, frozenset[str]] | None = None  # each tool's argument names

    @asynccontextmanager
    async def _lifespan(self, _: object) -> AsyncIterator[ToolDeps]:
        """The notifier and the lease keeper's watches run for as long as the server does;
        the tools get the ToolDeps."""
        leases = self.deps.leases
        async with following(self.notifier), leases.running() if leases else nullcontext():
            yield self.deps

    async def list_tools(self) -> list[Tool]:
        """The tools with strict, compact input schemas and outputs that may be errors."""
        if self._tools is None:
            self._tools = [
                tool.model_copy(
                    update={
                        "input_schema": strict_input_schema(tool.input_schema),
                        "output_schema": success_or_error(tool.output_schema),
                    }
                )
                for tool in await super().list_tools()
            ]
        return self._tools

    async def get_prompt(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        context: Context[Any, Any] | None = None,
    ) -> GetPromptResult | InputRequiredResult:
        """The SDK's get_prompt, after the checks a client's mistake deserves: an unknown
        prompt, a missing or an unknown argument is an invalid-params error (-32602) naming
        what to change, not an internal error."""
        if (problem := await self._prompt_problem(name, arguments or {})) is not None:
            log.warning("prompts/get refused: %s", problem)  # the client's mistake: one line
            raise MCPError(INVALID_PARAMS, problem)
        return await super().get_prompt(name, arguments, context)

    async def _prompt_problem(self, name: str, arguments: dict[str, Any]) -> str | None:
        """What is wrong with asking for prompt `name` with `arguments`; None if nothing."""
        prompts = {prompt.name: prompt for prompt in await self.list_prompts()}
        if (prompt := prompts.get(name)) is None:
            return f"Unknown prompt {name!r}; the prompts are {', '.join(sorted(prompts))}."
        expected = {argument.name: argument.required for argument in prompt.arguments or []}
        if missing := sorted(
            key for key, needed in expected.items() if needed and key not in arguments
        ):
            return f"Prompt {name!r} needs {', '.join(missing)}."
        if unknown := sorted(arguments.keys() - expected.keys()):
            takes = ", ".join(sorted(expected)) or "none"
            return f"{', '.join(unknown)}: not an argument of prompt {name!r}, which takes {takes}."
        return None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        headers = context.headers if context is not None else None
        if self._arguments is None:
            self._arguments = {
                tool.name: frozenset(tool.input_schema["properties"])
                for tool in await self.list_tools()
            }
        listed = self._arguments
        if name in listed and (unknown := sorted(set(arguments) - listed[name])):
            return error_result(
                label_for(arguments.get("session_name"), headers, self.sessions),
                "VALIDATION_ERROR",
                f"{', '.join(unknown)}: not an argument of {name}, which takes "
                f"{', '.join(sorted(listed[name])) or 'none'}",
                "Correct the named arguments and call again.",
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError):
                raise
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
            listed += [_log_resource(name) for name in names]
            for name in sorted(self.sessions.in_use() & set(names)):
                state = await self.service.session_state(name)
                plans = [(entry.id, entry.goal) for entry in state.queue]
                plans[:0] = [(hold.plan.id, hold.plan.goal) for hold in state.active_plans]
                listed += [_plan_resource(name, plan_id, goal) for plan_id, goal in plans]
        except NinePlanError:
            pass  # a listing is best effort; reading a resource reports its own error
        return listed

    async def run_stdio_async(self) -> None:
        """Serve on stdio (nineplan_adapters.entrypoints.mcp.stdio: a line that is not JSON-RPC
        gets a parse error, a stray print misses the wire)."""
        lowlevel = self._lowlevel_server
        await serve_stdio(lowlevel, lowlevel.create_initialization_options())

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        """A resource's contents; an unknown one is -32002 for clients before 2026-07-28."""
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError as exc:
            era = context.protocol_version if context is not None else None
            if era is not None and era < SESSIONLESS_ERA:
                raise MCPError(
                    code=RESOURCE_NOT_FOUND, message=str(exc), data={"uri": str(uri)}
                ) from exc
            raise


#: What the tools' argument models check but tools/list leaves out: titles repeat the names, and a
#: length bound no agent's argument comes near (a retry key's 128, a worker's 40) costs every
#: conversation tokens; a call past one is still refused with an error naming the limit.
UNLISTED = frozenset({"title", "maxLength", "minLength"})


def strict_input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` refusing unknown arguments, without the titles, length bounds and null branches
    that only cost agents tokens: an optional argument is its plain type (docs/tools.md)."""
    properties = {}
    for name, listed in schema.get("properties", {}).items():
        spec = listed if name in schema.get("required", []) else plain_optional(listed)
        properties[name] = {key: value for key, value in spec.items() if key not in UNLISTED}
    compact = {key: value for key, value in schema.items() if key not in {"title", "properties"}}
    return {**compact, "properties": properties, "additionalProperties": False}


NULL = {"type": "null"}


def plain_optional(spec: dict[str, Any]) -> dict[str, Any]:
    """An optional argument's schema as its plain type: pydantic's `T | None = None` is
    `{"anyOf": [T, {"type": "null"}], "default": null}`, and becomes T, with no default.

    Only what the model reads changes: the tool's arguments model still takes an explicit
    null as absent. A default other than null (`position`'s `back`) is kept: it says
    something."""
    if "default" not in spec or spec["default"] is not None:
        return spec
    plain = {key: value for key, value in spec.items() if key not in {"default", "anyOf"}}
    branches = [branch for branch in spec.get("anyOf", []) if branch != NULL]
    if len(branches) == 1:
        return {**branches[0], **plain}
    if branches:
        plain["anyOf"] = branches
    return plain


def success_or_error(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The tool's success view or nineplan's error object, under a root `type: object`."""
    if schema is None:
        return None
    success = {key: value for key, value in schema.items() if key != "$defs"}
    combined: dict[str, Any] = {"type": "object", "anyOf": [success, ERROR_SCHEMA]}
    if "$defs" in schema:
        combined["$defs"] = schema["$defs"]
    return combined


#: What an argument's pattern asks for, in words: an agent is told this, never the regex.
PATTERN_WORDS = {WORKER_PATTERN: WORKER_RULE, PLAN_ID_PATTERN: PLAN_ID_RULE}


def _describe(error: pydantic.ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {_said(item)}"
        for item in error.errors()
    )


def _said(item: Any) -> str:
    """One pydantic error in words: a pattern that is not met says what it wants."""
    if item["type"] == "string_pattern_mismatch":
        return PATTERN_WORDS.get(str((item.get("ctx") or {}).get("pattern")), str(item["msg"]))
    return str(item["msg"])


def _state_resource(name: str) -> Resource:
    return Resource(
        uri=STATE_URI.format(session=name),
        name=f"{name} state",
        description=f"Queue, active plan and counts of session {name}",
        mime_type="application/json",
    )


def _log_resource(name: str) -> Resource:
    return Resource(
        uri=LOG_URI.format(session=name),
        name=f"{name} log",
        description=f"The last {LOG_EVENTS} journal events of session {name}, oldest first",
        mime_type="application/json",
    )


def _plan_resource(name: str, plan_id: str, goal: str) -> Resource:
    return Resource(
        uri=PLAN_URI.format(session=name, plan_id=plan_id),
        name=f"{name} plan {plan_id}",
        description=goal[:200],
        mime_type=PLAN_MIME_TYPE,
    )


def _resource_error(exc: NinePlanError, session: str, names: ToolNames) -> ResourceError:
    text = error_text(session, exc.category, exc.message, for_agents(exc.suggestion, names))
    return ResourceNotFoundError(text) if exc.category in _NOT_FOUND else ResourceError(text)


def build_server(
    service: NinePlan,
    sessions: CurrentSessions | None = None,
    *,
    workspace: WorkspaceSources | None = None,
    changes: SessionChanges | None = None,
    names: ToolNames = DEFAULT_NAMES,
) -> NineplanServer:
    """A fresh 9plan server over `service`; `sessions` keeps each client's current session.

    `workspace`: where the workspace of the sessions this server creates comes from beside
    the client's roots (a stdio server's NINEPLAN_WORKSPACE and working directory; none over
    HTTP, where the server's environment and folder say nothing of its clients').
    `changes`: where subscribers' notifications come from; by default the journal's change
    feed, which sees every process's changes on every backend.
    `names`: the tools' names (NINEPLAN_TOOL_PREFIX), in every text that names a tool.
    """
    server = NineplanServer(
        service,
        sessions or CurrentSessions(),
        changes or JournalChanges(service),
        workspace=workspace,
        names=names,
    )
    _register_prompt_and_resources(server, service)
    install(server, service, server.notifier, names)
    return server


def _announce_list_changes(lowlevel: Server[Any]) -> None:
    """Legacy clients are told, on stdio and over HTTP alike, that resources/list_changed is
    sent (the notifier sends it when plans come or go). The SDK's HTTP session manager builds
    its own initialization options from the low-level server's defaults, so the default is
    what changes."""
    defaults = lowlevel.create_initialization_options

    def with_list_changes(
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return defaults(
            notification_options or NotificationOptions(resources_changed=True),
            experimental_capabilities,
            extensions,
        )

    lowlevel.create_initialization_options = with_list_changes  # type: ignore[method-assign]


def _register_prompt_and_resources(server: NineplanServer, service: NinePlan) -> None:
    """The bootstrap prompt, and each session's plan, state and log resources."""
    names = server.deps.names

    @server.prompt(
        name="bootstrap",
        description="Set up a 9plan session for a complex task: the planning workflow.",
    )
    def bootstrap(task: str | None = None) -> str:
        return bootstrap_prompt(task, names)

    @server.resource(
        PLAN_URI,
        name="plan",
        description="A queued or active plan's file",
        mime_type=PLAN_MIME_TYPE,
    )
    async def plan_file(session: str, plan_id: str) -> str:
        try:
            return await service.plan_file_text(session, plan_id)
        except NinePlanError as exc:
            raise _resource_error(exc, session, names) from exc

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
            raise _resource_error(exc, session, names) from exc

    @server.resource(
        LOG_URI,
        name="log",
        description=f"A session's journal as JSON: its last {LOG_EVENTS} events, oldest first",
        mime_type="application/json",
    )
    async def session_log(session: str) -> str:
        try:
            events = await service.journal(session, EventQuery(last=LOG_EVENTS))
        except NinePlanError as exc:
            raise _resource_error(exc, session, names) from exc
        entries = [journal_entry(event) for event in events]
        return json.dumps({"session_name": session, "events": entries}, indent=2)


__all__ = ["CallToolResult", "NineplanServer", "build_server"]
