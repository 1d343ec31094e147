"""Queue position arithmetic: adding or deferring is O(1) and never renumbers."""

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
