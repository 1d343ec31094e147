"""The plan state machine as a transition table."""

import enum

from nineplan_core.errors import InvalidTransitionError


class PlanStatus(enum.StrEnum):
    QUEUED = "queued"
    ACTIVE = "active"
    COMPLETED = "completed"
    DISCARDED = "discarded"


ALLOWED: dict[PlanStatus, frozenset[PlanStatus]] = {
    PlanStatus.QUEUED: frozenset({PlanStatus.ACTIVE}),
    PlanStatus.ACTIVE: frozenset({PlanStatus.QUEUED, PlanStatus.COMPLETED, PlanStatus.DISCARDED}),
    PlanStatus.COMPLETED: frozenset(),
    PlanStatus.DISCARDED: frozenset(),
}

#: Plans in these states are in play: they hold a queue position or the active slot, and a file.
LIVE = frozenset({PlanStatus.QUEUED, PlanStatus.ACTIVE})


def check_transition(plan_id: str, current: PlanStatus, wanted: PlanStatus) -> None:
    """Refuse a move the lifecycle does not allow.

    Raises:
        InvalidTransitionError: `current` cannot become `wanted`.
    """
    if wanted not in ALLOWED[current]:
        raise InvalidTransitionError(plan_id, current.value, wanted.value)
