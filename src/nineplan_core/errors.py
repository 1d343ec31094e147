"""NinePlanError and one subclass per situation a caller may handle, each with a category.

Each carries a `Suggestion` (nineplan_core.suggestions): what to do next, as data that every way
in words in its own terms; `str()` of it names library calls (`add_plan`).
"""

from collections.abc import Sequence
from typing import ClassVar

from nineplan_core.suggestions import Action, Suggestion


class NinePlanError(Exception):
    """Base of every domain error: a category, a plain message and a suggested next action."""

    category: ClassVar[str] = "INTERNAL_ERROR"

    def __init__(self, message: str, *, suggestion: Suggestion | str) -> None:
        """`suggestion` as plain text (as before suggestions were data) is kept as advice,
        worded alike on every way in."""
        super().__init__(message)
        self.message = message
        self.suggestion = (
            suggestion
            if isinstance(suggestion, Suggestion)
            else Suggestion(Action.ADVICE, detail=suggestion)
        )

    @property
    def suggestion_text(self) -> str:
        """The suggestion in the library's words (the `NinePlan` calls to make)."""
        return str(self.suggestion)


class SessionNotFoundError(NinePlanError, LookupError):
    """No session of that name exists, or no session was named at all."""

    category = "SESSION_NOT_FOUND"

    def __init__(self, name: str | None) -> None:
        message = (
            "No session is selected for this client."
            if name is None
            else f"No session named {name!r} exists."
        )
        super().__init__(message, suggestion=Suggestion(Action.START_SESSION))
        self.name = name


class SessionNameRequiredError(SessionNotFoundError):
    """The transport has no client identity, so each call has to name its session."""

    def __init__(self) -> None:
        super().__init__(None)
        self.message = (
            "This connection keeps no current session (the sessionless protocol has no client "
            "identity), so each call must name its session."
        )
        self.args = (self.message,)
        self.suggestion = Suggestion(Action.NAME_SESSION)


class SessionExistsError(NinePlanError, FileExistsError):
    """A session of that name already exists (a name collision on create)."""

    category = "VALIDATION_ERROR"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"A session named {name!r} already exists.",
            suggestion=Suggestion(Action.RESUME_SESSION),
        )
        self.name = name


class PlanNotFoundError(NinePlanError, LookupError):
    """No plan with that id in the state the caller asked for."""

    category = "PLAN_NOT_FOUND"

    def __init__(self, plan_id: str, *, kind: str = "completed") -> None:
        suggestion = Suggestion(Action.SEARCH_HISTORY if kind == "completed" else Action.SEE_QUEUE)
        super().__init__(
            f"No {kind + ' ' if kind else ''}plan with id {plan_id!r} in this session.",
            suggestion=suggestion,
        )
        self.plan_id = plan_id


class PlanDiscardedError(PlanNotFoundError):
    """The plan asked for as completed was discarded: who discarded it, and why."""

    def __init__(self, plan_id: str, *, by: str | None, reason: str | None) -> None:
        super().__init__(plan_id)
        who = {"agent": " by the agent", "person": " by a person"}.get(by or "", "")
        why = f": {reason}" if reason else ""
        self.message = f"Plan {plan_id!r} was discarded{who}, not completed{why}."
        self.args = (self.message,)
        self.discarded_by = by
        self.reason = reason


class NoActivePlanError(NinePlanError):
    """The operation needs an active plan and there is none."""

    category = "NO_ACTIVE_PLAN"

    def __init__(
        self,
        worker: str,
        *,
        lost: str | None = None,
        others: Sequence[tuple[str, str]] = (),
        named: tuple[str, str] | None = None,
    ) -> None:
        """`lost` says what became of the worker's last plan (taken over, released), if so;
        `others` are the plans other workers hold, `(plan id, worker)`: while there are any,
        "no plan is active in this session" would be false, so the worker is named. `named`
        is `(plan id, what it is instead)` when the call named a plan the worker does not hold."""
        whose = "in this session" if worker == "main" and not others else f"for worker {worker}"
        said = f"No plan is active {whose}: {lost}." if lost else f"No plan is active {whose}."
        if named is not None:
            said = f"Plan {named[0]} is not the active plan of worker {worker}: {named[1]}."
        if others:
            said += f" {_held_by_others(others)}"
        super().__init__(said, suggestion=Suggestion(Action.PULL_PLAN))
        self.worker = worker
        self.lost = lost


