"""The SQLite adapter on real files: schema, pragmas, rollback with files, damage, reconcile."""

import errno
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from nineplan_adapters.storage.clock import FixedClock
from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
from nineplan_adapters.storage.sqlite.connection import MIGRATIONS
from nineplan_adapters.storage.sqlite.queries import ACTIVE_ALL, FRONT, HOURLY_COUNTS
from nineplan_core.callers import Caller
from nineplan_core.errors import DatabaseError, FileSystemError, SessionNotFoundError
from nineplan_core.model import SessionName
from nineplan_core.service import NinePlan
from tests.fakes import (
    PLAN,
    FailingPlanFiles,
    make_service,
    open_backend,
    worked_with_and_without_workers,
)


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path)


async def test_session_database_settings(tmp_path: Path):
    """WAL, STRICT tables, the schema version and the stemming FTS index are in place."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        store = await backend.catalog.open(SessionName(name))
        async with store.reading() as reader:
            db = reader.db  # type: ignore[attr-defined]
            assert (await db.run("PRAGMA journal_mode"))[0][0] == "wal"
            assert (await db.run("PRAGMA synchronous"))[0][0] == 2  # FULL
            assert (await db.run("PRAGMA foreign_keys"))[0][0] == 1
            assert (await db.run("PRAGMA user_version"))[0][0] == len(MIGRATIONS)
        with raw(tmp_path / name / "session.db") as db:
            sql = dict(
                db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
            )
        assert sql["plans"].rstrip().endswith("STRICT")
        assert "porter unicode61" in sql["history_fts"]


async def test_the_active_plans_are_found_through_their_index(tmp_path: Path):
    """Reading every active plan looks only at the active rows (the partial index), never the
    whole history: a long session's page stays quick."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
    with raw(tmp_path / name / "session.db") as db:
        plan = " ".join(row[-1] for row in db.execute(f"EXPLAIN QUERY PLAN {ACTIVE_ALL}"))
    assert "plans_active_worker" in plan, plan


async def test_a_pull_finds_the_first_ready_plan_through_its_index(tmp_path: Path):
    """The plan a pull takes (the first queued plan that waits for nothing unsettled) is read
    from the partial index plans_ready, in queue order, with no sort: its cost does not grow
    with the waiting plans ahead of it."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
    with raw(tmp_path / name / "session.db") as db:
        plan = " ".join(row[-1] for row in db.execute(f"EXPLAIN QUERY PLAN {FRONT}"))
    assert "plans_ready" in plan, plan
    assert "TEMP B-TREE" not in plan, plan


async def test_the_hourly_counts_read_only_the_index_of_kinds_and_times(tmp_path: Path):
    """The chart's count per hour walks journal_kind_at for the window's times and never the
    journal's rows: a session with a long history counts its day as quickly as a new one."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
    with raw(tmp_path / name / "session.db") as db:
        found = db.execute(
            f"EXPLAIN QUERY PLAN {HOURLY_COUNTS}", ('["plan_completed"]', "", "", "")
        )
        plan = " ".join(row[-1] for row in found)
    assert "COVERING INDEX journal_kind_at (kind=? AND at>?)" in plan, plan


async def test_normal_durability_is_an_opt_in(tmp_path: Path):
    """NINEPLAN_DURABILITY=normal opens connections with synchronous=NORMAL."""
    catalog = SqliteSessionCatalog(tmp_path, durability="normal")
    try:
        from tests.fakes import make_service

        service = make_service(
            catalog,
            __import__("nineplan_adapters.storage.clock", fromlist=["FixedClock"]).FixedClock(),
        )
        name = (await service.create_session()).session.name
        store = await catalog.open(name)
        async with store.reading() as reader:
            rows = list(await reader.db.run("PRAGMA synchronous"))
            assert rows[0][0] == 1
    finally:
        await catalog.aclose()


