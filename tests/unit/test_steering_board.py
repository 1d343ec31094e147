"""A person's move before another plan and edit of a queued plan, held to one contract on
every storage backend: order, renumbering, the journal, revisions, and refusals that change
nothing."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nineplan_core.callers import Caller
from nineplan_core.errors import (
    InvalidInputError,
    PlanChangedError,
    PlanHeldByAgentError,
    PlanNotFoundError,
)
from nineplan_core.journal import Actor, Event, EventKind
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanContent, PlanId, PlanRow
from nineplan_core.plan_file import render
from nineplan_core.queue import GAP, make_room, position_between
from nineplan_core.replay import journal_issues
from nineplan_core.revisions import changed_since, plan_revision
from tests.fakes import PLAN, Backend
from tests.unit.test_steering import queue_of, session_with

#: One journal event as a test writes it: its kind, plan and detail.
Step = tuple[EventKind, str, dict[str, object]]


async def positions(backend: Backend, name: str) -> list[int]:
    """The stored positions of the queued plans, in pull order."""
    store = await backend.catalog.open(name)  # type: ignore[arg-type]
    async with store.reading() as reader:
        rows = await reader.plan_rows()
    return sorted(row.position for row in rows if row.position is not None)


async def test_move_before_puts_the_plan_just_ahead_and_is_pulled_in_that_order(backend: Backend):
    """Moving C before B gives A, C, B (rank 2), journalled with `before` and the rank; the
    agent then pulls in that order and the journal replays to it."""
    name, ids = await session_with(backend, "A", "B", "C", "D")
    moved = await backend.service.move_plan(name, ids["C"], before=ids["B"])
    assert moved.rank == 2
    assert await queue_of(backend, name) == ["A", "C", "B", "D"]
    last = (await backend.service.journal(name))[-1]
    assert isinstance(last, Event)
    assert (last.kind, last.plan_id, last.actor.value) == (EventKind.PLAN_MOVED, ids["C"], "person")
    assert (last.detail["before"], last.detail["rank"]) == (ids["B"], 2)
    assert (await backend.service.validate_session(name)).journal_matches_state
    pulled = [
        (await backend.service.pull_plan(name, caller=Caller.of(w))).plan.goal for w in "wxyz"
    ]
    assert pulled == ["A", "C", "B", "D"]


async def test_move_before_the_front_and_backwards(backend: Backend):
    """Before the front plan is rank 1; a plan near the front moved before the last one goes
    second to last; each move keeps the other plans in their order."""
    name, ids = await session_with(backend, "A", "B", "C", "D")
    assert (await backend.service.move_plan(name, ids["D"], before=ids["A"])).rank == 1
    assert await queue_of(backend, name) == ["D", "A", "B", "C"]
    assert (await backend.service.move_plan(name, ids["D"], before=ids["C"])).rank == 3
    assert await queue_of(backend, name) == ["A", "B", "D", "C"]
    assert (await backend.service.validate_session(name)).valid


async def test_many_moves_into_one_gap_renumber_and_keep_the_order(backend: Backend):
    """Moving plans again and again into the same place uses up the free integers there; the
    queue is then renumbered in the move's transaction, and order, positions and the journal
    stay right."""
    goals = [f"P{i}" for i in range(8)]
    name, ids = await session_with(backend, *goals)
    expected = list(goals)
    for _ in range(14):  # each move puts the last plan before the second: always the same gap
        last = expected.pop()
        expected.insert(1, last)
        await backend.service.move_plan(name, ids[last], before=ids[expected[2]])
    assert await queue_of(backend, name) == expected
    stored = await positions(backend, name)
    assert len(set(stored)) == len(stored)
    assert min(stored) < 0 or max(stored) > GAP  # renumbered at least once
    report = await backend.service.validate_session(name)
    assert report.valid, report.issues


async def test_refused_moves_change_nothing(backend: Backend):
    """Before itself, both or neither of position and before, an unknown, active or
    finished `before`, and the active plan moved: each refused with its error, the queue
    and the journal as they were."""
    name, ids = await session_with(backend, "A", "B", "C", "D")
    await backend.service.pull_plan(name)  # A is active
    await backend.service.pull_plan(name, caller=Caller.of("w2"))  # B too
    await backend.service.complete_plan(name, "done", caller=Caller.of("w2"))
    journal = await backend.service.journal(name)
    for call, error, match in [
        ({"plan_id": ids["C"], "before": ids["C"]}, InvalidInputError, "before"),
        (
            {"plan_id": ids["C"], "position": "front", "before": ids["D"]},
            InvalidInputError,
            "before",
        ),
        ({"plan_id": ids["C"]}, InvalidInputError, "before"),
        ({"plan_id": ids["C"], "before": "zzzzz"}, PlanNotFoundError, "zzzzz"),
        ({"plan_id": ids["C"], "before": ids["A"]}, PlanNotFoundError, ids["A"]),
        ({"plan_id": ids["C"], "before": ids["B"]}, PlanNotFoundError, ids["B"]),
        ({"plan_id": ids["C"], "before": "../xy"}, InvalidInputError, "before"),
        ({"plan_id": ids["A"], "before": ids["D"]}, PlanHeldByAgentError, ids["A"]),
    ]:
        with pytest.raises(error, match=match):
            await backend.service.move_plan(name, **call)  # type: ignore[arg-type]
    assert await queue_of(backend, name) == ["C", "D"]
    assert await backend.service.journal(name) == journal


async def test_edit_changes_the_sections_the_file_and_the_journal(backend: Backend):
    """An edit replaces the sections given, rewrites the plan's file, keeps its place, and
    is journalled `plan_edited` by a person naming the sections that changed; the agent's
    pull hands over the edited text."""
    name, ids = await session_with(backend, "A", "B")
    edited = await backend.service.edit_plan(
        name, ids["B"], {"goal": "B, better", "approach": PLAN["approach"], "inputs": "the logs"}
    )
    assert (edited.plan.goal, edited.plan.content.inputs, edited.rank) == (
        "B, better",
        "the logs",
        2,
    )
    assert await backend.plan_text(name, ids["B"]) == render(edited.plan.content, "")
    last = (await backend.service.journal(name))[-1]
    assert isinstance(last, Event)
    assert (last.kind, last.actor.value, last.detail["sections"]) == (
        EventKind.PLAN_EDITED, "person", ["goal", "inputs"],
    )  # fmt: skip
    assert (await backend.service.validate_session(name)).valid
    await backend.service.move_plan(name, ids["B"], "front")
    assert "B, better" in ((await backend.service.pull_plan(name)).text or "")


async def test_edit_reads_the_file_back_first(backend: Backend):
    """Notes written into the queued plan's file before the edit are kept, not overwritten."""
    name, ids = await session_with(backend, "A")
    plan = await backend.service.get_plan(name, ids["A"])
    await backend.write_plan_text(name, ids["A"], render(plan.content, "a person's note"))
    edited = await backend.service.edit_plan(name, ids["A"], {"context": "New context."})
    assert edited.plan.notes == "a person's note"
    assert "a person's note" in (await backend.plan_text(name, ids["A"]) or "")


