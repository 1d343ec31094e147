"""One session in PostgreSQL: transactions lock the session row, so writers on any machine
take turns; plan files are this machine's mirror of the database."""

import datetime as dt
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import asyncpg
import attrs

from nineplan_adapters.converters import dump_result, load_result, row_to_plan
from nineplan_adapters.file_journal import Action, FileJournal, JournalledFiles, run_actions
from nineplan_core.errors import DatabaseError
from nineplan_core.invariants import PlanRow
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import (
    SNIPPET_MARKS,
    HistoryMatch,
    Plan,
    Progress,
    QueueEntry,
    QueueShape,
    Session,
)
from nineplan_core.ports import PlanFiles
from nineplan_core.requests import REMEMBERED

T = TypeVar("T")
log = logging.getLogger("nineplan.postgres")

_COLUMNS = (
    "id, status, queue_position, goal, context, inputs, outputs, approach, success_criteria, "
    "notes, outcome, created_at, completed_at"
)
_INSERT = (
    f"INSERT INTO nineplan_plans (session_name, {_COLUMNS}) "  # noqa: S608 - constants only
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
)
_SAVE = (
    _INSERT + " ON CONFLICT (session_name, id) DO UPDATE SET status = excluded.status, "
    "queue_position = excluded.queue_position, goal = excluded.goal, context = excluded.context, "
    "inputs = excluded.inputs, outputs = excluded.outputs, approach = excluded.approach, "
    "success_criteria = excluded.success_criteria, notes = excluded.notes, outcome = excluded.outcome, "
    "completed_at = excluded.completed_at"
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
    "SELECT id, goal, outcome, '' FROM nineplan_plans WHERE session_name = $1 "
    "AND status = 'completed' AND search_text LIKE ANY ($2::text[]) "
    "ORDER BY (SELECT count(*) FROM unnest($2::text[]) AS p WHERE search_text LIKE p) DESC, "
    "seq DESC LIMIT $3"
)


@contextmanager
def database_errors(action: str) -> Iterator[None]:
    """Turn a driver or connection error into a categorized DatabaseError."""
    try:
        yield
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
        raise DatabaseError(f"Could not {action}: {exc}.") from exc


def _args(name: str, plan: Plan) -> tuple[Any, ...]:
    c = plan.content
    return (
        name, plan.id, plan.status.value, plan.position, c.goal, c.context, c.inputs, c.outputs, c.approach,
        c.success_criteria, plan.notes, plan.outcome, plan.created_at, plan.completed_at,
    )  # fmt: skip


def _plan(record: asyncpg.Record) -> Plan:
    row = {
        key: value.isoformat() if isinstance(value, dt.datetime) else value
        for key, value in record.items()
    }
    return row_to_plan(row)


@attrs.define
class PostgresSessionStore:
    """A session in the shared database, with its plan files mirrored under `folder`."""

    name: str
    folder: Path
    files: PlanFiles
    pool: asyncpg.Pool
    _cleanups: list[Action] = attrs.field(factory=list, init=False)

    files_mirror = True  # the database is the truth; the files are this machine's copy

    @property
    def path(self) -> str:
        return str(self.folder)

    def plan_path(self, plan_id: str) -> str:
        return self.files.path(plan_id)

    @asynccontextmanager
    async def reading(self, *, snapshot: bool = True) -> AsyncIterator["PostgresSessionTx"]:
        with database_errors("read the session"):
            async with self.pool.acquire() as connection:
                if not snapshot:  # a single statement: no BEGIN and COMMIT round trips
                    yield PostgresSessionTx(self.name, connection, FileJournal(self.files))
                    return
                async with connection.transaction(isolation="repeatable_read", readonly=True):
                    yield PostgresSessionTx(self.name, connection, FileJournal(self.files))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator["PostgresSessionTx"]:
        self._cleanups = await run_actions(self._cleanups)
        with database_errors("update the session"):
            async with self.pool.acquire() as connection:
                transaction = connection.transaction()
                await transaction.start()
                tx = PostgresSessionTx(self.name, connection, FileJournal(self.files))
                try:
                    # Writers on every machine serialise on the session's row.
                    await connection.execute(
                        "SELECT 1 FROM nineplan_sessions WHERE name = $1 FOR UPDATE", self.name
                    )
                    yield tx
                    with anyio.CancelScope(shield=True):
                        await transaction.commit()
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        await transaction.rollback()
                        await tx.journal.undo()
                    raise
        with anyio.CancelScope(shield=True):
            self._cleanups += await tx.journal.after_commit()


