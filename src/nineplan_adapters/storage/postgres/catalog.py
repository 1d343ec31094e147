"""The PostgreSQL session catalog: one connection pool, a local folder per session for its files."""

import json
import logging
import shutil
from functools import partial
from importlib import resources
from pathlib import Path

import anyio
import asyncpg
import attrs

from nineplan_adapters.storage.layout import plans_folder, recovered_folder, written_folder
from nineplan_adapters.storage.plan_files import (
    PlanFilesFactory,
    directory_plan_files,
    file_system_error,
)
from nineplan_adapters.storage.postgres.store import (
    SESSIONS_CHANNEL,
    PostgresSessionStore,
    database_errors,
)
from nineplan_adapters.storage.postgres.watch import PostgresSessionWatch
from nineplan_adapters.storage.retry_log import RetryLog
from nineplan_adapters.storage.rows import load_result, row_to_session
from nineplan_adapters.storage.written import DirectoryWriteRecord, machine_id
from nineplan_core.errors import (
    DatabaseError,
    NinePlanError,
    SessionNotFoundError,
)
from nineplan_core.journal import NewEvent
from nineplan_core.model import DEFAULT_LIMITS, Session, SessionName
from nineplan_core.results import SessionSummary
from nineplan_core.suggestions import Action, Suggestion

log = logging.getLogger("nineplan.postgres")

MIGRATIONS = tuple(
    resources.files(__package__).joinpath(f"schema_v{number}.sql").read_text("utf-8")
    for number in range(1, 12)
)
_MIGRATION_LOCK = 0x9_1A_4  # pg_advisory_lock key: one migrator at a time, on any machine


async def connect_pool(url: str) -> asyncpg.Pool:
    """A connection pool on `url`, with the schema migrated forward.

    Raises:
        DatabaseError: the server cannot be reached, refuses the login, or has a newer schema.
    """
    try:
        pool = await asyncpg.create_pool(url, min_size=1, max_size=8, command_timeout=60)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError) as exc:
        raise DatabaseError(
            f"Could not connect to the PostgreSQL server in NINEPLAN_DATABASE_URL: {exc}.",
            suggestion=Suggestion(
                Action.FIX_STORAGE,
                detail="Check that the server is running and the URL (host, port, user, database) is right.",
            ),
        ) from exc
    try:
        await _migrate(pool)
    except BaseException:
        await pool.close()
        raise
    return pool


async def _migrate(pool: asyncpg.Pool) -> None:
    with database_errors("migrate the database"):
        async with pool.acquire() as connection:
            await connection.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
            try:
                await connection.execute(
                    "CREATE TABLE IF NOT EXISTS nineplan_schema (version INTEGER NOT NULL)"
                )
                version = await connection.fetchval("SELECT max(version) FROM nineplan_schema") or 0
                if version > len(MIGRATIONS):
                    raise DatabaseError(
                        f"The database has nineplan schema version {version}, newer than "
                        f"version {len(MIGRATIONS)}, the newest this nineplan knows.",
                        suggestion=Suggestion(
                            Action.UPGRADE, detail="Upgrade nineplan on this machine."
                        ),
                    )
                for number, script in enumerate(MIGRATIONS[version:], start=version + 1):
                    async with connection.transaction():
                        await connection.execute(script)
                        await connection.execute(
                            "INSERT INTO nineplan_schema (version) VALUES ($1)", number
                        )
                    log.info("migrated the database to nineplan schema version %d", number)
            finally:
                await connection.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)


