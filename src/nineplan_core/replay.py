"""Replaying the journal: the statuses, queue order, holders and prerequisites its events
describe; what keeps it from matching the stored state (the fifth invariant,
`journal_matches_state`), and any pull made before the plan's prerequisites were settled
(`prerequisites_respected`)."""

from collections.abc import Iterable

import attrs

from nineplan_core.journal import (
    Actor,
    Event,
    EventKind,
    UnreadableEvent,
    event_worker,
    named_worker,
)
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanRow
from nineplan_core.workers import MAIN, stored_worker

__all__ = ["journal_issues", "replay_issues"]


@attrs.define
class _Replay:
    """The state a journal describes, built one event at a time."""

    statuses: dict[str, PlanStatus] = attrs.field(factory=dict)
    queue: list[str] = attrs.field(factory=list)
    issues: list[str] = attrs.field(factory=list)
    #: Who holds each active plan (`detail.worker`; `main` when an event names none).
    holders: dict[str, str] = attrs.field(factory=dict)
    #: What each plan waits for (`detail.after` of its `plan_added`, or of a person's edit).
    after: dict[str, list[str]] = attrs.field(factory=dict)
    #: The pulls made before a prerequisite was settled, and prerequisites never added.
    waits: list[str] = attrs.field(factory=list)
    #: The journal starts from an older version's state (`journal_started`): the plans it
    #: finished before are not in the journal, and a plan the replay never saw is one of them.
    midway: bool = False

    def ready(self, plan_id: str) -> bool:
        return all(self.settled(named) for named in self.after.get(plan_id, ()))

    def settled(self, plan_id: str) -> bool:
        status = self.statuses.get(plan_id)
        return status.settled if status is not None else self.midway

    def wait_for(self, event: Event, plan_id: str, after: object) -> None:
        """`plan_id` waits for the plans `after` names (a list of ids), each of which must
        have been added before."""
        named = [str(item) for item in after] if isinstance(after, list) else []
        for prerequisite in named:
            unknown = prerequisite not in self.statuses and not self.midway
            if unknown or prerequisite == plan_id:
                self.waits.append(
                    f"journal event {event.seq} has plan {plan_id} wait for {prerequisite}, "
                    "which is not another plan of the session"
                )
        self.after[plan_id] = named

    def release(self, event: Event, plan_id: str, worker: str | None = None) -> None:
        """`plan_id` leaves its worker; the event must be that worker's (`worker`, else the
        event's `detail.worker`)."""
        held_by = self.holders.pop(plan_id, MAIN)
        if (worker := worker or event_worker(event)) != held_by:
            self.issues.append(
                f"journal event {event.seq} ({event.kind.value}) is worker {worker}'s, "
                f"plan {plan_id} is held by {held_by}"
            )

    def hold(self, event: Event, plan_id: str, worker: str, verb: str) -> None:
        """`plan_id` becomes `worker`'s; a worker holds one plan at a time (`verb` says how
        the event handed it over, for the issue line: "pulls {plan} for")."""
        if worker in self.holders.values():
            self.issues.append(
                f"journal event {event.seq} {verb.format(plan=plan_id)} worker {worker}, "
                "who holds a plan already"
            )
        self.holders[plan_id] = worker

    def enqueue(self, plan_id: str, position: object, rank: object = 1) -> None:
        """`plan_id` joins the queue: at the back, or at the front (at `rank`, where a batch
        added at the front puts each of its plans after the one before)."""
        if plan_id in self.queue:
            self.queue.remove(plan_id)
        if position == "front":
            at = rank - 1 if isinstance(rank, int) and rank > 0 else 0
            self.queue.insert(at, plan_id)
        else:
            self.queue.append(plan_id)
        self.statuses[plan_id] = PlanStatus.QUEUED

    def expect(self, event: Event, *wanted: PlanStatus) -> bool:
        plan_id = event.plan_id
        status = self.statuses.get(plan_id) if plan_id else None
        if status in wanted:
            return True
        shown = status.value if status else "unknown"
        self.issues.append(
            f"journal event {event.seq} ({event.kind.value}) finds plan {plan_id} {shown}"
        )
        return False

    def start(self, event: Event) -> None:
        self.midway = True
        queue = event.detail.get("queue", [])
        active = event.detail.get("active_plan")
        self.queue = [str(plan_id) for plan_id in queue] if isinstance(queue, list) else []
        self.statuses.update(dict.fromkeys(self.queue, PlanStatus.QUEUED))
        if isinstance(active, str):
            self.statuses[active] = PlanStatus.ACTIVE
            self.holders[active] = MAIN

    def add(self, event: Event, plan_id: str) -> None:
        if plan_id in self.statuses:
            self.issues.append(f"journal event {event.seq} adds plan {plan_id} twice")
        if "after" in event.detail:
            self.wait_for(event, plan_id, event.detail["after"])
        joins = event.detail.get("joins")
        for waiting in joins if isinstance(joins, list) else []:  # a follow-up's dependents
            self.after.setdefault(str(waiting), []).append(plan_id)
        self.enqueue(plan_id, event.detail.get("position"), event.detail.get("rank", 1))

    def pull(self, event: Event, plan_id: str) -> None:
        if self.expect(event, PlanStatus.QUEUED):
            if unsettled := [p for p in self.after.get(plan_id, ()) if not self.settled(p)]:
                self.waits.append(
                    f"journal event {event.seq} pulls {plan_id} before {', '.join(unsettled)}, "
                    "which it waits for, was settled"
                )
            elif next((q for q in self.queue if self.ready(q)), None) != plan_id:
                self.issues.append(
                    f"journal event {event.seq} pulls {plan_id}, not the first ready plan "
                    "of the queue"
                )
            self.queue.remove(plan_id)
            self.statuses[plan_id] = PlanStatus.ACTIVE
            self.hold(event, plan_id, event_worker(event), "pulls {plan} for")

    def requeue(self, event: Event, plan_id: str) -> None:
        was = PlanStatus.ACTIVE if event.kind is EventKind.PLAN_DEFERRED else PlanStatus.QUEUED
        if self.expect(event, was):
            if was is PlanStatus.ACTIVE:
                self.release(event, plan_id)
            self.enqueue(plan_id, event.detail.get("position"))

    def move(self, event: Event, plan_id: str) -> None:
        """A person's move: to the front or the back, or before another queued plan
        (`detail.before`), which must be in the replayed queue."""
        before = event.detail.get("before")
        if before is None:
            self.requeue(event, plan_id)
        elif self.expect(event, PlanStatus.QUEUED):
            if before == plan_id or before not in self.queue:
                self.issues.append(
                    f"journal event {event.seq} moves {plan_id} before {before}, "
                    "which is not another queued plan"
                )
                return
            self.queue.remove(plan_id)
            self.queue.insert(self.queue.index(before), plan_id)

    def edit(self, event: Event, plan_id: str) -> None:
        """An edit changes no status: a person's is of a queued plan (it may change what the
        plan waits for, `detail.after`); an agent's (its file's edits stored while it works)
        of an active one."""
        if event.actor is Actor.AGENT:
            self.expect(event, PlanStatus.ACTIVE)
        elif self.expect(event, PlanStatus.QUEUED) and "after" in event.detail:
            self.wait_for(event, plan_id, event.detail["after"])

    def cycles(self) -> None:
        """A prerequisite graph with a cycle: one issue naming a plan on it."""
        done: set[str] = set()
        for start in sorted(self.after):
            path: list[str] = []
            stack = [(start, iter(self.after.get(start, ())))]
            on_path = {start}
            while stack:
                node, children = stack[-1]
                child = next(children, None)
                if child is None:
                    stack.pop()
                    on_path.discard(node)
                    done.add(node)
                elif child in on_path:
                    path = [name for name, _ in stack] + [child]
                    self.waits.append(f"plans wait for each other: {' -> '.join(path)}")
                    return
                elif child not in done:
                    on_path.add(child)
                    stack.append((child, iter(self.after.get(child, ()))))

    def complete(self, event: Event, plan_id: str) -> None:
        if self.expect(event, PlanStatus.ACTIVE):
            self.release(event, plan_id)
            self.statuses[plan_id] = PlanStatus.COMPLETED

    def discard(self, event: Event, plan_id: str) -> None:
        if self.expect(event, PlanStatus.ACTIVE, PlanStatus.QUEUED):
            if plan_id in self.queue:  # a person dropped a queued plan
                self.queue.remove(plan_id)
            else:
                self.release(event, plan_id)
            self.statuses[plan_id] = PlanStatus.DISCARDED

    def decide(self, event: Event, _: str) -> None:
        """A person's decision on a criterion that waited for one: of a completed plan."""
        self.expect(event, PlanStatus.COMPLETED)

    def take_over(self, event: Event, plan_id: str) -> None:
        if self.expect(event, PlanStatus.ACTIVE):
            self.release(event, plan_id, named_worker(event, "from"))
            self.hold(event, plan_id, named_worker(event, "to"), "gives {plan} to")

    def person_releases(self, event: Event, plan_id: str) -> None:
        if self.expect(event, PlanStatus.ACTIVE):
            self.release(event, plan_id)
            self.enqueue(plan_id, "front")

    def apply(self, event: Event) -> None:
        if event.kind is EventKind.JOURNAL_STARTED:
            self.start(event)
        elif event.plan_id is not None and (step := _STEPS.get(event.kind)) is not None:
            step(self, event, event.plan_id)


