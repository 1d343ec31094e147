"""Every read the view makes, in one place, and the shapes a session page shows them in: a
queue page, a journal page, the board's Done column, the plans the graph view draws.

Reads are inspection: nothing is reconciled or written.
"""

import datetime as dt
import math
from collections.abc import Mapping, Sequence

import attrs

from nineplan_adapters.entrypoints.web.chart import COUNTED, window_start
from nineplan_adapters.entrypoints.web.graph import Node
from nineplan_core.journal import Event, EventKind, EventQuery, UnreadableEvent
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, PlanId, QueueEntry
from nineplan_core.results import HistoryMatch, PlanCopy, SessionListing, SessionState
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
#: Completed plans the board's Needs you lists, the earliest completed first.
NEEDS_YOU_LIMIT = 50
#: Queued plans the graph view draws, the front of the queue (a drawing of more is not read).
GRAPH_LIMIT = 200


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


def plan_href(name: str, plan_id: str) -> str:
    """A plan's page."""
    return f"/sessions/{name}/plans/{plan_id}"


@attrs.frozen(kw_only=True)
class GraphPage:
    """What the graph view draws: the session's active plans (the one pulled longest ago
    first), its queued plans by rank (the first GRAPH_LIMIT), then the plans those name that
    are not among them (settled ones, and queued ones further back), in the order first
    named; each plan as stored, `waiting` the unsettled prerequisites of each queued one."""

    state: SessionState
    plans: Sequence[Plan]
    waiting: Mapping[PlanId, tuple[PlanId, ...]]
    #: Queued plans left out of the drawing (the queue beyond GRAPH_LIMIT, less those named).
    left_out: int = 0

    def nodes(self, name: str) -> list[Node]:
        """The plans as the graph lays them out, each box a link to its plan's page; an
        active plan is stale as the board marks it (its lease lapsed, with several workers)."""
        holds = {hold.plan.id: hold for hold in self.state.active_plans}
        many = self.state.many_workers
        return [
            Node(
                id=plan.id,
                goal=plan.goal,
                status=plan.status.value,
                after=plan.after,
                worker=holds[plan.id].worker if plan.id in holds else None,
                stale=plan.id in holds and holds[plan.id].stale and many,
                waiting=bool(self.waiting.get(plan.id)),
                href=plan_href(name, plan.id),
            )
            for plan in self.plans
        ]


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

    async def plan(self, name: str, plan_id: str) -> PlanCopy:
        """Any plan, whatever its status, as stored, with the plans it waits for and those
        that wait for it; a queued or active one with its working copy and the plan as that
        copy holds it, from one read view."""
        return await self.service.plan_in_full(name, plan_id)

    async def graph(self, name: str, limit: int = GRAPH_LIMIT) -> GraphPage:
        """The plans the graph view draws (`GraphPage`), in three reads: the session's state,
        its first `limit` queued plans as stored (for all they name, settled ones too: a
        queue entry names only the unsettled) and the plans those and the active ones name
        that are not drawn yet."""
        state = await self.state(name)
        queued = state.queue[:limit]
        stored = await self.service.get_plans(name, [entry.id for entry in queued])
        plans = [hold.plan for hold in state.active_plans]
        plans += [stored[entry.id] for entry in queued if entry.id in stored]
        drawn = {plan.id for plan in plans}
        named = [i for plan in plans for i in plan.after if i not in drawn]
        found = await self.service.get_plans(name, list(dict.fromkeys(named))) if named else {}
        plans += found.values()
        waiting = {entry.id: entry.waiting_for for entry in state.queue}
        shown = sum(1 for plan in plans if plan.status is PlanStatus.QUEUED)
        return GraphPage(
            state=state,
            plans=plans,
            waiting=waiting,
            left_out=max(0, len(state.queue) - shown),  # a plan may move between reads
        )

    async def board(
        self, name: str, page: int, before: int | None, now: dt.datetime
    ) -> "BoardPage":
        """A session page's board, read in one snapshot as of `now`: queue page `page`, the
        Done column (the DONE_LIMIT latest completions and as many discards or drops, from the
        journal: a few rows read, however long the history), the chart's 24 hours counted by
        the store, and the JOURNAL_LIMIT events before `before` (the newest when None)."""
        board = await self.service.session_board(
            name,
            journal=EventQuery(last=JOURNAL_LIMIT, before_seq=before),
            finished=DONE_LIMIT,
            counted=frozenset(COUNTED),
            since=window_start(now),
            waiting=NEEDS_YOU_LIMIT,
        )
        return BoardPage(
            state=board.state,
            files=board.files,
            queue=QueuePage.of(board.state.queue, page),
            done=DoneColumn(
                completed=[Finish(plan, event) for plan, event in board.completed],
                discarded=[Finish(plan, event) for plan, event in board.discarded],
            ),
            counts=board.counts,
            journal=JournalPage(board.journal[::-1], before),
            needs_you=board.waiting_for_person,
            now=now,
        )


@attrs.frozen(kw_only=True)
class BoardPage:
    """A session page's board as its templates show it, every part from one read snapshot."""

    state: SessionState
    #: Each active plan's working copy (the notes its worker writes), by plan id.
    files: Mapping[PlanId, str]
    queue: QueuePage
    done: DoneColumn
    #: The chart's counts per UTC hour and kind.
    counts: Mapping[tuple[dt.datetime, EventKind], int]
    journal: JournalPage
    #: The completed plans with a criterion waiting for a person, the earliest first.
    needs_you: Sequence[Plan]
    #: The moment the board was read for: the chart's window and every "ago" end there.
    now: dt.datetime
