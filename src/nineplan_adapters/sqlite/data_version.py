"""Following SQLite sessions across processes: `PRAGMA data_version` on a connection of its own.

`data_version` changes when a connection *other than the one asking* commits, in this process
or another, so a dedicated read-only connection per followed session sees every change,
the server's own included (DESIGN §7).
"""

import logging
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import attrs

from nineplan_adapters.changes import Change
from nineplan_core.model import check_session_name

log = logging.getLogger("nineplan.sqlite")

DATABASE = "session.db"
#: Which plans are live: their count and the newest plan's seq. A plan added changes the seq,
#: one completed or discarded lowers the count; pulls and defers change neither.
_LIVE = (
    "SELECT (SELECT coalesce(sum(n), 0) FROM plan_counts WHERE status IN ('queued', 'active')), "
    "(SELECT coalesce(max(seq), 0) FROM plans)"
)


@attrs.define
class SqliteSessionChanges:
    """SessionChanges for the sessions under `root`, polled every `interval` seconds."""

    root: Path
    interval: float = 0.1

    @asynccontextmanager
    async def follow(self, name: str) -> AsyncIterator[AsyncIterator[Change]]:
        watch = _Watch(self.root / check_session_name(name) / DATABASE, name)
        try:
            watch.look()  # the baseline
            yield watch.changes(self.interval)
        finally:
            watch.close()


@attrs.define
class _Watch:
    """One session's own read-only connection and what it last saw."""

    database: Path
    name: str
    db: sqlite3.Connection | None = None
    version: int | None = None
    live: tuple[int, int] | None = None
    #: The session was missing or unreadable since the last look: the next read is news.
    lost: bool = False

    def look(self) -> Change | None:
        """Read `data_version`; a Change when it moved since the last look (or the session
        appeared since)."""
        if self.db is None:
            self.db = _connect(self.database)
            if self.db is None:
                self.lost = True
                return None
        try:
            version = self.db.execute("PRAGMA data_version").fetchone()[0]
            if version == self.version:
                return None
            live = self.db.execute(_LIVE).fetchone()
        except sqlite3.Error as exc:  # busy, or the session went away: reconnect next time
            log.debug("watching %s: %s", self.name, exc)
            self.close()
            self.lost = True
            return None
        # A new connection's numbers say nothing of the old one's: after a loss, report a
        # change rather than risk missing one.
        baseline = self.version is None and not self.lost
        changed = self.lost or live != self.live
        self.version, self.live, self.lost = version, live, False
        return None if baseline else Change(self.name, plans_came_or_went=changed)

    async def changes(self, interval: float) -> AsyncIterator[Change]:
        while True:
            await anyio.sleep(interval)
            if (change := self.look()) is not None:
                yield change

    def close(self) -> None:
        if self.db is not None:
            self.db.close()
            self.db = None
        self.version = None


def _connect(database: Path) -> sqlite3.Connection | None:
    if not database.is_file():
        return None
    try:
        return sqlite3.connect(
            f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=0, check_same_thread=False
        )
    except sqlite3.Error:
        return None