async def test_the_database_itself_refuses_a_second_active_plan(tmp_path: Path):
    """Even a buggy writer cannot store two active plans or two plans at one position."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        await backend.service.add_plan(name, **PLAN)
        await backend.service.add_plan(name, **PLAN)
        await backend.service.pull_plan(name)
    with raw(tmp_path / name / "session.db") as db, pytest.raises(sqlite3.IntegrityError):
        db.execute(
            "UPDATE plans SET status = 'active', queue_position = NULL WHERE status = 'queued'"
        )
    with raw(tmp_path / name / "session.db") as db, pytest.raises(sqlite3.IntegrityError):
        db.execute("UPDATE plans SET queue_position = NULL WHERE status = 'queued'")


async def test_search_stems_and_folds_diacritics(tmp_path: Path):
    """'authenticate' finds 'authentication'; 'resume' finds 'résumé'."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        for outcome in ["built the authentication layer", "printed the résumé"]:
            await backend.service.add_plan(name, **PLAN)
            await backend.service.pull_plan(name)
            await backend.service.complete_plan(name, outcome)
        assert len(await backend.service.search_history(name, "authenticate")) == 1
        assert len(await backend.service.search_history(name, "resume")) == 1


async def test_a_failed_file_write_rolls_the_database_back(tmp_path: Path):
    """ENOSPC on the plan file: FILE_SYSTEM_ERROR, no row stored, invariants hold, next call works."""
    failing = FailingPlanFiles(inner=None)  # type: ignore[arg-type] # set by open_backend
    async with open_backend("sqlite", tmp_path, failing=failing) as backend:
        name = await backend.session()
        failing.failing = {"write"}
        with pytest.raises(FileSystemError) as caught:
            await backend.service.add_plan(name, **PLAN)
        assert "disk space" in caught.value.suggestion_text
        assert (await backend.service.session_state(name)).queue == []
        assert (await backend.service.validate_session(name)).valid
        failing.failing = set()
        await backend.service.add_plan(name, **PLAN)
        assert len((await backend.service.session_state(name)).queue) == 1


async def test_a_failed_defer_keeps_the_plan_active_and_its_file(tmp_path: Path):
    """A defer whose file write fails leaves the plan active and the session valid."""
    failing = FailingPlanFiles(inner=None, error=errno.EACCES)  # type: ignore[arg-type]
    async with open_backend("sqlite", tmp_path, failing=failing) as backend:
        name = await backend.session()
        await backend.service.add_plan(name, **PLAN)
        pulled = await backend.service.pull_plan(name)
        failing.failing = {"write"}
        with pytest.raises(FileSystemError):
            await backend.service.defer_plan(name, "later")
        state = await backend.service.session_state(name)
        assert state.active_plan is not None
        assert state.active_plan.id == pulled.plan.id
        assert (await backend.service.validate_session(name)).valid


async def test_a_failed_delete_after_commit_keeps_the_completion(tmp_path: Path, caplog):
    """The commit is the durability point: a failing unlink is logged and reconcile removes it later."""
    failing = FailingPlanFiles(inner=None, error=errno.EIO)  # type: ignore[arg-type]
    async with open_backend("sqlite", tmp_path, failing=failing) as backend:
        name = await backend.session()
        placed = await backend.service.add_plan(name, **PLAN)
        await backend.service.pull_plan(name)
        failing.failing = {"remove"}
        await backend.service.complete_plan(name, "done")
        assert "will be retried" in caplog.text
        assert not (await backend.service.validate_session(name)).no_orphaned_files
        failing.failing = set()
        await backend.service.add_plan(name, **PLAN)  # the next write retries the cleanup
        assert (await backend.service.validate_session(name)).valid
        assert not (tmp_path / name / "plans" / f"{placed.plan.id}.txt").exists()


