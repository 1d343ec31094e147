"""A pull is one decision: given what the session holds at one instant and who asks, which
plan the caller gets, or why not (docs/agents.md, "Many agents on one session" and "Taking
over a stale plan"). `decide_pull` is pure; `read_pull` reads what it needs in the pull's
transaction, and the use case applies what it decided.
"""

import datetime as dt

import attrs

from nineplan_core.callers import Caller, unnamed_among_several
from nineplan_core.errors import (
    InvalidInputError,
    LeaseLiveError,
    NinePlanError,
    PlanAlreadyActiveError,
    PlanNotFoundError,
    QueueEmptyError,
)
from nineplan_core.journal import heard_ago
from nineplan_core.model import Plan, PlanId, QueueEntry, format_timestamp
from nineplan_core.ports import SessionReader, SessionTx
from nineplan_core.prerequisites import BLOCKED_NAMED, blocked
from nineplan_core.workers import MAIN, Hold, Worker


@attrs.frozen(kw_only=True)
class PullSnapshot:
    """What a pull decides on, read at one instant in its transaction: the time (the Clock),
    every active plan, and the first ready plan of the queue or the plan asked to be taken
    over. Its size is the number of active plans, never the queue's, but when plans are
    queued and none is ready (then the queue is read, to say what they wait for)."""

    now: dt.datetime
    #: Every active plan of the session, whoever holds it, by id.
    active: tuple[Plan, ...]
    #: The first ready plan of the queue (None: none is ready, or not read because a
    #: take-over was asked for or the caller holds a plan already).
    front: Plan | None = None
    #: The plan asked to be taken over, whatever its status (None: no such plan, none asked,
    #: or not read because the caller holds a plan already).
    target: Plan | None = None
    #: How many plans are completed (read when the queue is empty: the refusal says it).
    completed: int = 0
    #: The front of the queue when plans are queued and none is ready (each waits for a plan
    #: not settled; read only then: the refusal names what they wait for), and how many
    #: plans are queued.
    waiting: tuple[QueueEntry, ...] = ()
    queued: int = 0
    #: Whether a worker other than `main` has been named in the session (read only for a
    #: caller that named no worker: it is refused when so, and nothing else is read).
    workers_named: bool = False


@attrs.frozen(kw_only=True)
class Pull:
    """The caller gets `plan`: the front of the queue (still queued: its file's edits are read
    back before it becomes the caller's), or the stale plan it takes over from `taken_from`."""

    plan: Plan
    worker: Worker
    at: dt.datetime
    #: The worker whose stale plan this is (None: a pull from the queue).
    taken_from: Worker | None = None
    #: How long that worker had been silent.
    idle: dt.timedelta = dt.timedelta(0)
    #: The other active plans whose leases had lapsed, the one silent longest first.
    stale_beside: tuple[Plan, ...] = ()
    #: A worker other than `main` was named: the session remembers it.
    name_workers: bool = False

    @property
    def taken(self) -> Plan:
        """The plan as the caller's: pulled from the queue, or taken over, at `at`."""
        if self.taken_from is None:
            return self.plan.pull(worker=self.worker, at=self.at)
        return self.plan.taken_over(worker=self.worker, at=self.at)


@attrs.frozen(kw_only=True)
class Refusal:
    """The pull is refused with `error`; what the call still keeps commits before it is
    answered: the caller's own plan heard from (`renewed`), the session's workers mark."""

    error: NinePlanError
    renewed: Plan | None = None
    name_workers: bool = False


def decide_pull(
    snapshot: PullSnapshot, caller: Caller, take_over: PlanId | None, lease: dt.timedelta
) -> Pull | Refusal:
    """Who gets what when `caller` pulls (with `take_over`, that stale plan instead).

    A caller holding a plan is refused (PlanAlreadyActiveError, its lease renewed), or told it
    is its own (InvalidInputError) when it asks to take that one over. A take-over of an unknown
    plan is PlanNotFoundError; of a plan not active, InvalidInputError; of a live lease,
    LeaseLiveError (saying until when). A pull takes the first ready plan in queue order; with
    plans queued and none ready it is QueueBlockedError naming what the front ones wait for;
    from an empty queue, QueueEmptyError naming the plans others still hold. A worker other than `main` named is remembered, on a refusal
    only when it was about a held plan (as a refused pull always kept it). A caller that
    names no worker in a session that has had others named is refused first
    (InvalidInputError naming `worker`).
    """
    if (unnamed := unnamed_among_several(caller, workers_named=snapshot.workers_named)) is not None:
        return Refusal(error=unnamed)
    now, holder = snapshot.now, caller.holder
    named = holder != MAIN
    mine = next((plan for plan in snapshot.active if _holder(plan) == holder), None)
    if mine is not None:
        if mine.id == take_over:
            return Refusal(
                error=InvalidInputError("take_over", f"plan {take_over} is yours already")
            )
        return Refusal(
            error=PlanAlreadyActiveError(
                mine.id,
                holder,
                others=[(p.id, _holder(p)) for p in snapshot.active if p.id != mine.id],
            ),
            renewed=mine.seen(now),
            name_workers=named,
        )
    if take_over is None:
        if snapshot.front is None and snapshot.waiting:
            return Refusal(
                error=blocked(snapshot.waiting, snapshot.queued, snapshot.active, now, lease)
            )
        if snapshot.front is None:
            return Refusal(error=_empty(snapshot, lease))
        return Pull(
            plan=snapshot.front,
            worker=holder,
            at=now,
            stale_beside=_stale_beside(snapshot, snapshot.front.id, lease),
            name_workers=named,
        )
    return _decide_take_over(snapshot, holder, take_over, lease)


