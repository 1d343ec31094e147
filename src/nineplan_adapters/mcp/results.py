"""The one translation of errors into tool results, in the reference text format."""

import logging
import re
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import attrs
from mcp.types import CallToolResult, ContentBlock, TextContent

from nineplan_adapters.mcp.clients import CurrentSessions, client_key
from nineplan_core.errors import NinePlanError, SessionNameRequiredError, SessionNotFoundError
from nineplan_core.model import SESSION_NAME, check_session_name

log = logging.getLogger("nineplan.mcp")

NO_SESSION = "none"

# Domain errors suggest library calls; an agent on MCP reads the tool that does the same.
TOOL_FOR_CALL = {
    "create_session": "9plan_session_create",
    "session_state": "9plan_session_resume",
    "list_sessions": "9plan_admin_sessions",
    "add_plan": "9plan_queue_add",
    "pull_plan": "9plan_queue_pull",
    "defer_plan": "9plan_plan_defer",
    "complete_plan": "9plan_plan_complete",
    "discard_plan": "9plan_plan_discard",
    "search_history": "9plan_history_search",
    "get_history": "9plan_history_get",
    "validate_session": "9plan_admin_validate",
}
_CALL = re.compile(rf"\b({'|'.join(TOOL_FOR_CALL)})\b")
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


def for_agents(text: str) -> str:
    """`text` with each library call it names replaced by the MCP tool that does the same."""
    return _CALL.sub(lambda match: TOOL_FOR_CALL[match[1]], text)


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


@attrs.define
class ToolCall:
    """One tool call: resolves its session, and turns whatever it raises into a result.

    Use as `async with call: ...; call.succeed(text, view)` and return `call.result`.
    A NinePlanError becomes the reference error text; anything else is a bug, logged with
    its traceback and reported without one.
    """

    tool: str
    explicit: str | None
    headers: Mapping[str, str] | None
    sessions: CurrentSessions
    result: CallToolResult | None = None

    @property
    def label(self) -> str:
        return label_for(self.explicit, self.headers, self.sessions)

    @property
    def session(self) -> str:
        """The session this call addresses.

        Raises:
            InvalidInputError: an explicit name of the wrong shape.
            SessionNameRequiredError: no name and a transport without client identity.
            SessionNotFoundError: no name and no current session.
        """
        if self.explicit is not None:
            return check_session_name(self.explicit)
        key = client_key(self.headers)
        if key is None:
            raise SessionNameRequiredError
        if (name := self.sessions.current(key)) is None:
            raise SessionNotFoundError(None)
        return name

    def make_current(self, name: str) -> None:
        """Make `name` this client's current session (create and resume do)."""
        if (key := client_key(self.headers)) is not None:
            self.sessions.select(key, name)

    def succeed(
        self,
        text: str,
        structured: Mapping[str, Any],
        *,
        label: str | None = None,
        extra: Sequence[ContentBlock] = (),
    ) -> None:
        """The result: the breadcrumbed text, then `extra` blocks (resource links)."""
        self.result = CallToolResult(
            content=[
                TextContent(type="text", text=f"[Session: {label or self.label}] {text}"),
                *extra,
            ],
            structured_content=dict(structured),
        )

    @property
    def outcome(self) -> CallToolResult:
        """The result to return once the `async with` block has ended."""
        if self.result is None:  # pragma: no cover - a tool that forgot to succeed()
            raise RuntimeError(f"{self.tool} produced no result")
        return self.result

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, _: TracebackType | None
    ) -> bool:
        if isinstance(exc, NinePlanError):
            log.info("tool %s refused: %s %s", self.tool, exc.category, exc.message)
            self.result = error_result(
                self.label, exc.category, exc.message, for_agents(exc.suggestion)
            )
            return True
        if isinstance(exc, Exception):
            log.error("tool %s failed", self.tool, exc_info=(kind, exc, exc.__traceback__))  # type: ignore[arg-type] # kind is set when exc is
            self.result = error_result(
                self.label,
                "INTERNAL_ERROR",
                f"{self.tool} failed unexpectedly; the details are in the server log.",
                "Check the session with 9plan_admin_validate, then retry.",
            )
            return True
        return False
