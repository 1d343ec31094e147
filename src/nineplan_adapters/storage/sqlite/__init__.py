"""SQLite storage: one `session.db` (aiosqlite, WAL) and a `plans/` folder per session."""

from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
from nineplan_adapters.storage.sqlite.store import SqliteSessionStore

__all__ = ["SqliteSessionCatalog", "SqliteSessionStore"]
