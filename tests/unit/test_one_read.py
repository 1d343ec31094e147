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
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest

from nineplan_adapters.storage.sqlite.queries import ACTIVE_ALL, BY_ID, FRONT
from nineplan_core.errors import LeaseLiveError, PlanAlreadyActiveError
from nineplan_core.model import LEASE_MINUTES, PlanId
from tests.fakes import PLAN, Backend, open_backend

_WRITES = ("INSERT", "UPDATE", "DELETE")


@attrs.define
class Probe:
    """What the process does at the two boundaries while a probe is on: the plan file's opens
    for reading, and the SQL each SQLite connection opened since the hook went in runs."""

    connections: list[tuple[str, sqlite3.Connection]] = attrs.field(factory=list)
    watched: str | None = None
    reads: int = 0
    traced: list[str] = attrs.field(factory=list)
    _opening: list[str] = attrs.field(factory=list)

    def hear(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "sqlite3.connect":
            self._opening.append(str(args[0]))
        elif event == "sqlite3.connect/handle" and self._opening:
            self.connections.append((self._opening.pop(), args[0]))
        elif event == "open" and self.watched is not None and str(args[0]) == self.watched:
            flags = args[2] if isinstance(args[2], int) else 0
            mode = args[1] if isinstance(args[1], str) else ""
            writing = flags & (os.O_WRONLY | os.O_RDWR) or any(c in mode for c in "wax+")
            self.reads += not writing

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
    probe.watched, probe.reads, probe.traced = path, 0, []
    db.set_trace_callback(probe.traced.append)
    seen: list[Counts] = []
    try:
        yield seen
    finally:
        db.set_trace_callback(None)
        probe.watched = None
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
        placed = await sqlite.service.pull_plan(name, worker="w1")
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
    await sqlite.service.pull_plan(name, worker="w1")
    sqlite.clock.advance(60)
    with (
        counting(probe, sqlite, name, front, active=True) as seen,
        pytest.raises(PlanAlreadyActiveError),
    ):
        await sqlite.service.pull_plan(name, worker="w1")
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
    await sqlite.service.pull_plan(name, worker="w1")
    with (
        counting(probe, sqlite, name, front, active=True) as seen,
        pytest.raises(LeaseLiveError),
    ):
        await sqlite.service.pull_plan(name, worker="w2", take_over=front)
    (counts,) = seen
    assert (counts.file_reads, counts.row_reads, counts.transactions) == (0, 1, 1), counts
    assert len(counts.statements) <= 4, counts.statements


async def test_a_take_over_of_a_stale_plan_reads_its_file_and_row_once(
    sqlite: Backend, probe: Probe
):
    """Once w1's lease has lapsed, w2's take-over reads the plan's file once (what it hands
    w2) and its row once, in one transaction."""
    name, front = await _edited_front(sqlite)
    await sqlite.service.pull_plan(name, worker="w1")
    sqlite.clock.advance(LEASE_MINUTES * 60 + 1)
    with counting(probe, sqlite, name, front, active=True) as seen:
        taken = await sqlite.service.pull_plan(name, worker="w2", take_over=front)
    (counts,) = seen
    assert taken.plan.worker == "w2"
    assert "- a person's note" in (taken.text or "")
    assert (counts.file_reads, counts.row_reads, counts.transactions) == (1, 1, 1), counts
