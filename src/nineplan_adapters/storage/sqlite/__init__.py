"""SQLite storage: one `session.db` (aiosqlite, WAL) and a `plans/` folder per session.

catalog, store and watch are the backend; queries holds its statements; primer is `nineplan
prime`'s read with the standard library's sqlite3 (importing this package loads none of them).
"""
