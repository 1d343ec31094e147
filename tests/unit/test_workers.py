"""Many agents on one queue (DESIGN §10), on every backend: one active plan per worker,
retries per worker, the journal's `detail.worker`, `last_seen` from the Clock port."""

import datetime as dt
import sqlite3
from pathlib import Path

import pytest

from nineplan_adapters.config import ConfigError, Settings
from nineplan_adapters.storage.clock import FixedClock
from nineplan_core.callers import Caller
from nineplan_core.errors import (
    DatabaseError,
    InvalidInputError,
    NoActivePlanError,
    PlanAlreadyActiveError,
    QueueEmptyError,
)
from nineplan_core.invariants import check
from nineplan_core.journal import Event, EventKind
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanId, PlanRow
from tests.fakes import (
    PLAN,
    Backend,
    open_backend,
    open_service,
    postgres_schema,
    worked_with_and_without_workers,
)

#: The lead agent beside named workers: a call naming no worker is refused there.
LEAD = Caller.of("main")

K = EventKind


async def queue_of(backend: Backend, count: int) -> tuple[str, list[PlanId]]:
    name = await backend.session()
    ids = [(await backend.service.add_plan(name, **PLAN)).plan.id for _ in range(count)]
    return name, ids


async def test_each_worker_holds_its_own_plan(backend: Backend):
    """A second worker pulls the next plan while the first holds one; each worker's pull,
    complete and state act on its own plan; a worker that holds one is refused a second."""
    service = backend.service
    name, (a, b, c) = await queue_of(backend, 3)
    assert (await service.pull_plan(name)).plan.id == a
    pulled = await service.pull_plan(name, caller=Caller.of("tests"))
    assert (pulled.plan.id, pulled.plan.worker) == (b, "tests")
    with pytest.raises(PlanAlreadyActiveError) as caught:
        await service.pull_plan(name, caller=Caller.of("tests"))
    assert caught.value.message == (  # several plans are worked on at once: whose is said
        f"Plan {b} is already active for worker tests; each worker works on one plan at a "
        f"time. Other workers hold 1 plan(s): {a} (main)."
    )
    with pytest.raises(PlanAlreadyActiveError) as main_caught:
        await service.pull_plan(name, caller=LEAD)
    assert main_caught.value.message == (
        f"Plan {a} is already active for worker main; each worker works on one plan at a "
        f"time. Other workers hold 1 plan(s): {b} (tests)."
    )
    state = await service.session_state(name, caller=Caller.of("tests"))
    assert state.active_plan is not None
    assert state.active_plan.id == b
    assert [(hold.plan.id, hold.worker) for hold in state.active_plans] == [
        (a, "main"),
        (b, "tests"),
    ]
    assert (await service.session_state(name)).active_plan.id == a  # type: ignore[union-attr]
    assert (await service.complete_plan(name, "done", caller=Caller.of("tests"))).plan.id == b
    assert (await service.pull_plan(name, caller=Caller.of("tests"))).plan.id == c
    report = await service.validate_session(name)
    assert report.valid, report.issues


async def test_a_worker_without_a_plan_is_told_so_by_name(backend: Backend):
    """Defer, complete and discard by a worker that holds no plan are NO_ACTIVE_PLAN naming
    the worker and the plans others hold; for a lone `main` the text is as it always was."""
    service = backend.service
    name, (a, _) = await queue_of(backend, 2)
    await service.pull_plan(name)
    for call in (
        service.defer_plan(name, "later", caller=Caller.of("docs")),
        service.complete_plan(name, "done", caller=Caller.of("docs")),
        service.discard_plan(name, "no", caller=Caller.of("docs")),
    ):
        with pytest.raises(NoActivePlanError) as caught:
            await call
        assert caught.value.message == (
            f"No plan is active for worker docs. Other workers hold 1 plan(s): {a} (main)."
        )
    await service.complete_plan(name, "done")
    with pytest.raises(NoActivePlanError) as main_caught:
        await service.complete_plan(name, "again")
    assert main_caught.value.message == "No plan is active in this session."


