"""Limits are enforced: text size, max_results, queue length (exercised at 10,000 plans)."""

import time
from pathlib import Path

import pytest

from nineplan_adapters import open_nineplan
from nineplan_core.errors import InvalidInputError
from tests.fakes import PLAN


async def test_a_full_queue_refuses_more_plans_but_takes_deferrals(tmp_path: Path):
    """A full queue refuses new plans (naming the queue) but never refuses a deferral."""
    async with open_nineplan(tmp_path, max_queue=2, durability="normal") as nineplan:
        name = (await nineplan.create_session()).session.name
        await nineplan.add_plan(name, **PLAN)
        await nineplan.add_plan(name, **PLAN)
        with pytest.raises(InvalidInputError) as caught:
            await nineplan.add_plan(name, **PLAN)
        assert caught.value.field == "queue"
        await nineplan.pull_plan(name)
        await nineplan.add_plan(name, **PLAN)
        assert (await nineplan.defer_plan(name, "later")).rank == 3  # a deferral is never refused


async def test_the_queue_at_10000_plans(tmp_path: Path):
    """10,000 queued plans: ranks stay right, front insert and pull work, the 10,001st is refused."""
    async with open_nineplan(tmp_path, durability="normal") as nineplan:
        name = (await nineplan.create_session()).session.name
        started = time.perf_counter()
        for index in range(10_000):
            await nineplan.add_plan(name, **{**PLAN, "goal": f"plan {index}"})
        filled = time.perf_counter() - started
        with pytest.raises(InvalidInputError):
            await nineplan.add_plan(name, **PLAN)
        pulled = await nineplan.pull_plan(name)
        assert pulled.plan.goal == "plan 0"
        front = await nineplan.add_plan(name, **{**PLAN, "goal": "urgent"}, position="front")
        assert front.rank == 1
        deferred = await nineplan.defer_plan(name, "later", "back")
        assert deferred.rank == 10_001  # behind the 10,000 still queued
        state = await nineplan.session_state(name)
        assert [entry.rank for entry in state.queue] == list(range(1, 10_002))
        assert (await nineplan.validate_session(name)).valid
    print(f"filled 10,000 plans in {filled:.1f} s")  # noqa: T201 - shown with -s, for docs/reliability.md