def _empty(snapshot: PullSnapshot, lease: dt.timedelta) -> QueueEmptyError:
    """An empty queue, naming the plans others hold and marking the stale ones, which the
    caller could take over."""
    now = snapshot.now
    held = [(plan.id, _holder(plan)) for plan in snapshot.active]
    stale = [
        (plan.id, hold.worker, heard_ago(hold.last_seen, now))
        for plan in snapshot.active
        if (hold := plan.hold) is not None and hold.stale(now, lease)
    ]
    return QueueEmptyError(completed_count=snapshot.completed, held=held, stale=stale)


def _decide_take_over(
    snapshot: PullSnapshot, holder: Worker, take_over: PlanId, lease: dt.timedelta
) -> Pull | Refusal:
    """`holder`, holding no plan, asks to take `take_over` over: refused unless it is an
    active plan whose lease has lapsed."""
    now, named = snapshot.now, holder != MAIN
    target = snapshot.target
    if target is None or target.id != take_over:
        return Refusal(error=PlanNotFoundError(take_over, kind=""))
    if (hold := target.hold) is None:
        reason = f"plan {take_over} is {target.status.value}: only an active plan is taken over"
        return Refusal(error=InvalidInputError("take_over", reason))
    if not hold.stale(now, lease):
        until = hold.lapses_at(lease) or now + lease
        return Refusal(
            error=LeaseLiveError(take_over, hold.worker, format_timestamp(until)),
            name_workers=named,
        )
    return Pull(
        plan=target,
        worker=holder,
        at=now,
        taken_from=hold.worker,
        idle=hold.idle(now),
        stale_beside=_stale_beside(snapshot, target.id, lease),
        name_workers=named,
    )


async def read_pull(
    reader: SessionReader, now: dt.datetime, take_over: PlanId | None, caller: Caller
) -> PullSnapshot:
    """The snapshot a pull by `caller` decides on, read through `reader` (the pull's
    transaction): the active plans, then the plan to take over (found among them when it is
    active) or the front of the queue (and, when that is empty, the completed count). A
    caller that holds a plan is refused whatever the rest holds: nothing more is read; nor
    for a caller that named no worker in a session that has had several."""
    if await unnamed_beside_others(reader, caller):
        return PullSnapshot(now=now, active=(), workers_named=True)
    holder = caller.holder
    active = tuple(await reader.active_plans())
    if any(_holder(plan) == holder for plan in active):
        return PullSnapshot(now=now, active=active)
    if take_over is not None:
        target = next((plan for plan in active if plan.id == take_over), None)
        if target is None:
            target = await reader.plan(take_over)
        return PullSnapshot(now=now, active=active, target=target)
    front = await reader.front_of_queue()
    if front is not None:
        return PullSnapshot(now=now, active=active, front=front)
    tally = await reader.tally()
    waiting = tuple(await reader.queue(BLOCKED_NAMED)) if tally.queued else ()
    return PullSnapshot(
        now=now, active=active, completed=tally.completed, waiting=waiting, queued=tally.queued
    )


async def unnamed_beside_others(reader: SessionReader, caller: Caller) -> bool:
    """Whether `caller` named no worker in a session that has had several named (so a pull,
    defer, complete or discard is refused); the session row is read only for such a call."""
    return not caller.named and (await reader.session()).workers_named


async def held_by(reader: SessionReader, worker: Worker) -> Plan | None:
    """The active plan `worker` holds, if any (read with every active plan: there are few)."""
    return next((plan for plan in await reader.active_plans() if _holder(plan) == worker), None)


async def hear_from(tx: SessionTx, worker: Worker, now: dt.datetime, *, naming: bool) -> None:
    """A worker's call, in `tx`: its active plan's `last_seen` is `now`, and (`naming`: a
    resume, not a read-only state call) a worker other than `main` is remembered as named."""
    if naming and worker != MAIN:
        await tx.name_workers(named=True)
    if (active := await held_by(tx, worker)) is not None:
        await tx.save(active.seen(now))


def _holder(plan: Plan) -> Worker:
    hold = plan.hold
    return MAIN if hold is None else hold.worker


def _stale_beside(snapshot: PullSnapshot, pulled: PlanId, lease: dt.timedelta) -> tuple[Plan, ...]:
    """The active plans other than `pulled` whose leases have lapsed, silent longest first."""
    now = snapshot.now
    holds: list[tuple[Plan, Hold]] = [
        (plan, hold)
        for plan in snapshot.active
        if plan.id != pulled and (hold := plan.hold) is not None and hold.stale(now, lease)
    ]
    return tuple(plan for plan, _ in sorted(holds, key=lambda pair: pair[1].last_seen or now))
