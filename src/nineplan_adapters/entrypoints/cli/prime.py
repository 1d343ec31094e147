"""`nineplan prime`: the way back after compaction, printed for a client's session-start hook.

It finds the most recently active session bound to a folder (or a parent of it) that still
has work, and prints a short block about it: what an agent needs to pick the work back up
without remembering its session's name. A hook waits for this command, so it reads the
databases directly with `sqlite3`, read-only, and imports nothing of `mcp`, the container or
aiosqlite (tests/integration/test_prime.py checks the imports).
"""

import argparse
import datetime as dt
import json
import os
import sqlite3
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.workspace import covers
from nineplan_adapters.storage.journal_rows import SQLITE, event_select, postgres_dialect, row_event
from nineplan_core.journal import deferrals, stuck_plans
from nineplan_core.model import DEFAULT_LIMITS, SESSION_NAME, PlanContent
from nineplan_core.plan_file import MAX_FILE_BYTES, PlanText, read_back

#: The most a block may hold: it lands in the agent's context on every start and compaction.
BUDGET = 2_000
NEXT_GOALS = 3
NOTES_LINES = 5
DATABASE = "session.db"
WORKSPACE = "workspace"  # the copy SqliteSessionCatalog keeps beside the database
WORKSPACE_BYTES = 8192  # a path, with room to spare
#: How far a database file's mtime may lag the time of the last event it holds (the file
#: system's coarse clock); within this, a session whose files are older may still be newer.
MTIME_SLACK = dt.timedelta(seconds=1)


@attrs.frozen
class ActivePrimer:
    id: str
    goal: str
    file_path: str
    notes_tail: list[str]


@attrs.frozen
class StuckPlan:
    id: str
    goal: str
    defers: int


@attrs.frozen(kw_only=True)
class Primer:
    """What prime found: the session to go back to and where its work stands."""

    session_name: str
    task_description: str | None
    workspace: str
    active_plan: ActivePrimer | None
    next: list[str]
    stuck: list[StuckPlan]

    @property
    def resume_call(self) -> str:
        return f'9plan_session_resume(session_name="{self.session_name}")'

    def as_json(self) -> dict[str, Any]:
        """The fields docs/clients.md lists (the way back after compaction), as
        `nineplan prime --json` prints them."""
        active = self.active_plan
        return {
            "session_name": self.session_name,
            "task_description": self.task_description,
            "workspace": self.workspace,
            "active_plan": attrs.asdict(active) if active else None,
            "next": self.next,
            "stuck": [plan.id for plan in self.stuck],
            "resume_call": self.resume_call,
        }

    def block(self) -> str:
        """The text for the agent's context: at most BUDGET characters.

        The session's name and the resume call always fit; the other lines are kept in order
        of importance as long as the budget allows, and shown in reading order.
        """
        # (where it is shown, how important it is, the text, whether it must be shown)
        lines: list[tuple[int, int, str, bool]] = [
            (0, 0, f"[9plan] This folder's session is {self.session_name}.", True),
            (10, 1, f"Workspace: {_clip(self.workspace, 300)}", False),
            (999, 99, f"To continue, call {self.resume_call}; it makes the session current.", True),
        ]
        if self.task_description:
            lines.append((20, 2, f"Task: {_clip(self.task_description, 300)}", False))
        if (active := self.active_plan) is not None:
            lines += [
                (30, 3, f"Active plan: {active.id} {_clip(active.goal, 200)}", True),
                (40, 4, f"  File: {_clip(active.file_path, 300)}", False),
            ]
            if active.notes_tail:
                lines.append((50, 10, "  Last notes:", False))
                lines += [
                    (50 + index, 10 + index, f"    {_clip(line, 200)}", False)
                    for index, line in enumerate(active.notes_tail, start=1)
                ]
        else:
            lines.append(
                (30, 3, "Active plan: none; pull the next one with 9plan_queue_pull.", True)
            )
        if self.next:
            lines.append((100, 5, "Next in the queue:", False))
            lines += [
                (100 + index, 5 + index, f"  {index}. {_clip(goal, 150)}", False)
                for index, goal in enumerate(self.next, start=1)
            ]
        lines += [
            (
                200 + index,
                20 + index,
                (
                    f"Stuck: {plan.id} deferred {plan.defers} times: {_clip(plan.goal, 120)} "
                    "(split it, or record why it is blocked)"
                ),
                False,
            )
            for index, plan in enumerate(self.stuck)
        ]
        kept = [(shown, text) for shown, _, text, required in lines if required]
        used = sum(len(text) + 1 for _, text in kept)
        for shown, _, text, required in sorted(lines, key=lambda line: line[1]):
            if not required and used + len(text) + 1 <= BUDGET:
                kept.append((shown, text))
                used += len(text) + 1
        return "\n".join(text for _, text in sorted(kept))[:BUDGET]


