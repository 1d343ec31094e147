"""In-memory storage: for embedding without a disk, for tests, and as the honest fake.

It keeps the same promises as the SQLite store (transactions roll rows and files back
together, one writer at a time) so the conformance machine can hold both to one model.
"""

import collections
import datetime as dt
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import attrs

from nineplan_adapters.storage.journal_rows import EventRows, readable_time, timestamp_text
from nineplan_adapters.storage.retry_log import MemoryRequestRecords, RetryLog
from nineplan_adapters.storage.unit_of_work import Cleanups, FileChanges, UnitOfWork
from nineplan_core.errors import (
    DatabaseError,
)
from nineplan_core.history import WORD, excerpt, substring_terms
from nineplan_core.journal import (
    EventQuery,
)
from nineplan_core.lifecycle import LIVE, PlanStatus
from nineplan_core.model import (
    DEFAULT_LIMITS,
    Plan,
    PlanId,
    PlanRow,
    QueueEntry,
    Session,
    SessionName,
    Tally,
    file_name,
)
from nineplan_core.results import SNIPPET_MARKS, HistoryMatch
from nineplan_core.verdicts import VerdictStatus

# The same column weights as the SQLite ranking: outputs and outcome weigh most, notes least.
_WEIGHTS = {
    "goal": 2.0,
    "context": 1.0,
    "inputs": 1.0,
    "outputs": 3.0,
    "outcome": 3.0,
    "notes": 0.5,
    "evidence": 1.0,
}


@attrs.define
class MemoryPlanFiles:
    """Plan files in a dict; `texts` is public so tests can play the agent editing a file."""

    session: str
    texts: dict[str, bytes] = attrs.field(factory=dict)
    recovered: dict[str, bytes] = attrs.field(factory=dict)

    def path(self, plan_id: PlanId) -> str:
        return f"memory://{self.session}/plans/{file_name(plan_id)}"

    async def read(self, plan_id: PlanId) -> bytes | None:
        return self.texts.get(file_name(plan_id))

    async def write(self, plan_id: PlanId, data: bytes) -> None:
        self.texts[file_name(plan_id)] = data

    async def keep(self, file_name: str, data: bytes) -> str:
        name = file_name
        while name in self.recovered:
            name = f"{file_name}.{len(self.recovered)}"
        self.recovered[name] = data
        return f"memory://{self.session}/recovered/{name}"

    async def keep_file(self, plan_id: PlanId) -> str | None:
        data = self.texts.get(file_name(plan_id))
        return None if data is None else await self.keep(file_name(plan_id), data)

    async def set_aside(self, plan_id: PlanId) -> tuple[str, str | None]:
        return ("file" if file_name(plan_id) in self.texts else "missing"), None

    async def remove(self, plan_id: PlanId) -> None:
        self.texts.pop(file_name(plan_id), None)

    async def names(self) -> list[str]:
        return list(self.texts)

    async def recover(self, file_name: str) -> None:
        if file_name in self.texts:
            self.recovered[file_name] = self.texts.pop(file_name)


@attrs.define
class MemorySessionStore(UnitOfWork[None, "MemorySessionTx"]):
    """One session in memory. `plans` maps id to Plan, in insertion order."""

    session: Session
    files: MemoryPlanFiles
    plans: dict[str, Plan] = attrs.field(factory=dict)
    records: MemoryRequestRecords = attrs.field(factory=MemoryRequestRecords)
    remembered: int = DEFAULT_LIMITS.remembered_requests
    cleanups: Cleanups = attrs.field(factory=Cleanups, init=False)
    _lock: anyio.Lock = attrs.field(factory=anyio.Lock, init=False)
    #: The journal as stored rows (what the SQL stores keep), so damage can be played too.
    event_rows: list[dict[str, Any]] = attrs.field(factory=list)
    #: Commits so far, and the event the next commit sets: what a MemorySessionWatch waits on.
    version: int = attrs.field(default=0, init=False)
    next_change: anyio.Event = attrs.field(factory=anyio.Event, init=False)

    files_mirror = False
    #: One machine: a pull need not say which.
    machine: str | None = attrs.field(default=None, init=False)

    @property
    def name(self) -> SessionName:
        return self.session.name

    @property
    def path(self) -> str:
        return f"memory://{self.name}"

    def plan_path(self, plan_id: PlanId) -> str:
        return self.files.path(plan_id)

    def _tx(self, files: FileChanges) -> "MemorySessionTx":
        """A copy of the session; the store adopts the copy on commit."""
        records = self.records.copy()
        return MemorySessionTx(
            self.session,
            dict(self.plans),
            files,
            records,
            RetryLog(records, self.remembered),
            self.event_rows,
        )

    @asynccontextmanager
    async def reading(self, *, snapshot: bool = True) -> AsyncIterator["MemorySessionTx"]:  # noqa: ARG002 - always a snapshot
        async with self._lock:
            yield self._tx(FileChanges(self.files))

    def _writer(self) -> anyio.Lock:
        return self._lock

    async def _begin(self, db: None, files: FileChanges) -> "MemorySessionTx":  # noqa: ARG002 - no database
        return self._tx(files)

    async def _commit(self, tx: "MemorySessionTx") -> None:
        self.session = tx.row
        self.plans = tx.plans
        self.records = tx.records
        self.event_rows.extend(tx.new_events)
        self.version += 1
        self.next_change.set()
        self.next_change = anyio.Event()

    async def _roll_back(self, tx: "MemorySessionTx") -> None:
        """Nothing to do: the copy is dropped."""

    def _database_error(self, exc: Exception) -> DatabaseError | None:  # noqa: ARG002 - no driver
        return None


