"""The SQLite backend's primer: `nineplan prime`'s read of a folder of session databases, with
the standard library's sqlite3, read-only, through the store's own statements (queries.py)."""

import datetime as dt
import os
import sqlite3
from pathlib import Path

import attrs

from nineplan_adapters.config import Settings
from nineplan_adapters.storage.journal_rows import SQLITE, event_select
from nineplan_adapters.storage.layout import DATABASE, WORKSPACE, plans_folder
from nineplan_adapters.storage.priming import (
    NEXT_GOALS,
    Candidate,
    choose,
    covers,
    primed_holds,
    primed_plan,
    read_file,
    stuck_from_rows,
)
from nineplan_adapters.storage.sqlite.queries import (
    ACTIVE,
    COUNTS,
    LAST_EVENT_AT,
    LIVE_GOALS,
    PRIMED_ACTIVE,
    QUEUE_GOALS,
    SESSION_ROW,
    WORKERS_NAMED,
)
from nineplan_core.journal import deferrals
from nineplan_core.model import SESSION_NAME, PlanId, file_name
from nineplan_core.primed import PrimedSession

WORKSPACE_BYTES = 8192  # a path, with room to spare


@attrs.frozen
class SqlitePrimer:
    """Finds a folder's session among the session folders under `root`."""

    root: Path
    stuck_defers: int

    def find(self, folder: str) -> PrimedSession | None:
        return find_sqlite(self.root, folder, self.stuck_defers)


def last_activity(folder: Path) -> dt.datetime | None:
    """When a session's files last changed: its database's mtime, or its WAL's while the WAL
    holds commits not yet checkpointed. None when the folder holds no session. Never earlier
    than the session's last journal event (but for the file system's coarse clock)."""
    try:
        when = (folder / DATABASE).stat().st_mtime_ns
    except OSError:
        return None
    try:
        wal = (folder / f"{DATABASE}-wal").stat()
    except OSError:
        pass
    else:
        when = max(when, wal.st_mtime_ns) if wal.st_size else when
    return dt.datetime.fromtimestamp(when / 1e9, dt.UTC)


def find_sqlite(root: Path, folder: str, stuck_defers: int) -> PrimedSession | None:
    """The session under `root` bound to `folder` (or a parent of it) that `choose` picks
    among those with work, naming the others; None when there is none.

    Most recently active: the latest last journal event (the file's mtime for a session
    without events). Only sessions whose workspace file covers `folder` are opened.
    """
    try:
        entries = [entry for entry in os.scandir(root) if SESSION_NAME.fullmatch(entry.name)]
    except OSError:
        return None
    candidates = []
    for entry in entries:
        session = Path(entry.path)
        # Opening a WAL database costs about half a millisecond; its workspace file, a fiftieth.
        if (
            entry.is_dir(follow_symlinks=False)
            and _bound(session, folder)
            and (when := last_activity(session)) is not None
            and (candidate := _candidate(session, folder, when)) is not None
        ):
            candidates.append(candidate)
    while (chosen := choose(candidates)) is not None:
        found = _primed(root / chosen[0].name, stuck_defers)
        if found is not None:
            return attrs.evolve(found, others=chosen[1])
        candidates.remove(chosen[0])  # changed since it was counted, or damaged: the next one
    return None


def _bound(session: Path, folder: str) -> bool:
    data = read_file(session / WORKSPACE, WORKSPACE_BYTES)
    try:
        return data is not None and covers(data.decode("utf-8"), folder)
    except UnicodeDecodeError:  # not a workspace this version wrote
        return False


