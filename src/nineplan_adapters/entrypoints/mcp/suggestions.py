"""An error's suggestion as an agent on MCP reads it: the tools to call next."""

from nineplan_core.suggestions import Action, Suggestion, Words

#: Each action in the tools' terms (an agent calls `9plan_queue_add`, not `add_plan`).
TOOL_WORDS: Words = {
    Action.START_SESSION: "Create a session with 9plan_session_create or resume one with "
    "9plan_session_resume. 9plan_admin_sessions lists sessions.",
    Action.NAME_SESSION: "Pass session_name on every call (9plan_admin_sessions lists them).",
    Action.RESUME_SESSION: "Resume it with 9plan_session_resume or create another.",
    Action.SEARCH_HISTORY: "Use 9plan_history_search to find completed plans and their ids.",
    Action.SEE_QUEUE: "Use 9plan_session_resume to see the queued and active plans.",
    Action.SEE_SESSION: "Check the session with 9plan_session_resume.",
    Action.PULL_PLAN: "Pull the next plan with 9plan_queue_pull.",
    Action.FINISH_ACTIVE_PLAN: "Finish it with 9plan_plan_complete, or use 9plan_plan_defer or "
    "9plan_plan_discard, then pull again.",
    Action.ADD_PLANS: "Add plans with 9plan_queue_add, then 9plan_queue_pull.",
    Action.ADD_MORE_PLANS: "Add more plans with 9plan_queue_add if work remains.",
    Action.CORRECT_FIELD: "Correct {field} and call again.",
    Action.MAKE_ROOM: "Work the queue down (9plan_queue_pull, then 9plan_plan_complete or "
    "9plan_plan_discard) before adding more.",
    Action.LEAVE_TO_AGENT: "Let the agent defer, complete or discard it; steer the queued plans.",
    Action.KEEP_SECTIONS: "Keep the '# Section' headers intact when editing a plan file.",
    Action.RETRY: "Retry the call.",
    Action.RETRY_BUSY: "Retry the call; another client is writing to this session.",
    Action.RETRY_OR_VALIDATE: "Retry; if it persists, run 9plan_admin_validate or inspect the "
    "session database.",
    Action.FIX_STORAGE: "{detail}",
    Action.UPGRADE: "{detail}",
    Action.ADVICE: "{detail}",
}


def for_agents(suggestion: Suggestion) -> str:
    """`suggestion` in the tools' words."""
    return suggestion.worded(TOOL_WORDS)
