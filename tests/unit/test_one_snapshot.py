"""What shows many parts at once reads them in one snapshot, so they cannot disagree: a
session page's board, and a plan shown in full (`nineplan show`)."""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import attrs
import httpx2

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.web import web_app
from nineplan_adapters.entrypoints.web.pages import Pages, SessionView
from nineplan_adapters.entrypoints.web.security import WebSecurity
from nineplan_core.callers import Caller
from nineplan_core.errors import NinePlanError
from nineplan_core.journal import NewEvent
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanId, Session, SessionName
from nineplan_core.ports import (
    RequestLog,
    SessionCatalog,
    SessionReader,
    SessionStore,
    SessionTx,
    SessionWatch,
)
from nineplan_core.results import SessionSummary
from tests.fakes import PLAN, Backend


@attrs.define
class Readings:
    """How many read views were opened, on every store of a catalog."""

    count: int = 0


@attrs.define
class CountingStore:
    """A SessionStore that counts the read views opened on it and hands every call on."""

    store: SessionStore
    readings: Readings
    files_mirror: bool = attrs.field(init=False)
    machine: str | None = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.files_mirror, self.machine = self.store.files_mirror, self.store.machine

    @property
    def name(self) -> SessionName:
        return self.store.name

    @property
    def path(self) -> str:
        return self.store.path

    def plan_path(self, plan_id: PlanId) -> str:
        return self.store.plan_path(plan_id)

    @asynccontextmanager
    async def reading(self, *, snapshot: bool = True) -> AsyncIterator[SessionReader]:
        self.readings.count += 1
        async with self.store.reading(snapshot=snapshot) as reader:
            yield reader

    def transaction(self) -> AbstractAsyncContextManager[SessionTx]:
        return self.store.transaction()


@attrs.define
class CountingCatalog:
    """A SessionCatalog whose stores count their read views (every call handed on)."""

    catalog: SessionCatalog
    readings: Readings = attrs.field(factory=Readings)

    async def create(self, session: Session, first: NewEvent) -> SessionStore:
        return CountingStore(await self.catalog.create(session, first), self.readings)

    async def open(self, name: SessionName) -> SessionStore:
        return CountingStore(await self.catalog.open(name), self.readings)

    async def names(self) -> list[SessionName]:
        return await self.catalog.names()

    async def summaries(self, names: list[SessionName]) -> list[SessionSummary | NinePlanError]:
        return await self.catalog.summaries(names)

    async def archived(self) -> frozenset[SessionName]:
        return await self.catalog.archived()

    async def set_archived(self, name: SessionName, *, archived: bool) -> None:
        await self.catalog.set_archived(name, archived=archived)

    async def delete(self, name: SessionName) -> bool:
        return await self.catalog.delete(name)

    @property
    def creations(self) -> RequestLog:
        return self.catalog.creations

    def watch(self) -> SessionWatch:
        return self.catalog.watch()


async def _busy_session(backend: Backend) -> str:
    """A session with two workers' active plans, one queued, one completed, one discarded."""
    name = await backend.session()
    for goal in ("first", "second", "third", "fourth", "fifth"):
        await backend.service.add_plan(name, **{**PLAN, "goal": goal})
    await backend.service.pull_plan(name, caller=Caller.of("w1"))
    await backend.service.complete_plan(name, "done", caller=Caller.of("w1"))
    await backend.service.pull_plan(name, caller=Caller.of("w1"))
    await backend.service.discard_plan(name, "not needed", caller=Caller.of("w1"))
    await backend.service.pull_plan(name, caller=Caller.of("w1"))
    await backend.service.pull_plan(name, caller=Caller.of("w2"))
    return name