@attrs.define
class PostgresSessionCatalog:
    """Sessions in PostgreSQL; each machine keeps plan files under its own `mirror_root`."""

    pool: asyncpg.Pool
    mirror_root: Path
    plan_files: PlanFilesFactory = directory_plan_files
    #: How many recent request ids each session, and the catalog, remembers.
    remembered: int = DEFAULT_LIMITS.remembered_requests
    creations: RetryLog = attrs.field(init=False)
    _stores: dict[str, PostgresSessionStore] = attrs.field(factory=dict, init=False)
    _machine: str | None = attrs.field(default=None, init=False)

    @creations.default
    def _creations(self) -> RetryLog:
        return RetryLog(PostgresCreations(self.pool), self.remembered)

    def _store(self, name: SessionName) -> PostgresSessionStore:
        if (store := self._stores.get(name)) is None:
            folder = self.mirror_root / name
            try:
                plans_folder(folder).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise file_system_error("create the local plan folder", exc) from exc
            files = self.plan_files(plans_folder(folder), recovered_folder(folder))
            store = self._stores[name] = PostgresSessionStore(
                name,
                folder,
                files,
                self.pool,
                self.remembered,
                record=DirectoryWriteRecord(written_folder(folder)),
                machine=self.machine,
            )
        return store

    @property
    def machine(self) -> str:
        """This machine's id, from the sessions folder (made there the first time)."""
        if self._machine is None:
            self._machine = machine_id(self.mirror_root)
        return self._machine

    async def create(self, session: Session, first: NewEvent) -> PostgresSessionStore:
        known = session.name in self._stores
        store = self._store(session.name)
        try:
            await store.initialise(session, first)
        except BaseException:
            if not known:  # open() must look in the database again
                del self._stores[session.name]
            raise
        return store

    async def open(self, name: SessionName) -> PostgresSessionStore:
        if name not in self._stores:
            with database_errors("open the session"):
                exists = await self.pool.fetchval(
                    "SELECT 1 FROM nineplan_sessions WHERE name = $1", name
                )
            if not exists:
                raise SessionNotFoundError(name)
        return self._store(name)

    async def names(self) -> list[SessionName]:
        with database_errors("list the sessions"):
            return [
                r["name"]
                for r in await self.pool.fetch("SELECT name FROM nineplan_sessions ORDER BY name")
            ]

    async def summaries(self, names: list[SessionName]) -> list[SessionSummary | NinePlanError]:
        """Every session's line in one query (one consistent read)."""
        with database_errors("count the sessions' plans"):
            records = await self.pool.fetch(_SUMMARIES, names)
        found = {record["name"]: _summary(record) for record in records}
        return [found.get(name) or SessionNotFoundError(name) for name in names]

    async def archived(self) -> frozenset[SessionName]:
        with database_errors("list the archived sessions"):
            records = await self.pool.fetch(
                "SELECT name FROM nineplan_sessions WHERE archived_at IS NOT NULL"
            )
        return frozenset(record["name"] for record in records)

    async def set_archived(self, name: SessionName, *, archived: bool) -> None:
        """The mark is the session row's `archived_at` (schema version 5): shared by every
        machine, and set in one statement."""
        with database_errors("mark the session archived"):
            found = await self.pool.fetchval(
                "WITH marked AS (UPDATE nineplan_sessions SET archived_at = CASE WHEN $2 "
                "THEN coalesce(archived_at, now()) END WHERE name = $1 RETURNING name) "
                "SELECT name, pg_notify($3, name) FROM marked",
                name,
                archived,
                SESSIONS_CHANNEL,
            )
        if found is None:
            raise SessionNotFoundError(name)

    async def delete(self, name: SessionName) -> bool:
        """In one transaction holding the session's row lock, as every writer takes it (so no
        agent pulls meanwhile): the session's rows go (its plans, journal and requests with
        them) if it is archived and holds no active plan; then this machine's folder."""
        with database_errors("remove the session"):
            async with self.pool.acquire() as connection, connection.transaction():
                archived = await connection.fetchrow(
                    "SELECT archived_at IS NOT NULL AS archived FROM nineplan_sessions "
                    "WHERE name = $1 FOR UPDATE",
                    name,
                )
                if archived is None:
                    raise SessionNotFoundError(name)
                active = await connection.fetchval(
                    "SELECT 1 FROM nineplan_plans WHERE session_name = $1 AND status = 'active'",
                    name,
                )
                if not archived["archived"] or active:
                    return False
                await connection.execute("DELETE FROM nineplan_sessions WHERE name = $1", name)
                await connection.execute("SELECT pg_notify($1, $2)", SESSIONS_CHANNEL, name)
        self._stores.pop(name, None)
        await anyio.to_thread.run_sync(
            partial(shutil.rmtree, self.mirror_root / name, ignore_errors=True)
        )
        return True

    def watch(self) -> PostgresSessionWatch:
        """Change ticks for these sessions, from commits made on any machine."""
        return PostgresSessionWatch(self.open, self.pool)

    async def aclose(self) -> None:
        """Close the pool."""
        self._stores = {}
        await self.pool.close()


