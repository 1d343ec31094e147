"""One session in PostgreSQL: transactions lock the session row, so writers on any machine
take turns; plan files are this machine's mirror of the database."""

import datetime as dt
import json
import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, cast

import anyio
import asyncpg
import attrs
from asyncpg.transaction import Transaction

from nineplan_adapters.storage.journal_rows import (
    EVENT_COLUMNS,
    EventRows,
    event_select,
    postgres_dialect,
)
from nineplan_adapters.storage.plan_files import PlanFiles
from nineplan_adapters.storage.retry_log import RetryLog
from nineplan_adapters.storage.rows import (
    CHANGEABLE_COLUMNS,
    PLAN_COLUMNS,
    plan_values,
    row_to_plan,
    row_to_session,
)
from nineplan_adapters.storage.unit_of_work import Cleanups, FileChanges, UnitOfWork
from nineplan_adapters.storage.written import NO_RECORD, WriteRecord
from nineplan_core.errors import DatabaseError, SessionExistsError
from nineplan_core.history import excerpt, substring_terms
from nineplan_core.journal import EventQuery, NewEvent
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import (
    DEFAULT_LIMITS,
    Plan,
    PlanId,
    PlanRow,
    QueueEntry,
    Session,
    SessionName,
    Tally,
)
from nineplan_core.results import SNIPPET_MARKS, HistoryMatch

log = logging.getLogger("nineplan.postgres")

_COLUMNS = ", ".join(PLAN_COLUMNS)
#: Every plan column, as row_to_plan reads them (add WHERE and ORDER BY).
PLAN_SELECT = f"SELECT {_COLUMNS} FROM nineplan_plans"  # noqa: S608 - constants only
_INSERT = (
    f"INSERT INTO nineplan_plans (session_name, {_COLUMNS}) VALUES ("  # noqa: S608 - constants only
    + ", ".join(f"${number}" for number in range(1, len(PLAN_COLUMNS) + 2))
    + ")"
)
_SAVE = f"{_INSERT} ON CONFLICT (session_name, id) DO UPDATE SET " + ", ".join(
    f"{column} = excluded.{column}" for column in CHANGEABLE_COLUMNS
)
_QUEUED = "FROM nineplan_plans WHERE session_name = $1 AND status = 'queued'"
_TALLY = (
    f"SELECT (SELECT count(*) {_QUEUED}), "  # noqa: S608 - constants only
    "(SELECT count(*) FROM nineplan_plans WHERE session_name = $1 AND status = 'completed'), "
    f"(SELECT min(queue_position) {_QUEUED}), (SELECT max(queue_position) {_QUEUED}), "
    f"(SELECT goal {_QUEUED} AND waiting = 0 ORDER BY queue_position LIMIT 1)"
)
#: The queue, front first, each plan with its unsettled prerequisites in the order named (a
#: JSON array; looked up only for a waiting plan).
_QUEUE = (
    "SELECT id, goal, CASE WHEN waiting > 0 THEN (SELECT json_agg(named.id ORDER BY p.n) "
    "FROM jsonb_array_elements_text(plans.after_ids::jsonb) WITH ORDINALITY AS p(id, n) "
    "JOIN nineplan_plans AS named ON named.session_name = plans.session_name AND named.id = p.id "
    "WHERE named.status IN ('queued', 'active'))::text END "
    "FROM nineplan_plans AS plans WHERE session_name = $1 AND status = 'queued' "
    "ORDER BY queue_position LIMIT $2"
)
#: One session's events of some kinds from a time on, counted per UTC hour: (hour, kind,
#: count) rows; nineplan_journal_kind finds the kinds' rows.
_HOURLY_COUNTS = (
    "SELECT date_trunc('hour', at, 'UTC') AS hour, kind, count(*) FROM nineplan_journal "
    "WHERE session_name = $1 AND kind = ANY($2::text[]) AND at >= $3 GROUP BY 1, 2"
)
_HEADLINE = f"StartSel={SNIPPET_MARKS[0]}, StopSel={SNIPPET_MARKS[1]}, MaxWords=16, MinWords=6"
_SEARCH = (
    "SELECT hit.id, hit.goal, hit.outcome, ts_headline('english', "
    "hit.goal || ' ' || hit.outputs || ' ' || coalesce(hit.outcome, ''), hit.q, $4) FROM ("
    " SELECT id, goal, outputs, outcome, q, ts_rank(search, q) AS score, seq FROM nineplan_plans,"
    " to_tsquery('english', $2) AS q WHERE session_name = $1 AND search @@ q"
    " ORDER BY score DESC, seq LIMIT $3) AS hit ORDER BY hit.score DESC, hit.seq"
)