async def test_a_session_page_and_its_live_fragments_are_read_in_one_snapshot(backend: Backend):
    """The board (state, both active plans' files, the Done column, the chart, the journal)
    opens one read view per render, however many plans are active; its parts agree."""
    name = await _busy_session(backend)
    catalog = CountingCatalog(backend.catalog)
    service = attrs.evolve(backend.service, catalog=catalog)
    app = web_app(service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        await service.session_state(name)  # the session is opened (and reconciled) once first
        catalog.readings.count = 0
        page = await http.get(f"/sessions/{name}")
    assert page.status_code == 200, page.text
    assert catalog.readings.count == 1
    for shown in ("third", "fourth", "fifth", "first", "second", "not needed"):
        assert shown in page.text

    pages = Pages(service, WebSecurity([], []))
    catalog.readings.count = 0
    fragments, state = await pages.fragments(name, SessionView(path=f"/sessions/{name}"))
    assert catalog.readings.count == 1
    assert [hold.worker for hold in state.active_plans] == ["w1", "w2"]
    assert {"summary", "chart", "active", "queue", "done", "journal"} <= fragments.keys()


async def test_a_plan_in_full_is_read_in_one_snapshot(backend: Backend):
    """`plan_in_full` (what `nineplan show` prints) opens one read view and gives what the
    three separate reads gave: the stored plan, its working copy and the plan as written; a
    finished plan has no working copy."""
    name = await _busy_session(backend)
    catalog = CountingCatalog(backend.catalog)
    service = attrs.evolve(backend.service, catalog=catalog)
    queued = (await service.session_state(name)).queue[0].id
    text = await backend.plan_text(name, queued)
    assert text is not None
    await backend.write_plan_text(name, queued, text.replace("fifth", "fifth, as edited"))
    for plan_id in (queued, (await service.session_state(name)).active_plans[0].plan.id):
        catalog.readings.count = 0
        copy = await service.plan_in_full(name, plan_id)
        assert catalog.readings.count == 1
        assert copy.plan == await service.get_plan(name, plan_id)
        assert copy.text == await service.plan_file_text(name, plan_id)
        assert copy.written == await service.plan_as_written(name, plan_id)
        assert copy.written is not None
        edited = "fifth, as edited" if plan_id == queued else copy.plan.goal
        assert copy.written.content.goal == edited
    assert copy.plan.status is PlanStatus.ACTIVE
    finished = await service.finished_plans(name)
    catalog.readings.count = 0
    done = await service.plan_in_full(name, finished[0].id)
    assert catalog.readings.count == 1
    assert (done.plan, done.text, done.written) == (finished[0], None, None)


async def test_a_plan_page_and_its_edit_form_are_read_in_one_snapshot(backend: Backend):
    """The web view's page of a plan, and the edit form of a queued one, open one read view
    each: the plan, its file and the sections as the file holds them agree."""
    name = await _busy_session(backend)
    catalog = CountingCatalog(backend.catalog)
    service = attrs.evolve(backend.service, catalog=catalog)
    queued = (await service.session_state(name)).queue[0].id
    app = web_app(service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        for path in (f"/sessions/{name}/plans/{queued}", f"/sessions/{name}/plans/{queued}/edit"):
            catalog.readings.count = 0
            page = await http.get(path)
            assert page.status_code == 200, page.text
            assert "fifth" in page.text
            assert catalog.readings.count == 1


async def test_a_plan_in_full_brings_its_neighbours_in_the_same_snapshot(backend: Backend):
    """`plan_in_full` of B (after A, and C after B) gives A as what it waits for and C as what
    needs it, as stored, from the one read view it opens; the web view's plan page of B, too."""
    name = await backend.session()
    ids: list[str] = []
    for goal, after in (("A", []), ("B", [0]), ("C", [1])):
        named = [ids[index] for index in after]
        placed = await backend.service.add_plan(name, **{**PLAN, "goal": goal}, after=named)
        ids.append(placed.plan.id)
    catalog = CountingCatalog(backend.catalog)
    service = attrs.evolve(backend.service, catalog=catalog)
    copy = await service.plan_in_full(name, ids[1])
    assert catalog.readings.count == 1
    assert [plan.id for plan in copy.waits_for] == [ids[0]]
    assert [plan.id for plan in copy.needed_by] == [ids[2]]
    assert copy.waits_for[0] == await service.get_plan(name, ids[0])
    app = web_app(service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        catalog.readings.count = 0
        page = await http.get(f"/sessions/{name}/plans/{ids[1]}")
        assert page.status_code == 200, page.text
        assert catalog.readings.count == 1
        assert "Needed by" in page.text