def _clip(text: str | None, limit: int) -> str:
    """One line of at most `limit` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- SQLite: a folder per session ------------------------------------------------------------


def last_activity(folder: Path) -> dt.datetime | None:
    """When a session's files last changed: its database's mtime, or its WAL's while the WAL
    holds commits not yet checkpointed. None when the folder holds no session. Never earlier
    than the session's last journal event (but for MTIME_SLACK): a commit writes the file."""
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


def find_sqlite(root: Path, folder: str, stuck_defers: int) -> Primer | None:
    """The most recently active session under `root` bound to `folder` (or a parent of it)
    that still has work; None when there is none.

    Most recently active: the latest last journal event (the file's mtime for a session
    without events). The sessions are opened newest file first, and the search stops at a
    file older than the best event found, which it cannot beat.
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
        ):
            candidates.append((when, entry.name))
    best: tuple[dt.datetime, Primer] | None = None
    for when, name in sorted(candidates, reverse=True):
        if best is not None and when + MTIME_SLACK < best[0]:
            break
        found = _sqlite_primer(root / name, name, folder, stuck_defers)
        if found is not None:
            active_at = found[0] or when
            if best is None or active_at > best[0]:
                best = (active_at, found[1])
    return best[1] if best else None


def _bound(session: Path, folder: str) -> bool:
    data = _read_bytes(session / WORKSPACE, WORKSPACE_BYTES)
    try:
        return data is not None and covers(data.decode("utf-8"), folder)
    except UnicodeDecodeError:  # not a workspace this version wrote
        return False


def _sqlite_primer(
    session: Path, name: str, folder: str, stuck_defers: int
) -> tuple[dt.datetime | None, Primer] | None:
    """The session's last event time (None without one) and its primer; None when it is not
    bound to `folder`, has no work, or cannot be read."""
    try:
        db = sqlite3.connect(f"{(session / DATABASE).as_uri()}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return None
    try:
        row = db.execute("SELECT path FROM workspace").fetchone()
        if row is None or not covers(row[0], folder):
            return None
        primer = _read_primer(db, session, name, row[0], stuck_defers)
        if primer is None:
            return None
        last = db.execute("SELECT at FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        return _timestamp(last[0] if last else None), primer
    except sqlite3.Error:  # an older schema (no workspace), a damaged or busy database
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


def _read_primer(
    db: sqlite3.Connection, session: Path, name: str, workspace: str, stuck_defers: int
) -> Primer | None:
    counts = dict(db.execute("SELECT status, n FROM plan_counts").fetchall())
    if not counts.get("queued") and not counts.get("active"):
        return None
    session_row = db.execute("SELECT task_description FROM sessions").fetchone()
    if session_row is None:  # a damaged database: no session row
        return None
    (task,) = session_row
    active = db.execute(f"SELECT {_ACTIVE} FROM plans WHERE status = 'active'").fetchone()  # noqa: S608 - a constant
    goals = db.execute(
        "SELECT goal FROM plans WHERE status = 'queued' ORDER BY queue_position LIMIT ?",
        (NEXT_GOALS,),
    ).fetchall()
    live = dict(db.execute("SELECT id, goal FROM plans WHERE status IN ('queued', 'active')"))
    sql, parameters = event_select(deferrals(live), SQLITE)
    cursor = db.execute(sql, parameters)
    columns = [column[0] for column in cursor.description]
    deferred = [dict(zip(columns, values, strict=True)) for values in cursor]
    return Primer(
        session_name=name,
        task_description=task,
        workspace=workspace,
        active_plan=_active(session / "plans", *active) if active else None,
        next=[goal for (goal,) in goals],
        stuck=_stuck(live, deferred, stuck_defers),
    )


#: The active plan's columns _active() takes, in its order.
_ACTIVE = "id, notes, context, goal, approach, success_criteria, inputs, outputs"


def _active(
    plans: Path,
    plan_id: str,
    notes: str,
    context: str,
    goal: str,
    approach: str,
    success_criteria: str,
    inputs: str,
    outputs: str,
) -> ActivePrimer:
    """The active plan, with the last lines of the notes in its file as the use cases would
    read them back (the agent writes there as it works); the stored notes without a file."""
    path = plans / f"{plan_id}.txt"
    content = PlanContent(
        context=context, goal=goal, approach=approach, success_criteria=success_criteria,
        inputs=inputs, outputs=outputs,
    )  # fmt: skip
    read = read_back(
        _read_bytes(path), PlanText(content, notes), max_section_chars=DEFAULT_LIMITS.max_text_chars
    )
    tail = [line for line in read.text.notes.splitlines() if line.strip()][-NOTES_LINES:]
    return ActivePrimer(id=plan_id, goal=goal, file_path=str(path), notes_tail=tail)


def _read_bytes(path: Path, limit: int = MAX_FILE_BYTES + 1) -> bytes | None:
    """A file's first `limit` bytes; None when it is missing, a symlink or not a regular file
    (a directory, or a FIFO that would block the hook), or cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            return handle.read(limit)
    except OSError:
        return None


