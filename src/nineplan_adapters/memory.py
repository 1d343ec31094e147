"""In-memory storage: for embedding without a disk, for tests, and as the honest fake.

It keeps the same promises as the SQLite store (transactions roll rows and files back
together, one writer at a time) so the conformance machine can hold both to one model.
"""

import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
import attrs

from nineplan_adapters.file_journal import Action, FileJournal, JournalledFiles, run_actions
from nineplan_core.errors import NinePlanError, SessionExistsError, SessionNotFoundError
from nineplan_core.invariants import PlanRow
from nineplan_core.lifecycle import LIVE, PlanStatus
from nineplan_core.model import (
    SNIPPET_MARKS,
    HistoryMatch,
    Plan,
    Progress,
    QueueEntry,
    QueueShape,
    Session,
    SessionSummary,
    check_plan_id,
    check_session_name,
)
from nineplan_core.requests import REMEMBERED

T = TypeVar("T")
_WORD = re.compile(r"[^\W_]+")
# The same column weights as the SQLite ranking: outputs and outcome weigh most, notes least.
_WEIGHTS = {
    "goal": 2.0,
    "context": 1.0,
    "inputs": 1.0,
    "outputs": 3.0,
    "outcome": 3.0,
    "notes": 0.5,
}


@attrs.define
class MemoryPlanFiles:
    """Plan files in a dict; `texts` is public so tests can play the agent editing a file."""

    session: str
    texts: dict[str, bytes] = attrs.field(factory=dict)
    recovered: dict[str, bytes] = attrs.field(factory=dict)

    def path(self, plan_id: str) -> str:
        return f"memory://{self.session}/plans/{check_plan_id(plan_id)}.txt"

    async def read(self, plan_id: str) -> bytes | None:
        return self.texts.get(f"{plan_id}.txt")

    async def write(self, plan_id: str, data: bytes) -> None:
        self.texts[f"{check_plan_id(plan_id)}.txt"] = data

    async def keep(self, file_name: str, data: bytes) -> str:
        name = file_name
        while name in self.recovered:
            name = f"{file_name}.{len(self.recovered)}"
        self.recovered[name] = data
        return f"memory://{self.session}/recovered/{name}"

    async def remove(self, plan_id: str) -> None:
        self.texts.pop(f"{plan_id}.txt", None)

    async def sizes(self) -> dict[str, int]:
        return {name: len(text) for name, text in self.texts.items()}

    async def names(self) -> list[str]:
        return list(self.texts)

    async def recover(self, file_name: str) -> None:
        if file_name in self.texts:
            self.recovered[file_name] = self.texts.pop(file_name)


@attrs.define
class MemorySessionStore:
    """One session in memory. `plans` maps id to Plan, in insertion order."""

    session: Session
    files: MemoryPlanFiles
    plans: dict[str, Plan] = attrs.field(factory=dict)
    requests: "OrderedDict[str, tuple[str, object]]" = attrs.field(factory=OrderedDict)
    _lock: anyio.Lock = attrs.field(factory=anyio.Lock, init=False)
    _cleanups: list[Action] = attrs.field(factory=list, init=False)

    files_mirror = False

    @property
    def name(self) -> str:
        return self.session.name

    @property
    def path(self) -> str:
        return f"memory://{self.name}"

    def plan_path(self, plan_id: str) -> str:
        return self.files.path(plan_id)

    def _tx(self) -> "MemorySessionTx":
        return MemorySessionTx(
            self.session, dict(self.plans), FileJournal(self.files), OrderedDict(self.requests)
        )

    @asynccontextmanager
    async def reading(self, *, snapshot: bool = True) -> AsyncIterator["MemorySessionTx"]:  # noqa: ARG002 - always a snapshot
        async with self._lock:
            yield self._tx()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator["MemorySessionTx"]:
        async with self._lock:
            self._cleanups = await run_actions(self._cleanups)
            tx = self._tx()
            try:
                yield tx
            except BaseException:
                await tx.journal.undo()
                raise
            self.plans = tx.plans
            self.requests = tx.requests
            self._cleanups += await tx.journal.after_commit()


