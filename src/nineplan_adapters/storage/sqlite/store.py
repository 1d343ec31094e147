"""One session's SQLite store: a connection kept open, transactions that cover plan files."""

import datetime as dt
import json
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import attrs

from nineplan_adapters.storage.journal_rows import (
    SQLITE,
    EventRows,
    event_select,
    hour_start,
    millisecond_text,
    timestamp_text,
)
from nineplan_adapters.storage.plan_files import PlanFiles
from nineplan_adapters.storage.retry_log import RetryLog
from nineplan_adapters.storage.rows import (
    plan_to_row,
    row_to_plan,
    row_to_session,
)
from nineplan_adapters.storage.sqlite.connection import (
    SessionConnection,
    database_error,
    database_errors,
)
from nineplan_adapters.storage.sqlite.queries import (
    ACTIVE_ALL,
    AHEAD_OF,
    BY_ID,
    FINISHED,
    FRONT,
    HOURLY_COUNTS,
    INSERT_EVENT,
    INSERT_PLAN,
    NAME_WORKERS,
    NEEDED_BY,
    QUEUE,
    RENUMBER,
    SAVE_PLAN,
    STORED_SESSION,
    TALLY,
    WAITING_FOR_PERSON,
)
from nineplan_adapters.storage.unit_of_work import Cleanups, FileChanges, UnitOfWork
from nineplan_core.errors import DatabaseError
from nineplan_core.history import excerpt, needs_scan, substring_terms, trigram_terms
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

# Columns of both indexes: goal, context, inputs, outputs, outcome, notes, evidence (the
# verdicts'). What plans produced is what later plans search for, so outputs and outcome weigh
# most; notes, where agents record findings along the way, least.
_WEIGHTS = "2.0, 1.0, 1.0, 3.0, 3.0, 0.5, 1.0"


def _search_sql(index: str) -> tuple[str, str]:
    """The ranked search over one full-text index, with snippets and without."""
    bm25 = f"bm25({index}, {_WEIGHTS})"
    with_snippets = (
        "SELECT plans.id, plans.goal, plans.outcome, "  # noqa: S608 - constants only
        f"snippet({index}, -1, '{SNIPPET_MARKS[0]}', '{SNIPPET_MARKS[1]}', '…', 16) "
        f"FROM {index} JOIN plans ON plans.seq = {index}.rowid "
        f"WHERE {index} MATCH ? ORDER BY {bm25} LIMIT ?"
    )
    # Rank inside the index first and join only the best rows: joining before the LIMIT would
    # fetch every matching plan.
    plain = (
        "SELECT plans.id, plans.goal, plans.outcome, '' FROM ("  # noqa: S608 - constants only
        f"SELECT rowid, {bm25} AS score FROM {index} WHERE {index} MATCH ? ORDER BY score LIMIT ?"
        ") AS hit JOIN plans ON plans.seq = hit.rowid ORDER BY hit.score"
    )
    return with_snippets, plain


_WORDS = _search_sql("history_fts")
# Text without spaces (CJK) is one "word" to unicode61: its trigrams find a part of it.
_TRIGRAMS = _search_sql("history_trigram")
# A trigram index cannot serve a query of one or two characters: those scan the history.
_TEXT = "(goal || ' ' || context || ' ' || inputs || ' ' || outputs || ' ' || coalesce(outcome, '') || ' ' || notes || ' ' || evidence)"
# The same text a line per field, for the excerpt of a match (history.excerpt).
_LINES = _TEXT.replace("' '", "char(10)")
_SCAN = (
    f"SELECT id, goal, outcome, {_LINES} FROM plans WHERE status = 'completed' AND ({{}}) "  # noqa: S608 - constants only
    "ORDER BY ({}) DESC, seq DESC LIMIT ?"
)
_STATUS = {status.value: status for status in PlanStatus}  # a dict lookup, not an enum call per row