class PlanAlreadyActiveError(NinePlanError):
    """A plan is already active, so another cannot be pulled."""

    category = "PLAN_ALREADY_ACTIVE"

    def __init__(
        self, plan_id: str, worker: str, *, others: Sequence[tuple[str, str]] = ()
    ) -> None:
        """`others` are the plans other workers hold, `(plan id, worker)`: while there are
        any, several plans are worked on at once, and the text says whose this one is."""
        if worker == "main" and not others:
            said = f"Plan {plan_id} is already active; only one plan is worked on at a time."
        else:
            said = (
                f"Plan {plan_id} is already active for worker {worker}; "
                "each worker works on one plan at a time."
            )
        if others:
            said += f" {_held_by_others(others)}"
        super().__init__(said, suggestion=Suggestion(Action.FINISH_ACTIVE_PLAN))
        self.plan_id = plan_id
        self.worker = worker


class LeaseLiveError(PlanAlreadyActiveError):
    """A take-over of a plan whose worker's lease is live: it is still that worker's."""

    def __init__(self, plan_id: str, holder: str, until: str) -> None:
        NinePlanError.__init__(
            self,
            f"Plan {plan_id} is held by worker {holder}, whose lease is live until {until}; "
            "only a stale plan can be taken over.",
            suggestion=Suggestion(
                Action.ADVICE,
                detail="Pull the next queued plan instead, or ask a person to release this one.",
            ),
        )
        self.plan_id = plan_id
        self.worker = holder
        self.until = until


def _held_by_others(others: Sequence[tuple[str, str]]) -> str:
    plans = ", ".join(f"{plan_id} ({worker})" for plan_id, worker in others)
    return f"Other workers hold {len(others)} plan(s): {plans}."


def still_active(held: Sequence[tuple[str, str]]) -> str:
    """What an empty queue means while workers still hold plans (each `(plan id, worker)`):
    not that the task is complete."""
    plans = ", ".join(f"{plan_id} ({worker})" for plan_id, worker in held)
    return f"The queue is empty; {len(held)} plan(s) are still active: {plans}."


class QueueEmptyError(NinePlanError):
    """Nothing is queued: the task is complete, or no plan was ever added."""

    category = "QUEUE_EMPTY"

    def __init__(
        self,
        *,
        completed_count: int = 0,
        held: Sequence[tuple[str, str]] = (),
        stale: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        """`held`: the plans others still hold, `(plan id, worker)`; `stale`: those of them
        whose lease has lapsed, `(plan id, worker, when it was last heard, in words)`."""
        if held:  # other workers still hold plans (docs/architecture.md, "Workers and leases"): the task is not complete
            message = still_active(held) + "".join(
                f"\nPlan {plan_id} is stale: worker {worker} last heard {heard}."
                for plan_id, worker, heard in stale
            )
            suggestion = (
                Suggestion(Action.TAKE_OVER, plan_id=stale[0][0])
                if stale
                else Suggestion(Action.ADD_MORE_PLANS)
            )
        elif completed_count:
            message = (
                f"The queue is empty and {completed_count} plan(s) are completed. Task complete!"
            )
            suggestion = Suggestion(Action.ADD_MORE_PLANS)
        else:
            message = "The queue is empty: no plan has been added to this session yet."
            suggestion = Suggestion(Action.ADD_PLANS)
        super().__init__(message, suggestion=suggestion)
        self.completed_count = completed_count
        self.held = list(held)
        self.stale = [plan_id for plan_id, _, _ in stale]


class InvalidInputError(NinePlanError, ValueError):
    """An argument broke a rule; `field` names it."""

    category = "VALIDATION_ERROR"

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(
            f"{field}: {problem}",
            suggestion=Suggestion(Action.CORRECT_FIELD, field=field),
        )
        self.field = field
        self.problem = problem


class QueueFullError(InvalidInputError):
    """The session has as many queued plans as its limit allows (an InvalidInputError on
    `queue`, with its own message and suggestion)."""

    def __init__(self, limit: int) -> None:
        NinePlanError.__init__(
            self,
            f"The queue is full: {limit} plans are queued, the most one session may hold.",
            suggestion=Suggestion(Action.MAKE_ROOM),
        )
        self.field = "queue"
        self.problem = "is full"
        self.limit = limit


class InvalidTransitionError(NinePlanError):
    """A plan was asked to move between states the lifecycle does not connect."""

    category = "VALIDATION_ERROR"

    def __init__(self, plan_id: str, current: str, wanted: str) -> None:
        super().__init__(
            f"Plan {plan_id} is {current} and cannot become {wanted}.",
            suggestion=Suggestion(Action.SEE_SESSION),
        )
        self.plan_id = plan_id


class PlanHeldByAgentError(NinePlanError):
    """A person tried to move, edit or drop the active plan: it belongs to the agent working
    on it."""

    category = "VALIDATION_ERROR"

    def __init__(self, plan_id: str) -> None:
        super().__init__(
            f"Plan {plan_id} is active: the agent is working on it, so a person cannot move, edit "
            "or drop it.",
            suggestion=Suggestion(Action.LEAVE_TO_AGENT),
        )
        self.plan_id = plan_id


class PlanChangedError(NinePlanError):
    """A person's edit was made on a copy of a queued plan that changed since it was opened
    (another person's edit, or its file's): nothing is changed; `sections` names what changed."""

    category = "VALIDATION_ERROR"

    def __init__(self, plan_id: str, sections: Sequence[str]) -> None:
        super().__init__(
            f"Plan {plan_id} changed since you opened it: {', '.join(sections)}.",
            suggestion=Suggestion(
                Action.ADVICE,
                detail="Open the plan again to see what it holds now, then make the edit there.",
            ),
        )
        self.plan_id = plan_id
        self.sections = list(sections)


class SessionNotArchivedError(NinePlanError):
    """A person asked to delete a session that is not archived: only one filed away may go."""

    category = "VALIDATION_ERROR"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Session {name} is not archived: only an archived session can be deleted.",
            suggestion=Suggestion(Action.ADVICE, detail="Archive the session first."),
        )
        self.name = name


