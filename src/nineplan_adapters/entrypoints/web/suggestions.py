"""An error's suggestion as a person in the web view reads it: the pages and controls to use."""

from nineplan_core.suggestions import Action, Suggestion, Words

#: Each action in the view's terms; `{label}` is the field as its form labels it.
CONTROL_WORDS: Words = {
    Action.START_SESSION: "The sessions page lists every session.",
    Action.NAME_SESSION: "The sessions page lists every session.",
    Action.RESUME_SESSION: "The sessions page lists it.",
    Action.SEARCH_HISTORY: "The history search on the session page finds completed plans and "
    "their ids.",
    Action.SEE_QUEUE: "The session page shows the queued and active plans.",
    Action.SEE_SESSION: "Reload the session page to see where the session stands.",
    Action.PULL_PLAN: "The agent pulls the next plan; the session page shows the queue.",
    Action.FINISH_ACTIVE_PLAN: "The agent finishes the active plan first; the session page "
    "shows it.",
    Action.ADD_PLANS: "Add plans with the Add a plan form on the session page.",
    Action.ADD_MORE_PLANS: "Add more plans with the Add a plan form if work remains.",
    Action.WAIT_FOR_PREREQUISITES: "The queued plans wait for plans still active; the "
    "session's graph shows what each waits for.",
    Action.CORRECT_FIELD: "Correct the {label} and submit the form again.",
    Action.MAKE_ROOM: "Drop queued plans, or let the agent work the queue down, before adding "
    "more.",
    Action.TAKE_OVER: "Its worker has gone quiet: Release plan {plan_id} to put it back at "
    "the front, or add more plans if work remains.",
    Action.LEAVE_TO_AGENT: "Let the agent defer, complete or discard it; the To front, To back "
    "and Drop buttons steer the queued plans.",
    Action.KEEP_SECTIONS: "Keep the '# Section' headers intact when editing a plan file.",
    Action.RETRY: "Reload the page or submit the form again.",
    Action.RETRY_BUSY: "Try again in a moment; another client is writing to this session.",
    Action.RETRY_OR_VALIDATE: "Try again; if it persists, check the session with the command "
    "nineplan validate, or inspect the session database.",
    Action.FIX_STORAGE: "{detail}",
    Action.UPGRADE: "{detail}",
    Action.ADVICE: "{detail}",
}


def for_people(suggestion: Suggestion) -> str:
    """`suggestion` in the view's words."""
    return suggestion.worded(CONTROL_WORDS, label=suggestion.field.replace("_", " "))
