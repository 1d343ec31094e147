"""Watching a SQLite session for commits made by any connection, in any process.

`PRAGMA data_version` changes, for one connection, whenever another connection has committed
to the database since that connection last asked. So a watcher keeps a read-only connection of
its own per watched session and asks every `interval` seconds: one cheap pragma, no read of
the tables, no busy loop. The store's own connection is "another connection" too, so commits
made in this very process are seen the same way.
"""

import contextlib
import logging
import os
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import attrs

from nineplan_adapters.storage.layout import ARCHIVED, DATABASE
from nineplan_adapters.storage.polled import PolledNames
from nineplan_adapters.storage.sqlite.connection import database_errors
from nineplan_core.errors import DatabaseError, SessionNotFoundError
from nineplan_core.model import SESSION_NAME, SessionName

log = logging.getLogger("nineplan.sqlite")


@attrs.define
class SqliteSessionWatch:
    """Change ticks for the sessions under `root` (`{root}/{name}/session.db`)."""

    root: Path
    interval: float = 0.1
    #: How often the session list's watch looks at every session's files.
    list_interval: float = 0.5

    @asynccontextmanager
    async def changes(self, name: SessionName) -> AsyncIterator[AsyncIterator[None]]:
        database = self.root / name / DATABASE
        if not database.is_file() or database.parent.is_symlink():
            raise SessionNotFoundError(name)
        try:
            with database_errors("watch the session"):
                db = await anyio.to_thread.run_sync(_open_read_only, database)
        except DatabaseError:
            if not database.is_file():  # deleted between the look and the open
                raise SessionNotFoundError(name) from None
            raise
        try:
            try:
                watched = _Watched(name, database, database.stat().st_ino)
            except FileNotFoundError:
                raise SessionNotFoundError(name) from None
            yield DataVersionTicks(db, self.interval, _data_version(db), watched)
        finally:
            db.close()

    @asynccontextmanager
    async def sessions(self) -> AsyncIterator[AsyncIterator[frozenset[str]]]:
        """The sessions whose database files changed (a commit writes the WAL, a checkpoint
        the database) or whose archive mark came or went: a stat of three files per session
        each `list_interval`, in one worker thread handoff, with no connection held. A thousand
        sessions keep no thousand connections (and their descriptors) open."""
        yield PolledNames(
            partial(_signatures, self.root), await _signatures(self.root), self.list_interval
        )


def _signature(folder: str) -> tuple[int, ...] | None:
    """What changes when the session's database does: the database's and the WAL's inode,
    size and modification time, and whether it is archived (the mark is a file beside it);
    None when there is no session database."""
    parts: list[int] = [int(os.path.exists(os.path.join(folder, ARCHIVED)))]  # noqa: PTH110, PTH118 - as below
    for file_name in (DATABASE, f"{DATABASE}-wal"):
        try:
            stat = os.stat(os.path.join(folder, file_name))  # noqa: PTH116, PTH118 - a thousand a scan: no Path objects
        except FileNotFoundError:
            if file_name == DATABASE:
                return None
            parts += [0, 0, 0]
        else:
            parts += [stat.st_ino, stat.st_size, stat.st_mtime_ns]
    return tuple(parts)


def _scan(root: Path) -> dict[str, tuple[int, ...]]:
    found = {}
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if SESSION_NAME.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        if (signature := _signature(entry.path)) is not None:
                            found[entry.name] = signature
    except OSError:  # no sessions folder yet: no sessions
        return {}
    return found


async def _signatures(root: Path) -> dict[str, tuple[int, ...]]:
    return await anyio.to_thread.run_sync(_scan, root)


def _open_read_only(database: Path) -> sqlite3.Connection:
    # check_same_thread=False: opened in a worker thread, then asked on the event loop's.
    return sqlite3.connect(
        f"{database.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False, timeout=0
    )


def _data_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA data_version").fetchone()[0])


@attrs.frozen
class _Watched:
    """The database a watch was opened on: its session, path and inode."""

    name: SessionName
    path: Path
    inode: int

    def gone(self) -> bool:
        """Whether the file is no longer there, or another file took its place (the session
        folder was deleted, or replaced): its commits would never be seen again."""
        try:
            return self.path.stat().st_ino != self.inode
        except OSError:
            return True


@attrs.define
class DataVersionTicks:
    """An async iterator that yields once each time `PRAGMA data_version` has moved.

    Raises SessionNotFoundError once the watched database is gone (deleted or replaced)."""

    db: sqlite3.Connection
    interval: float
    seen: int
    watched: _Watched | None = None

    def __aiter__(self) -> "DataVersionTicks":
        return self

    async def __anext__(self) -> None:
        while True:
            await anyio.sleep(self.interval)
            if self.watched is not None and self.watched.gone():
                raise SessionNotFoundError(self.watched.name)
            try:
                version = _data_version(self.db)  # microseconds: no table is read
            except sqlite3.Error as exc:
                log.warning("could not ask the session for changes: %s", exc)
                return  # a tick: the reader reads the session and sees for itself
            if version != self.seen:
                self.seen = version
                return