def _open(session: Path) -> sqlite3.Connection | None:
    """The session's database, read-only; None when it cannot be opened."""
    try:
        db = sqlite3.connect(f"{(session / DATABASE).as_uri()}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return None
    db.row_factory = sqlite3.Row
    return db


def _candidate(session: Path, folder: str, when: dt.datetime) -> Candidate | None:
    """The session as a candidate (its last event's time, else `when`, its files' time);
    None when it is not bound to `folder`, has no work, or cannot be read."""
    if (db := _open(session)) is None:
        return None
    try:
        row = db.execute(SESSION_ROW).fetchone()
        if row is None or row["workspace"] is None or not covers(row["workspace"], folder):
            return None
        counts = dict(db.execute(COUNTS).fetchall())
        queued, active = int(counts.get("queued") or 0), int(counts.get("active") or 0)
        if not queued and not active:
            return None
        last = db.execute(LAST_EVENT_AT).fetchone()
        at = _timestamp(last[0] if last else None) or when
        return Candidate(row["name"], row["task_description"], queued, active, at)
    except sqlite3.Error:  # an older schema (no workspace), a damaged or busy database
        return None
    except Exception:  # noqa: BLE001 - one damaged session must never hide the others
        return None
    finally:
        db.close()


def _primed(session: Path, stuck_defers: int) -> PrimedSession | None:
    """What prime shows of the session; None when it has no work or cannot be read."""
    if (db := _open(session)) is None:
        return None
    try:
        row = db.execute(SESSION_ROW).fetchone()
        return None if row is None else _read(db, session, row, stuck_defers)
    except sqlite3.Error:  # a damaged or busy database
        return None
    except Exception:  # noqa: BLE001 - one damaged session must never hide the others
        return None
    finally:
        db.close()


def _timestamp(text: object) -> dt.datetime | None:
    """A journal row's `at`, or None when it is not a time (a damaged row)."""
    try:
        at = dt.datetime.fromisoformat(str(text)) if text is not None else None
        return (
            None
            if at is None
            else at.astimezone(dt.UTC)
            if at.tzinfo
            else at.replace(tzinfo=dt.UTC)
        )
    except (ValueError, OverflowError):  # not a time, or one past the calendar's end in UTC
        return None


def _read(
    db: sqlite3.Connection, session: Path, row: sqlite3.Row, stuck_defers: int
) -> PrimedSession | None:
    counts = dict(db.execute(COUNTS).fetchall())
    if not counts.get("queued") and not counts.get("active"):
        return None
    active_row = db.execute(ACTIVE).fetchone()
    goals = db.execute(QUEUE_GOALS, (NEXT_GOALS,)).fetchall()
    live = dict(db.execute(LIVE_GOALS).fetchall())
    sql, parameters = event_select(deferrals(live), SQLITE)
    deferred = [dict(values) for values in db.execute(sql, parameters)]
    active = None
    if active_row is not None:
        path = plans_folder(session) / file_name(active_row["id"])
        active = primed_plan(active_row, path, read_file(path))

    def file_of(plan_id: PlanId) -> tuple[Path, bytes | None]:
        path = plans_folder(session) / file_name(plan_id)
        return path, read_file(path)

    return PrimedSession(
        session_name=row["name"],
        task_description=row["task_description"],
        workspace=row["workspace"],
        active_plan=active,
        next=[goal for (goal,) in goals],
        stuck=stuck_from_rows(live, deferred, stuck_defers),
        active_plans=primed_holds(db.execute(PRIMED_ACTIVE).fetchall(), file_of),
        workers_named=_workers_named(db),
    )


def _workers_named(db: sqlite3.Connection) -> bool:
    """Whether a worker other than `main` was named; False for a database of a schema older
    than version 9, which the read-only primer does not migrate."""
    try:
        row = db.execute(WORKERS_NAMED).fetchone()
    except sqlite3.OperationalError:
        return False
    return bool(row and row[0])


def primer(settings: Settings, _catalog: object = None) -> SqlitePrimer:
    """The primer over the session folders under the settings' sessions path (what an open
    catalog wrote is on disk, so it is not needed)."""
    return SqlitePrimer(settings.sessions_path, settings.stuck_defers)
