"""A tool call's view of the server, and the one translation of errors into tool results
(in the reference text format)."""

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Self

import attrs
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ContentBlock, TextContent

from nineplan_adapters.entrypoints.mcp.clients import CurrentSessions, client_key
from nineplan_adapters.entrypoints.mcp.leases import LeaseKeeper
from nineplan_adapters.entrypoints.mcp.render import Renderer, text_of
from nineplan_adapters.entrypoints.mcp.suggestions import for_agents
from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES, ToolNames
from nineplan_adapters.entrypoints.workspace import WorkspaceSources
from nineplan_core.callers import AGENT, Caller
from nineplan_core.errors import NinePlanError, SessionNameRequiredError, SessionNotFoundError
from nineplan_core.model import SESSION_NAME
from nineplan_core.service import NinePlan

log = logging.getLogger("nineplan.mcp")

NO_SESSION = "none"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "category": {"type": "string"},
        "message": {"type": "string"},
        "suggestion": {"type": "string"},
        "session_name": {"type": ["string", "null"]},
    },
    "required": ["category", "message", "suggestion", "session_name"],
}


def error_text(label: str, category: str, message: str, suggestion: str) -> str:
    """`[Session: NAME] Error: CATEGORY`, the message, and the suggested action."""
    return f"[Session: {label}] Error: {category}\n\n{message}\n\nSuggested action: {suggestion}"


def error_result(label: str, category: str, message: str, suggestion: str) -> CallToolResult:
    """The error text, and the same as structured content (ERROR_SCHEMA)."""
    return CallToolResult(
        content=[TextContent(type="text", text=error_text(label, category, message, suggestion))],
        structured_content={
            "category": category,
            "message": message,
            "suggestion": suggestion,
            "session_name": None if label == NO_SESSION else label,
        },
        is_error=True,
    )


def label_for(
    explicit: object, headers: Mapping[str, str] | None, sessions: CurrentSessions
) -> str:
    """The breadcrumb for a call: its explicit session if well-formed, else the current one."""
    if isinstance(explicit, str) and SESSION_NAME.fullmatch(explicit):
        return explicit
    key = client_key(headers)
    return (sessions.current(key) if key else None) or NO_SESSION


@attrs.frozen
class ToolDeps:
    """What every tool needs, yielded by the server's lifespan: the use cases, the current
    session of each client, the workspace the sessions it creates belong to, and the tools'
    names (NINEPLAN_TOOL_PREFIX) that its texts use."""

    service: NinePlan
    sessions: CurrentSessions
    #: Where the workspace of the sessions it creates comes from, beside the client's roots
    #: (NINEPLAN_WORKSPACE and the working directory on stdio; nothing over HTTP).
    workspace: WorkspaceSources = attrs.field(factory=WorkspaceSources)
    names: ToolNames = DEFAULT_NAMES
    #: Renews a worker's lease while its plan file changes (docs/architecture.md, "Workers and leases"); none outside a
    #: running server.
    leases: LeaseKeeper | None = None


#: The context a tool is given: its lifespan context is the ToolDeps.
ToolContext = Context[ToolDeps, Any]
ToolFunction = Callable[..., Awaitable[CallToolResult]]