@attrs.define
class SqliteSessionStore(UnitOfWork[None, "SqliteSessionTx"]):
    """A session in `{folder}/session.db` with its files in `{folder}/plans/`.

    One connection per store, used by one coroutine at a time (an in-process lock);
    writers in other processes are serialised by `BEGIN IMMEDIATE` and the busy timeout.
    `close` releases the connection when the store is idle; a closed store reconnects with
    `reconnect` if it is used again.
    """

    name: SessionName
    folder: Path
    files: PlanFiles
    _db: SessionConnection | None
    reconnect: Callable[[], Awaitable[SessionConnection]]
    remembered: int = DEFAULT_LIMITS.remembered_requests
    cleanups: Cleanups = attrs.field(factory=Cleanups, init=False)
    # fast_acquire: an uncontended call takes the lock without a trip round the event loop.
    _lock: anyio.Lock = attrs.field(factory=lambda: anyio.Lock(fast_acquire=True), init=False)

    files_mirror = False
    #: One machine: a pull need not say which.
    machine: str | None = attrs.field(default=None, init=False)

    @property
    def path(self) -> str:
        return str(self.folder)

    def plan_path(self, plan_id: PlanId) -> str:
        return self.files.path(plan_id)

    async def close(self) -> None:
        """Close the connection once no call is using it."""
        async with self._lock:
            if self._db is not None:
                db, self._db = self._db, None
                await db.close()

    def _tx(self, db: SessionConnection, files: FileChanges) -> "SqliteSessionTx":
        return SqliteSessionTx(db, files, RetryLog(SqliteRequestRecords(db), self.remembered))

    @asynccontextmanager
    async def reading(self, *, snapshot: bool = True) -> AsyncIterator["SqliteSessionTx"]:
        async with self._lock:
            db = await self._ready()
            if not snapshot:  # one statement is atomic by itself
                with database_errors("read the session"):
                    yield self._tx(db, FileChanges(self.files))
                return
            with database_errors("read the session"):
                await db.run("BEGIN")
            try:
                with database_errors("read the session"):
                    yield self._tx(db, FileChanges(self.files))
            finally:
                with database_errors("end a read"):
                    db.roll_back()

    def _writer(self) -> anyio.Lock:
        return self._lock

    async def _begin(self, db: None, files: FileChanges) -> "SqliteSessionTx":  # noqa: ARG002 - the lock gives no object
        connection = await self._ready()
        with database_errors("lock the session for writing"):
            await connection.run("BEGIN IMMEDIATE")
        return self._tx(connection, files)

    async def _commit(self, tx: "SqliteSessionTx") -> None:
        with database_errors("commit"):
            await tx.db.commit()

    async def _roll_back(self, tx: "SqliteSessionTx") -> None:
        tx.db.roll_back()

    def _database_error(self, exc: Exception) -> DatabaseError | None:
        if isinstance(exc, sqlite3.Error):
            return database_error("update the session", exc)
        return None

    async def _ready(self) -> SessionConnection:
        """The connection, reopened if the store was closed; never left inside a transaction."""
        if self._db is None:
            self._db = await self.reconnect()
        # A transaction left open by a cancelled call must not poison the next one.
        with database_errors("reset the connection"):
            self._db.roll_back()
        return self._db

    async def initialise(self, session: Session, first: NewEvent) -> None:
        """Write the session row of a new database and the journal's first event."""
        async with self.transaction() as tx:
            await tx.db.run(
                "INSERT INTO sessions (name, task_description, created_at) VALUES (?, ?, ?)",
                (
                    session.name,
                    session.task_description,
                    session.created_at.isoformat(timespec="milliseconds"),
                ),
            )
            if session.workspace is not None:
                await tx.db.run(
                    "INSERT INTO workspace (only_row, path) VALUES (1, ?)", (session.workspace,)
                )
            await tx.append(first)


#: A journal query for at most this many plans (and some kinds) reads a few indexed rows.
_FEW_PLANS = 16