class SessionHasActivePlanError(NinePlanError):
    """A person asked to delete a session whose active plan an agent holds."""

    category = "VALIDATION_ERROR"

    def __init__(self, name: str, plan_id: str) -> None:
        super().__init__(
            f"Session {name} holds active plan {plan_id}: a session an agent works in cannot be "
            "deleted.",
            suggestion=Suggestion(Action.FINISH_ACTIVE_PLAN),
        )
        self.name = name
        self.plan_id = plan_id


class WorkersHoldPlansError(NinePlanError):
    """A person asked to forget a session's workers while a worker other than `main` holds
    a plan: its calls would then be refused or mistaken for `main`'s."""

    category = "VALIDATION_ERROR"

    def __init__(self, name: str, held: Sequence[tuple[str, str]]) -> None:
        plans = ", ".join(f"{plan_id} ({worker})" for plan_id, worker in held)
        super().__init__(
            f"Session {name}: workers other than main hold {len(held)} plan(s): {plans}; the "
            "workers are forgotten only while none does.",
            suggestion=Suggestion(
                Action.ADVICE, detail="Let those workers finish their plans, or release them."
            ),
        )
        self.held = list(held)


class PlanFileFormatError(NinePlanError, ValueError):
    """A plan file could not be read back into its sections."""

    category = "FILE_SYSTEM_ERROR"

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"The plan file is not in the plan format: {problem}.",
            suggestion=Suggestion(Action.KEEP_SECTIONS),
        )


class StorageError(NinePlanError):
    """Base of the two storage categories; adapters raise its subclasses from driver errors."""

    #: For a failure a second try will likely not meet again (every name or id drawn was taken).
    RETRY: ClassVar[Suggestion] = Suggestion(Action.RETRY)


_RETRY_OR_VALIDATE = Suggestion(Action.RETRY_OR_VALIDATE)
_CHECK_FOLDER = Suggestion(
    Action.FIX_STORAGE,
    detail="Check free disk space and permissions of the sessions folder, then retry.",
)


class FileSystemError(StorageError, OSError):
    """A file-system operation failed; the operation was rolled back."""

    category = "FILE_SYSTEM_ERROR"

    def __init__(self, message: str, *, suggestion: Suggestion | str | None = None) -> None:
        super().__init__(message, suggestion=_CHECK_FOLDER if suggestion is None else suggestion)


class DatabaseError(StorageError):
    """The session database failed; the operation was rolled back."""

    category = "DATABASE_ERROR"

    def __init__(self, message: str, *, suggestion: Suggestion | str | None = None) -> None:
        super().__init__(
            message, suggestion=_RETRY_OR_VALIDATE if suggestion is None else suggestion
        )
