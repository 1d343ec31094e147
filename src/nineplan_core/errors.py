"""NinePlanError and one subclass per situation a caller may handle, each with a category."""

from typing import ClassVar

_START = "Create a session with 9plan_session_create or resume one with 9plan_session_resume."


class NinePlanError(Exception):
    """Base of every domain error: a category, a plain message and a suggested next action."""

    category: ClassVar[str] = "INTERNAL_ERROR"

    def __init__(self, message: str, *, suggestion: str) -> None:
        super().__init__(message)
        self.message = message
        self.suggestion = suggestion


class SessionNotFoundError(NinePlanError, LookupError):
    """No session of that name exists, or no session was named at all."""

    category = "SESSION_NOT_FOUND"

    def __init__(self, name: str | None) -> None:
        message = (
            "No session is selected for this client."
            if name is None
            else f"No session named {name!r} exists."
        )
        super().__init__(message, suggestion=f"{_START} 9plan_admin_sessions lists sessions.")
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
        self.suggestion = "Pass session_name on every call (9plan_admin_sessions lists them)."


class SessionExistsError(NinePlanError, FileExistsError):
    """A session of that name already exists (a name collision on create)."""

    category = "VALIDATION_ERROR"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"A session named {name!r} already exists.",
            suggestion="Resume it with 9plan_session_resume or create another.",
        )
        self.name = name


class PlanNotFoundError(NinePlanError, LookupError):
    """No plan with that id in the state the caller asked for."""

    category = "PLAN_NOT_FOUND"

    def __init__(self, plan_id: str, *, kind: str = "completed") -> None:
        suggestion = (
            "Use 9plan_history_search to find completed plans and their ids."
            if kind == "completed"
            else "Use 9plan_admin_state to see the queued and active plans."
        )
        super().__init__(
            f"No {kind} plan with id {plan_id!r} in this session.", suggestion=suggestion
        )
        self.plan_id = plan_id


class NoActivePlanError(NinePlanError):
    """The operation needs an active plan and there is none."""

    category = "NO_ACTIVE_PLAN"

    def __init__(self) -> None:
        super().__init__(
            "No plan is active in this session.",
            suggestion="Pull the next plan with 9plan_queue_pull.",
        )


class PlanAlreadyActiveError(NinePlanError):
    """A plan is already active, so another cannot be pulled."""

    category = "PLAN_ALREADY_ACTIVE"

    def __init__(self, plan_id: str) -> None:
        super().__init__(
            f"Plan {plan_id} is already active; only one plan is worked on at a time.",
            suggestion=(
                "Finish it with 9plan_plan_complete, or use 9plan_plan_defer or "
                "9plan_plan_discard, then pull again."
            ),
        )
        self.plan_id = plan_id


class QueueEmptyError(NinePlanError):
    """Nothing is queued: the task is complete."""

    category = "QUEUE_EMPTY"

    def __init__(self) -> None:
        super().__init__(
            "The queue is empty. Task complete!",
            suggestion="Add more plans with 9plan_queue_add if work remains.",
        )


class InvalidInputError(NinePlanError, ValueError):
    """An argument broke a rule; `field` names it."""

    category = "VALIDATION_ERROR"

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(
            f"{field}: {problem}",
            suggestion=f"Correct {field} and call again.",
        )
        self.field = field
        self.problem = problem


class InvalidTransitionError(NinePlanError):
    """A plan was asked to move between states the lifecycle does not connect."""

    category = "VALIDATION_ERROR"

    def __init__(self, plan_id: str, current: str, wanted: str) -> None:
        super().__init__(
            f"Plan {plan_id} is {current} and cannot become {wanted}.",
            suggestion="Check the session with 9plan_admin_state.",
        )
        self.plan_id = plan_id


class PlanHeldByAgentError(NinePlanError):
    """A person tried to move or drop the active plan: it belongs to the agent working on it."""

    category = "VALIDATION_ERROR"

    def __init__(self, plan_id: str) -> None:
        super().__init__(
            f"Plan {plan_id} is active: the agent is working on it, so a person cannot move or "
            "drop it.",
            suggestion="Let the agent defer, complete or discard it; steer the queued plans.",
        )
        self.plan_id = plan_id


class PlanFileFormatError(NinePlanError, ValueError):
    """A plan file could not be read back into its sections."""

    category = "FILE_SYSTEM_ERROR"

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"The plan file is not in the plan format: {problem}.",
            suggestion="Keep the '# Section' headers intact when editing a plan file.",
        )


class StorageError(NinePlanError):
    """Base of the two storage categories; adapters raise its subclasses from driver errors."""


class FileSystemError(StorageError, OSError):
    """A file-system operation failed; the operation was rolled back."""

    category = "FILE_SYSTEM_ERROR"

    def __init__(self, message: str, *, suggestion: str | None = None) -> None:
        super().__init__(
            message,
            suggestion=suggestion
            or "Check free disk space and permissions of the sessions folder, then retry.",
        )


class DatabaseError(StorageError):
    """The session database failed; the operation was rolled back."""

    category = "DATABASE_ERROR"

    def __init__(self, message: str, *, suggestion: str | None = None) -> None:
        super().__init__(
            message,
            suggestion=suggestion
            or "Retry; if it persists, run 9plan_admin_validate or inspect the session database.",
        )