@attrs.define
class MemorySessionTx(JournalledFiles):
    """Works on a copy of the plans; the store adopts the copy on commit."""

    _session: Session
    plans: dict[str, Plan]
    journal: FileJournal
    requests: "OrderedDict[str, tuple[str, object]]"

    def _queued(self) -> list[Plan]:
        return sorted(
            (plan for plan in self.plans.values() if plan.status is PlanStatus.QUEUED),
            key=lambda plan: plan.position or 0,
        )

    async def session(self) -> Session:
        return self._session

    async def active_plan(self) -> Plan | None:
        return next(
            (plan for plan in self.plans.values() if plan.status is PlanStatus.ACTIVE), None
        )

    async def front_of_queue(self) -> Plan | None:
        queued = self._queued()
        return queued[0] if queued else None

    async def queue(self) -> list[QueueEntry]:
        return [
            QueueEntry(plan.id, plan.goal, rank)
            for rank, plan in enumerate(self._queued(), start=1)
        ]

    async def queue_shape(self) -> QueueShape:
        positions = [plan.position or 0 for plan in self._queued()]
        return QueueShape(
            len(positions), min(positions, default=None), max(positions, default=None)
        )

    async def progress(self) -> Progress:
        front = await self.front_of_queue()
        return Progress(
            await self.completed_count(), await self.queue_length(), front.goal if front else None
        )

    async def queue_length(self) -> int:
        return len(self._queued())

    async def completed_count(self) -> int:
        return sum(1 for plan in self.plans.values() if plan.status is PlanStatus.COMPLETED)

    async def plan(self, plan_id: str) -> Plan | None:
        return self.plans.get(plan_id)

    async def search(
        self, terms: list[str], limit: int, *, snippets: bool = False
    ) -> list[HistoryMatch]:
        completed = [p for p in self.plans.values() if p.status is PlanStatus.COMPLETED]
        scored = [
            (-score, order, plan)
            for order, plan in enumerate(completed)
            if (score := _score(plan, terms)) > 0
        ]
        if not scored:  # text without spaces (CJK): a part of a word, newest plan first
            scored = [
                (-hits, -order, plan)
                for order, plan in enumerate(completed)
                if (hits := sum(term in _text(plan) for term in terms)) > 0
            ]
        scored.sort(key=lambda item: item[:2])
        return [
            HistoryMatch(
                plan.id,
                plan.goal,
                plan.outcome,
                rank,
                _snippet(plan, set(terms)) if snippets else "",
            )
            for rank, (_, _, plan) in enumerate(scored[:limit], start=1)
        ]

    async def plan_rows(self) -> list[PlanRow]:
        return [
            PlanRow(plan.id, plan.status, plan.position)
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

    async def recall(self, request_id: str, kind: type[T]) -> tuple[str, T | None] | None:
        if (recorded := self.requests.get(request_id)) is None:
            return None
        fingerprint, result = recorded
        return fingerprint, result if isinstance(result, kind) else None

    async def remember(self, request_id: str, fingerprint: str, result: object) -> None:
        self.requests[request_id] = (fingerprint, result)
        while len(self.requests) > REMEMBERED:
            self.requests.popitem(last=False)


def _snippet(plan: Plan, wanted: set[str]) -> str:
    """The first field with a match, matched words marked, trimmed around the first one."""
    fields = list(_fields(plan).values())
    for text in fields:
        words = text.split()
        hits = [
            i
            for i, word in enumerate(words)
            if any(w.lower() in wanted for w in _WORD.findall(word))
        ]
        if hits:
            start = max(0, hits[0] - 6)
            shown = [
                f"{SNIPPET_MARKS[0]}{w}{SNIPPET_MARKS[1]}" if i in hits else w
                for i, w in enumerate(words)
            ]
            return ("…" if start else "") + " ".join(shown[start : start + 16])
    return ""


def _fields(plan: Plan) -> dict[str, str]:
    return attrs.asdict(plan.content) | {"outcome": plan.outcome or "", "notes": plan.notes}


def _text(plan: Plan) -> str:
    return "\n".join(_fields(plan).values()).lower()


def _score(plan: Plan, terms: list[str]) -> float:
    fields = _fields(plan)
    wanted = set(terms)
    return sum(
        weight * sum(1 for word in _WORD.findall(fields[field].lower()) if word in wanted)
        for field, weight in _WEIGHTS.items()
    )


@attrs.define
class MemorySessionCatalog:
    """Every session in a dict; nothing touches the disk."""

    stores: dict[str, MemorySessionStore] = attrs.field(factory=dict)
    creations: "OrderedDict[str, tuple[str, str]]" = attrs.field(factory=OrderedDict)

    async def create(self, session: Session) -> MemorySessionStore:
        if check_session_name(session.name) in self.stores:
            raise SessionExistsError(session.name)
        store = self.stores[session.name] = MemorySessionStore(
            session, MemoryPlanFiles(session.name)
        )
        return store

    async def open(self, name: str) -> MemorySessionStore:
        if (store := self.stores.get(check_session_name(name))) is None:
            raise SessionNotFoundError(name)
        return store

    async def names(self) -> list[str]:
        return sorted(self.stores)

    async def summaries(self, names: list[str]) -> list[SessionSummary | NinePlanError]:
        results: list[SessionSummary | NinePlanError] = []
        for name in names:
            try:
                results.append(await self.summary(name))
            except NinePlanError as exc:
                results.append(exc)
        return results

    async def summary(self, name: str) -> SessionSummary:
        store = await self.open(name)
        async with store.reading() as reader:
            return SessionSummary(
                session=store.session,
                queue_length=await reader.queue_length(),
                completed_count=await reader.completed_count(),
                has_active_plan=await reader.active_plan() is not None,
            )

    async def recall_creation(self, request_id: str) -> tuple[str, str] | None:
        return self.creations.get(request_id)

    async def remember_creation(self, request_id: str, fingerprint: str, name: str) -> None:
        self.creations[request_id] = (fingerprint, name)
        while len(self.creations) > REMEMBERED:
            self.creations.popitem(last=False)

    async def aclose(self) -> None:
        """Nothing to release; present so both catalogs close alike."""
