"""The PostgreSQL backend's primer: `nineplan prime`'s read of the shared database; plan files
are this machine's mirror under the sessions path."""

from pathlib import Path

import anyio
import asyncpg
import attrs

from nineplan_adapters.config import Settings
from nineplan_adapters.storage.journal_rows import event_select, postgres_dialect
from nineplan_adapters.storage.layout import plans_folder
from nineplan_adapters.storage.postgres.store import PLAN_SELECT
from nineplan_adapters.storage.priming import (
    NEXT_GOALS,
    Candidate,
    choose,
    primed_holds,
    primed_plan,
    read_file,
    stuck_from_rows,
)
from nineplan_core.journal import deferrals
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanId, file_name
from nineplan_core.primed import PrimedSession
from nineplan_core.workers import MAIN

#: The sessions bound to $1 (the folder, or one below its workspace) with queued or active
#: plans: their counts and when they were last active (their last journal event's time; their
#: latest plan creation or completion, or their creation, without one).
BOUND_SESSIONS = (
    "SELECT s.name, s.task_description, "
    "count(*) FILTER (WHERE p.status = 'queued') AS queued, "
    "count(*) FILTER (WHERE p.status = 'active') AS active, "
    "coalesce((SELECT j.at FROM nineplan_journal j WHERE j.session_name = s.name "
    "ORDER BY j.seq DESC LIMIT 1), "
    "greatest(s.created_at, max(p.created_at), max(p.completed_at))) AS last_active "
    "FROM nineplan_sessions s "
    "JOIN nineplan_plans p ON p.session_name = s.name "
    "WHERE s.workspace IS NOT NULL AND ($1 = s.workspace OR "
    "starts_with($1, rtrim(s.workspace, '/') || '/')) "
    "GROUP BY s.name HAVING count(*) FILTER (WHERE p.status IN ('queued', 'active')) > 0"
)
#: The chosen session's row.
SESSION = (
    "SELECT name, task_description, workspace, workers_named FROM nineplan_sessions WHERE name = $1"
)
#: A session's queued and active plans, the queue's front first.
LIVE_PLANS = (
    f"{PLAN_SELECT} WHERE session_name = $1 AND status IN ('queued', 'active') "
    "ORDER BY queue_position"
)


@attrs.frozen
class PostgresPrimer:
    """Finds a folder's session in the database at `url`."""

    url: str
    root: Path
    stuck_defers: int

    def find(self, folder: str) -> PrimedSession | None:
        return anyio.run(find_postgres, self.url, self.root, folder, self.stuck_defers)


async def find_postgres(
    url: str, root: Path, folder: str, stuck_defers: int
) -> PrimedSession | None:
    """As find_sqlite, over a shared database; None when the database cannot be reached or
    read (an older schema, say)."""
    try:
        connection = await asyncpg.connect(url, timeout=5)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError):
        return None
    try:
        chosen = choose(map(_candidate, await connection.fetch(BOUND_SESSIONS, folder)))
        if chosen is None:
            return None
        session = await connection.fetchrow(SESSION, chosen[0].name)
        if session is None:  # deleted since
            return None
        name = session["name"]
        plans = await connection.fetch(LIVE_PLANS, name)
        sql, parameters = event_select(
            deferrals(plan["id"] for plan in plans), postgres_dialect(name)
        )
        deferred = await connection.fetch(sql, *parameters)
    except (asyncpg.PostgresError, asyncpg.InterfaceError):  # an older schema, say
        return None
    finally:
        await connection.close()
    active = next(
        (p for p in plans if p["status"] == PlanStatus.ACTIVE.value and p["worker"] == MAIN),
        None,
    )
    primed = None
    if active is not None:
        path = plans_folder(root / name) / file_name(active["id"])
        primed = primed_plan(active, path, read_file(path))
    return PrimedSession(
        session_name=name,
        task_description=session["task_description"],
        workspace=session["workspace"],
        active_plan=primed,
        next=[plan["goal"] for plan in plans if plan["status"] == PlanStatus.QUEUED.value][
            :NEXT_GOALS
        ],
        stuck=stuck_from_rows({plan["id"]: plan["goal"] for plan in plans}, deferred, stuck_defers),
        others=chosen[1],
        active_plans=primed_holds(
            (p for p in plans if p["status"] == PlanStatus.ACTIVE.value),
            lambda plan_id: _file_of(root / name, plan_id),
        ),
        workers_named=session["workers_named"],
    )


def _file_of(session: Path, plan_id: PlanId) -> tuple[Path, bytes | None]:
    path = plans_folder(session) / file_name(plan_id)
    return path, read_file(path)


def _candidate(row: asyncpg.Record) -> Candidate:
    return Candidate(
        row["name"], row["task_description"], row["queued"], row["active"], row["last_active"]
    )


def primer(settings: Settings, _catalog: object = None) -> PostgresPrimer:
    """The primer over the settings' database, with this machine's plan files."""
    if not settings.database_url:
        raise ValueError("the PostgreSQL primer needs NINEPLAN_DATABASE_URL")
    return PostgresPrimer(settings.database_url, settings.sessions_path, settings.stuck_defers)