@attrs.define
class SqliteSessionTx(EventRows):
    """Reads and writes inside one SQLite transaction (a SessionReader and a SessionTx)."""

    db: SessionConnection
    files: FileChanges
    requests: RetryLog

    async def _last_seq(self) -> int:
        row = await self._one("SELECT max(seq) FROM journal")
        return int(row[0]) if row and row[0] is not None else 0

    async def _insert_event(self, row: dict[str, Any]) -> None:
        await self.db.run(INSERT_EVENT, row | {"at": timestamp_text(row["at"])})

    async def _select_events(self, query: EventQuery) -> list[Mapping[str, Any]]:
        sql, parameters = event_select(query, SQLITE)
        # A few rows, found through an index: the thread handoff would cost more than the read.
        bounded = (
            query.last is not None
            or query.plan_id is not None
            or bool(
                query.kinds and query.plan_ids is not None and len(query.plan_ids) <= _FEW_PLANS
            )
        )
        run = self.db.run if bounded else self.db.run_in_thread
        return [dict(row) for row in await run(sql, parameters)]

    async def _count_hourly(
        self, kinds: list[str], since: dt.datetime
    ) -> list[tuple[dt.datetime, str, int]]:
        since = since.astimezone(dt.UTC)
        stored, margin = timestamp_text(since), timestamp_text(since - dt.timedelta(days=1))
        parameters = (json.dumps(kinds), stored, margin, millisecond_text(since))
        rows = await self.db.run_in_thread(HOURLY_COUNTS, parameters)
        return [(hour_start(row[0]), row[1], row[2]) for row in rows if row[0] is not None]

    async def _one(self, sql: str, parameters: tuple[Any, ...] = ()) -> sqlite3.Row | None:
        rows = await self.db.run(sql, parameters)
        return rows[0] if rows else None

    async def _plan(self, sql: str, parameters: tuple[Any, ...] = ()) -> Plan | None:
        row = await self._one(sql, parameters)
        return row_to_plan(dict(row)) if row else None

    async def session(self) -> Session:
        row = await self._one(STORED_SESSION)
        if row is None:
            raise DatabaseError("The session database has no session row.")
        return row_to_session(dict(row))

    async def active_plans(self) -> list[Plan]:
        return [row_to_plan(dict(row)) for row in await self.db.run(ACTIVE_ALL)]

    async def front_of_queue(self) -> Plan | None:
        return await self._plan(FRONT)

    async def plan(self, plan_id: PlanId) -> Plan | None:
        return await self._plan(BY_ID, (plan_id,))

    async def finished(self) -> list[Plan]:
        rows = await self.db.run_in_thread(FINISHED)  # grows with the history: in the thread
        return [row_to_plan(dict(row)) for row in rows]

    async def waiting_for_person(self, limit: int) -> list[Plan]:
        # A few rows come back, but the completed plans are scanned (about 10 ms for 20,000):
        # in the thread, so a board's live update never holds up the loop for it.
        rows = await self.db.run_in_thread(WAITING_FOR_PERSON, (limit,))
        return [row_to_plan(dict(row)) for row in rows]

    async def queue(self, limit: int | None = None) -> list[QueueEntry]:
        bounded = -1 if limit is None else limit  # SQLite's LIMIT -1: no limit
        # A whole queue grows with the queue: read in the thread; a few rows on the loop.
        run = self.db.run_in_thread if limit is None or limit > _FEW_PLANS else self.db.run
        rows = await run(QUEUE, (bounded,))
        return [
            QueueEntry(row[0], row[1], rank, tuple(json.loads(row[2])) if row[2] else ())
            for rank, row in enumerate(rows, start=1)
        ]

    async def tally(self) -> Tally:
        row = await self._one(TALLY)
        if row is None:
            return Tally()
        return Tally(
            queued=int(row[0]), completed=int(row[1]), low=row[2], high=row[3], next_goal=row[4]
        )

    async def search(
        self, terms: list[str], limit: int, *, snippets: bool = False
    ) -> list[HistoryMatch]:
        rows = await self._ranked(_WORDS, terms, limit, snippets=snippets)
        if not rows and (long := trigram_terms(terms)):
            rows = await self._ranked(_TRIGRAMS, long, limit, snippets=snippets)
        if not rows and needs_scan(terms):
            # Only the parts of text without spaces: a short word elsewhere is a whole word.
            parts = substring_terms(terms)
            found = " OR ".join(f"instr(lower({_TEXT}), ?) > 0" for _ in parts)
            score = " + ".join(f"(instr(lower({_TEXT}), ?) > 0)" for _ in parts)
            rows = await self.db.run_in_thread(_SCAN.format(found, score), (*parts, *parts, limit))
            return [
                HistoryMatch(
                    row[0], row[1], row[2], rank, excerpt(row[3], parts) if snippets else ""
                )
                for rank, row in enumerate(rows, start=1)
            ]
        return [
            HistoryMatch(row[0], row[1], row[2], rank, row[3])
            for rank, row in enumerate(rows, start=1)
        ]

    async def _ranked(
        self, sql: tuple[str, str], terms: list[str], limit: int, *, snippets: bool
    ) -> list[sqlite3.Row]:
        query = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        return await self.db.run_in_thread(sql[0] if snippets else sql[1], (query, limit))

    async def ahead_of(self, position: int, leaving: PlanId) -> tuple[int | None, int]:
        rows = await self.db.run(AHEAD_OF, {"position": position, "leaving": leaving})
        return (rows[0][0], int(rows[0][1])) if rows else (None, 0)

    async def needed_by(self, plan_id: PlanId) -> list[PlanId]:
        return [PlanId(row[0]) for row in await self.db.run(NEEDED_BY, (plan_id,))]

    async def plan_rows(self) -> list[PlanRow]:
        rows = await self.db.run_in_thread(
            "SELECT id, status, queue_position, worker FROM plans WHERE queue_position IS NOT NULL "
            "UNION ALL SELECT id, status, queue_position, worker FROM plans "
            "WHERE status = 'active' AND queue_position IS NULL"
        )
        return [PlanRow(row[0], _STATUS[row[1]], row[2], row[3]) for row in rows]

    async def add(self, plan: Plan) -> bool:
        try:
            await self.db.run(INSERT_PLAN, plan_to_row(plan))
        except sqlite3.IntegrityError as exc:
            if "plans.id" in str(exc):
                return False
            raise
        return True

    async def save(self, plan: Plan) -> None:
        await self.db.run(SAVE_PLAN, plan_to_row(plan))

    async def renumber(self, positions: Mapping[PlanId, int]) -> None:
        # One statement over the whole queue, in the thread: the ids and positions go in as
        # one JSON object, joined to the plans by their id.
        await self.db.run_in_thread(RENUMBER, (json.dumps(positions),))

    async def name_workers(self, *, named: bool) -> None:
        await self.db.run(NAME_WORKERS, (int(named), int(named)))


@attrs.frozen
class SqliteRequestRecords:
    """The `requests` table of a session database (RequestRecords for the RetryLog)."""

    db: SessionConnection

    async def get(self, worker: str, request_id: str) -> tuple[str, str] | None:
        rows = await self.db.run(
            "SELECT fingerprint, result FROM requests WHERE worker = ? AND request_id = ?",
            (worker, request_id),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def put(
        self, worker: str, request_id: str, fingerprint: str, result: str, keep: int
    ) -> None:
        await self.db.run(
            "INSERT INTO requests (worker, request_id, fingerprint, result) VALUES (?, ?, ?, ?)",
            (worker, request_id, fingerprint, result),
        )
        await self.db.run(
            "DELETE FROM requests WHERE seq <= (SELECT max(seq) FROM requests) - ?", (keep,)
        )