@pytest.mark.parametrize(
    "worker", ["", "Tests", "-tests", ".x", "a" * 41, "tests/1", "tést", "a b", 7]
)
def test_a_bad_worker_name_is_refused_where_the_call_is_read(worker: object):
    """A worker name outside [a-z0-9._-], not starting with a letter or digit, empty, longer
    than 40 characters or not text is a VALIDATION_ERROR naming `worker`, raised where a way
    in reads the call (`Caller.of`), so no use case ever sees it (the MCP tools' refusal:
    tests/integration/test_workers.py)."""
    with pytest.raises(InvalidInputError) as caught:
        Caller.of(worker)  # type: ignore[arg-type]
    assert caught.value.field == "worker"


async def test_the_reminder_is_about_the_calling_workers_own_plan(backend: Backend):
    """`reminder` names the plan the given worker holds (None: `main`'s), never another
    worker's: a worker holding none gets no line while others hold plans, and asking renews
    nobody's lease."""
    service = backend.service
    name, (a, b, _) = await queue_of(backend, 3)
    await service.pull_plan(name)
    backend.clock.advance(600)
    await service.pull_plan(name, caller=Caller.of("alice"))
    backend.clock.advance(120)
    goal = PLAN["goal"]
    assert await service.reminder(name, caller=Caller.of("alice")) == (
        f"Active plan: {b} {goal} (pulled 2 min ago)"
    )
    assert await service.reminder(name, caller=Caller.of(None)) == (
        f"Active plan: {a} {goal} (pulled 12 min ago)"
    )
    assert await service.reminder(name, caller=Caller.of("main")) == await service.reminder(
        name, caller=Caller.of(None)
    )
    assert await service.reminder(name, caller=Caller.of("bob")) is None
    seen = {
        hold.worker: hold.plan.last_seen
        for hold in (await service.session_state(name)).active_plans
    }
    assert seen == {
        "main": backend.clock() - dt.timedelta(seconds=720),
        "alice": backend.clock() - dt.timedelta(seconds=120),
    }


async def test_forty_characters_of_the_alphabet_are_a_worker(backend: Backend):
    """The longest name and every character of the alphabet are accepted."""
    name, _ = await queue_of(backend, 2)
    for worker in ("a" * 40, "0a._-z9"):
        assert (
            await backend.service.pull_plan(name, caller=Caller.of(worker))
        ).plan.worker == worker


async def test_a_request_id_is_remembered_per_worker(backend: Backend):
    """Two workers sending the same request_id each get their own plan; a repeat by one of
    them gets its own first result back."""
    service = backend.service
    name, (a, b, _) = await queue_of(backend, 3)
    first = await service.pull_plan(name, caller=Caller.of("one", request_id="pull-1"))
    second = await service.pull_plan(name, caller=Caller.of("two", request_id="pull-1"))
    assert (first.plan.id, second.plan.id) == (a, b)
    again = await service.pull_plan(name, caller=Caller.of("one", request_id="pull-1"))
    assert again.plan.id == a
    with pytest.raises(PlanAlreadyActiveError):  # a new id: worker one holds a plan
        await service.pull_plan(name, caller=Caller.of("one", request_id="pull-2"))