async def test_reconcile_on_open_heals_files(tmp_path: Path):
    """A new process re-renders missing and empty files, removes finished ones (moving one
    that holds lines the database lacks to recovered/), recovers strays."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        missing = await backend.service.add_plan(name, **PLAN)
        empty = await backend.service.add_plan(name, **PLAN)
        done = await backend.service.add_plan(name, **PLAN, position="front")
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, "ok")
    plans = tmp_path / name / "plans"
    (plans / f"{missing.plan.id}.txt").unlink()
    (plans / f"{empty.plan.id}.txt").write_text("")
    (plans / f"{done.plan.id}.txt").write_text("left behind by a crash")
    (plans / "notes.md").write_text("an agent's own file")
    async with open_backend("sqlite", tmp_path) as backend:
        assert not (await backend.service.validate_session(name)).valid  # validating never repairs
        state = await backend.service.resume_session(name)  # the first resume reconciles
        # The state it answers is read in the same pass, and shows the folder as repaired.
        assert state.plan_files == sorted(f"{p.plan.id}.txt" for p in (missing, empty))
        assert state.file_db_match
        assert state == await backend.service.session_state(name)  # the same as a warm read
        report = await backend.service.validate_session(name)
        # Opening reads no queued file: the empty one is reported, and heals on pull.
        assert report.issues == [
            f"plan file {empty.plan.id}.txt cannot be read as a plan: no plan heading"
        ]
    assert (plans / f"{missing.plan.id}.txt").read_text().startswith("# Context")
    assert (
        plans / f"{empty.plan.id}.txt"
    ).read_text() == ""  # a queued plan's empty file heals on pull
    async with open_backend("sqlite", tmp_path) as backend:
        pulled = await backend.service.pull_plan(name)
        assert pulled.plan.id == missing.plan.id
        await backend.service.defer_plan(name, "later")
        assert (await backend.service.pull_plan(name)).plan.id == empty.plan.id
    assert (plans / f"{empty.plan.id}.txt").read_text().startswith("# Context")
    assert not (plans / f"{done.plan.id}.txt").exists()
    assert (tmp_path / name / "recovered" / "notes.md").read_text() == "an agent's own file"
    kept = tmp_path / name / "recovered" / f"{done.plan.id}.txt"
    assert kept.read_text() == "left behind by a crash"


async def test_a_corrupt_database_fails_that_session_only(tmp_path: Path):
    """A garbage session.db is a DATABASE_ERROR; other sessions and the list keep working."""
    async with open_backend("sqlite", tmp_path) as backend:
        broken = await backend.session("broken")
        healthy = await backend.session("healthy")
    (tmp_path / broken / "session.db").write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (tmp_path / broken / f"session.db{suffix}").unlink(missing_ok=True)
    async with open_backend("sqlite", tmp_path) as backend:
        with pytest.raises(DatabaseError):
            await backend.service.session_state(broken)
        assert (await backend.service.session_state(healthy)).session.task_description == "healthy"
        assert [s.session.name for s in await backend.service.list_sessions()] == [healthy]


async def test_a_database_from_a_newer_version_is_refused(tmp_path: Path):
    """A session database from a newer version is refused with a message saying so."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
    with raw(tmp_path / name / "session.db") as db:
        db.execute("PRAGMA user_version = 99")
    async with open_backend("sqlite", tmp_path) as backend:
        with pytest.raises(DatabaseError) as caught:
            await backend.service.session_state(name)
        assert "newer" in caught.value.message


async def test_a_folder_without_a_database_is_not_a_session(tmp_path: Path):
    """A folder without session.db is neither openable nor listed as a session."""
    (tmp_path / "lonely-empty-folder").mkdir()
    async with open_backend("sqlite", tmp_path) as backend:
        with pytest.raises(SessionNotFoundError):
            await backend.service.session_state("lonely-empty-folder")
        assert await backend.service.list_sessions() == []


async def test_listing_many_sessions_leaves_no_connection_open(tmp_path: Path):
    """Listing sessions opens no store that stays open afterwards."""
    async with open_backend("sqlite", tmp_path) as backend:
        names = [await backend.session() for _ in range(3)]
    async with open_backend("sqlite", tmp_path) as backend:
        assert sorted(s.session.name for s in await backend.service.list_sessions()) == sorted(
            names
        )
        assert backend.catalog._stores == {}  # type: ignore[attr-defined]


async def test_an_unusable_sessions_folder_gives_a_file_system_error(tmp_path: Path):
    """A sessions path that is a file (or read-only) is FILE_SYSTEM_ERROR, not a crash."""
    (tmp_path / "taken").write_text("a file where the folder should be")
    async with open_backend("sqlite", tmp_path / "taken") as backend:
        with pytest.raises(FileSystemError):
            await backend.service.create_session()
        with pytest.raises(FileSystemError):
            await backend.service.list_sessions()
    async with open_backend("sqlite", tmp_path / "taken" / "below") as backend:
        with pytest.raises(FileSystemError):
            await backend.service.create_session()


