"""What to do after an error, as data: an `Action`, and the field or detail it needs.

Each way in words a suggestion in its own terms: MCP names its tools, the command line its
commands, the web view its controls. `str(suggestion)` is the library's wording, naming the
`NinePlan` calls an embedder makes.
"""

import enum
from collections.abc import Mapping

import attrs


class Action(enum.Enum):
    """The next step an error suggests; the value is stable for callers that switch on it."""

    START_SESSION = "start_session"
    """Create a session or resume one (none is selected, or none has that name)."""
    NAME_SESSION = "name_session"
    """Name the session on every call (the transport keeps no current one)."""
    RESUME_SESSION = "resume_session"
    """Resume the session of that name, or create another."""
    SEARCH_HISTORY = "search_history"
    """Search the completed plans to find the right id."""
    SEE_QUEUE = "see_queue"
    """Look at the queued and active plans to find the right id."""
    SEE_SESSION = "see_session"
    """Look at where the session stands now."""
    PULL_PLAN = "pull_plan"
    """Pull the next plan: nothing is active."""
    FINISH_ACTIVE_PLAN = "finish_active_plan"
    """Complete, defer or discard the active plan before pulling another."""
    ADD_PLANS = "add_plans"
    """Add plans, then pull one: none was ever added."""
    ADD_MORE_PLANS = "add_more_plans"
    """Add more plans if work remains: the queue is worked through."""
    WAIT_FOR_PREREQUISITES = "wait_for_prerequisites"
    """Pull again once the plans the queued ones wait for are settled, or add work that
    waits for nothing: every queued plan waits for a plan still active."""
    TAKE_OVER = "take_over"
    """Take over the stale plan `plan_id` names (a worker's way on), or leave it to a person."""
    CORRECT_FIELD = "correct_field"
    """Correct the argument `field` names and try again."""
    MAKE_ROOM = "make_room"
    """Work the queue down before adding more: it is full."""
    LEAVE_TO_AGENT = "leave_to_agent"
    """The active plan is the agent's to finish; a person steers the queued ones."""
    KEEP_SECTIONS = "keep_sections"
    """Keep a plan file's section headers when editing it."""
    RETRY = "retry"
    """Make the same call again."""
    RETRY_BUSY = "retry_busy"
    """Make the same call again: another client was writing to the session."""
    RETRY_OR_VALIDATE = "retry_or_validate"
    """Make the call again; if it fails again, validate the session."""
    FIX_STORAGE = "fix_storage"
    """Put the storage right (space, permissions, the database server), as `detail` says."""
    UPGRADE = "upgrade"
    """Install a newer nineplan, as `detail` says: the stored data is newer than this one."""
    ADVICE = "advice"
    """Do what `detail` says: a suggestion given as plain text (an adapter of one's own that
    passes `suggestion="..."`), worded alike on every way in."""


#: The actions that are a machine's operator's to take: their `detail` says what to do, in
#: words that are the same on every way in.
OPERATOR_ACTIONS = frozenset({Action.FIX_STORAGE, Action.UPGRADE, Action.ADVICE})

#: How a way in words each action: `{field}`, `{detail}` and the way in's own context
#: (`{name}` on the command line) are filled in.
Words = Mapping[Action, str]


def _needs_field(suggestion: "Suggestion", _: "attrs.Attribute[str]", field: str) -> None:
    if (suggestion.action is Action.CORRECT_FIELD) != bool(field):
        raise ValueError("a field is given exactly when the action is to correct it")


def _needs_detail(suggestion: "Suggestion", _: "attrs.Attribute[str]", detail: str) -> None:
    if (suggestion.action in OPERATOR_ACTIONS) != bool(detail):
        raise ValueError("a detail is given exactly when the action is an operator's")


def _needs_plan(suggestion: "Suggestion", _: "attrs.Attribute[str]", plan_id: str) -> None:
    if (suggestion.action is Action.TAKE_OVER) != bool(plan_id):
        raise ValueError("a plan id is given exactly when the action is to take that plan over")


@attrs.frozen
class Suggestion:
    """One error's suggested next step: the action, the field to correct, and for an
    operator's action the free-text detail of what to do."""

    action: Action
    field: str = attrs.field(default="", validator=_needs_field, kw_only=True)
    detail: str = attrs.field(default="", validator=_needs_detail, kw_only=True)
    plan_id: str = attrs.field(default="", validator=_needs_plan, kw_only=True)

    def worded(self, words: Words, **context: str) -> str:
        """This suggestion in one way in's `words`, with its `context` filled in."""
        return words[self.action].format(
            field=self.field, detail=self.detail, plan_id=self.plan_id, **context
        )

    def __str__(self) -> str:
        """The library's wording: the `NinePlan` calls to make."""
        return self.worded(LIBRARY_WORDS)


#: The library's wording: what an embedder calls on `NinePlan`.
LIBRARY_WORDS: Words = {
    Action.START_SESSION: "Create a session with create_session or resume one with "
    "session_state. list_sessions lists sessions.",
    Action.NAME_SESSION: "Pass session_name on every call (list_sessions lists them).",
    Action.RESUME_SESSION: "Resume it with session_state or create another.",
    Action.SEARCH_HISTORY: "Use search_history to find completed plans and their ids.",
    Action.SEE_QUEUE: "Use session_state to see the queued and active plans.",
    Action.SEE_SESSION: "Check the session with session_state.",
    Action.PULL_PLAN: "Pull the next plan with pull_plan.",
    Action.FINISH_ACTIVE_PLAN: "Finish it with complete_plan, or use defer_plan or "
    "discard_plan, then pull again.",
    Action.ADD_PLANS: "Add plans with add_plan, then pull_plan.",
    Action.ADD_MORE_PLANS: "Add more plans with add_plan if work remains.",
    Action.WAIT_FOR_PREREQUISITES: "Pull again with pull_plan once the plans they wait for "
    "are completed or discarded, or add work that waits for nothing with add_plan.",
    Action.CORRECT_FIELD: "Correct {field} and call again.",
    Action.MAKE_ROOM: "Work the queue down (pull_plan, then complete_plan or discard_plan) "
    "before adding more.",
    Action.TAKE_OVER: 'Take the stale plan over with pull_plan(take_over="{plan_id}"), or add '
    "more plans with add_plan if work remains.",
    Action.LEAVE_TO_AGENT: "Let the agent defer, complete or discard it; steer the queued plans.",
    Action.KEEP_SECTIONS: "Keep the '# Section' headers intact when editing a plan file.",
    Action.RETRY: "Retry the call.",
    Action.RETRY_BUSY: "Retry the call; another client is writing to this session.",
    Action.RETRY_OR_VALIDATE: "Retry; if it persists, run validate_session or inspect the "
    "session database.",
    Action.FIX_STORAGE: "{detail}",
    Action.UPGRADE: "{detail}",
    Action.ADVICE: "{detail}",
}
