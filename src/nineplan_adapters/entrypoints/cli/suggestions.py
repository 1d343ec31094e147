"""An error's suggestion as a person at the terminal reads it: the `nineplan` commands to run."""

from nineplan_core.suggestions import Action, Suggestion, Words

#: Each action in the commands' terms; `{name}` is the session the command named.
COMMAND_WORDS: Words = {
    Action.START_SESSION: "`nineplan sessions` lists every session.",
    Action.NAME_SESSION: "`nineplan sessions` lists every session.",
    Action.RESUME_SESSION: "`nineplan state {name}` shows that session.",
    Action.SEARCH_HISTORY: "`nineplan search {name} WORDS` finds completed plans and their ids.",
    Action.SEE_QUEUE: "`nineplan state {name}` shows the queued and active plans.",
    Action.SEE_SESSION: "`nineplan state {name}` shows where the session stands.",
    Action.PULL_PLAN: "The agent pulls the next plan; `nineplan state {name}` shows the queue.",
    Action.FINISH_ACTIVE_PLAN: "The agent finishes the active plan first; `nineplan state {name}` "
    "shows it.",
    Action.ADD_PLANS: "Add plans with `nineplan add {name}` or `nineplan import {name} FILE`.",
    Action.ADD_MORE_PLANS: "Add more plans with `nineplan add {name}` if work remains.",
    Action.WAIT_FOR_PREREQUISITES: "The queued plans wait for plans still active: "
    "`nineplan state {name}` shows what each waits for.",
    Action.CORRECT_FIELD: "Correct {field} and run the command again.",
    Action.MAKE_ROOM: "Drop queued plans with `nineplan drop {name} PLAN_ID`, or let the agent "
    "work the queue down, before adding more.",
    Action.TAKE_OVER: "Its worker has gone quiet: put it back at the front with "
    "`nineplan release {name} {plan_id}`, or add more plans if work remains.",
    Action.LEAVE_TO_AGENT: "Let the agent defer, complete or discard it; `nineplan move` and "
    "`nineplan drop` steer the queued plans.",
    Action.KEEP_SECTIONS: "Keep the '# Section' headers intact when editing a plan file.",
    Action.RETRY: "Run the command again.",
    Action.RETRY_BUSY: "Run the command again; another client is writing to this session.",
    Action.RETRY_OR_VALIDATE: "Run the command again; if it persists, run "
    "`nineplan validate {name}` or inspect the session database.",
    Action.FIX_STORAGE: "{detail}",
    Action.UPGRADE: "{detail}",
    Action.ADVICE: "{detail}",
}


def for_the_terminal(suggestion: Suggestion, session: str | None) -> str:
    """`suggestion` in the commands' words, for a command on `session` (None: it named none)."""
    return suggestion.worded(COMMAND_WORDS, name=session or "NAME")
