"""Watching a SQLite session for commits made by any connection, in any process.

`PRAGMA data_version` changes, for one connection, whenever another connection has committed
to the database since that connection last asked. So a watcher keeps a read-only connection of
its own per watched session and asks every `interval` seconds: one cheap pragma, no read of
the tables, no busy loop. The store's own connection is "another connection" too, so commits
made in this very process are seen the same way.
"""

import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import attrs

from nineplan_adapters.sqlite.connection import database_errors
from nineplan_core.errors import SessionNotFoundError
from nineplan_core.model import check_session_name

log = logging.getLogger("nineplan.sqlite")

DATABASE = "session.db"


@attrs.define
class SqliteSessionWatch:
    """Change ticks for the sessions under `root` (`{root}/{name}/session.db`)."""

    root: Path
    interval: float = 0.1

    @asynccontextmanager
    async def changes(self, name: str) -> AsyncIterator[AsyncIterator[None]]:
        database = self.root / check_session_name(name) / DATABASE
        if not database.is_file() or database.parent.is_symlink():
            raise SessionNotFoundError(name)
        with database_errors("watch the session"):
            db = await anyio.to_thread.run_sync(_open_read_only, database)
        try:
            yield DataVersionTicks(db, self.interval, _data_version(db))
        finally:
            db.close()


def _open_read_only(database: Path) -> sqlite3.Connection:
    # check_same_thread=False: opened in a worker thread, then asked on the event loop's.
    return sqlite3.connect(
        f"{database.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False, timeout=0
    )


def _data_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA data_version").fetchone()[0])


@attrs.define
class DataVersionTicks:
    """An async iterator that yields once each time `PRAGMA data_version` has moved."""

    db: sqlite3.Connection
    interval: float
    seen: int

    def __aiter__(self) -> "DataVersionTicks":
        return self

    async def __anext__(self) -> None:
        while True:
            await anyio.sleep(self.interval)
            try:
                version = _data_version(self.db)  # microseconds: no table is read
            except sqlite3.Error as exc:
                log.warning("could not ask the session for changes: %s", exc)
                return  # a tick: the reader reads the session and sees for itself
            if version != self.seen:
                self.seen = version
                return