#: How each kind of event changes the replayed state; the other kinds change no status.
_STEPS = {
    EventKind.PLAN_ADDED: _Replay.add,
    EventKind.PLAN_PULLED: _Replay.pull,
    EventKind.PLAN_DEFERRED: _Replay.requeue,
    EventKind.PLAN_MOVED: _Replay.move,
    EventKind.PLAN_EDITED: _Replay.edit,
    EventKind.PLAN_COMPLETED: _Replay.complete,
    EventKind.PLAN_DISCARDED: _Replay.discard,
    EventKind.PLAN_TAKEN_OVER: _Replay.take_over,
    EventKind.PLAN_RELEASED: _Replay.person_releases,
    EventKind.VERDICT_DECIDED: _Replay.decide,
}


def journal_issues(events: Iterable[Event | UnreadableEvent], rows: Iterable[PlanRow]) -> list[str]:
    """What keeps the journal from replaying to the stored state, or shows a plan pulled
    before its prerequisites were settled; empty when it matches."""
    issues, waits = replay_issues(events, rows)
    return issues + waits


def replay_issues(
    events: Iterable[Event | UnreadableEvent], rows: Iterable[PlanRow]
) -> tuple[list[str], list[str]]:
    """What keeps the journal from replaying to the stored state (empty when it matches),
    and what shows a plan pulled before its prerequisites were settled, a prerequisite that
    was never added, or a cycle (empty when the prerequisites were respected).

    `events` are the whole journal, oldest first. `rows` are stored plans: every queued or
    active one at least; any other row given is checked against its replayed status too.
    """
    replay = _Replay()
    expected_seq = 1
    for event in events:
        if event.seq != expected_seq:
            replay.issues.append(f"journal skips from event {expected_seq - 1} to {event.seq}")
        expected_seq = event.seq + 1
        if isinstance(event, UnreadableEvent):
            replay.issues.append(f"journal event {event.seq} cannot be read: {event.problem}")
        else:
            replay.apply(event)
    _compare(replay, list(rows))
    replay.cycles()
    return replay.issues, replay.waits