@attrs.define
class MemorySessionTx(EventRows):
    """Works on a copy of the plans (a SessionReader and a SessionTx); the store adopts the
    copy and the new events on commit."""

    #: The session row, replaced in the copy when the transaction changes it.
    row: Session
    plans: dict[str, Plan]
    files: FileChanges
    records: MemoryRequestRecords
    requests: RetryLog
    _committed_events: list[dict[str, Any]]
    new_events: list[dict[str, Any]] = attrs.field(factory=list)

    async def _last_seq(self) -> int:
        rows = self.new_events or self._committed_events
        return int(rows[-1]["seq"]) if rows else 0

    async def _insert_event(self, row: dict[str, Any]) -> None:
        self.new_events.append(row | {"at": timestamp_text(row["at"])})

    async def _count_hourly(
        self, kinds: list[str], since: dt.datetime
    ) -> list[tuple[dt.datetime, str, int]]:
        counts: collections.Counter[tuple[dt.datetime, str]] = collections.Counter()
        for row in (*self._committed_events, *self.new_events):
            at = readable_time(row["at"]) if row["kind"] in kinds else None
            if at is not None and at >= since:
                counts[at.replace(minute=0, second=0, microsecond=0), row["kind"]] += 1
        return [(hour, kind, count) for (hour, kind), count in counts.items()]

    async def _select_events(self, query: EventQuery) -> list[Mapping[str, Any]]:
        kinds = {kind.value for kind in query.kinds}
        found: list[Mapping[str, Any]] = [
            row
            for row in (*self._committed_events, *self.new_events)
            if row["seq"] > query.after_seq
            and (query.before_seq is None or row["seq"] < query.before_seq)
            and (not kinds or row["kind"] in kinds)
            and (query.plan_id is None or row["plan_id"] == query.plan_id)
            and (query.plan_ids is None or row["plan_id"] in query.plan_ids)
        ]
        return found if query.last is None else found[max(0, len(found) - query.last) :]

    def _queued(self) -> list[Plan]:
        return sorted(
            (plan for plan in self.plans.values() if plan.status is PlanStatus.QUEUED),
            key=lambda plan: plan.position or 0,
        )

    async def session(self) -> Session:
        return self.row

    async def name_workers(self, *, named: bool) -> None:
        self.row = attrs.evolve(self.row, workers_named=named)

    async def active_plans(self) -> list[Plan]:
        active = (plan for plan in self.plans.values() if plan.status is PlanStatus.ACTIVE)
        return sorted(active, key=lambda plan: plan.id)

    def _unsettled(self, plan: Plan) -> tuple[PlanId, ...]:
        """What `plan` waits for: the plans it names that are not settled (a plan it names
        that is not here counts as settled, as in the SQL stores' count)."""
        named = (self.plans.get(plan_id) for plan_id in plan.after)
        return tuple(p.id for p in named if p is not None and not p.status.settled)

    async def front_of_queue(self) -> Plan | None:
        return next((plan for plan in self._queued() if not self._unsettled(plan)), None)

    async def queue(self, limit: int | None = None) -> list[QueueEntry]:
        return [
            QueueEntry(plan.id, plan.goal, rank, self._unsettled(plan))
            for rank, plan in enumerate(self._queued()[:limit], start=1)
        ]

    async def needed_by(self, plan_id: PlanId) -> list[PlanId]:
        return sorted(plan.id for plan in self.plans.values() if plan_id in plan.after)

    async def tally(self) -> Tally:
        queued = self._queued()
        return Tally(
            queued=len(queued),
            completed=sum(1 for p in self.plans.values() if p.status is PlanStatus.COMPLETED),
            low=queued[0].position if queued else None,
            high=queued[-1].position if queued else None,
            next_goal=next((p.goal for p in queued if not self._unsettled(p)), None),
        )

    async def plan(self, plan_id: PlanId) -> Plan | None:
        return self.plans.get(plan_id)

    async def waiting_for_person(self, limit: int) -> list[Plan]:
        waiting = [
            p
            for p in self.plans.values()
            if p.status is PlanStatus.COMPLETED
            and any(v.status is VerdictStatus.NEEDS_PERSON for v in p.verdicts)
        ]
        return sorted(waiting, key=lambda p: (p.completed_at or p.created_at, p.id))[:limit]

    async def finished(self) -> list[Plan]:
        done = [p for p in self.plans.values() if p.status not in LIVE]
        return sorted(done, key=lambda p: (p.completed_at or p.created_at, p.id))

    async def search(
        self, terms: list[str], limit: int, *, snippets: bool = False
    ) -> list[HistoryMatch]:
        completed = [p for p in self.plans.values() if p.status is PlanStatus.COMPLETED]
        scored = [
            (-score, order, plan)
            for order, plan in enumerate(completed)
            if (score := _score(plan, terms)) > 0
        ]
        snippet = partial(_snippet, wanted=set(terms))
        if not scored and (parts := substring_terms(terms)):
            # Text without spaces (CJK): a part of a run of text, newest plan first.
            scored = [
                (-hits, -order, plan)
                for order, plan in enumerate(completed)
                if (hits := sum(term in _text(plan) for term in parts)) > 0
            ]
            snippet = partial(_part_snippet, parts=parts)
        scored.sort(key=lambda item: item[:2])
        return [
            HistoryMatch(plan.id, plan.goal, plan.outcome, rank, snippet(plan) if snippets else "")
            for rank, (_, _, plan) in enumerate(scored[:limit], start=1)
        ]

    async def ahead_of(self, position: int, leaving: PlanId) -> tuple[int | None, int]:
        ahead = [
            plan.position
            for plan in self.plans.values()
            if plan.status is PlanStatus.QUEUED
            and plan.position is not None
            and plan.position < position
            and plan.id != leaving
        ]
        return max(ahead, default=None), len(ahead)

    async def plan_rows(self) -> list[PlanRow]:
        return [
            PlanRow(plan.id, plan.status, plan.position, plan.worker)
            for plan in self.plans.values()
            if plan.status in LIVE or plan.position is not None
        ]

    async def add(self, plan: Plan) -> bool:
        if plan.id in self.plans:
            return False
        self.plans[plan.id] = plan
        return True

    async def save(self, plan: Plan) -> None:
        self.plans[plan.id] = plan

    async def renumber(self, positions: Mapping[PlanId, int]) -> None:
        for plan_id, position in positions.items():
            self.plans[plan_id] = attrs.evolve(self.plans[plan_id], position=position)


