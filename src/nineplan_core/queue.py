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


#: How far apart a renumbered queue's positions are: room for a few moves before each plan
#: without renumbering again (each takes the middle of a gap).
GAP = 1024


def position_before(queue: Sequence[int], target: int) -> int | None:
    """A free stored position just before `target` in `queue` (the stored positions of the
    queued plans, the moved one left out, in any order), or None when no integer is free
    between `target` and the position before it (the queue must be renumbered).

    Before the front of the queue every lower integer is free: `target - 1`, as `front` adds.
    """
    ahead = max((position for position in queue if position < target), default=None)
    if ahead is None:
        return target - 1
    return (ahead + target) // 2 if target - ahead > 1 else None


def renumbered(order: Sequence[str], high: int) -> dict[str, int]:
    """Fresh positions for the queue in pull `order`, GAP apart and all above `high` (the
    highest position stored now): no plan's new position is one another plan still holds, so
    the stores may write them in any order under their unique index."""
    return {plan_id: high + GAP * rank for rank, plan_id in enumerate(order, start=1)}