@attrs.frozen
class ToolCall:
    """One tool call: the use cases, and the session it addresses."""

    deps: ToolDeps
    explicit: str | None
    headers: Mapping[str, str] | None
    #: Who calls: the tool's `worker` and `request_id` arguments, read once, here.
    caller: Caller = AGENT

    @classmethod
    def of(
        cls,
        ctx: ToolContext,
        explicit: str | None = None,
        *,
        worker: str | None = None,
        request_id: str | None = None,
    ) -> Self:
        """The call `ctx` belongs to; `explicit` is its `session_name` argument, `worker` and
        `request_id` its arguments of those names (checked here, once).

        Raises:
            InvalidInputError: a worker or request id of the wrong shape.
        """
        caller = Caller.of(worker, request_id=request_id)
        return cls(ctx.request_context.lifespan_context, explicit, ctx.headers, caller)

    @property
    def service(self) -> NinePlan:
        return self.deps.service

    @property
    def names(self) -> ToolNames:
        return self.deps.names

    def fill(self, template: str) -> str:
        """`template` with its `{queue_pull}`-style fields the server's tool names."""
        return self.deps.names.fill(template)

    @property
    def label(self) -> str:
        return label_for(self.explicit, self.headers, self.deps.sessions)

    @property
    def current(self) -> str | None:
        """This client's current session, if it has one (none without client identity)."""
        key = client_key(self.headers)
        return self.deps.sessions.current(key) if key else None

    @property
    def session(self) -> str:
        """The session this call addresses: the explicit name as given (the use case checks
        it), else the client's current one.

        Raises:
            SessionNameRequiredError: no name and a transport without client identity.
            SessionNotFoundError: no name and no current session.
        """
        if self.explicit is not None:
            return self.explicit
        key = client_key(self.headers)
        if key is None:
            raise SessionNameRequiredError
        if (name := self.deps.sessions.current(key)) is None:
            raise SessionNotFoundError(None)
        return name

    def make_current(self, name: str) -> None:
        """Make `name` this client's current session (create and resume do)."""
        if (key := client_key(self.headers)) is not None:
            self.deps.sessions.select(key, name)

    def succeed(
        self,
        render: Renderer,
        view: Mapping[str, Any],
        notices: Sequence[str] = (),
        *,
        label: str | None = None,
        extra: Sequence[ContentBlock] = (),
        scoped: bool = True,
    ) -> CallToolResult:
        """The result of a session-scoped tool (`scoped`): `view` as structured content with the
        session's name and `notices` (then what reading the caller's plan file back salvaged
        since its last call, when the lease keeper has such lines); the text is the breadcrumb,
        `render(view)` and the notices (`render.text_of`); then `extra` blocks (resource
        links). A tool that names no session (`admin_sessions`) carries neither."""
        label = label or self.label
        said = list(notices)
        structured = dict(view)
        if scoped:
            if self.deps.leases is not None:  # a line the call already says is said once
                salvaged = self.deps.leases.salvaged(label, self.caller.holder)
                said += [line for line in salvaged if line not in said]
            structured = {"session_name": label, **structured, "notices": said}
        return CallToolResult(
            content=[
                TextContent(type="text", text=text_of(label, render(view), said)),
                *extra,
            ],
            structured_content=structured,
        )


def domain_errors_as_results(tool: str, function: ToolFunction) -> ToolFunction:
    """`function` (a tool taking `ctx`) with whatever it raises turned into a result by
    `refusal`: the only error translation of the tools."""

    @functools.wraps(function)
    async def translated(**arguments: Any) -> CallToolResult:
        try:
            return await function(**arguments)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a result; refusal logs a bug
            call = ToolCall.of(arguments["ctx"], arguments.get("session_name"))
            return refusal(tool, call.label, exc, call.names)

    return translated


def refusal(
    tool: str, label: str, exc: Exception, names: ToolNames = DEFAULT_NAMES
) -> CallToolResult:
    """What `tool` returns when it raised `exc`; its suggestion names the tools as `names` does.

    A NinePlanError becomes the reference error text; anything else is a bug, logged with
    its traceback and reported without one.
    """
    if isinstance(exc, NinePlanError):
        log.info("tool %s refused: %s %s", tool, exc.category, exc.message)
        return error_result(label, exc.category, exc.message, for_agents(exc.suggestion, names))
    log.error("tool %s failed", tool, exc_info=exc)
    return error_result(
        label,
        "INTERNAL_ERROR",
        f"{tool} failed unexpectedly; the details are in the server log.",
        f"Check the session with {names['admin_validate']}, then retry.",
    )