def _snippet(plan: Plan, wanted: set[str]) -> str:
    """The first field with a match, matched words marked, trimmed around the first one."""
    fields = list(_fields(plan).values())
    for text in fields:
        words = text.split()
        hits = [
            i
            for i, word in enumerate(words)
            if any(w.lower() in wanted for w in WORD.findall(word))
        ]
        if hits:
            start = max(0, hits[0] - 6)
            shown = [
                f"{SNIPPET_MARKS[0]}{w}{SNIPPET_MARKS[1]}" if i in hits else w
                for i, w in enumerate(words)
            ]
            return ("…" if start else "") + " ".join(shown[start : start + 16])
    return ""


def _part_snippet(plan: Plan, parts: list[str]) -> str:
    """Where the parts of a run of text matched, as the other stores show it."""
    return excerpt("\n".join(_fields(plan).values()), parts)


def _fields(plan: Plan) -> dict[str, str]:
    evidence = "\n".join(verdict.evidence for verdict in plan.verdicts)
    return attrs.asdict(plan.content) | {
        "outcome": plan.outcome or "",
        "notes": plan.notes,
        "evidence": evidence,
    }


def _text(plan: Plan) -> str:
    return "\n".join(_fields(plan).values()).lower()


def _score(plan: Plan, terms: list[str]) -> float:
    fields = _fields(plan)
    wanted = set(terms)
    return sum(
        weight * sum(1 for word in WORD.findall(fields[field].lower()) if word in wanted)
        for field, weight in _WEIGHTS.items()
    )
