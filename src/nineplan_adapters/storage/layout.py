"""A session's folder: the one place its file names are spelled.

Every backend keeps a folder per session under the sessions path: SQLite its database and
its plan files, PostgreSQL this machine's mirror of the plan files.
"""

from pathlib import Path

DATABASE = "session.db"  # SQLite: the session's database (and its -wal, -shm beside it)
WORKSPACE = "workspace"  # SQLite: a copy of the session's workspace, for prime to read fast
#: SQLite: a person filed the session away (`nineplan archive`); the file's presence is the mark.
ARCHIVED = "archived"
PLANS = "plans"  # the agent's working copies, one file per queued or active plan
RECOVERED = "recovered"  # copies kept before any loss
WRITTEN = "written"  # PostgreSQL: what this machine last wrote into each plan file (a hash)
CREATIONS = ".requests"  # SQLite: retried create calls; not a three-word name, never a session


def plans_folder(session_folder: Path) -> Path:
    """Where a session's plan files live."""
    return session_folder / PLANS


def recovered_folder(session_folder: Path) -> Path:
    """Where a session keeps the copies it made before a loss."""
    return session_folder / RECOVERED


def written_folder(session_folder: Path) -> Path:
    """Where a session keeps the record of what this machine wrote into its plan files."""
    return session_folder / WRITTEN
