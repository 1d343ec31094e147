"""The agent's pull (from the queue, or a take-over of a stale plan) and the renewal of its
lease: one decision (`pulls.decide_pull`) over one snapshot, applied in the envelope."""

import datetime as dt
import logging

import attrs

from nineplan_core.callers import AGENT, Caller, check_caller
from nineplan_core.copies import refreshed_copy
from nineplan_core.edits import queued_with_edits
from nineplan_core.journal import (
    Actor,
    EventKind,
    defer_counts,
    deferrals,
    plan_event,
    worker_detail,
)
from nineplan_core.model import (
    check_plan_id,
    check_session_name,
    is_stuck,
)
from nineplan_core.plan_file import decode, render
from nineplan_core.ports import SessionStore, SessionTx
from nineplan_core.pulls import Pull, Refusal, decide_pull, held_by, read_pull
from nineplan_core.results import PlacedPlan
from nineplan_core.retries import request
from nineplan_core.service.envelope import Applied, Envelope, Refused
from nineplan_core.workers import MAIN, check_worker, worker_name

log = logging.getLogger("nineplan.service")


class Pulling(Envelope):
    """The use cases that give a worker a plan and keep its hold on it."""

    __slots__ = ()

    async def pull_plan(
        self, name: str, *, caller: Caller = AGENT, take_over: str | None = None
    ) -> PlacedPlan:
        """Make the front of the queue the caller's active plan (`main`'s when it named no
        worker); with `take_over`, that stale plan of another worker instead. One decision
        (`pulls.decide_pull`) over one snapshot read in the pull's transaction; a refusal
        commits what it keeps (the caller's lease renewed, the workers mark), then is raised.

        Raises:
            PlanAlreadyActiveError: the worker holds a plan (LeaseLiveError: not stale).
            QueueEmptyError: nothing is queued (the task is complete).
            PlanNotFoundError, InvalidInputError, SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        taking = None if take_over is None else check_plan_id(take_over, "take_over")
        chosen = {} if taking is None else {"take_over": taking}  # as before take-overs
        call = request(caller.request_id, PlacedPlan, "pull_plan", worker=caller.holder, **chosen)

        async def pull(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan] | Refused:
            snapshot = await read_pull(tx, self.clock(), taking, caller)
            decided = decide_pull(snapshot, caller, taking, self.lease)
            if decided.name_workers:
                await tx.name_workers()
            if isinstance(decided, Refusal):
                if decided.renewed is not None:
                    await tx.save(decided.renewed)
                return Refused(decided.error)
            if decided.taken_from is not None:
                return await self._take_over(store, tx, decided, caller.actor)
            return await self._pull_front(store, tx, decided, caller.actor)

        return await self._apply(name, pull, retry=call, refresh=True)

    async def _pull_front(
        self, store: SessionStore, tx: SessionTx, decided: Pull, who: Actor
    ) -> Applied[PlacedPlan]:
        """The front of the queue becomes the caller's active plan, its file's edits read back."""
        now = decided.at

        def clock() -> dt.datetime:
            return now

        # A file this machine wrote before the database changed elsewhere is brought up to
        # it, then its edits read back (stored sections win where it cannot tell).
        queued = decided.plan
        data = await tx.files.read(queued.id)  # the one read: what follows takes these bytes
        refreshed, data, merged = await refreshed_copy(tx, queued, data, who, clock)
        edited, text, salvage = await queued_with_edits(
            tx,
            store.name,
            refreshed,
            data,
            who,
            clock=clock,
            max_section_chars=self.limits.max_text_chars,
            stale=store.files_mirror and await tx.files.written(queued.id) is None,
        )
        plan = attrs.evolve(decided, plan=edited).taken
        await tx.save(plan)
        deferred = defer_counts(await tx.events(deferrals([plan.id])))[plan.id]
        where = ({"machine": store.machine} if store.machine else {}) | worker_detail(
            decided.worker
        )
        return Applied(
            result=PlacedPlan(
                plan=plan,
                path=store.plan_path(plan.id),
                text=text,
                salvage="\n".join(line for line in (merged, salvage) if line) or None,
                defer_count=deferred,
                stuck=is_stuck(deferred, self.stuck_defers),
                stale_beside=decided.stale_beside,
            ),
            events=[plan_event(now, who, EventKind.PLAN_PULLED, plan, **where)],
            said="plan pulled",
            about={"plan_id": plan.id},
        )

    async def renew_lease(self, name: str, worker: str, plan_id: str) -> bool:
        """`worker`'s plan `plan_id` was just worked on (its file changed): its `last_seen`
        is now (the Clock port). Not a journal event. False, and nothing written, when that
        plan is no longer the worker's active plan (completed, deferred, taken over).

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        holder, wanted = worker_name(check_worker(worker)), check_plan_id(plan_id)
        async with store.transaction() as tx:
            active = await held_by(tx, holder)
            if active is None or active.id != wanted:
                return False
            await tx.save(active.seen(self.clock()))
        return True

    async def _take_over(
        self, store: SessionStore, tx: SessionTx, decided: Pull, who: Actor
    ) -> Applied[PlacedPlan]:
        """The stale plan becomes the caller's; its file is not rewritten (the new worker goes
        on with everything the old one wrote), `pulled_at` is now."""
        now, old, plan_id = decided.at, decided.taken_from or MAIN, decided.plan.id
        taken = decided.taken
        await tx.save(taken)
        data = await tx.files.read(plan_id)
        plan = decided.plan
        text = decode(data)[0] if data and data.strip() else render(plan.content, plan.notes)
        deferred = defer_counts(await tx.events(deferrals([plan_id])))[plan_id]
        where = {"machine": store.machine} if store.machine else {}
        idle = round(decided.idle.total_seconds() / 60, 1)
        event = plan_event(
            now, who, EventKind.PLAN_TAKEN_OVER, taken, **{"from": old, "to": decided.worker},
            idle_minutes=idle, **where,
        )  # fmt: skip
        return Applied(
            result=PlacedPlan(
                plan=taken,
                path=store.plan_path(plan_id),
                text=text,
                defer_count=deferred,
                stuck=is_stuck(deferred, self.stuck_defers),
                taken_from=old,
                stale_beside=decided.stale_beside,
            ),
            events=[event],
            said="plan taken over",
            about={"plan_id": plan_id, "from": old, "to": decided.worker},
        )
