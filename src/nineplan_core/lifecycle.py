"""The plan state machine as a transition table."""

import enum

from nineplan_core.errors import InvalidTransitionError


class PlanStatus(enum.StrEnum):
    QUEUED = "queued"
    ACTIVE = "active"
    COMPLETED = "completed"
    DISCARDED = "discarded"

    @property
    def settled(self) -> bool:
        """Completed or discarded: a plan waiting for this one may be pulled."""
        return self in (PlanStatus.COMPLETED, PlanStatus.DISCARDED)


ALLOWED: dict[PlanStatus, frozenset[PlanStatus]] = {
    PlanStatus.QUEUED: frozenset({PlanStatus.ACTIVE}),
    PlanStatus.ACTIVE: frozenset({PlanStatus.QUEUED, PlanStatus.COMPLETED, PlanStatus.DISCARDED}),
    PlanStatus.COMPLETED: frozenset(),
    PlanStatus.DISCARDED: frozenset(),
}

#: What a person may do beyond `ALLOWED` (the web view, the CLI): drop a plan still queued.
#: No agent call takes this path; the agent discards only the plan it holds.
PERSON_ALLOWED: dict[PlanStatus, frozenset[PlanStatus]] = {
    PlanStatus.QUEUED: frozenset({PlanStatus.DISCARDED}),
}

#: Plans in these states are in play: they hold a queue position or the active slot, and a file.
LIVE = frozenset({PlanStatus.QUEUED, PlanStatus.ACTIVE})


def check_transition(
    plan_id: str, current: PlanStatus, wanted: PlanStatus, *, by_person: bool = False
) -> None:
    """Refuse a move the lifecycle does not allow (`by_person`: a person's steering).

    Raises:
        InvalidTransitionError: `current` cannot become `wanted`.
    """
    extra = PERSON_ALLOWED.get(current, frozenset()) if by_person else frozenset()
    if wanted not in ALLOWED[current] | extra:
        raise InvalidTransitionError(plan_id, current.value, wanted.value)


#: A plan deferred this many times or more is stuck (docs/agents.md; NINEPLAN_STUCK_DEFERS in
#: docs/configuration.md).
STUCK_DEFERS = 3


def is_stuck(defer_count: int, stuck_defers: int = STUCK_DEFERS) -> bool:
    """Whether a plan deferred `defer_count` times is stuck: split it, or say what blocks it."""
    return defer_count >= stuck_defers