_SEARCH_PLAIN = (
    "SELECT id, goal, outcome, '' FROM nineplan_plans, to_tsquery('english', $2) AS q "
    "WHERE session_name = $1 AND search @@ q ORDER BY ts_rank(search, q) DESC, seq LIMIT $3"
)
# Text without spaces (CJK) is one word to the parser: a substring match finds a part of it,
# served by a trigram index where pg_trgm is installed. Plans matching more terms rank first.
_SEARCH_TEXT = (
    "SELECT id, goal, outcome, goal || E'\\n' || context || E'\\n' || inputs || E'\\n' || "
    "outputs || E'\\n' || coalesce(outcome, '') || E'\\n' || notes || E'\\n' || evidence "
    "FROM nineplan_plans WHERE session_name = $1 "
    "AND status = 'completed' AND search_text LIKE ANY ($2::text[]) "
    "ORDER BY (SELECT count(*) FROM unnest($2::text[]) AS p WHERE search_text LIKE p) DESC, "
    "seq DESC LIMIT $3"
)


_DRIVER_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError)

# One statement appends the event and notifies the session's listeners (at commit).
_APPEND = (
    f"WITH appended AS (INSERT INTO nineplan_journal (session_name, {', '.join(EVENT_COLUMNS)}) "  # noqa: S608 - constants only
    "VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING seq) "
    "SELECT pg_notify($8, seq::text), pg_notify($9, $1) FROM appended"
)

#: The channel every append also notifies, with the session's name: the session list's.
SESSIONS_CHANNEL = "nineplan"


def changes_channel(name: str) -> str:
    """The LISTEN/NOTIFY channel of a session's journal."""
    return f"nineplan.{name}"


@contextmanager
def database_errors(action: str) -> Iterator[None]:
    """Turn a driver or connection error into a categorized DatabaseError."""
    try:
        yield
    except _DRIVER_ERRORS as exc:
        raise DatabaseError(f"Could not {action}: {exc}.") from exc


@attrs.define
class PostgresSessionStore(UnitOfWork[asyncpg.Connection, "PostgresSessionTx"]):
    """A session in the shared database, with its plan files mirrored under `folder`."""

    name: SessionName
    folder: Path
    files: PlanFiles
    pool: asyncpg.Pool
    remembered: int = DEFAULT_LIMITS.remembered_requests
    #: What this machine last wrote into each plan file, and this machine's id.
    record: WriteRecord = NO_RECORD
    machine: str | None = None
    cleanups: Cleanups = attrs.field(factory=Cleanups, init=False)

    files_mirror = True  # the database is the truth; the files are this machine's copy

    @property
    def path(self) -> str:
        return str(self.folder)

    def plan_path(self, plan_id: PlanId) -> str:
        return self.files.path(plan_id)

    def _tx(
        self, connection: asyncpg.Connection, files: FileChanges, transaction: Transaction | None
    ) -> "PostgresSessionTx":
        records = PostgresRequestRecords(self.name, connection)
        return PostgresSessionTx(
            self.name, connection, files, RetryLog(records, self.remembered), transaction
        )

    @asynccontextmanager
    async def reading(self, *, snapshot: bool = True) -> AsyncIterator["PostgresSessionTx"]:
        with database_errors("read the session"):
            async with self.pool.acquire() as connection:
                if not snapshot:  # a single statement: no BEGIN and COMMIT round trips
                    yield self._tx(connection, FileChanges(self.files, self.record), None)
                    return
                async with connection.transaction(isolation="repeatable_read", readonly=True):
                    yield self._tx(connection, FileChanges(self.files, self.record), None)

    async def initialise(self, session: Session, first: NewEvent) -> None:
        """Write the session row and the journal's first event in one transaction.

        Raises:
            SessionExistsError: the name is taken.
        """
        with database_errors("create the session"):
            async with self.pool.acquire() as connection, connection.transaction():
                created = await connection.fetchval(
                    "INSERT INTO nineplan_sessions (name, task_description, created_at, workspace) "
                    "VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING RETURNING name",
                    session.name,
                    session.task_description,
                    session.created_at,
                    session.workspace,
                )
                if created is None:
                    raise SessionExistsError(session.name)
                await self._tx(connection, FileChanges(self.files, self.record), None).append(first)

    def _writer(self) -> AbstractAsyncContextManager[asyncpg.Connection]:
        return cast("AbstractAsyncContextManager[asyncpg.Connection]", self.pool.acquire())

    async def _begin(self, db: asyncpg.Connection, files: FileChanges) -> "PostgresSessionTx":
        transaction = db.transaction()
        await transaction.start()
        try:
            # Writers on every machine serialise on the session's row.
            await db.execute(
                "SELECT 1 FROM nineplan_sessions WHERE name = $1 FOR UPDATE", self.name
            )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await transaction.rollback()
            raise
        return self._tx(db, files, transaction)

    async def _commit(self, tx: "PostgresSessionTx") -> None:
        assert tx.transaction is not None  # noqa: S101 - _begin set it
        await tx.transaction.commit()

    async def _roll_back(self, tx: "PostgresSessionTx") -> None:
        assert tx.transaction is not None  # noqa: S101 - _begin set it
        await tx.transaction.rollback()

    def _database_error(self, exc: Exception) -> DatabaseError | None:
        if isinstance(exc, _DRIVER_ERRORS):
            return DatabaseError(f"Could not update the session: {exc}.")
        return None


