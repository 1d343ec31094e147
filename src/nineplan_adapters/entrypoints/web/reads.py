"""Every read the view makes, in one place, and the shapes a session page shows them in: a
queue page, a journal page, the board's Done column.

Reads are inspection: nothing is reconciled or written.
"""

import datetime as dt
import math
from collections.abc import Mapping, Sequence

import attrs

from nineplan_adapters.entrypoints.web.chart import COUNTED, window_start
from nineplan_core.errors import PlanNotFoundError
from nineplan_core.journal import Event, EventKind, EventQuery, UnreadableEvent
from nineplan_core.model import Plan, QueueEntry
from nineplan_core.results import HistoryMatch, SessionListing, SessionState
from nineplan_core.service import NinePlan

#: Queue entries per page: a session of 10,000 queued plans stays one quick page.
PAGE_SIZE = 200
#: Matches a history search shows.
SEARCH_RESULTS = 20
#: Journal entries a session page shows, newest first.
JOURNAL_LIMIT = 100
#: Completed plans the board's Done column shows, newest first (and as many of the most
#: recently discarded or dropped ones in its folded list).
DONE_LIMIT = 20


@attrs.frozen
class QueuePage:
    """One page of the queue: `number` of `count`, ranks `first` to `last`."""

    entries: Sequence[QueueEntry]
    number: int
    count: int

    @classmethod
    def of(cls, queue: list[QueueEntry], number: int) -> "QueuePage":
        count = max(1, math.ceil(len(queue) / PAGE_SIZE))
        number = min(max(1, number), count)
        return cls(queue[(number - 1) * PAGE_SIZE : number * PAGE_SIZE], number, count)

    @property
    def first(self) -> int:
        return self.entries[0].rank if self.entries else 1

    @property
    def last(self) -> int:
        return self.entries[-1].rank if self.entries else 0


@attrs.frozen
class JournalPage:
    """Up to JOURNAL_LIMIT events, newest first: the newest ones, or those before `before`."""

    events: Sequence[Event | UnreadableEvent]
    before: int | None = None

    @property
    def older(self) -> int | None:
        """The `before` of the next older page, or None when this page reaches event 1."""
        return self.events[-1].seq if self.events and self.events[-1].seq > 1 else None

    @property
    def newer(self) -> int | None:
        """The `before` of the next newer page (None: this is the newest page, or that one
        is)."""
        if self.before is None or not self.events:
            return None
        return self.events[0].seq + 1 + JOURNAL_LIMIT


@attrs.frozen
class Finish:
    """A finished plan on the board with the journal's event that finished it (when, who,
    and for a discard the reason)."""

    plan: Plan
    event: Event

    @property
    def reason(self) -> str:
        reason = self.event.detail.get("reason")
        return reason if isinstance(reason, str) else (self.plan.discard_reason or "")

    @property
    def by(self) -> str:
        """Who finished it, for people: `a person`, `the agent`, `worker w1`."""
        worker = self.event.detail.get("worker")
        if self.event.actor == "person":
            return "a person"
        return f"worker {worker}" if isinstance(worker, str) else "the agent"


@attrs.frozen
class DoneColumn:
    """The board's Done column: recently completed plans, and the folded list of recently
    discarded or dropped ones, each newest first."""

    completed: Sequence[Finish] = ()
    discarded: Sequence[Finish] = ()


@attrs.define
class Reads:
    """Every read the view makes, in one place (so each can switch to a better call)."""

    service: NinePlan

    async def sessions(
        self, names: list[str] | None = None, *, archived: bool = False
    ) -> SessionListing:
        """The session list's lines, unreadable sessions included; archived ones if asked."""
        return await self.service.catalogue(names, archived=archived)

    async def state(self, name: str) -> SessionState:
        return await self.service.session_state(name)

    async def search(self, name: str, query: str) -> list[HistoryMatch]:
        return await self.service.search_history(name, query, SEARCH_RESULTS, snippets=True)

    async def plan(self, name: str, plan_id: str) -> Plan:
        """Any plan, whatever its status, as stored."""
        return await self.service.get_plan(name, plan_id)

    async def file_text(self, name: str, plan_id: str) -> str:
        return await self.service.plan_file_text(name, plan_id)

    async def active_files(self, name: str, state: SessionState) -> dict[str, str]:
        """The file text of every active plan, by id (the notes its worker writes)."""
        texts: dict[str, str] = {}
        for hold in state.active_plans:
            try:
                texts[hold.plan.id] = await self.file_text(name, hold.plan.id)
            except PlanNotFoundError:  # finished between the two reads: the next tick shows it
                texts[hold.plan.id] = ""
        return texts

    async def done(self, name: str) -> "DoneColumn":
        """The board's Done column: the DONE_LIMIT most recently completed plans and the
        DONE_LIMIT most recently discarded or dropped ones, newest first, from the journal
        (a few rows read, however long the history)."""
        completed = await self._finished(name, EventKind.PLAN_COMPLETED)
        discarded = await self._finished(name, EventKind.PLAN_DISCARDED)
        plans = await self.service.get_plans(
            name, [event.plan_id for event in (*completed, *discarded) if event.plan_id]
        )
        return DoneColumn(
            completed=[Finish(plans[e.plan_id], e) for e in completed if e.plan_id in plans],
            discarded=[Finish(plans[e.plan_id], e) for e in discarded if e.plan_id in plans],
        )

    async def _finished(self, name: str, kind: EventKind) -> list[Event]:
        query = EventQuery(last=DONE_LIMIT, kinds=frozenset({kind}))
        events = await self.service.journal(name, query)
        return [event for event in reversed(events) if isinstance(event, Event)]

    async def counted(
        self, name: str, now: dt.datetime
    ) -> Mapping[tuple[dt.datetime, EventKind], int]:
        """The completions and deferrals of the chart's 24 hours, per UTC hour, counted by
        the store (only the counts are read, however crowded the window)."""
        return await self.service.hourly_counts(name, frozenset(COUNTED), window_start(now))

    async def journal(self, name: str, before: int | None = None) -> JournalPage:
        """The newest JOURNAL_LIMIT events (before `before`, when given), newest first."""
        query = EventQuery(last=JOURNAL_LIMIT, before_seq=before)
        return JournalPage((await self.service.journal(name, query))[::-1], before)
