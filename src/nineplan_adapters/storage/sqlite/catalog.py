"""The SQLite session catalog: a folder per session under the sessions path."""

import datetime as dt
import hashlib
import json
import logging
import os
import secrets
import shutil
import sqlite3
from collections import OrderedDict
from functools import partial
from pathlib import Path

import anyio
import attrs

from nineplan_adapters.config import Durability
from nineplan_adapters.storage.layout import (
    ARCHIVED,
    CREATIONS,
    DATABASE,
    WORKSPACE,
    plans_folder,
    recovered_folder,
)
from nineplan_adapters.storage.plan_files import (
    PlanFiles,
    PlanFilesFactory,
    directory_plan_files,
    file_system_error,
)
from nineplan_adapters.storage.retry_log import RetryLog
from nineplan_adapters.storage.rows import converter, row_to_session
from nineplan_adapters.storage.sqlite.connection import (
    MIGRATIONS,
    SessionConnection,
    connect,
    database_errors,
)
from nineplan_adapters.storage.sqlite.store import SqliteSessionStore
from nineplan_adapters.storage.sqlite.watch import SqliteSessionWatch
from nineplan_core.errors import (
    DatabaseError,
    NinePlanError,
    SessionExistsError,
    SessionNotFoundError,
)
from nineplan_core.journal import NewEvent
from nineplan_core.model import DEFAULT_LIMITS, SESSION_NAME, Session, SessionName
from nineplan_core.results import SessionSummary

log = logging.getLogger("nineplan.sqlite")


