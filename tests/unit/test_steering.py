"""A person's steering (move, drop) held to one contract on every storage backend."""

import datetime as dt

import pytest

from nineplan_core.errors import (
    InvalidInputError,
    InvalidTransitionError,
    PlanHeldByAgentError,
    PlanNotFoundError,
)
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, PlanContent, PlanId
from nineplan_core.plan_file import render
from nineplan_core.workers import MAIN
from tests.fakes import PLAN, Backend


async def queue_of(backend: Backend, name: str) -> list[str]:
    return [entry.goal for entry in (await backend.service.session_state(name)).queue]


async def session_with(backend: Backend, *goals: str) -> tuple[str, dict[str, PlanId]]:
    name = await backend.session()
    ids = {}
    for goal in goals:
        ids[goal] = (await backend.service.add_plan(name, **{**PLAN, "goal": goal})).plan.id
    return name, ids


async def test_move_to_the_front_is_pulled_next(backend: Backend):
    """A plan moved to the front has rank 1 and is what the agent pulls next."""
    name, ids = await session_with(backend, "A", "B", "C")
    moved = await backend.service.move_plan(name, ids["C"], "front")
    assert moved.rank == 1
    assert await queue_of(backend, name) == ["C", "A", "B"]
    assert (await backend.service.pull_plan(name)).plan.id == ids["C"]


async def test_move_to_the_back_goes_last_and_keeps_the_file(backend: Backend):
    """A plan moved to the back ranks last; its file (with any edits) is left as it was."""
    name, ids = await session_with(backend, "A", "B", "C")
    before = await backend.plan_text(name, ids["A"])
    moved = await backend.service.move_plan(name, ids["A"], "back")
    assert moved.rank == 3
    assert await queue_of(backend, name) == ["B", "C", "A"]
    assert await backend.plan_text(name, ids["A"]) == before
    assert (await backend.service.validate_session(name)).valid


async def test_drop_discards_a_queued_plan_with_its_reason(backend: Backend):
    """A dropped plan leaves the queue and its file, is noted with the reason, not searchable."""
    name, ids = await session_with(backend, "A", "B")
    dropped = await backend.service.drop_plan(name, ids["A"], "  not needed any more ")
    assert dropped.queue_length == 1
    assert dropped.plan.status is PlanStatus.DISCARDED
    assert dropped.plan.notes.endswith("Dropped by a person: not needed any more")
    assert await queue_of(backend, name) == ["B"]
    assert await backend.plan_text(name, ids["A"]) is None
    with pytest.raises(PlanNotFoundError):
        await backend.service.get_history(name, ids["A"])
    assert (await backend.service.validate_session(name)).valid


async def test_drop_keeps_what_was_written_in_the_plan_file(backend: Backend):
    """Notes written into a queued plan's file before it is dropped end up in the stored plan."""
    name, ids = await session_with(backend, "A")
    content = (await backend.service.move_plan(name, ids["A"], "front")).plan.content
    await backend.write_plan_text(name, ids["A"], render(content, "found the old schema"))
    dropped = await backend.service.drop_plan(name, ids["A"], "superseded")
    assert dropped.plan.notes.startswith("found the old schema")


async def test_drop_salvages_a_messy_plan_file(backend: Backend):
    """Text that fits no section of a queued plan's file is kept in the dropped plan's notes."""
    name, ids = await session_with(backend, "A")
    text = await backend.plan_text(name, ids["A"])
    assert text is not None
    await backend.write_plan_text(name, ids["A"], "scribbled above the headings\n" + text)
    dropped = await backend.service.drop_plan(name, ids["A"], "superseded")
    assert "scribbled above the headings" in dropped.plan.notes


async def test_the_active_plan_is_the_agents(backend: Backend):
    """Moving or dropping the active plan is refused, and the plan stays active, file intact."""
    name, ids = await session_with(backend, "A", "B")
    await backend.service.pull_plan(name)
    text = await backend.plan_text(name, ids["A"])
    with pytest.raises(PlanHeldByAgentError) as refused:
        await backend.service.move_plan(name, ids["A"], "back")
    assert refused.value.category == "VALIDATION_ERROR"
    with pytest.raises(PlanHeldByAgentError):
        await backend.service.drop_plan(name, ids["A"], "stop")
    state = await backend.service.session_state(name)
    assert state.active_plan is not None
    assert state.active_plan.id == ids["A"]
    assert await backend.plan_text(name, ids["A"]) == text


async def test_finished_or_unknown_plans_cannot_be_steered(backend: Backend):
    """Completed, discarded and unknown ids are PLAN_NOT_FOUND (queued); bad input names its field."""
    name, ids = await session_with(backend, "A", "B")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "done")
    await backend.service.drop_plan(name, ids["B"], "no")
    for plan_id in (ids["A"], ids["B"], "zzzzz"):
        with pytest.raises(PlanNotFoundError, match="queued"):
            await backend.service.move_plan(name, plan_id, "front")
        with pytest.raises(PlanNotFoundError):
            await backend.service.drop_plan(name, plan_id, "again")
    with pytest.raises(InvalidInputError, match="position"):
        await backend.service.move_plan(name, ids["A"], "top")
    with pytest.raises(InvalidInputError, match="reason"):
        await backend.service.drop_plan(name, ids["A"], "  ")
    with pytest.raises(InvalidInputError, match="plan_id"):
        await backend.service.move_plan(name, "../x", "front")


def test_only_a_person_discards_a_queued_plan():
    """The lifecycle keeps queued -> discarded for the person's path: the agent's discard refuses it."""
    now = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    queued = Plan(id=PlanId("aaaaa"), content=PlanContent(**PLAN), position=1, created_at=now)
    with pytest.raises(InvalidTransitionError):
        queued.discard(reason="no", at=now)
    assert queued.drop(reason="no", at=now).status is PlanStatus.DISCARDED
    with pytest.raises(InvalidTransitionError):
        queued.pull(worker=MAIN, at=now).move(position=3)
    with pytest.raises(InvalidTransitionError):
        queued.pull(worker=MAIN, at=now).drop(reason="no", at=now)