@attrs.define
class PostgresSessionTx(EventRows):
    """Reads and writes of one session inside one PostgreSQL transaction."""

    session_name: str
    connection: asyncpg.Connection
    files: FileChanges
    requests: RetryLog
    #: The write transaction (None in a read view).
    transaction: Transaction | None = None

    async def _last_seq(self) -> int:
        value = await self.connection.fetchval(
            "SELECT max(seq) FROM nineplan_journal WHERE session_name = $1", self.session_name
        )
        return int(value or 0)

    async def _insert_event(self, row: dict[str, Any]) -> None:
        values = [row[column] for column in EVENT_COLUMNS]
        await self.connection.execute(
            _APPEND,
            self.session_name,
            *values,
            changes_channel(self.session_name),
            SESSIONS_CHANNEL,
        )

    async def _select_events(self, query: EventQuery) -> list[Mapping[str, Any]]:
        sql, parameters = event_select(query, postgres_dialect(self.session_name))
        return [dict(record) for record in await self.connection.fetch(sql, *parameters)]

    async def _count_hourly(
        self, kinds: list[str], since: dt.datetime
    ) -> list[tuple[dt.datetime, str, int]]:
        records = await self.connection.fetch(_HOURLY_COUNTS, self.session_name, kinds, since)
        return [(record[0], record[1], record[2]) for record in records]

    async def _plan_where(self, condition: str, *arguments: Any) -> Plan | None:
        record = await self.connection.fetchrow(
            f"{PLAN_SELECT} WHERE session_name = $1 AND {condition}",
            self.session_name,
            *arguments,
        )
        return row_to_plan(record) if record else None

    async def session(self) -> Session:
        record = await self.connection.fetchrow(
            "SELECT name, task_description, created_at, workspace, workers_named "
            "FROM nineplan_sessions WHERE name = $1",
            self.session_name,
        )
        if record is None:
            raise DatabaseError("The session row is missing.")
        return row_to_session(record)

    async def active_plans(self) -> list[Plan]:
        records = await self.connection.fetch(
            f"{PLAN_SELECT} WHERE session_name = $1 AND status = 'active' ORDER BY id",
            self.session_name,
        )
        return [row_to_plan(record) for record in records]

    async def front_of_queue(self) -> Plan | None:
        return await self._plan_where(
            "status = 'queued' AND waiting = 0 ORDER BY queue_position LIMIT 1"
        )

    async def plan(self, plan_id: PlanId) -> Plan | None:
        return await self._plan_where("id = $2", plan_id)

    async def finished(self) -> list[Plan]:
        records = await self.connection.fetch(
            f"{PLAN_SELECT} WHERE session_name = $1 "
            "AND status IN ('completed', 'discarded') ORDER BY completed_at, id",
            self.session_name,
        )
        return [row_to_plan(record) for record in records]

    async def waiting_for_person(self, limit: int) -> list[Plan]:
        records = await self.connection.fetch(
            f"{PLAN_SELECT} WHERE session_name = $1 AND status = 'completed' "
            'AND verdicts::jsonb @> \'[{"status": "needs_person"}]\'::jsonb '
            "ORDER BY completed_at, id LIMIT $2",
            self.session_name,
            limit,
        )
        return [row_to_plan(record) for record in records]

    async def queue(self, limit: int | None = None) -> list[QueueEntry]:
        records = await self.connection.fetch(_QUEUE, self.session_name, limit)
        return [
            QueueEntry(r[0], r[1], rank, tuple(json.loads(r[2])) if r[2] else ())
            for rank, r in enumerate(records, start=1)
        ]

    async def needed_by(self, plan_id: PlanId) -> list[PlanId]:
        records = await self.connection.fetch(
            "SELECT plan_id FROM nineplan_prerequisites WHERE session_name = $1 "
            "AND prerequisite_id = $2 ORDER BY plan_id",
            self.session_name,
            plan_id,
        )
        return [PlanId(record[0]) for record in records]

    async def tally(self) -> Tally:
        record = await self.connection.fetchrow(_TALLY, self.session_name)
        return Tally(
            queued=int(record[0]),
            completed=int(record[1]),
            low=record[2],
            high=record[3],
            next_goal=record[4],
        )

    async def search(
        self, terms: list[str], limit: int, *, snippets: bool = False
    ) -> list[HistoryMatch]:
        # Terms are plain words (letters and digits only), so OR-ing them cannot be syntax.
        sql = _SEARCH if snippets else _SEARCH_PLAIN
        arguments = (
            self.session_name,
            " | ".join(terms),
            limit,
            *((_HEADLINE,) if snippets else ()),
        )
        records = await self.connection.fetch(sql, *arguments)
        if not records and (parts := substring_terms(terms)):
            # Only the parts of text without spaces: a short word elsewhere is a whole word.
            # Terms are letters and digits only: nothing in them is a LIKE wildcard.
            patterns = [f"%{term}%" for term in parts]
            records = await self.connection.fetch(_SEARCH_TEXT, self.session_name, patterns, limit)
            # ts_headline cannot mark a part of a word: the excerpt is cut around the match.
            return [
                HistoryMatch(r[0], r[1], r[2], rank, excerpt(r[3], parts) if snippets else "")
                for rank, r in enumerate(records, start=1)
            ]
        return [
            HistoryMatch(r[0], r[1], r[2], rank, r[3]) for rank, r in enumerate(records, start=1)
        ]

    async def ahead_of(self, position: int, leaving: PlanId) -> tuple[int | None, int]:
        record = await self.connection.fetchrow(
            "SELECT max(queue_position) AS ahead, count(*) AS n FROM nineplan_plans "
            "WHERE session_name = $1 AND status = 'queued' AND queue_position < $2 AND id <> $3",
            self.session_name,
            position,
            leaving,
        )
        return (record["ahead"], int(record["n"])) if record else (None, 0)

    async def plan_rows(self) -> list[PlanRow]:
        records = await self.connection.fetch(
            "SELECT id, status, queue_position, worker FROM nineplan_plans "
            "WHERE session_name = $1 "
            "AND (status IN ('queued', 'active') OR queue_position IS NOT NULL)",
            self.session_name,
        )
        return [
            PlanRow(r["id"], PlanStatus(r["status"]), r["queue_position"], r["worker"])
            for r in records
        ]

    async def add(self, plan: Plan) -> bool:
        try:
            async with (
                self.connection.transaction()
            ):  # a savepoint: a clash must not end the transaction
                await self.connection.execute(_INSERT, self.session_name, *plan_values(plan))
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name == "nineplan_plans_pkey":
                return False
            raise
        return True

    async def save(self, plan: Plan) -> None:
        await self.connection.execute(_SAVE, self.session_name, *plan_values(plan))

    async def renumber(self, positions: Mapping[PlanId, int]) -> None:
        await self.connection.execute(
            "UPDATE nineplan_plans AS p SET queue_position = fresh.position "
            "FROM unnest($2::text[], $3::bigint[]) AS fresh (id, position) "
            "WHERE p.session_name = $1 AND p.id = fresh.id AND p.status = 'queued'",
            self.session_name,
            list(positions),
            list(positions.values()),
        )

    async def name_workers(self, *, named: bool) -> None:
        await self.connection.execute(
            "UPDATE nineplan_sessions SET workers_named = $2 "
            "WHERE name = $1 AND workers_named <> $2",
            self.session_name,
            named,
        )


@attrs.frozen
class PostgresRequestRecords:
    """A session's rows of `nineplan_requests` (RequestRecords for the RetryLog)."""

    session_name: str
    connection: asyncpg.Connection

    async def get(self, worker: str, request_id: str) -> tuple[str, str] | None:
        record = await self.connection.fetchrow(
            "SELECT fingerprint, result FROM nineplan_requests "
            "WHERE session_name = $1 AND worker = $2 AND request_id = $3",
            self.session_name,
            worker,
            request_id,
        )
        return None if record is None else (record[0], record[1])

    async def put(
        self, worker: str, request_id: str, fingerprint: str, result: str, keep: int
    ) -> None:
        await self.connection.execute(
            "INSERT INTO nineplan_requests (session_name, worker, request_id, fingerprint, result) "
            "VALUES ($1, $2, $3, $4, $5)",
            self.session_name,
            worker,
            request_id,
            fingerprint,
            result,
        )
        await self.connection.execute(
            "DELETE FROM nineplan_requests WHERE session_name = $1 AND seq IN (SELECT seq FROM "
            "nineplan_requests WHERE session_name = $1 ORDER BY seq DESC OFFSET $2)",
            self.session_name,
            keep,
        )
