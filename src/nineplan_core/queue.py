"""Queue position arithmetic: adding or deferring is O(1) and never renumbers; a person's
move before another plan takes a free integer between two plans, or renumbers the queue."""

from collections.abc import Sequence

from nineplan_core.model import Position, Tally


def insert_position(tally: Tally, where: Position) -> int:
    """The stored position for a plan entering a queue of `tally`.

    `front` goes before the current minimum and `back` after the maximum; an empty queue
    starts at 1. Adding A, B, C at the front therefore gives [C, B, A, ...].
    """
    if tally.low is None or tally.high is None:
        return 1
    return tally.low - 1 if where is Position.FRONT else tally.high + 1


def insert_rank(tally: Tally, where: Position) -> int:
    """The rank a plan entering a queue of `tally` gets: first at the front, last at the back."""
    return 1 if where is Position.FRONT else tally.queued + 1


def ranks(positions: list[int]) -> dict[int, int]:
    """Map each stored position to its 1-based rank (1 = pulled next)."""
    return {position: rank for rank, position in enumerate(sorted(positions), start=1)}


#: How far apart renumbered positions are: room for 16 moves into one place (each takes the
#: middle of a gap) before renumbering again, and for billions of renumbers of a 10,000-plan
#: queue within 64 bits.
GAP = 2**16


def position_between(ahead: int | None, target: int) -> int | None:
    """A free stored position after `ahead` (the position of the plan before `target`, None
    at the front of the queue) and before `target`, or None when the two are adjacent (the
    queue must make room: `make_room`).

    Before the front of the queue every lower integer is free: `target - 1`, as `front` adds.
    """
    if ahead is None:
        return target - 1
    return (ahead + target) // 2 if target - ahead > 1 else None


def make_room(ahead: Sequence[str], behind: Sequence[str], low: int, high: int) -> dict[str, int]:
    """New positions for one side of a full gap, the shorter: the plans `ahead` of it (pull
    order) below `low`, or the plans `behind` it (pull order, the plan moved before first)
    above `high`, GAP apart. `low` and `high` are the lowest and highest positions held now,
    so no new position is one another plan still holds: stores may write them in any order
    under their unique index. The gap between the two sides is then wide open."""
    if len(ahead) <= len(behind):
        first = low - GAP * len(ahead)
        return {plan_id: first + GAP * index for index, plan_id in enumerate(ahead)}
    return {plan_id: high + GAP * rank for rank, plan_id in enumerate(behind, start=1)}
