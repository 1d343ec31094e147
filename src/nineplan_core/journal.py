"""The session journal: one event per change, and what can be read back from it.

Every change to a session appends one event in the same transaction as the change, so the
journal cannot disagree with the state. Replaying it gives the current statuses and queue
order (the fifth invariant, `journal_matches_state`); counting in it gives the facts no other
record keeps (how often a plan was deferred, when the active plan was pulled).
"""

import datetime as dt
import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from nineplan_core.model import STUCK_DEFERS, Plan, Position, is_stuck
from nineplan_core.workers import MAIN

__all__ = [
    "Actor",
    "Event",
    "EventKind",
    "EventQuery",
    "NewEvent",
    "UnreadableEvent",
    "defer_counts",
    "deferrals",
    "minutes_since",
    "plan_event",
    "pulled_at",
    "reminder_line",
    "started",
    "stuck_plans",
]

#: How much of an outcome or of notes an event keeps.
EXCERPT_CHARS = 200
#: How many events `recent` holds.
RECENT = 5


class EventKind(enum.StrEnum):
    SESSION_CREATED = "session_created"
    PLAN_ADDED = "plan_added"
    PLAN_PULLED = "plan_pulled"
    PLAN_DEFERRED = "plan_deferred"
    PLAN_COMPLETED = "plan_completed"
    PLAN_DISCARDED = "plan_discarded"
    PLAN_MOVED = "plan_moved"
    PLAN_EDITED = "plan_edited"
    PLAN_TAKEN_OVER = "plan_taken_over"
    PLAN_RELEASED = "plan_released"
    VERDICT_DECIDED = "verdict_decided"
    NOTES_ADDED = "notes_added"
    EDITS_SALVAGED = "edits_salvaged"
    FILES_REPAIRED = "files_repaired"
    JOURNAL_STARTED = "journal_started"


class Actor(enum.StrEnum):
    """Who made a change: an agent through MCP, a person (CLI or web view), or nineplan itself."""

    AGENT = "agent"
    PERSON = "person"
    SYSTEM = "system"


@attrs.frozen(kw_only=True)
class NewEvent:
    """An event about to be appended: the store gives it the next `seq`."""

    kind: EventKind
    at: dt.datetime
    actor: Actor
    plan_id: str | None = None
    detail: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Event:
    """One recorded change. `seq` counts 1, 2, 3 ... per session with no gaps."""

    seq: int
    kind: EventKind
    at: dt.datetime
    actor: Actor
    plan_id: str | None = None
    detail: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def appended(cls, new: NewEvent, seq: int) -> "Event":
        return cls(
            seq=seq,
            kind=new.kind,
            at=new.at,
            actor=new.actor,
            plan_id=new.plan_id,
            detail=new.detail,
        )


@attrs.frozen
class UnreadableEvent:
    """A stored journal row that is not a valid event (edited by hand, say)."""

    seq: int
    problem: str


@attrs.frozen(kw_only=True)
class EventQuery:
    """Which events to read, always oldest first.

    Events after `after_seq` (and before `before_seq`, when given), of the given `kinds`
    (every kind when empty), about `plan_id` or one of `plan_ids` (any plan when None); with
    `last`, only the newest `last` of those.
    """

    after_seq: int = 0
    before_seq: int | None = None
    last: int | None = None
    kinds: frozenset[EventKind] = frozenset()
    plan_id: str | None = None
    plan_ids: frozenset[str] | None = None

    def matches(self, event: "Event | UnreadableEvent") -> bool:
        """Whether a read event passes the filters (an unreadable one passes when no kind
        or plan is asked for: it could be anything)."""
        if event.seq <= self.after_seq or (
            self.before_seq is not None and event.seq >= self.before_seq
        ):
            return False
        if isinstance(event, UnreadableEvent):
            return not self.kinds and self.plan_id is None and self.plan_ids is None
        return (
            (not self.kinds or event.kind in self.kinds)
            and (self.plan_id is None or event.plan_id == self.plan_id)
            and (self.plan_ids is None or event.plan_id in self.plan_ids)
        )


#: The last RECENT events of any kind: what resume and state show.
RECENT_EVENTS = EventQuery(last=RECENT)


def deferrals(plan_ids: Iterable[str]) -> EventQuery:
    """The query for every deferral of these plans: their defer counts come from it."""
    return EventQuery(kinds=frozenset({EventKind.PLAN_DEFERRED}), plan_ids=frozenset(plan_ids))


#: The events that give an active plan to a worker: a pull, and a take-over of a stale plan.
HOLDING = frozenset({EventKind.PLAN_PULLED, EventKind.PLAN_TAKEN_OVER})
#: The events that take a plan from its worker without the worker's call.
LOSING = frozenset({EventKind.PLAN_TAKEN_OVER, EventKind.PLAN_RELEASED})


def last_pull(plan_id: str) -> EventQuery:
    """The query for the latest pull or take-over of `plan_id` (its current holder's, when
    it is active)."""
    return EventQuery(last=1, kinds=HOLDING, plan_id=plan_id)


