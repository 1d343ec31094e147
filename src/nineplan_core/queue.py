"""Queue position arithmetic: adding or deferring is O(1) and never renumbers."""

from nineplan_core.model import Position, QueueShape


def insert_position(shape: QueueShape, where: Position) -> int:
    """The stored position for a plan entering a queue of `shape`.

    `front` goes before the current minimum and `back` after the maximum; an empty queue
    starts at 1. Adding A, B, C at the front therefore gives [C, B, A, ...].
    """
    if shape.low is None or shape.high is None:
        return 1
    return shape.low - 1 if where is Position.FRONT else shape.high + 1


def insert_rank(shape: QueueShape, where: Position) -> int:
    """The rank a plan entering a queue of `shape` gets: first at the front, last at the back."""
    return 1 if where is Position.FRONT else shape.length + 1


def ranks(positions: list[int]) -> dict[int, int]:
    """Map each stored position to its 1-based rank (1 = pulled next)."""
    return {position: rank for rank, position in enumerate(sorted(positions), start=1)}