def _compare(replay: _Replay, rows: list[PlanRow]) -> None:
    """What keeps the replayed state from matching the stored `rows`, into `replay.issues`."""
    stored_queue = [
        row.id
        for row in sorted(
            (row for row in rows if row.status is PlanStatus.QUEUED),
            key=lambda row: row.position or 0,
        )
    ]
    if stored_queue != replay.queue:
        replay.issues.append(
            f"the journal replays the queue as [{', '.join(replay.queue)}], "
            f"it is [{', '.join(stored_queue)}]"
        )
    replayed_live = {
        plan_id
        for plan_id, status in replay.statuses.items()
        if status in {PlanStatus.QUEUED, PlanStatus.ACTIVE}
    }
    for row in rows:
        replayed = replay.statuses.get(row.id)
        if replayed is not None and replayed is not row.status:
            replay.issues.append(
                f"the journal replays plan {row.id} as {replayed.value}, it is {row.status.value}"
            )
        elif row.status is PlanStatus.ACTIVE and (
            held := replay.holders.get(row.id, MAIN)
        ) != stored_worker(row.worker):
            replay.issues.append(
                f"the journal replays plan {row.id} as held by {held}, it is held by {row.worker}"
            )
        elif replayed is None and row.status in {PlanStatus.QUEUED, PlanStatus.ACTIVE}:
            replay.issues.append(f"plan {row.id} is {row.status.value} but not in the journal")
        replayed_live.discard(row.id)
    replay.issues += [
        f"the journal replays plan {plan_id} as {replay.statuses[plan_id].value}, "
        "it is not a live plan"
        for plan_id in sorted(replayed_live)
        if plan_id not in replay.queue  # a queue mismatch was reported above
    ]