@attrs.define
class SqliteSessionCatalog:
    """Sessions as `{root}/{name}/session.db` plus `{root}/{name}/plans/`.

    Up to `max_open` sessions stay open (a connection, and its thread, each); opening one
    more closes the least recently used once it is idle. Names are checked against the
    three-word pattern before any path is built from them.

    `commit_on_loop` commits (and waits for the fsync) on the event loop's thread instead of
    aiosqlite's, which saves a thread round trip (about 0.15 ms) per write but holds up the loop
    for the fsync: right for the stdio server, whose one client waits for each answer, wrong
    where one loop serves many clients (HTTP, most embedding).
    """

    root: Path
    durability: Durability = "full"
    busy_timeout: float = 10.0
    plan_files: PlanFilesFactory = directory_plan_files
    max_open: int = 64
    commit_on_loop: bool = False
    #: How many recent request ids each session, and the catalog, remembers.
    remembered: int = DEFAULT_LIMITS.remembered_requests
    creations: RetryLog = attrs.field(init=False)
    _stores: "OrderedDict[str, SqliteSessionStore]" = attrs.field(factory=OrderedDict, init=False)
    _opening: anyio.Lock = attrs.field(factory=anyio.Lock, init=False)

    @creations.default
    def _creations(self) -> RetryLog:
        return RetryLog(CreationFiles(self.root / CREATIONS), self.remembered)

    def _folder(self, name: SessionName) -> Path:
        return self.root / name

    def _files(self, folder: Path) -> PlanFiles:
        return self.plan_files(plans_folder(folder), recovered_folder(folder))

    async def create(self, session: Session, first: NewEvent) -> SqliteSessionStore:
        folder = self._folder(session.name)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise file_system_error("create the sessions folder", exc) from exc
        try:
            folder.mkdir()
        except FileExistsError:
            raise SessionExistsError(session.name) from None
        except OSError as exc:
            raise file_system_error("create the session folder", exc) from exc
        try:
            plans_folder(folder).mkdir()
            store = await self._store(session.name, folder, create=True)
            try:
                await store.initialise(session, first)
                if session.workspace is not None:
                    _write_atomically(folder / WORKSPACE, session.workspace)
            except BaseException:
                await store.close()
                raise
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise file_system_error("create the session", exc) from exc
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        await self._keep(session.name, store)
        return store

    async def open(self, name: SessionName) -> SqliteSessionStore:
        if (store := self._stores.get(name)) is not None:
            self._stores.move_to_end(name)
            return store
        async with self._opening:
            if (store := self._stores.get(name)) is None:
                folder = self._folder(name)
                if not (folder / DATABASE).is_file() or folder.is_symlink():
                    raise SessionNotFoundError(name)
                store = await self._store(name, folder, create=False)
                await self._keep(name, store)
        return store

    async def _store(self, name: SessionName, folder: Path, *, create: bool) -> SqliteSessionStore:
        async def reconnect() -> SessionConnection:
            return await self._connect(folder, create=False)

        files = self._files(folder)  # before connecting: a failure here must not leak a connection
        db = await self._connect(folder, create=create)
        return SqliteSessionStore(name, folder, files, db, reconnect, self.remembered)

    async def _connect(self, folder: Path, *, create: bool) -> SessionConnection:
        return await connect(
            folder / DATABASE,
            create=create,
            durability=self.durability,
            busy_timeout=self.busy_timeout,
            commit_on_loop=self.commit_on_loop,
        )

    async def _keep(self, name: SessionName, store: SqliteSessionStore) -> None:
        """Cache an open store; close the least recently used beyond `max_open`."""
        self._stores[name] = store
        while len(self._stores) > self.max_open:
            _, evicted = self._stores.popitem(last=False)
            await evicted.close()  # waits for a call in progress; reconnects if used again

    async def names(self) -> list[SessionName]:
        try:
            entries = sorted(self.root.iterdir())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise file_system_error("list the sessions folder", exc) from exc
        return [
            SessionName(entry.name)
            for entry in entries
            if SESSION_NAME.fullmatch(entry.name)
            and not entry.is_symlink()
            and (entry / DATABASE).is_file()
        ]

    async def summaries(self, names: list[SessionName]) -> list[SessionSummary | NinePlanError]:
        """Read with plain read-only sqlite3, all in one worker-thread handoff: listing a
        thousand sessions starts no aiosqlite connection and makes no thousand handoffs.
        (Several threads were no faster on two cores.)"""
        databases = [self._folder(name) / DATABASE for name in names]
        results = await anyio.to_thread.run_sync(_read_summaries, databases, self.busy_timeout)
        for index, result in enumerate(results):
            if result is None:  # an older schema: opening migrates it
                results[index] = await self._migrated_summary(names[index], databases[index])
        return [result for result in results if result is not None]

    async def _migrated_summary(
        self, name: SessionName, database: Path
    ) -> SessionSummary | NinePlanError:
        try:
            await self.open(name)
        except NinePlanError as exc:
            return exc
        (summary,) = await anyio.to_thread.run_sync(_read_summaries, [database], self.busy_timeout)
        return summary or DatabaseError(f"Session {name} could not be migrated.")

    async def archived(self) -> frozenset[SessionName]:
        """The sessions whose folder holds the `archived` mark (a stat each)."""
        return frozenset(
            name for name in await self.names() if (self._folder(name) / ARCHIVED).is_file()
        )

    async def set_archived(self, name: SessionName, *, archived: bool) -> None:
        """The mark is a file in the session's folder, not a row in its database: made by one
        rename (or removed by one unlink), then the folder synced, it is all there or not at
        all after a crash, and a session whose database cannot be read can be archived too."""
        folder = self._folder(name)
        if not (folder / DATABASE).is_file() or folder.is_symlink():
            raise SessionNotFoundError(name)
        mark = folder / ARCHIVED
        try:
            if archived and not mark.is_file():
                stamp = dt.datetime.now(dt.UTC).isoformat().replace("+00:00", "Z")
                _write_durably(mark, f"{stamp}\n")
            elif not archived and mark.exists():
                mark.unlink()
                _sync_folder(folder)
        except OSError as exc:
            raise file_system_error("mark the session archived", exc) from exc

    async def delete(self, name: SessionName) -> bool:
        """Under the session's write lock (no agent pulls meanwhile) the folder is renamed out
        of the list in one step, then removed: a crash in between leaves a hidden
        `.deleted-NAME.*` folder that no list shows."""
        store = await self.open(name)
        folder = self._folder(name)
        if not (folder / ARCHIVED).is_file():
            return False
        trash = self.root / f".deleted-{name}.{secrets.token_hex(4)}"
        async with store.transaction() as tx:
            if await tx.active_plans():  # any worker's
                return False
            try:
                folder.rename(trash)
            except OSError as exc:
                raise file_system_error("remove the session", exc) from exc
        self._stores.pop(name, None)
        await store.close()
        await anyio.to_thread.run_sync(partial(shutil.rmtree, trash, ignore_errors=True))
        return True

    def watch(self) -> SqliteSessionWatch:
        """Change ticks for these sessions, from commits made by any process."""
        return SqliteSessionWatch(self.root)

    async def aclose(self) -> None:
        """Close every open session."""
        stores, self._stores = list(self._stores.values()), OrderedDict()
        for store in stores:
            await store.close()