def _stuck(
    goals: Mapping[str, str], rows: Iterable[Mapping[str, Any]], stuck_defers: int
) -> list[StuckPlan]:
    """The live plans (id -> goal) that the journal rows of their deferrals show stuck, by the
    core's rule (nineplan_core.journal), in id order."""
    stuck = stuck_plans((row_event(row) for row in rows), stuck_defers)
    return [StuckPlan(plan_id, goals[plan_id], stuck[plan_id]) for plan_id in sorted(stuck)]


# -- PostgreSQL: every session in one database -----------------------------------------------


async def find_postgres(url: str, root: Path, folder: str, stuck_defers: int) -> Primer | None:
    """As find_sqlite, over a shared database; plan files are this machine's mirror under
    `root`. Most recently active: the session's last journal event (its latest plan creation
    or completion, or its creation, without one)."""
    import asyncpg  # noqa: PLC0415 - only a database URL loads the driver

    try:
        connection = await asyncpg.connect(url, timeout=5)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError):
        return None
    try:
        session = await connection.fetchrow(
            "SELECT s.name, s.task_description, s.workspace FROM nineplan_sessions s "
            "JOIN nineplan_plans p ON p.session_name = s.name "
            "WHERE s.workspace IS NOT NULL AND ($1 = s.workspace OR "
            "starts_with($1, rtrim(s.workspace, '/') || '/')) "
            "GROUP BY s.name HAVING count(*) FILTER (WHERE p.status IN ('queued', 'active')) > 0 "
            "ORDER BY coalesce((SELECT j.at FROM nineplan_journal j WHERE j.session_name = s.name "
            "ORDER BY j.seq DESC LIMIT 1), "
            "greatest(s.created_at, max(p.created_at), max(p.completed_at))) DESC "
            "LIMIT 1",
            folder,
        )
        if session is None:
            return None
        name = session["name"]
        plans = await connection.fetch(
            f"SELECT status, {_ACTIVE} FROM nineplan_plans "  # noqa: S608 - a constant
            "WHERE session_name = $1 AND status IN ('queued', 'active') ORDER BY queue_position",
            name,
        )
        sql, parameters = event_select(
            deferrals(plan["id"] for plan in plans), postgres_dialect(name)
        )
        deferred = await connection.fetch(sql, *parameters)
    except (asyncpg.PostgresError, asyncpg.InterfaceError):  # an older schema, say
        return None
    finally:
        await connection.close()
    active = next((plan for plan in plans if plan["status"] == "active"), None)
    return Primer(
        session_name=name,
        task_description=session["task_description"],
        workspace=session["workspace"],
        active_plan=_active(root / name / "plans", *list(active.values())[1:]) if active else None,
        next=[plan["goal"] for plan in plans if plan["status"] == "queued"][:NEXT_GOALS],
        stuck=_stuck({plan["id"]: plan["goal"] for plan in plans}, deferred, stuck_defers),
    )


# -- the command -----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`nineplan prime`'s options."""
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="the folder to find a session for (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument(
        "--sessions-path", help="folder holding the sessions (NINEPLAN_SESSIONS_PATH)"
    )


def find(settings: Settings, folder: str) -> Primer | None:
    if settings.database_url:
        import anyio  # noqa: PLC0415

        return anyio.run(
            find_postgres,
            settings.database_url,
            settings.sessions_path,
            folder,
            settings.stuck_defers,
        )
    return find_sqlite(settings.sessions_path, folder, settings.stuck_defers)


def prime(settings: Settings, workspace: str | None, *, as_json: bool) -> str | None:
    """The block (or JSON) for `workspace` (default: the current directory); None when no
    session is bound to it (the command then prints nothing)."""
    folder = os.path.realpath(workspace or os.getcwd())  # noqa: PTH109 - a string is compared
    primer = find(settings, folder)
    if primer is None:
        return None
    return json.dumps(primer.as_json(), indent=2, ensure_ascii=False) if as_json else primer.block()