async def test_an_empty_active_plan_file_is_rendered_again_on_open(tmp_path: Path):
    """What a power loss can leave of an unsynced write is healed when the session is reopened."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        await backend.service.add_plan(name, **PLAN)
        pulled = await backend.service.pull_plan(name)
    Path(pulled.path).write_text("")
    async with open_backend("sqlite", tmp_path) as backend:
        state = await backend.service.resume_session(name)
        assert state.active_plan is not None
    assert Path(pulled.path).read_text().startswith("# Context")


async def test_open_sessions_are_bounded_and_evicted_ones_still_work(tmp_path: Path):
    """A server with many sessions keeps at most max_open connections (and threads) open."""
    import threading

    def connection_threads() -> int:  # aiosqlite's, not the worker threads other tests leave
        return sum("_connection_worker_thread" in t.name for t in threading.enumerate())

    from nineplan_adapters.storage.clock import FixedClock
    from tests.fakes import make_service

    catalog = SqliteSessionCatalog(tmp_path, max_open=2)
    try:
        service = make_service(catalog, FixedClock())
        first = (await service.create_session("first")).session.name
        held = await catalog.open(first)
        threads = connection_threads()
        names = [(await service.create_session()).session.name for _ in range(5)]
        assert len(catalog._stores) == 2
        # A closed connection's thread ends just after close() returns (aiosqlite sets the
        # result, then leaves its loop), so allow it a moment to go.
        for _ in range(200):
            if connection_threads() <= threads + 1:
                break
            await anyio.sleep(0.01)
        assert connection_threads() <= threads + 1
        assert first not in catalog._stores
        async with held.reading() as reader:  # an evicted store reconnects when used
            assert (await reader.session()).task_description == "first"
        await service.add_plan(first, **PLAN)
        assert len((await service.session_state(first)).queue) == 1
        assert len(await service.list_sessions()) == len(names) + 1
        await held.close()
    finally:
        await catalog.aclose()


async def test_listing_migrates_a_session_with_an_older_schema(tmp_path: Path):
    """The session list reads counts from schema v3; an older database is migrated first."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session("old one")
        await backend.service.add_plan(name, **PLAN)
    with raw(tmp_path / name / "session.db") as db:
        db.execute("PRAGMA user_version = 2")
    async with open_backend("sqlite", tmp_path) as backend:
        [summary] = await backend.service.list_sessions()
        assert (summary.session.task_description, summary.queue_length) == ("old one", 1)
    with raw(tmp_path / name / "session.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


async def test_create_gives_up_after_repeated_name_collisions(tmp_path: Path):
    """A name generator that keeps colliding ends in a DATABASE_ERROR, not a loop; the
    existing folder is left alone."""
    (tmp_path / "sessions").mkdir()
    async with open_backend("sqlite", tmp_path / "sessions") as backend:
        name = backend.service.session_names()
        (tmp_path / "sessions" / name).mkdir()
        (tmp_path / "sessions" / name / "plans").mkdir()

        def fixed_name() -> str:
            return name

        backend.service.session_names = fixed_name  # every draw collides with the folder above
        with pytest.raises(DatabaseError):
            await backend.service.create_session()
        assert sorted(p.name for p in (tmp_path / "sessions").iterdir()) == [name]


async def test_a_session_that_fails_half_way_is_removed(tmp_path: Path):
    """If creating a session fails after its folder was made, the folder is removed again."""
    import errno

    from nineplan_adapters.storage.clock import FixedClock
    from tests.fakes import make_service

    def failing_files(folder: Path, recovered: Path):
        raise OSError(errno.ENOSPC, "No space left on device")

    catalog = SqliteSessionCatalog(tmp_path, plan_files=failing_files)
    try:
        with pytest.raises(FileSystemError):
            await make_service(catalog, FixedClock()).create_session()
        assert list(tmp_path.iterdir()) == []
    finally:
        await catalog.aclose()


@asynccontextmanager
async def locked_by_another_process(
    tmp_path: Path, **catalog_options: Any
) -> AsyncIterator[tuple[SqliteSessionCatalog, NinePlan, str, sqlite3.Connection]]:
    """A session whose write lock another connection holds, as another process would."""
    catalog = SqliteSessionCatalog(tmp_path, **catalog_options)
    service = make_service(catalog, FixedClock())
    try:
        name = (await service.create_session()).session.name
        other = sqlite3.connect(tmp_path / name / "session.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            yield catalog, service, name, other
        finally:
            other.close()
    finally:
        await catalog.aclose()


async def end_after(other: sqlite3.Connection, seconds: float, statement: str) -> None:
    await anyio.sleep(seconds)
    other.execute(statement)


async def commit_once_blocked(other: sqlite3.Connection, released: anyio.Event) -> None:
    """Play the other process: end its transaction once the call here is stuck waiting on it."""
    await anyio.wait_all_tasks_blocked()
    released.set()
    other.execute("COMMIT")


@pytest.mark.parametrize("commit_on_loop", [False, True])
async def test_a_call_waits_for_another_process_lock_then_goes_through(
    tmp_path: Path, commit_on_loop: bool
):
    """Statements first run without waiting; one that finds the session locked by another
    process is retried in aiosqlite's thread, waiting up to the busy timeout."""
    async with locked_by_another_process(
        tmp_path, busy_timeout=5.0, commit_on_loop=commit_on_loop
    ) as (catalog, service, name, other):
        released = anyio.Event()
        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(commit_once_blocked, other, released)
                placed = await service.add_plan(name, **PLAN)
        assert released.is_set()  # it went through after the lock was released: it waited
        state = await service.session_state(name)
        assert [entry.id for entry in state.queue] == [placed.plan.id]
        # The wait did not stay on: the next statements run without a busy timeout again.
        store = await catalog.open(SessionName(name))
        async with store.reading() as reader:
            assert (await reader.db.run("PRAGMA busy_timeout"))[0][0] == 0


async def test_a_lock_held_past_the_busy_timeout_is_a_busy_database_error(tmp_path: Path):
    """A write lock held past the busy timeout is a DATABASE_ERROR suggesting a retry; the session works once it is released."""
    async with locked_by_another_process(tmp_path, busy_timeout=0.2) as (_, service, name, other):
        with pytest.raises(DatabaseError, match="busy in another process") as caught:
            await service.add_plan(name, **PLAN)
        assert "Retry" in caught.value.suggestion_text
        other.execute("ROLLBACK")
        await service.add_plan(name, **PLAN)  # the session works once the lock is gone
        assert len((await service.session_state(name)).queue) == 1


async def test_a_cancelled_wait_leaves_the_connection_usable(tmp_path: Path):
    """Cancelling a call while its statement waits in the thread lets the statement end first;
    the call then happens entirely or not at all, and the next call works."""
    async with locked_by_another_process(tmp_path, busy_timeout=0.5) as (_, service, name, other):
        async with anyio.create_task_group() as group:
            group.start_soon(end_after, other, 0.3, "ROLLBACK")
            with anyio.move_on_after(0.1) as scope:
                await service.add_plan(name, **PLAN)
        # All or nothing: cancelled at a checkpoint (rolled back), or too late to stop it.
        added = 0 if scope.cancelled_caught else 1
        assert len((await service.session_state(name)).queue) == added
        assert (await service.validate_session(name)).valid
        await service.add_plan(name, **PLAN)
        assert len((await service.session_state(name)).queue) == added + 1


async def test_a_newer_schema_is_refused_naming_both_versions(tmp_path: Path):
    """A session database from a newer version is refused in one line naming its schema
    version and the newest this version knows, and is left as it was."""
    newer = len(MIGRATIONS) + 1
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
    with raw(tmp_path / name / "session.db") as db:
        db.execute(f"PRAGMA user_version = {newer}")
    async with open_backend("sqlite", tmp_path) as backend:
        with pytest.raises(DatabaseError) as caught:
            await backend.service.session_state(name)
    assert caught.value.message == (
        f"The session database has schema version {newer}, newer than version {len(MIGRATIONS)}, "
        "the newest this nineplan knows."
    )
    assert "\n" not in caught.value.message
    with raw(tmp_path / name / "session.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == newer


async def test_migrating_twice_to_workers_keeps_one_set_of_columns(tmp_path: Path):
    """The worker migration (v7) run again on a database that has its columns (a second
    process racing, or a version set back) skips the columns there already and succeeds."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        await backend.service.add_plan(name, **PLAN)
        await backend.service.pull_plan(name, caller=Caller.of("w1"))
    with raw(tmp_path / name / "session.db") as db:
        db.execute("PRAGMA user_version = 6")
    async with open_backend("sqlite", tmp_path) as backend:
        state = await backend.service.session_state(name, caller=Caller.of("w1"))
        assert state.active_plan is not None
    with raw(tmp_path / name / "session.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        columns = [row[1] for row in db.execute("PRAGMA table_info(plans)")]
    assert (columns.count("worker"), columns.count("last_seen")) == (1, 1)


async def test_the_v9_migration_remembers_workers_the_journal_names(tmp_path: Path):
    """Migrating a version 8 database sets `workers_named` for a session whose journal names
    a worker other than `main` (it came, worked and went), not for one only `main` worked
    in, and a journal row whose detail is not JSON does not stop the migration."""
    async with open_backend("sqlite", tmp_path) as backend:
        named, lone = await worked_with_and_without_workers(backend.service)
    for name in (named, lone):
        with raw(tmp_path / name / "session.db") as db:
            assert db.execute("SELECT workers_named FROM sessions").fetchone()[0] == (name == named)
            db.execute("ALTER TABLE sessions DROP COLUMN workers_named")
            db.execute("UPDATE journal SET detail = 'not json' WHERE seq = 1")
            db.execute("PRAGMA user_version = 8")
    async with open_backend("sqlite", tmp_path) as backend:
        assert (await backend.service.session_state(named)).session.workers_named
        assert not (await backend.service.session_state(lone)).session.workers_named
    with raw(tmp_path / named / "session.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


async def test_the_v10_migration_gives_each_request_id_its_worker(tmp_path: Path):
    """A retry log written before version 10 (another worker's ids recorded under keys padded
    with unit separators past the longest id) is split into a worker and an id column: after
    the upgrade a retry gets its first result back, for `main` and for `alice` alike, though
    both chose one id, and an id holding a separator itself comes through whole."""
    odd = "r\x1fz-9"  # a separator and name characters inside the id itself
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        for _ in range(3):
            await backend.service.add_plan(name, **PLAN)
        first = {
            ("main", "r1"): await backend.service.pull_plan(name, caller=Caller.of(request_id="r1")),
            ("alice", "r1"): await backend.service.pull_plan(name, caller=Caller.of("alice", request_id="r1")),
            ("bob", odd): await backend.service.pull_plan(name, caller=Caller.of("bob", request_id=odd)),
        }  # fmt: skip
    with raw(tmp_path / name / "session.db") as db:
        rows = db.execute("SELECT seq, worker, request_id, fingerprint, result FROM requests")
        old = [
            (seq, rid if who == "main" else f"{rid}\x1f{who}".ljust(129, "\x1f"), fp, result)
            for seq, who, rid, fp, result in rows.fetchall()
        ]
        db.execute("DROP TABLE requests")
        db.execute(
            "CREATE TABLE requests (seq INTEGER PRIMARY KEY, request_id TEXT NOT NULL UNIQUE, "
            "fingerprint TEXT NOT NULL, result TEXT NOT NULL) STRICT"
        )
        db.executemany("INSERT INTO requests VALUES (?, ?, ?, ?)", old)
        db.execute("PRAGMA user_version = 9")
    async with open_backend("sqlite", tmp_path) as backend:
        for (who, rid), placed in first.items():
            caller = Caller.of(None if who == "main" else who, request_id=rid)
            assert (await backend.service.pull_plan(name, caller=caller)).plan.id == placed.plan.id
    with raw(tmp_path / name / "session.db") as db:
        stored = db.execute("SELECT worker, request_id FROM requests ORDER BY seq").fetchall()
        assert stored == [("main", "r1"), ("alice", "r1"), ("bob", odd)]
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
