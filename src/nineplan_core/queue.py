"""Queue position arithmetic: adding or deferring is O(1) and never renumbers."""

from nineplan_core.model import Position


def insert_position(bounds: tuple[int, int] | None, where: Position) -> int:
    """The stored position for a plan entering a queue whose (min, max) positions are `bounds`.

    `front` goes before the current minimum and `back` after the maximum; an empty queue
    starts at 1. Adding A, B, C at the front therefore gives [C, B, A, ...].
    """
    if bounds is None:
        return 1
    low, high = bounds
    return low - 1 if where is Position.FRONT else high + 1


def ranks(positions: list[int]) -> dict[int, int]:
    """Map each stored position to its 1-based rank (1 = pulled next)."""
    return {position: rank for rank, position in enumerate(sorted(positions), start=1)}
