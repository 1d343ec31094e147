"""Arbitrary agent edits of one machine's plan file while the plan is finished on another
machine (two catalogs with their own sessions folders on one PostgreSQL database): the first
machine's next open keeps every line the agent added, in the stored plan or in recovered/,
and the other machine's finish reports no salvage of a file it never had.
"""

import asyncio
import shutil
import tempfile
from collections.abc import Coroutine
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nineplan_adapters.config import Settings
from nineplan_core.model import PlanId, SessionName
from nineplan_core.results import Finished
from nineplan_core.service import NinePlan
from tests.fakes import PLAN, open_service, postgres_schema
from tests.property.test_plan_edits import (
    STORED_EXAMPLES,
    _apply,
    _kept,
    _needs_checking,
    _stored_lines,
    edit,
)

pytestmark = pytest.mark.postgres
T = TypeVar("T")


class TwoMachines:
    """Machines A and B, each a service on its own sessions folder, on one fresh schema."""

    def __init__(self) -> None:
        self.runner = asyncio.Runner()
        self.stack = AsyncExitStack()
        self.root = Path(tempfile.mkdtemp(prefix="nineplan-machines-"))
        url = self.run(self.stack.enter_async_context(postgres_schema()))
        base = Settings(storage="sqlite", database_url=url)
        self.a, self.b = (
            self.run(
                self.stack.enter_async_context(
                    open_service(attrs.evolve(base, sessions_path=self.root / side), seed=seed)
                )
            )
            for side, seed in (("a", 1), ("b", 2))
        )
        self.name = self.run(self.a.create_session("two machines")).session.name

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.runner.run(coroutine)

    def close(self) -> None:
        self.run(self.stack.aclose())
        self.runner.close()
        shutil.rmtree(self.root, ignore_errors=True)

    async def example(
        self, edits: list[tuple[str, Any, Any]], bom: bool, crlf: bool, finish: str
    ) -> None:
        name = self.name
        await self.a.add_plan(name, **PLAN)
        pulled = await self.a.pull_plan(name)
        path = Path(pulled.path)
        data, added = _apply(pulled.text or "", edits, bom, crlf)
        path.write_bytes(data)
        recovered = self.root / "a" / name / "recovered"
        recovered.mkdir(exist_ok=True)
        before = set(recovered.iterdir())
        done: Finished = (
            await self.b.complete_plan(name, "done on B")
            if finish == "complete"
            else await self.b.discard_plan(name, "dropped on B")
        )
        # B never had a file of this plan: there was nothing of B's to salvage.
        assert done.salvage is None, done.salvage
        state = await self.a.resume_session(name)
        assert not path.exists()
        stored = await _plan(self.a, name, pulled.plan.id)
        copies = [p.read_bytes() for p in recovered.iterdir() if p not in before]
        lines = _stored_lines(stored)
        for line in filter(_needs_checking, added):
            assert _kept(line, lines) or data in copies, (line, stored, copies)
        assert bool(copies) == bool(state.kept), state.kept


async def _plan(service: NinePlan, name: str, plan_id: str) -> Any:
    store = await service.catalog.open(SessionName(name))
    async with store.reading() as reader:
        return await reader.plan(PlanId(plan_id))


def test_every_line_written_on_a_is_stored_or_recovered_when_b_finishes_the_plan():
    """Whatever the agent on machine A does to its plan file, when machine B completes or
    discards the plan, A's next resume keeps every line it added (in the stored plan or in
    the whole file moved to A's recovered/), and its result names the file it moved."""
    machines = TwoMachines()
    try:

        @settings(max_examples=STORED_EXAMPLES, deadline=None)
        @given(
            edits=st.lists(edit, min_size=1, max_size=5),
            bom=st.booleans(),
            crlf=st.booleans(),
            finish=st.sampled_from(["complete", "discard"]),
        )
        def check(edits: list[tuple[str, Any, Any]], bom: bool, crlf: bool, finish: str) -> None:
            machines.run(machines.example(edits, bom, crlf, finish))

        check()
    finally:
        machines.close()