async def test_a_stale_revision_is_refused_naming_what_changed(backend: Backend):
    """Two people open the same plan; the second one's edit, made on the first copy, is
    refused with one line naming the sections the first edit changed; nothing changes. The
    current revision is accepted."""
    name, ids = await session_with(backend, "A")
    opened = plan_revision((await backend.service.get_plan(name, ids["A"])).content)
    first = await backend.service.edit_plan(
        name, ids["A"], {"goal": "first", "approach": "theirs"}, revision=opened
    )
    journal = await backend.service.journal(name)
    with pytest.raises(PlanChangedError) as refused:
        await backend.service.edit_plan(name, ids["A"], {"goal": "second"}, revision=opened)
    assert refused.value.message == f"Plan {ids['A']} changed since you opened it: goal, approach."
    assert "\n" not in refused.value.message
    assert (await backend.service.get_plan(name, ids["A"])).goal == "first"
    assert await backend.service.journal(name) == journal
    fresh = plan_revision(first.plan.content)
    assert (
        await backend.service.edit_plan(name, ids["A"], {"goal": "second"}, revision=fresh)
    ).plan.goal == "second"


async def test_an_edit_of_the_file_makes_a_revision_stale(backend: Backend):
    """A queued plan's file edited after the form was opened counts as a change too."""
    name, ids = await session_with(backend, "A")
    plan = await backend.service.get_plan(name, ids["A"])
    opened = plan_revision(plan.content)
    changed = PlanContent(**{**PLAN, "success_criteria": "edited in the file"})
    await backend.write_plan_text(name, ids["A"], render(changed, ""))
    with pytest.raises(PlanChangedError, match="success_criteria"):
        await backend.service.edit_plan(name, ids["A"], {"goal": "mine"}, revision=opened)