def started(at: dt.datetime, queue: Sequence[str], active_plan: str | None) -> NewEvent:
    """The one event a session from an earlier version gets: the state the journal starts from."""
    return NewEvent(
        kind=EventKind.JOURNAL_STARTED,
        at=at,
        actor=Actor.SYSTEM,
        detail={"queue": list(queue), "active_plan": active_plan},
    )


def plan_event(
    at: dt.datetime, actor: Actor, kind: EventKind, plan: Plan, **detail: object
) -> NewEvent:
    """The journal's record of a change to `plan` (a position in `detail` kept as its name)."""
    return NewEvent(
        kind=kind,
        at=at,
        actor=actor,
        plan_id=plan.id,
        detail={key: _plain(value) for key, value in detail.items()},
    )


def _plain(value: object) -> Any:
    return value.value if isinstance(value, Position) else value


def worker_detail(worker: str) -> dict[str, str]:
    """The `detail.worker` of a plan's pull, defer, complete or discard: absent for `main`,
    so a lone agent's journal reads as before workers."""
    return {} if worker == MAIN else {"worker": worker}


def event_worker(event: Event) -> str:
    """The worker an event is about: `detail.worker`, or `main` (events before workers)."""
    return named_worker(event, "worker")


def named_worker(event: Event, key: str) -> str:
    """The worker `detail[key]` names, or `main`."""
    worker = event.detail.get(key)
    return worker if isinstance(worker, str) else MAIN


def lost_plan(events: Iterable[Event | UnreadableEvent], worker: str) -> Event | None:
    """The take-over or release that took `worker`'s plan, when that is the latest the
    journal says of the worker's hold (`events`: the pulls, take-overs and releases, oldest
    first); None when the worker let its plan go itself or never held one."""
    latest: Event | None = None
    for event in readable(events):
        if event.kind is EventKind.PLAN_TAKEN_OVER:
            if named_worker(event, "to") == worker:
                latest = None
            elif named_worker(event, "from") == worker:
                latest = event
        elif event_worker(event) == worker:
            latest = event if event.kind is EventKind.PLAN_RELEASED else None
    return latest


#: What `lost_plan` reads: every event that gives a worker a plan or takes one from it.
HOLDS = EventQuery(kinds=HOLDING | LOSING)


def defer_counts(events: Iterable[Event | UnreadableEvent]) -> Counter[str]:
    """How many times each plan was deferred (unreadable events count for nothing)."""
    return Counter(
        event.plan_id
        for event in events
        if isinstance(event, Event)
        and event.kind is EventKind.PLAN_DEFERRED
        and event.plan_id is not None
    )


def stuck_plans(
    events: Iterable[Event | UnreadableEvent], stuck_defers: int = STUCK_DEFERS
) -> dict[str, int]:
    """The plans `events` show deferred `stuck_defers` times or more, with their counts."""
    return {
        plan_id: count
        for plan_id, count in defer_counts(events).items()
        if is_stuck(count, stuck_defers)
    }


def pulled_at(events: Iterable[Event | UnreadableEvent], plan_id: str) -> dt.datetime | None:
    """When `plan_id` was last pulled (or taken over), or None if the journal does not say."""
    pulls = [
        event.at
        for event in events
        if isinstance(event, Event) and event.kind in HOLDING and event.plan_id == plan_id
    ]
    return pulls[-1] if pulls else None


def readable(events: Iterable[Event | UnreadableEvent]) -> list[Event]:
    """The events that could be read; damaged rows are reported by validate, not here."""
    return [event for event in events if isinstance(event, Event)]


def excerpt(text: str) -> str:
    """What an event keeps of an outcome or of notes: the first 200 characters."""
    return text[:EXCERPT_CHARS]


def minutes_since(then: dt.datetime, now: dt.datetime) -> int:
    """Whole minutes from `then` to `now` (never negative)."""
    return max(0, int((now - then).total_seconds() // 60))


_MINUTE = 60  # seconds


def heard_ago(last_seen: dt.datetime | None, now: dt.datetime) -> str:
    """How long ago a worker was last heard from: seconds under a minute (a sub-minute lease
    is stale after seconds), whole minutes after that."""
    if last_seen is None:
        return "at an unknown time"
    seconds = max(0, int((now - last_seen).total_seconds()))
    return f"{seconds} s ago" if seconds < _MINUTE else f"{seconds // _MINUTE} min ago"


def held_line(plan_id: str, goal: str, pulled_at: dt.datetime | None, now: dt.datetime) -> str:
    """An active plan in one line: its id, its goal and how long ago it was pulled."""
    goal = " ".join(goal.split())
    if pulled_at is None:
        return f"{plan_id} {goal}"
    return f"{plan_id} {goal} (pulled {minutes_since(pulled_at, now)} min ago)"


def reminder_line(plan_id: str, goal: str, pulled_at: dt.datetime | None, now: dt.datetime) -> str:
    """The line that reminds a drifting agent what it holds."""
    return f"Active plan: {held_line(plan_id, goal, pulled_at, now)}"
