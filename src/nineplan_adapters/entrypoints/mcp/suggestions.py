"""An error's suggestion as an agent on MCP reads it: the tools to call next."""

from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES, ToolNames
from nineplan_core.suggestions import Action, Suggestion, Words

#: Each action in the tools' terms (an agent calls `{queue_add}`, not `add_plan`); each tool is
#: named by its own part, and `for_agents` fills in the configured names.
TOOL_WORDS: Words = {
    Action.START_SESSION: "Create a session with {session_create} or resume one with "
    "{session_resume}. {admin_sessions} lists sessions.",
    Action.NAME_SESSION: "Pass session_name on every call ({admin_sessions} lists them).",
    Action.RESUME_SESSION: "Resume it with {session_resume} or create another.",
    Action.SEARCH_HISTORY: "Use {history_search} to find completed plans and their ids.",
    Action.SEE_QUEUE: "Use {session_resume} to see the queued and active plans.",
    Action.SEE_SESSION: "Check the session with {session_resume}.",
    Action.PULL_PLAN: "Pull the next plan with {queue_pull}.",
    Action.FINISH_ACTIVE_PLAN: "Finish it with {plan_complete}, or use {plan_defer} or "
    "{plan_discard}, then pull again.",
    Action.ADD_PLANS: "Add plans with {queue_add}, then {queue_pull}.",
    Action.ADD_MORE_PLANS: "Add more plans with {queue_add} if work remains.",
    Action.WAIT_FOR_PREREQUISITES: "Wait: call {queue_pull} again in a minute or two, once "
    "the plans they wait for are completed or discarded. Or add work that waits for nothing "
    "with {queue_add}.",
    Action.CORRECT_FIELD: "Correct {field} and call again.",
    Action.MAKE_ROOM: "Work the queue down ({queue_pull}, then {plan_complete} or "
    "{plan_discard}) before adding more.",
    Action.TAKE_OVER: "Take the stale plan over: call {queue_pull} with your worker and "
    'take_over="{plan_id}". Or add more plans with {queue_add} if work remains.',
    Action.LEAVE_TO_AGENT: "Let the agent defer, complete or discard it; steer the queued plans.",
    Action.KEEP_SECTIONS: "Keep the '# Section' headers intact when editing a plan file.",
    Action.RETRY: "Retry the call.",
    Action.RETRY_BUSY: "Retry the call; another client is writing to this session.",
    Action.RETRY_OR_VALIDATE: "Retry; if it persists, run {admin_validate} or inspect the "
    "session database.",
    Action.FIX_STORAGE: "{detail}",
    Action.UPGRADE: "{detail}",
    Action.ADVICE: "{detail}",
}


def for_agents(suggestion: Suggestion, names: ToolNames = DEFAULT_NAMES) -> str:
    """`suggestion` in the tools' words, the tools named as `names` does."""
    return suggestion.worded(TOOL_WORDS, **names.fields)