async def test_the_journal_names_the_worker(backend: Backend):
    """Pull, defer, complete and discard by a named worker carry `detail.worker`; `main`'s
    events carry none, as before workers; the journal replays who holds what."""
    service = backend.service
    name, _ = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("w1"))
    await service.defer_plan(name, "later", caller=Caller.of("w1"))
    await service.pull_plan(name, caller=Caller.of("w1"))
    await service.complete_plan(name, "done", caller=Caller.of("w1"))
    await service.pull_plan(name, caller=LEAD)
    await service.discard_plan(name, "no", caller=LEAD)
    events = [e for e in await service.journal(name) if isinstance(e, Event)]
    changes = [
        (e.kind, e.detail.get("worker"))
        for e in events
        if e.kind in {K.PLAN_PULLED, K.PLAN_DEFERRED, K.PLAN_COMPLETED, K.PLAN_DISCARDED}
    ]
    assert changes == [
        (EventKind.PLAN_PULLED, "w1"),
        (EventKind.PLAN_DEFERRED, "w1"),
        (EventKind.PLAN_PULLED, "w1"),
        (EventKind.PLAN_COMPLETED, "w1"),
        (EventKind.PLAN_PULLED, None),
        (EventKind.PLAN_DISCARDED, None),
    ]
    assert (await service.validate_session(name)).journal_matches_state


async def test_last_seen_is_the_workers_last_call(backend: Backend):
    """A pull stamps the plan's `last_seen` with the Clock port's time; a later state call
    by the worker moves it on; another worker's call does not."""
    service = backend.service
    name, _ = await queue_of(backend, 2)
    pulled_at = backend.clock()
    await service.pull_plan(name, caller=Caller.of("w1"))
    backend.clock.advance(60)
    await service.session_state(name, caller=Caller.of("w2"))
    [hold] = (await service.session_state(name)).active_plans
    assert hold.plan.last_seen == pulled_at
    backend.clock.advance(60)
    await service.resume_session(name, caller=Caller.of("w1"))
    [hold] = (await service.session_state(name)).active_plans
    assert hold.plan.last_seen == backend.clock()
    assert hold.pulled_at == pulled_at


def test_single_active_plan_means_one_per_worker():
    """The invariant holds for one active plan per worker and fails, naming the worker, for
    two plans held by one worker."""
    rows = [
        PlanRow(PlanId("aaaaa"), PlanStatus.ACTIVE, None, "main"),
        PlanRow(PlanId("bbbbb"), PlanStatus.ACTIVE, None, "w1"),
    ]
    files = ["aaaaa.txt", "bbbbb.txt", "ccccc.txt"]
    assert check(rows, files[:2]).single_active_plan
    two = [*rows, PlanRow(PlanId("ccccc"), PlanStatus.ACTIVE, None, "w1")]
    report = check(two, files)
    assert not report.single_active_plan
    assert "more than one active plan for worker w1: bbbbb, ccccc" in report.issues


async def test_the_database_refuses_two_active_plans_for_one_worker(tmp_path: Path):
    """Even a buggy writer cannot store two active plans for one worker (the index is per
    worker), while two workers' active plans are stored side by side."""
    async with open_backend("sqlite", tmp_path) as backend:
        name, _ = await queue_of(backend, 3)
        await backend.service.pull_plan(name, caller=Caller.of("w1"))
        await backend.service.pull_plan(name, caller=Caller.of("w2"))
    with (
        sqlite3.connect(tmp_path / name / "session.db") as db,
        pytest.raises(sqlite3.IntegrityError),
    ):
        db.execute(
            "UPDATE plans SET status = 'active', queue_position = NULL, worker = 'w1' "
            "WHERE status = 'queued'"
        )


@pytest.mark.postgres
async def test_postgres_with_a_newer_schema_is_refused_naming_both_versions():
    """A database migrated by a newer version (every machine sharing it upgrades together)
    is refused in one line naming its schema version and the newest this version knows,
    and nothing is changed."""
    import asyncpg

    from nineplan_adapters.storage.postgres.catalog import MIGRATIONS, connect_pool

    async with postgres_schema() as url:
        pool = await connect_pool(url)
        try:
            await pool.execute("INSERT INTO nineplan_schema (version) VALUES ($1)", 99)
            before = await pool.fetch("SELECT version FROM nineplan_schema ORDER BY version")
        finally:
            await pool.close()
        with pytest.raises(DatabaseError) as caught:
            await connect_pool(url)
        assert caught.value.message == (
            f"The database has nineplan schema version 99, newer than version "
            f"{len(MIGRATIONS)}, the newest this nineplan knows."
        )
        connection = await asyncpg.connect(url)
        try:
            after = await connection.fetch("SELECT version FROM nineplan_schema ORDER BY version")
        finally:
            await connection.close()
        assert after == before