@attrs.frozen
class PostgresCreations:
    """`nineplan_creations`: session-creation records (RequestRecords for the RetryLog).

    The table keeps the session name itself, as it did before the shared log: the result
    JSON is a name going in and made again coming out.
    """

    pool: asyncpg.Pool

    async def get(self, worker: str, request_id: str) -> tuple[str, str] | None:
        del worker  # a session is created for every worker: the id alone is the key
        with database_errors("look up a request"):
            record = await self.pool.fetchrow(
                "SELECT fingerprint, session_name FROM nineplan_creations WHERE request_id = $1",
                request_id,
            )
        return None if record is None else (record[0], json.dumps(record[1]))

    async def put(
        self, worker: str, request_id: str, fingerprint: str, result: str, keep: int
    ) -> None:
        del worker  # as in get
        with database_errors("record a request"):
            await self.pool.execute(
                "INSERT INTO nineplan_creations (request_id, fingerprint, session_name) VALUES ($1, $2, $3) "
                "ON CONFLICT (request_id) DO NOTHING",
                request_id,
                fingerprint,
                load_result(result, str),
            )
            await self.pool.execute(
                "DELETE FROM nineplan_creations WHERE seq <= (SELECT max(seq) FROM nineplan_creations) - $1",
                keep,
            )


#: A line of the session list per session: counts, the active plan and its latest pull, the
#: newest event's time, the deferrals of the live plans (each part served by an index).
_SUMMARIES = """
SELECT s.name, s.task_description, s.created_at, s.workspace,
       (SELECT count(*) FROM nineplan_plans p
        WHERE p.session_name = s.name AND p.status = 'queued') AS queued,
       (SELECT count(*) FROM nineplan_plans p
        WHERE p.session_name = s.name AND p.status = 'completed') AS completed,
       a.id AS active_id, a.goal AS active_goal,
       (SELECT j.at FROM nineplan_journal j
        WHERE j.session_name = s.name AND j.kind = 'plan_pulled' AND j.plan_id = a.id
        ORDER BY j.seq DESC LIMIT 1) AS pulled_at,
       (SELECT j.at FROM nineplan_journal j WHERE j.session_name = s.name
        ORDER BY j.seq DESC LIMIT 1) AS last_at,
       (SELECT coalesce(json_object_agg(d.plan_id, d.n), '{}')::text FROM
          (SELECT j.plan_id, count(*) AS n FROM nineplan_journal j
           JOIN nineplan_plans p ON p.session_name = j.session_name AND p.id = j.plan_id
           WHERE j.session_name = s.name AND j.kind = 'plan_deferred'
             AND p.status IN ('queued', 'active')
           GROUP BY j.plan_id) d) AS deferred,
       (SELECT count(*) FROM nineplan_plans p
        WHERE p.session_name = s.name AND p.status = 'active') AS active_count
FROM nineplan_sessions s
LEFT JOIN nineplan_plans a ON a.session_name = s.name AND a.id = (
    SELECT p.id FROM nineplan_plans p WHERE p.session_name = s.name AND p.status = 'active'
    ORDER BY p.worker <> 'main', p.id LIMIT 1)
WHERE s.name = ANY($1::text[])
"""


def _summary(record: asyncpg.Record) -> SessionSummary:
    return SessionSummary(
        session=row_to_session(
            {key: record[key] for key in ("name", "task_description", "created_at", "workspace")}
        ),
        queue_length=int(record["queued"]),
        completed_count=int(record["completed"]),
        active_plan_id=record["active_id"],
        active_goal=record["active_goal"],
        pulled_at=record["pulled_at"],
        defer_counts={str(k): int(v) for k, v in json.loads(record["deferred"]).items()},
        last_activity=record["last_at"],
        active_count=int(record["active_count"]),
    )