async def test_refused_edits_change_nothing(backend: Backend):
    """No section, an unknown section, a blank required one, a malformed revision, the
    active plan, a finished or unknown plan: each refused, the plan and journal as they were."""
    name, ids = await session_with(backend, "A", "B", "C")
    await backend.service.pull_plan(name)  # A is active
    await backend.service.drop_plan(name, ids["C"], "no")
    journal = await backend.service.journal(name)
    text = await backend.plan_text(name, ids["B"])
    for plan_id, changes, revision, error, match in [
        (ids["B"], {}, None, InvalidInputError, "changes"),
        (ids["B"], {"notes": "x"}, None, InvalidInputError, "notes"),
        (ids["B"], {"goal": "  "}, None, InvalidInputError, "goal: must not be blank"),
        (ids["B"], {"inputs": "", "approach": "\n"}, None, InvalidInputError, "approach"),
        (ids["B"], {"goal": "x"}, "not-a-revision", InvalidInputError, "revision"),
        (ids["A"], {"goal": "x"}, None, PlanHeldByAgentError, ids["A"]),
        (ids["C"], {"goal": "x"}, None, PlanNotFoundError, "queued"),
        ("zzzzz", {"goal": "x"}, None, PlanNotFoundError, "queued"),
    ]:
        with pytest.raises(error, match=match):
            await backend.service.edit_plan(name, plan_id, changes, revision=revision)
    assert await backend.service.journal(name) == journal
    assert await backend.plan_text(name, ids["B"]) == text


@given(st.lists(st.integers(-50, 50), unique=True, min_size=1), st.data())
def test_a_free_position_lies_between_the_neighbours(queue: list[int], data: st.DataObject):
    """`position_between` gives an integer no plan holds, after the position ahead of the
    target (or any, at the front) and before the target; None only when the two are adjacent."""
    target = data.draw(st.sampled_from(queue))
    ahead = max((p for p in queue if p < target), default=None)
    free = position_between(ahead, target)
    if free is None:
        assert ahead == target - 1
    else:
        assert free not in queue
        assert ahead is None or ahead < free < target


def test_making_room_renumbers_the_shorter_side_outside_every_position_held():
    """The plans ahead of a full gap move below the lowest position when they are fewer,
    those behind it above the highest otherwise; GAP apart, in order, none on a position held."""
    assert make_room(["a"], ["b", "c"], low=3, high=9) == {"a": 3 - GAP}
    assert make_room(["a", "b"], ["c", "d"], low=3, high=9) == {"a": 3 - 2 * GAP, "b": 3 - GAP}
    assert make_room(["a", "b", "c"], ["d"], low=3, high=9) == {"d": 9 + GAP}
    assert make_room(["a", "b", "c"], ["d", "e"], low=3, high=9) == {"d": 9 + GAP, "e": 9 + 2 * GAP}


def test_a_revision_names_the_sections_that_differ():
    """Revisions of two contents differ exactly in the sections that differ; the current one
    names none; a malformed revision is refused naming the field."""
    one = PlanContent(**PLAN)
    two = PlanContent(**{**PLAN, "goal": "other", "outputs": "a file"})
    assert changed_since(plan_revision(one), one) == []
    assert changed_since(plan_revision(one), two) == ["goal", "outputs"]
    assert plan_revision(one) != plan_revision(two)
    with pytest.raises(InvalidInputError, match="revision"):
        changed_since("abc", one)


def test_replay_rebuilds_the_order_from_before_whatever_the_stored_integers():
    """Replay puts a plan moved `before` another just ahead of it, and compares the order, not
    the stored positions (a renumbered queue replays alike); a move before a plan that is not
    queued, and an edit of a plan that is not queued, are each reported."""
    added: list[Step] = [
        (EventKind.PLAN_ADDED, i, {"position": "back"}) for i in ("aaaaa", "bbbbb", "ccccc")
    ]
    moved = [*added, (EventKind.PLAN_MOVED, "ccccc", {"before": "aaaaa", "rank": 1})]
    moved += [(EventKind.PLAN_EDITED, "bbbbb", {"sections": ["goal"]})]
    rows = [
        PlanRow(PlanId(plan_id), PlanStatus.QUEUED, position)
        for plan_id, position in (("ccccc", 5000), ("aaaaa", 6024), ("bbbbb", 7048))
    ]
    assert journal_issues(journal(*moved), rows) == []
    pulled = [*added, (EventKind.PLAN_PULLED, "aaaaa", {})]
    stray = [*pulled, (EventKind.PLAN_MOVED, "ccccc", {"before": "aaaaa", "rank": 1})]
    stray += [(EventKind.PLAN_EDITED, "aaaaa", {"sections": ["goal"]})]
    rest = [
        PlanRow(PlanId("aaaaa"), PlanStatus.ACTIVE, None, "main"),
        PlanRow(PlanId("bbbbb"), PlanStatus.QUEUED, 2),
        PlanRow(PlanId("ccccc"), PlanStatus.QUEUED, 3),
    ]
    assert journal_issues(journal(*stray), rest) == [
        "journal event 5 moves ccccc before aaaaa, which is not another queued plan",
        "journal event 6 (plan_edited) finds plan aaaaa active",
    ]


def journal(*steps: Step) -> list[Event]:
    """A journal of these steps, by a person, at one instant."""
    at = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    return [
        Event(seq=seq, kind=kind, at=at, actor=Actor.PERSON, plan_id=plan_id, detail=detail)
        for seq, (kind, plan_id, detail) in enumerate(steps, start=1)
    ]