async def test_a_plan_goes_stale_when_its_worker_falls_silent(tmp_path: Path):
    """With the fake clock: a plan is not stale within the lease, stale once its worker was
    last heard from longer ago than the lease, and live again after the worker's own call;
    a stale plan stays its worker's (nothing requeues it)."""
    async with open_backend("memory", tmp_path) as backend:
        service = backend.service
        name, (a, _) = await queue_of(backend, 2)
        await service.pull_plan(name, caller=Caller.of("w1"))

        async def stale() -> list[tuple[str, str, bool]]:
            state = await service.session_state(name)
            return [(h.plan.id, h.worker, h.stale) for h in state.active_plans]

        backend.clock.advance(30 * 60)
        assert await stale() == [(a, "w1", False)]
        backend.clock.advance(1)
        assert await stale() == [(a, "w1", True)]
        assert len((await service.session_state(name)).queue) == 1
        await service.session_state(name, caller=Caller.of("w1"))
        assert await stale() == [(a, "w1", False)]


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_a_bad_lease_is_a_configuration_error(value: str):
    """NINEPLAN_LEASE_MINUTES of 0, a negative number or not a finite number is a ConfigError
    naming the variable; a fraction of a minute is accepted."""
    with pytest.raises(ConfigError) as caught:
        Settings.load({"NINEPLAN_LEASE_MINUTES": value})
    assert caught.value.variable == "NINEPLAN_LEASE_MINUTES"
    assert Settings.load({"NINEPLAN_LEASE_MINUTES": "0.05"}).lease_minutes == 0.05


async def test_an_empty_queue_names_the_plans_other_workers_hold(backend: Backend):
    """A pull that finds the queue empty while other workers hold plans says which, instead
    of calling the task complete; once none is held, the text is as it always was."""
    service = backend.service
    name, (a, b) = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("tests"))
    await service.pull_plan(name, caller=Caller.of("docs"))
    with pytest.raises(QueueEmptyError) as caught:
        await service.pull_plan(name, caller=LEAD)
    assert caught.value.message == (
        f"The queue is empty; 2 plan(s) are still active: {a} (tests), {b} (docs)."
        if a < b
        else f"The queue is empty; 2 plan(s) are still active: {b} (docs), {a} (tests)."
    )
    await service.complete_plan(name, "done", caller=Caller.of("tests"))
    await service.complete_plan(name, "done", caller=Caller.of("docs"))
    with pytest.raises(QueueEmptyError) as done:
        await service.pull_plan(name, caller=Caller.of("tests"))
    assert done.value.message == "The queue is empty and 2 plan(s) are completed. Task complete!"


async def test_a_session_remembers_that_a_worker_was_named(backend: Backend):
    """Once a worker other than `main` has been named, the texts mark stale plans for good:
    after `tests` came, worked and went, `main`'s own stale plan is marked for a caller that
    names no worker. A session where only `main` ever worked marks nothing (a lone agent's
    texts unchanged), until a worker is named by a resume; a state call naming one, read-only,
    never marks it."""
    service = backend.service
    name, (a, b) = await queue_of(backend, 2)
    lone = await backend.session()
    alone = (await service.add_plan(lone, **PLAN)).plan.id
    await service.pull_plan(lone)
    assert not (await service.session_state(name)).session.workers_named
    assert (await service.pull_plan(name, caller=Caller.of("tests"))).plan.id == a
    await service.complete_plan(name, "done", caller=Caller.of("tests"))
    assert (await service.pull_plan(name, caller=LEAD)).plan.id == b
    backend.clock.advance(31 * 60)
    state = await service.session_state(name)
    assert state.session.workers_named
    assert [(hold.plan.id, hold.worker) for hold in state.stale_plans] == [(b, "main")]
    quiet = await service.session_state(lone)
    assert [hold.stale for hold in quiet.active_plans] == [True]
    assert (quiet.session.workers_named, quiet.stale_plans) == (False, [])
    await service.session_state(lone, caller=Caller.of("look"))
    assert not (await service.session_state(lone)).session.workers_named
    await service.resume_session(lone, caller=Caller.of("look"))
    named = await service.session_state(lone)
    assert named.session.workers_named
    assert [hold.plan.id for hold in named.stale_plans] == [alone]


