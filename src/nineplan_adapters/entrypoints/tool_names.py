"""The MCP tools' names: NINEPLAN_TOOL_PREFIX before each tool's own part.

The one place that knows the prefix. Every text that names a tool (the server's instructions,
the prompts, suggestions, results, `nineplan prime`) is a template with `{queue_pull}`-style
fields that `ToolNames.fill` completes, so a server started with `NINEPLAN_TOOL_PREFIX=nineplan_`
never tells an agent to call a `9plan_` tool. It imports nothing of `mcp`: `prime` uses it.
"""

import attrs

from nineplan_adapters.config import DEFAULT_TOOL_PREFIX, TOOL_PREFIX_PATTERN

#: Each tool's own part of its name, in the order tools/list gives them.
SHORT_NAMES = (
    "session_create",
    "session_resume",
    "queue_add",
    "queue_add_many",
    "queue_pull",
    "plan_defer",
    "plan_complete",
    "plan_discard",
    "history_search",
    "history_get",
    "admin_validate",
    "admin_sessions",
    "admin_state",
)


def _valid_prefix(_: object, __: "attrs.Attribute[str]", prefix: str) -> None:
    if not TOOL_PREFIX_PATTERN.fullmatch(prefix):
        raise ValueError(f"not a tool prefix: {prefix!r}")


@attrs.frozen
class ToolNames:
    """The tools' names under one prefix (Settings.tool_prefix)."""

    prefix: str = attrs.field(default=DEFAULT_TOOL_PREFIX, validator=_valid_prefix)

    def __getitem__(self, short: str) -> str:
        """The full name of the tool whose own part is `short` (`queue_pull`).

        Raises:
            KeyError: no tool is called so.
        """
        if short not in SHORT_NAMES:
            raise KeyError(short)
        return self.prefix + short

    @property
    def fields(self) -> dict[str, str]:
        """Each tool's own part to its full name: the fields of a template."""
        return {short: self.prefix + short for short in SHORT_NAMES}

    def fill(self, template: str, **more: str) -> str:
        """`template` with each `{queue_pull}`-style field the tool's full name, and `more`."""
        return template.format(**self.fields, **more)

    def resume_call(self, session_name: str, worker: str | None = None) -> str:
        """The call that takes a session back up (what the `resume` prompt and `nineplan
        prime` print); with `worker` (a subagent's, or `main` beside others), as that worker."""
        named = "" if worker is None else f', worker="{worker}"'
        return f'{self["session_resume"]}(session_name="{session_name}"{named})'


#: The reference's names (`9plan_queue_pull`), as a server without NINEPLAN_TOOL_PREFIX has them.
DEFAULT_NAMES = ToolNames()
