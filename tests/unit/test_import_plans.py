"""`import_plans`: many plans in one transaction, in order, all or none, on every backend."""

from pathlib import Path

import attrs
import pytest

from nineplan_core.errors import FileSystemError, InvalidInputError, QueueFullError
from nineplan_core.model import PlanContent
from nineplan_core.plan_file import PlanText
from tests.fakes import PLAN, Backend, FailingPlanFiles, open_backend


def plans(*goals: str) -> list[PlanText]:
    return [PlanText(PlanContent(**{**PLAN, "goal": goal}), "") for goal in goals]


async def goals(backend: Backend, name: str) -> list[str]:
    return [entry.goal for entry in (await backend.service.session_state(name)).queue]


async def test_import_at_the_back_and_front_keeps_the_order(backend: Backend):
    """At the back the plans follow the queue in order; at the front they precede it in order;
    the ranks returned are where they stand, and each has its file."""
    name = await backend.session()
    await backend.service.add_plan(name, **PLAN)
    back = await backend.service.import_plans(name, plans("A", "B"))
    assert [p.rank for p in back] == [2, 3]
    front = await backend.service.import_plans(name, plans("X", "Y"), "front")
    assert [(p.plan.goal, p.rank) for p in front] == [("X", 1), ("Y", 2)]
    assert await goals(backend, name) == ["X", "Y", PLAN["goal"], "A", "B"]
    assert await backend.plan_text(name, front[0].plan.id) is not None
    assert (await backend.service.validate_session(name)).valid


async def test_import_keeps_notes(backend: Backend):
    """A plan imported with notes keeps them, in the store and in its file."""
    name = await backend.session()
    (placed,) = await backend.service.import_plans(
        name, [PlanText(PlanContent(**PLAN), "carried over")]
    )
    assert (await backend.service.get_plan(name, placed.plan.id)).notes == "carried over"
    assert "carried over" in (await backend.plan_text(name, placed.plan.id) or "")


async def test_an_invalid_plan_adds_none(backend: Backend):
    """A plan in the middle with a goal over the length limit refuses the whole import, naming
    its index."""
    name = await backend.session()
    limits = attrs.evolve(backend.service.limits, max_text_chars=40)
    service = attrs.evolve(backend.service, limits=limits)
    with pytest.raises(InvalidInputError, match=r"plan 2 of 3"):
        await service.import_plans(name, plans("A", "B" * 41, "C"))
    assert await goals(backend, name) == []


async def test_more_than_the_queue_takes_adds_none(backend: Backend):
    """An import the queue cannot hold whole is refused with QUEUE_FULL and adds nothing."""
    name = await backend.session()
    service = attrs.evolve(
        backend.service, limits=attrs.evolve(backend.service.limits, max_queue=2)
    )
    with pytest.raises(QueueFullError):
        await service.import_plans(name, plans("A", "B", "C"))
    assert await goals(backend, name) == []


@attrs.define
class FailingSecondWrite(FailingPlanFiles):
    """Plan files whose second write fails (a disk filling up in the middle of an import)."""

    writes: int = 0

    async def write(self, plan_id: str, data: bytes) -> None:
        self.writes += 1
        if self.writes == 2:
            self.failing = {"write"}
        await super().write(plan_id, data)


async def test_a_storage_failure_in_the_middle_adds_none(tmp_path: Path):
    """When the second plan's file cannot be written, no plan of the import is stored and the
    session stays valid."""
    failing = FailingSecondWrite(inner=None)  # type: ignore[arg-type] # set by open_backend
    async with open_backend("sqlite", tmp_path, failing=failing) as backend:
        name = await backend.session()
        with pytest.raises(FileSystemError):
            await backend.service.import_plans(name, plans("A", "B", "C"))
        assert await goals(backend, name) == []
        assert (await backend.service.validate_session(name)).valid


async def test_finished_plans_are_the_history_in_order(backend: Backend):
    """`finished_plans` lists completed and dropped plans in the order they finished, never a
    queued or active one."""
    name = await backend.session()
    placed = await backend.service.import_plans(name, plans("A", "B", "C", "D"))
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "did A")
    await backend.service.drop_plan(name, placed[2].plan.id, "not needed")
    await backend.service.pull_plan(name)
    finished = await backend.service.finished_plans(name)
    assert [(p.goal, p.status.value) for p in finished] == [
        ("A", "completed"), ("C", "discarded"),
    ]  # fmt: skip
