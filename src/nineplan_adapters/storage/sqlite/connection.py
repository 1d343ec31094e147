"""One session database connection: short statements on the caller's thread, waits on aiosqlite's."""

import logging
import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import aiosqlite
import anyio
import attrs

from nineplan_adapters.config import Durability
from nineplan_core.errors import DatabaseError
from nineplan_core.suggestions import Action, Suggestion

log = logging.getLogger("nineplan.sqlite")

MIGRATIONS = tuple(
    resources.files(__package__).joinpath(f"schema_v{number}.sql").read_text("utf-8")
    for number in range(1, 13)
)
_ADD_COLUMN = re.compile(r"^ALTER TABLE (\w+) ADD COLUMN (\w+) [^;]*;$", re.MULTILINE)
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


@contextmanager
def database_errors(action: str) -> Iterator[None]:
    """Turn a driver error into a categorized DatabaseError."""
    try:
        yield
    except sqlite3.Error as exc:
        raise database_error(action, exc) from exc


def database_error(action: str, exc: sqlite3.Error) -> DatabaseError:
    """A categorized DatabaseError for a driver error; a busy session says to retry."""
    if _is_busy(exc):
        return DatabaseError(
            f"Could not {action}: the session is busy in another process.",
            suggestion=Suggestion(Action.RETRY_BUSY),
        )
    return DatabaseError(f"Could not {action}: {exc}.")


def _is_busy(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _BUSY  # the primary code of an extended one (SQLITE_BUSY_SNAPSHOT...)
    return "locked" in str(exc) or "busy" in str(exc)


@attrs.define
class SessionConnection:
    """A session database opened once, used two ways.

    A statement that reads or writes a few rows through an index takes microseconds, while
    handing it to aiosqlite's worker thread and back costs about 70 µs (benchmark row 10): those
    handoffs were most of a call's own time. So such statements run directly on the calling
    thread (`run`), on the same `sqlite3` connection, with the busy timeout at zero so that they
    never block the event loop waiting for a lock. A scan that grows with the session runs in
    aiosqlite's thread (`run_in_thread`), and so does the COMMIT (its fsync) unless
    `commit_on_loop`. A statement that finds the database locked by another process is retried
    in the thread, waiting up to the busy timeout.

    The store's lock gives the connection one user at a time, and a statement handed to the
    thread is awaited to its end even on cancellation, so the two ways never overlap.
    """

    aio: aiosqlite.Connection
    direct: sqlite3.Connection
    busy_timeout_ms: int
    commit_on_loop: bool = False

    @property
    def in_transaction(self) -> bool:
        return self.direct.in_transaction

    async def run(self, sql: str, parameters: Any = ()) -> list[sqlite3.Row]:
        """A statement over a bounded number of rows, on this thread unless it has to wait."""
        try:
            return self.direct.execute(sql, parameters).fetchall()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
        return await self._wait_and_run(sql, parameters)

    async def run_in_thread(self, sql: str, parameters: Any = ()) -> list[sqlite3.Row]:
        """A statement whose cost grows with the session, in aiosqlite's thread."""
        try:
            return await self._in_thread(sql, parameters)
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise
        return await self._wait_and_run(sql, parameters)

    async def commit(self) -> None:
        await (self.run if self.commit_on_loop else self.run_in_thread)("COMMIT")

    def roll_back(self) -> None:
        """End the transaction, if any (WAL: no fsync, no lock to wait for)."""
        if self.direct.in_transaction:
            self.direct.execute("ROLLBACK")

    async def close(self) -> None:
        await self.aio.close()

    async def _wait_and_run(self, sql: str, parameters: Any) -> list[sqlite3.Row]:
        self.direct.execute(f"PRAGMA busy_timeout = {self.busy_timeout_ms}")
        try:
            return await self._in_thread(sql, parameters)
        finally:
            self.direct.execute("PRAGMA busy_timeout = 0")

    async def _in_thread(self, sql: str, parameters: Any) -> list[sqlite3.Row]:
        with anyio.CancelScope(shield=True):  # never touch the connection while the thread does
            rows = await self.aio.execute_fetchall(sql, parameters)
        return list(rows)


async def connect(
    path: Path,
    *,
    create: bool,
    durability: Durability,
    busy_timeout: float,
    commit_on_loop: bool = False,
) -> SessionConnection:
    """Open (or create) a session database, set its pragmas and migrate it forward."""
    uri = f"{path.resolve().as_uri()}?mode={'rwc' if create else 'rw'}"
    opened: list[sqlite3.Connection] = []

    def open_database() -> sqlite3.Connection:  # runs in aiosqlite's thread
        db = sqlite3.connect(
            uri, uri=True, isolation_level=None, timeout=busy_timeout, check_same_thread=False
        )
        opened.append(db)
        return db

    with database_errors("open the session database"):
        aio = await aiosqlite.Connection(open_database, iter_chunk_size=64)
    try:
        with database_errors("open the session database"):
            aio.row_factory = sqlite3.Row
            await aio.execute("PRAGMA journal_mode = WAL")
            await aio.execute(
                f"PRAGMA synchronous = {'FULL' if durability == 'full' else 'NORMAL'}"
            )
            await aio.execute("PRAGMA foreign_keys = ON")
            await _migrate(aio)
            await aio.execute("PRAGMA busy_timeout = 0")
    except BaseException:
        await aio.close()
        raise
    return SessionConnection(aio, opened[0], round(busy_timeout * 1000), commit_on_loop)


async def _migrate(db: aiosqlite.Connection) -> None:
    version = await _user_version(db)
    if version > len(MIGRATIONS):
        raise DatabaseError(
            f"The session database has schema version {version}, newer than version "
            f"{len(MIGRATIONS)}, the newest this nineplan knows.",
            suggestion=Suggestion(Action.UPGRADE, detail="Upgrade nineplan to open this session."),
        )
    for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
        # Every migration is idempotent, so two processes racing to migrate both succeed.
        try:
            await db.executescript(
                f"BEGIN IMMEDIATE;\n{await _new_columns_only(db, script)}\n"
                f"PRAGMA user_version = {number};\nCOMMIT;"
            )
        except sqlite3.OperationalError:
            if db.in_transaction:
                await db.execute("ROLLBACK")
            if await _user_version(db) < number:  # not another process that migrated first
                raise
        if version:  # a new database is created at the newest version: nothing to report
            log.info("migrated session database to version %d", number)


async def _new_columns_only(db: aiosqlite.Connection, script: str) -> str:
    """`script` without the ADD COLUMN statements whose column is there already (SQLite has
    no ADD COLUMN IF NOT EXISTS): a migration run again, or by a second process, still works."""

    async def exists(match: re.Match[str]) -> bool:
        table, column = match.group(1), match.group(2)
        rows = await db.execute_fetchall("SELECT name FROM pragma_table_info(?)", (table,))
        return column in {row[0] for row in rows}

    for match in list(_ADD_COLUMN.finditer(script)):
        if await exists(match):
            script = script.replace(match.group(0), "")
    return script


async def _user_version(db: aiosqlite.Connection) -> int:
    rows = list(await db.execute_fetchall("PRAGMA user_version"))
    return int(rows[0][0])