@pytest.mark.postgres
async def test_the_postgres_v8_migration_remembers_workers_the_journal_names(tmp_path: Path):
    """Migrating a version 7 database sets `workers_named` for a session whose journal names
    a worker other than `main`, not for one only `main` worked in; a journal detail that is
    not JSON does not stop the migration."""
    import asyncpg

    async with postgres_schema() as url:
        settings = Settings(sessions_path=tmp_path, storage="sqlite", database_url=url)
        async with open_service(settings, clock=FixedClock()) as service:
            named, lone = await worked_with_and_without_workers(service)
        connection = await asyncpg.connect(url)
        try:
            await connection.execute("ALTER TABLE nineplan_sessions DROP COLUMN workers_named")
            await connection.execute(
                "UPDATE nineplan_journal SET detail = 'not json' WHERE seq = 1"
            )
            await connection.execute("DELETE FROM nineplan_schema WHERE version >= 8")
        finally:
            await connection.close()
        async with open_service(settings, clock=FixedClock()) as service:
            assert (await service.session_state(named)).session.workers_named
            assert not (await service.session_state(lone)).session.workers_named


@pytest.mark.postgres
async def test_the_postgres_v9_migration_gives_each_request_id_its_worker(tmp_path: Path):
    """Migrating a version 8 database splits another worker's padded retry keys into a worker
    and an id: a retry after the upgrade gets its first result back, for `main` and `alice`
    alike, though both chose one id."""
    import asyncpg

    async with postgres_schema() as url:
        settings = Settings(sessions_path=tmp_path, storage="sqlite", database_url=url)
        async with open_service(settings, clock=FixedClock()) as service:
            name = (await service.create_session()).session.name
            for _ in range(2):
                await service.add_plan(name, **PLAN)
            mine = await service.pull_plan(name, caller=Caller.of(request_id="r1"))
            hers = await service.pull_plan(name, caller=Caller.of("alice", request_id="r1"))
        connection = await asyncpg.connect(url)
        try:
            await connection.execute(
                "UPDATE nineplan_requests SET request_id = rpad(request_id || chr(31) || worker, "
                "129, chr(31)) WHERE worker <> 'main'"
            )
            await connection.execute(
                "ALTER TABLE nineplan_requests DROP CONSTRAINT nineplan_requests_pkey"
            )
            await connection.execute("ALTER TABLE nineplan_requests DROP COLUMN worker")
            await connection.execute(
                "ALTER TABLE nineplan_requests ADD PRIMARY KEY (session_name, request_id)"
            )
            await connection.execute("DELETE FROM nineplan_schema WHERE version >= 9")
        finally:
            await connection.close()
        async with open_service(settings, clock=FixedClock()) as service:
            again = await service.pull_plan(name, caller=Caller.of(request_id="r1"))
            hers_again = await service.pull_plan(name, caller=Caller.of("alice", request_id="r1"))
        assert (again.plan.id, hers_again.plan.id) == (mine.plan.id, hers.plan.id)
        connection = await asyncpg.connect(url)
        try:
            stored = await connection.fetch(
                "SELECT worker, request_id FROM nineplan_requests ORDER BY seq"
            )
        finally:
            await connection.close()
        assert [tuple(row) for row in stored] == [("main", "r1"), ("alice", "r1")]
