"""One read, one transaction: a pull on a session this process has open reads the plan's file
at most once and its row once, in one transaction, whether it gives the plan or refuses.

Counted at the boundaries the SQLite adapter really crosses: the plan file's opens for reading
(the interpreter's `open` audit events, which `os.open` and `open` both raise) and the
statements of the session's connection (found by the `sqlite3.connect/handle` audit event, and
traced with `set_trace_callback`).
"""

import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

from nineplan_adapters.config import Settings
from nineplan_adapters.storage.clock import FixedClock
from nineplan_adapters.storage.sqlite.queries import ACTIVE_ALL, BY_ID, FRONT
from nineplan_core.callers import Caller
from nineplan_core.errors import LeaseLiveError, NinePlanError, PlanAlreadyActiveError
from nineplan_core.journal import NewEvent
from nineplan_core.model import LEASE_MINUTES, PlanId, Session, SessionName
from nineplan_core.ports import (
    RequestLog,
    SessionCatalog,
    SessionReader,
    SessionStore,
    SessionTx,
    SessionWatch,
)
from nineplan_core.results import SessionSummary
from tests.fakes import PLAN, Backend, make_service, open_backend, open_service, postgres_schema

_WRITES = ("INSERT", "UPDATE", "DELETE")


@attrs.define
class Probe:
    """What the process does at the two boundaries while a probe is on: the plan file's opens
    for reading, and the SQL each SQLite connection opened since the hook went in runs."""

    connections: list[tuple[str, sqlite3.Connection]] = attrs.field(factory=list)
    watched: str | None = None
    reads: int = 0
    #: How often the watched file's folder was listed (what a reconcile of the files does).
    listings: int = 0
    traced: list[str] = attrs.field(factory=list)
    _opening: list[str] = attrs.field(factory=list)

    def hear(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "sqlite3.connect":
            self._opening.append(str(args[0]))
        elif event == "sqlite3.connect/handle" and self._opening:
            self.connections.append((self._opening.pop(), args[0]))
        elif self.watched is None:
            return
        elif event == "open" and str(args[0]) == self.watched:
            flags = args[2] if isinstance(args[2], int) else 0
            mode = args[1] if isinstance(args[1], str) else ""
            writing = flags & (os.O_WRONLY | os.O_RDWR) or any(c in mode for c in "wax+")
            self.reads += not writing
        elif event == "os.listdir" and str(args[0]) == str(Path(self.watched).parent):
            self.listings += 1

    @contextmanager
    def watching(self, path: str) -> Iterator[None]:
        """Count the block's reads of the file at `path` and listings of its folder."""
        self.watched, self.reads, self.listings = path, 0, 0
        try:
            yield
        finally:
            self.watched = None

    def session_connection(self) -> sqlite3.Connection:
        """The store's connection to the session database (the newest one opened)."""
        return next(db for uri, db in reversed(self.connections) if "session.db" in uri)


_PROBES: list[Probe] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    for probe in _PROBES:
        probe.hear(event, args)


@pytest.fixture
def probe() -> Iterator[Probe]:
    """A probe on for the test (the audit hook goes in once per process: hooks stay)."""
    if not getattr(sys, "_nineplan_one_read_hook", False):
        sys.addaudithook(_hook)
        sys._nineplan_one_read_hook = True  # type: ignore[attr-defined]
    probe = Probe()
    _PROBES.append(probe)
    yield probe
    _PROBES.remove(probe)


@attrs.frozen
class Counts:
    """What one call did: plan-file reads, the plan's row read, statements, transactions."""

    file_reads: int
    row_reads: int
    statements: list[str]

    @property
    def transactions(self) -> int:
        return sum(1 for sql in self.statements if sql.startswith("BEGIN"))


def _own_statements(traced: list[str]) -> list[str]:
    """The statements the store ran, from what the trace saw.

    A statement nested in another (the full-text index's own `PRAGMA data_version`) is traced
    with a leading `--`; a trigger's program is traced as its statement again (sqlite3 traces
    the expanded SQL of the statement that runs it): both are dropped.
    """
    own: list[str] = []
    for sql in traced:
        if sql.startswith("--"):
            continue
        if own and sql == own[-1] and sql.startswith(_WRITES):
            continue
        own.append(sql)
    return own


def _row_reads(statements: list[str], plan_id: PlanId, *, active: bool) -> int:
    """How many statements read the plan's row: by its id, as the front of the queue (it was
    queued), or among the active plans (it was active)."""
    by_id = BY_ID.replace("?", f"'{plan_id}'")
    whole = ACTIVE_ALL if active else FRONT
    return sum(1 for sql in statements if sql in (by_id, whole))


@contextmanager
def counting(
    probe: Probe, backend: Backend, name: str, plan_id: PlanId, *, active: bool
) -> Iterator[list[Counts]]:
    """Count what the block does about `plan_id` (its file, its row), on session `name`."""
    path = str(Path(backend.root) / name / "plans" / f"{plan_id}.txt")
    db = probe.session_connection()
    probe.traced = []
    db.set_trace_callback(probe.traced.append)
    seen: list[Counts] = []
    try:
        with probe.watching(path):
            yield seen
    finally:
        db.set_trace_callback(None)
        own = _own_statements(probe.traced)
        seen.append(Counts(probe.reads, _row_reads(own, plan_id, active=active), own))


@pytest.fixture
async def sqlite(probe: Probe, tmp_path: Path) -> AsyncIterator[Backend]:
    async with open_backend("sqlite", tmp_path) as opened:
        yield opened


async def _edited_front(backend: Backend) -> tuple[str, PlanId]:
    """A session this process has open, two plans queued, the front one's file edited by a
    person (a line added to its Notes)."""
    name = await backend.session()
    front = (await backend.service.add_plan(name, **PLAN)).plan.id
    await backend.service.add_plan(name, **{**PLAN, "goal": "Second"})
    await backend.service.resume_session(name)
    text = await backend.plan_text(name, front)
    assert text is not None
    await backend.write_plan_text(name, front, f"{text}- a person's note\n")
    return name, front


async def test_a_pull_of_an_edited_front_plan_reads_its_file_and_row_once(
    sqlite: Backend, probe: Probe
):
    """The person's edit reaches the plan the worker gets, and the pull read the file once,
    the plan's row once, in one transaction."""
    name, front = await _edited_front(sqlite)
    with counting(probe, sqlite, name, front, active=False) as seen:
        placed = await sqlite.service.pull_plan(name, caller=Caller.of("w1"))
    (counts,) = seen
    assert placed.plan.id == front
    assert "- a person's note" in placed.plan.notes.split("\n")
    assert (counts.file_reads, counts.row_reads, counts.transactions) == (1, 1, 1), counts
    assert len(counts.statements) <= 9, counts.statements


async def test_a_refused_pull_renews_the_lease_in_its_one_transaction(
    sqlite: Backend, probe: Probe
):
    """A worker that holds a plan and pulls again is refused; its lease is renewed in that
    call's one transaction, which reads the held plan's row once and its file not at all."""
    name, front = await _edited_front(sqlite)
    await sqlite.service.pull_plan(name, caller=Caller.of("w1"))
    sqlite.clock.advance(60)
    with (
        counting(probe, sqlite, name, front, active=True) as seen,
        pytest.raises(PlanAlreadyActiveError),
    ):
        await sqlite.service.pull_plan(name, caller=Caller.of("w1"))
    (counts,) = seen
    held = (await sqlite.service.session_state(name)).active_plans[0]
    assert held.plan.last_seen == sqlite.clock()
    assert (counts.file_reads, counts.row_reads, counts.transactions) == (0, 1, 1), counts
    assert len(counts.statements) <= 5, counts.statements


async def test_a_take_over_refused_for_a_live_lease_reads_the_plan_once(
    sqlite: Backend, probe: Probe
):
    """Worker w2 asks to take over w1's plan while w1's lease is live: refused, in one
    transaction that reads the plan's row once and its file not at all."""
    name, front = await _edited_front(sqlite)
    await sqlite.service.pull_plan(name, caller=Caller.of("w1"))
    with (
        counting(probe, sqlite, name, front, active=True) as seen,
        pytest.raises(LeaseLiveError),
    ):
        await sqlite.service.pull_plan(name, take_over=front, caller=Caller.of("w2"))
    (counts,) = seen
    assert (counts.file_reads, counts.row_reads, counts.transactions) == (0, 1, 1), counts
    assert len(counts.statements) <= 4, counts.statements


async def test_a_take_over_of_a_stale_plan_reads_its_file_and_row_once(
    sqlite: Backend, probe: Probe
):
    """Once w1's lease has lapsed, w2's take-over reads the plan's file once (what it hands
    w2) and its row once, in one transaction."""
    name, front = await _edited_front(sqlite)
    await sqlite.service.pull_plan(name, caller=Caller.of("w1"))
    sqlite.clock.advance(LEASE_MINUTES * 60 + 1)
    with counting(probe, sqlite, name, front, active=True) as seen:
        taken = await sqlite.service.pull_plan(name, take_over=front, caller=Caller.of("w2"))
    (counts,) = seen
    assert taken.plan.worker == "w2"
    assert "- a person's note" in (taken.text or "")
    assert (counts.file_reads, counts.row_reads, counts.transactions) == (1, 1, 1), counts


@attrs.define
class UnitsOfWork:
    """The read views and transactions opened on every store of a catalog, in order."""

    opened: list[str] = attrs.field(factory=list)


@attrs.define
class CountingStore:
    """A SessionStore that notes each read view and transaction opened on it."""

    store: SessionStore
    units: UnitsOfWork
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

    def reading(self, *, snapshot: bool = True) -> AbstractAsyncContextManager[SessionReader]:
        self.units.opened.append("reading")
        return self.store.reading(snapshot=snapshot)

    def transaction(self) -> AbstractAsyncContextManager[SessionTx]:
        self.units.opened.append("transaction")
        return self.store.transaction()


@attrs.define
class CountingCatalog:
    """A SessionCatalog whose stores note their units of work (every call handed on)."""

    catalog: SessionCatalog
    units: UnitsOfWork

    async def create(self, session: Session, first: NewEvent) -> SessionStore:
        return CountingStore(await self.catalog.create(session, first), self.units)

    async def open(self, name: SessionName) -> SessionStore:
        return CountingStore(await self.catalog.open(name), self.units)

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


def counted(backend: Backend, units: UnitsOfWork) -> Backend:
    """`backend` with use cases of their own (a process of its own) over a catalog whose
    units of work are noted in `units`."""
    service = make_service(CountingCatalog(backend.catalog, units), backend.clock)
    return attrs.evolve(backend, service=service)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def files_backend(probe: Probe, tmp_path: Path, request: pytest.FixtureRequest):
    """The SQLite store, and a PostgreSQL one (whose plan files are a machine's copy)."""
    async with open_backend(request.param, tmp_path) as opened:
        yield opened


async def test_a_pull_and_a_refused_pull_are_one_transaction_on_each_store(
    files_backend: Backend, probe: Probe
):
    """On a session this process has open, whether its files are the session's own (SQLite)
    or a machine's copy of a shared database (PostgreSQL): a pull of an edited front plan is
    one transaction that reads the file once and does not list the plan folder (the copy is
    known to be current since the process reconciled it), and a refused pull is one
    transaction too (its lease renewed in it) that reads no file."""
    units = UnitsOfWork()
    backend = counted(files_backend, units)
    name, front = await _edited_front(backend)
    path = (await backend.catalog.open(SessionName(name))).plan_path(front)
    units.opened.clear()
    with probe.watching(path):
        placed = await backend.service.pull_plan(name, caller=Caller.of("w1"))
    assert "- a person's note" in placed.plan.notes.split("\n")
    assert (units.opened, probe.reads, probe.listings) == (["transaction"], 1, 0)
    units.opened.clear()
    backend.clock.advance(60)
    with probe.watching(path), pytest.raises(PlanAlreadyActiveError):
        await backend.service.pull_plan(name, caller=Caller.of("w1"))
    assert (units.opened, probe.reads, probe.listings) == (["transaction"], 0, 0)


@pytest.mark.postgres
async def test_a_plan_added_on_another_machine_gets_its_file_here_in_the_pulls_transaction(
    probe: Probe, tmp_path: Path
):
    """Machine A has reconciled its copy of a shared session; machine B adds a plan. A's next
    pull brings A's copy up to the database in its own one transaction (the new plan's file is
    rendered in A's folder); the pull after that finds the copy current and lists nothing."""
    clock = FixedClock()
    async with (
        postgres_schema() as url,
        open_service(Settings(sessions_path=tmp_path / "a", database_url=url), clock=clock) as a,
        open_service(Settings(sessions_path=tmp_path / "b", database_url=url), clock=clock) as b,
    ):
        units = UnitsOfWork()
        machine_a = make_service(CountingCatalog(a.catalog, units), clock)
        name = (await machine_a.create_session()).session.name
        for goal in ("First", "Third"):
            await machine_a.add_plan(name, **{**PLAN, "goal": goal})
        await machine_a.resume_session(name)
        added = await b.add_plan(name, **{**PLAN, "goal": "Second"})
        store = await a.catalog.open(SessionName(name))
        here = Path(store.plan_path(added.plan.id))
        assert not here.exists()
        units.opened.clear()
        with probe.watching(str(here)):
            await machine_a.pull_plan(name, caller=Caller.of("w1"))
        assert (units.opened, probe.listings) == (["transaction"], 1)
        assert here.exists()
        units.opened.clear()
        with probe.watching(str(here)):
            await machine_a.pull_plan(name, caller=Caller.of("w2"))
        assert (units.opened, probe.listings) == (["transaction"], 0)


async def test_a_resume_that_reconciles_hears_from_its_worker_in_that_transaction(
    files_backend: Backend,
):
    """A worker resuming a session in a process that has not opened it yet (or on a copy of a
    shared session, which every resume refreshes): one transaction reconciles the files,
    renews the worker's lease and reads the state. On a session the process has open (its
    own files), the renewal is a write of its own and the state a read view: a read holds
    no writer's lock while it reads the queue."""
    name, _ = await _edited_front(files_backend)
    await files_backend.service.pull_plan(name, caller=Caller.of("w1"))
    files_backend.clock.advance(60)
    units = UnitsOfWork()
    backend = counted(files_backend, units)
    state = await backend.service.resume_session(name, caller=Caller.of("w1"))
    assert units.opened == ["transaction"]
    assert state.active_plan is not None
    assert state.active_plan.last_seen == backend.clock()
    units.opened.clear()
    await backend.service.resume_session(name, caller=Caller.of("w1"))
    mirror = files_backend.kind == "postgres"
    assert units.opened == (["transaction"] if mirror else ["transaction", "reading"])