@attrs.define
class PostgresSessionTx(JournalledFiles):
    """Reads and writes of one session inside one PostgreSQL transaction."""

    session_name: str
    connection: asyncpg.Connection
    journal: FileJournal

    async def _plan_where(self, condition: str, *arguments: Any) -> Plan | None:
        record = await self.connection.fetchrow(
            f"SELECT {_COLUMNS} FROM nineplan_plans WHERE session_name = $1 AND {condition}",  # noqa: S608 - fixed fragments
            self.session_name,
            *arguments,
        )
        return _plan(record) if record else None

    async def session(self) -> Session:
        record = await self.connection.fetchrow(
            "SELECT name, task_description, created_at, workspace FROM nineplan_sessions "
            "WHERE name = $1",
            self.session_name,
        )
        if record is None:
            raise DatabaseError("The session row is missing.")
        return Session(
            name=record["name"],
            task_description=record["task_description"],
            created_at=record["created_at"],
            workspace=record["workspace"],
        )

    async def active_plan(self) -> Plan | None:
        return await self._plan_where("status = 'active'")

    async def front_of_queue(self) -> Plan | None:
        return await self._plan_where("status = 'queued' ORDER BY queue_position LIMIT 1")

    async def plan(self, plan_id: str) -> Plan | None:
        return await self._plan_where("id = $2", plan_id)

    async def queue(self) -> list[QueueEntry]:
        records = await self.connection.fetch(
            "SELECT id, goal FROM nineplan_plans WHERE session_name = $1 AND status = 'queued' ORDER BY queue_position",
            self.session_name,
        )
        return [QueueEntry(r["id"], r["goal"], rank) for rank, r in enumerate(records, start=1)]

    async def queue_shape(self) -> QueueShape:
        record = await self.connection.fetchrow(
            "SELECT count(*), min(queue_position), max(queue_position) FROM nineplan_plans "
            "WHERE session_name = $1 AND status = 'queued'",
            self.session_name,
        )
        return QueueShape(int(record[0]), record[1], record[2])

    async def queue_length(self) -> int:
        return await self._count("queued")

    async def completed_count(self) -> int:
        return await self._count("completed")

    async def _count(self, status: str) -> int:
        value = await self.connection.fetchval(
            "SELECT count(*) FROM nineplan_plans WHERE session_name = $1 AND status = $2",
            self.session_name,
            status,
        )
        return int(value)

    async def progress(self) -> Progress:
        record = await self.connection.fetchrow(
            "SELECT (SELECT count(*) FROM nineplan_plans WHERE session_name = $1 AND status = 'completed'), "
            "(SELECT count(*) FROM nineplan_plans WHERE session_name = $1 AND status = 'queued'), "
            "(SELECT goal FROM nineplan_plans WHERE session_name = $1 AND status = 'queued' "
            "ORDER BY queue_position LIMIT 1)",
            self.session_name,
        )
        return Progress(int(record[0]), int(record[1]), record[2])

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
        if not records:  # terms are letters and digits only: nothing in them is a LIKE wildcard
            patterns = [f"%{term}%" for term in terms]
            records = await self.connection.fetch(_SEARCH_TEXT, self.session_name, patterns, limit)
        return [
            HistoryMatch(r[0], r[1], r[2], rank, r[3]) for rank, r in enumerate(records, start=1)
        ]

    async def plan_rows(self) -> list[PlanRow]:
        records = await self.connection.fetch(
            "SELECT id, status, queue_position FROM nineplan_plans WHERE session_name = $1 "
            "AND (status IN ('queued', 'active') OR queue_position IS NOT NULL)",
            self.session_name,
        )
        return [PlanRow(r["id"], PlanStatus(r["status"]), r["queue_position"]) for r in records]

    async def add(self, plan: Plan) -> bool:
        try:
            async with (
                self.connection.transaction()
            ):  # a savepoint: a clash must not end the transaction
                await self.connection.execute(_INSERT, *_args(self.session_name, plan))
        except asyncpg.UniqueViolationError as exc:
            if exc.constraint_name == "nineplan_plans_pkey":
                return False
            raise
        return True

    async def save(self, plan: Plan) -> None:
        await self.connection.execute(_SAVE, *_args(self.session_name, plan))

    async def recall(self, request_id: str, kind: type[T]) -> tuple[str, T | None] | None:
        record = await self.connection.fetchrow(
            "SELECT fingerprint, result FROM nineplan_requests WHERE session_name = $1 AND request_id = $2",
            self.session_name,
            request_id,
        )
        return None if record is None else (record[0], load_result(record[1], kind))

    async def remember(self, request_id: str, fingerprint: str, result: object) -> None:
        await self.connection.execute(
            "INSERT INTO nineplan_requests (session_name, request_id, fingerprint, result) VALUES ($1, $2, $3, $4)",
            self.session_name,
            request_id,
            fingerprint,
            dump_result(result),
        )
        await self.connection.execute(
            "DELETE FROM nineplan_requests WHERE session_name = $1 AND seq IN (SELECT seq FROM "
            "nineplan_requests WHERE session_name = $1 ORDER BY seq DESC OFFSET $2)",
            self.session_name,
            REMEMBERED,
        )