@attrs.frozen
class CreationFiles:
    """Session-creation records as small JSON files in one folder (RequestRecords).

    Files, not a database: a create happens before its session's database exists. A record
    that cannot be read counts as never made, and one that cannot be written is logged: the
    session was created either way.
    """

    folder: Path

    def _record(self, request_id: str) -> Path:
        return self.folder / f"{hashlib.sha256(request_id.encode()).hexdigest()}.json"

    async def get(self, worker: str, request_id: str) -> tuple[str, str] | None:
        del worker  # a session is created for every worker: the id alone is the key
        try:
            record = json.loads(self._record(request_id).read_text("utf-8"))
            if "result" not in record:  # written before the shared log: the bare name
                return str(record["fingerprint"]), json.dumps(str(record["session"]))
            return str(record["fingerprint"]), str(record["result"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("unreadable session-creation record; treating the request as new")
            return None

    async def put(
        self, worker: str, request_id: str, fingerprint: str, result: str, keep: int
    ) -> None:
        del worker  # as in get
        record = self._record(request_id)
        temp = self.folder / f".{record.name}.{secrets.token_hex(4)}.tmp"
        try:
            self.folder.mkdir(exist_ok=True)
            temp.write_text(json.dumps({"fingerprint": fingerprint, "result": result}), "utf-8")
            temp.replace(record)
            records = sorted(self.folder.glob("*.json"), key=lambda path: path.stat().st_mtime_ns)
            for stale in records[:-keep]:
                stale.unlink(missing_ok=True)
        except OSError:
            temp.unlink(missing_ok=True)
            log.exception(
                "could not record a session creation; a retry would create another session"
            )


def _write_atomically(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        temp.write_text(text, "utf-8")
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)


def _write_durably(path: Path, text: str) -> None:
    """Write `path` by a rename of a synced temporary file, then sync its folder."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with temp.open("w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        temp.replace(path)
    finally:
        temp.unlink(missing_ok=True)
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_summaries(
    databases: list[Path], busy_timeout: float
) -> list[SessionSummary | NinePlanError | None]:
    """Each session's counts, or its error, or None for an older schema (in a worker thread)."""
    results: list[SessionSummary | NinePlanError | None] = []
    for database in databases:
        try:
            if not database.is_file():
                raise SessionNotFoundError(database.parent.name)
            results.append(_read_summary(database, busy_timeout))
        except NinePlanError as exc:
            results.append(exc)
    return results


#: Everything a line of the session list shows, in one statement (one consistent read): the
#: session, its counts, the active plan and its latest pull, the newest event's time, and the
#: deferrals of the live plans. Each part is served by an index (plan_counts, plans_status,
#: journal_kind, the journal's seq).
_SUMMARY = """
SELECT s.name, s.task_description, s.created_at, (SELECT path FROM workspace) AS workspace,
       (SELECT n FROM plan_counts WHERE status = 'queued') AS queued,
       (SELECT n FROM plan_counts WHERE status = 'completed') AS completed,
       a.id AS active_id, a.goal AS active_goal,
       (SELECT at FROM journal WHERE kind = 'plan_pulled' AND plan_id = a.id
        ORDER BY seq DESC LIMIT 1) AS pulled_at,
       (SELECT at FROM journal ORDER BY seq DESC LIMIT 1) AS last_at,
       (SELECT json_group_object(plan_id, n) FROM
          (SELECT j.plan_id, count(*) AS n FROM journal j JOIN plans p ON p.id = j.plan_id
           WHERE j.kind = 'plan_deferred' AND p.status IN ('queued', 'active')
           GROUP BY j.plan_id)) AS deferred,
       (SELECT count(*) FROM plans WHERE status = 'active') AS active_count
FROM sessions s LEFT JOIN plans a ON a.id = (SELECT id FROM plans WHERE status = 'active'
                                            ORDER BY worker <> 'main', id LIMIT 1)
"""


def _read_summary(database: Path, busy_timeout: float) -> SessionSummary | None:
    """One session's line, read-only with plain sqlite3. None for an older schema."""
    with database_errors("read the session's counts"):
        db = sqlite3.connect(
            f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=busy_timeout
        )
        db.row_factory = sqlite3.Row
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] != len(MIGRATIONS):
                return None
            row = db.execute(_SUMMARY).fetchone()
            if row is None:
                raise DatabaseError("The session database has no session row.")
        finally:
            db.close()
    return SessionSummary(
        session=row_to_session(
            {key: row[key] for key in ("name", "task_description", "created_at", "workspace")}
        ),
        queue_length=int(row["queued"] or 0),
        completed_count=int(row["completed"] or 0),
        active_plan_id=row["active_id"],
        active_goal=row["active_goal"],
        pulled_at=_time(row["pulled_at"]),
        defer_counts=_counts(row["deferred"]),
        last_activity=_time(row["last_at"]),
        active_count=int(row["active_count"]),
    )


def _time(text: str | None) -> dt.datetime | None:
    """A stored time; None when there is none, or it cannot be read (validate reports it)."""
    try:
        return None if text is None else converter.structure(text, dt.datetime)
    except (ValueError, TypeError):
        return None


def _counts(text: str | None) -> dict[str, int]:
    return {str(key): int(value) for key, value in json.loads(text or "{}").items()}
