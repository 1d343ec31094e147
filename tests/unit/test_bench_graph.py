"""The graphs the prerequisite race and benchmark drain, and the journal check that judges
them (benchmarks/graph.py): random layered graphs of the asked shape, and a check that finds
a pull made before a prerequisite was settled, counts completions and the most plans active."""

import datetime as dt
import random
from typing import Any

from benchmarks.graph import check_journal, flat, random_graph

from nineplan_core.journal import Actor, Event, EventKind

AT = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)


def _events(*steps: tuple[EventKind, str, dict[str, Any]]) -> list[Event]:
    return [
        Event(seq=seq, kind=kind, at=AT, actor=Actor.AGENT, plan_id=plan, detail=detail)
        for seq, (kind, plan, detail) in enumerate(steps, start=1)
    ]


def test_a_random_graph_has_layers_of_the_asked_widths_each_waiting_on_the_one_before():
    """For several seeds, 200 plans in layers 5-40 wide, one at least 8 wide; the first
    layer's plans wait for nothing, every other plan for 1-3 distinct plans of the layer
    before (so at most 3 earlier plans, never a later one)."""
    for seed in range(20):
        graph = random_graph(200, random.Random(seed))
        assert len(graph.after) == sum(graph.layers) == 200
        assert graph.width >= 8
        assert all(1 <= size <= 40 for size in graph.layers)
        start = 0
        for before, size in zip((0, *graph.layers), graph.layers, strict=False):
            for index in range(start, start + size):
                named = graph.after[index]
                assert len(set(named)) == len(named) <= 3
                assert all(start - before <= n < start for n in named)
                assert named or before == 0
            start += size


def test_a_flat_graph_waits_for_nothing():
    """`flat(n)` is n plans in one layer with no `after`."""
    assert flat(3).after == ((), (), ())
    assert (flat(3).width, flat(3).edges) == (3, 0)


def test_the_journal_check_finds_a_pull_before_its_prerequisite_settled():
    """B waits for A; B pulled while A is active is named (with both seqs); C, pulled after
    its prerequisite A was completed, is not; completions are counted per plan, and the most
    plans active at once replayed from the pulls and the settling events."""
    events = _events(
        (EventKind.PLAN_ADDED, "aaaaa", {}),
        (EventKind.PLAN_ADDED, "bbbbb", {"after": ["aaaaa"]}),
        (EventKind.PLAN_ADDED, "ccccc", {"after": ["aaaaa"]}),
        (EventKind.PLAN_PULLED, "aaaaa", {"worker": "w0"}),
        (EventKind.PLAN_PULLED, "bbbbb", {"worker": "w1"}),
        (EventKind.PLAN_COMPLETED, "aaaaa", {"worker": "w0"}),
        (EventKind.PLAN_PULLED, "ccccc", {"worker": "w0"}),
        (EventKind.PLAN_COMPLETED, "bbbbb", {"worker": "w1"}),
        (EventKind.PLAN_COMPLETED, "ccccc", {"worker": "w0"}),
    )
    checked = check_journal(events)
    assert checked.early == ["plan bbbbb pulled at seq 5, its prerequisite aaaaa settled at seq 6"]
    assert checked.completions == {"aaaaa": 1, "bbbbb": 1, "ccccc": 1}
    assert checked.peak_active == 2
    assert checked.unreadable == []


def test_the_journal_check_names_a_prerequisite_never_settled_and_counts_twice():
    """A pull whose prerequisite never settles is named as such; a plan completed twice is
    counted twice; a discard settles a prerequisite."""
    events = _events(
        (EventKind.PLAN_ADDED, "aaaaa", {}),
        (EventKind.PLAN_ADDED, "bbbbb", {"after": ["aaaaa"]}),
        (EventKind.PLAN_ADDED, "ccccc", {}),
        (EventKind.PLAN_ADDED, "ddddd", {"after": ["ccccc"]}),
        (EventKind.PLAN_PULLED, "bbbbb", {"worker": "w0"}),
        (EventKind.PLAN_COMPLETED, "bbbbb", {"worker": "w0"}),
        (EventKind.PLAN_COMPLETED, "bbbbb", {"worker": "w0"}),
        (EventKind.PLAN_PULLED, "ccccc", {"worker": "w0"}),
        (EventKind.PLAN_DISCARDED, "ccccc", {"worker": "w0"}),
        (EventKind.PLAN_PULLED, "ddddd", {"worker": "w0"}),
    )
    checked = check_journal(events)
    assert checked.early == ["plan bbbbb pulled at seq 5, its prerequisite aaaaa settled never"]
    assert checked.completions["bbbbb"] == 2
    assert checked.peak_active == 1
