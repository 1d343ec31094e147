"""The agent's pull (from the queue, or a take-over of a stale plan) and the renewal of its
lease: one decision (`pulls.decide_pull`) over one snapshot, applied in the envelope."""

import datetime as dt
import logging

import attrs

from nineplan_core.callers import AGENT, Caller, check_caller
from nineplan_core.copies import refreshed_copy
from nineplan_core.edits import edits_so_far, queued_with_edits
from nineplan_core.errors import WorkersHoldPlansError
from nineplan_core.journal import (
    Actor,
    EventKind,
    EventQuery,
    defer_counts,
    deferrals,
    plan_event,
    readable,
    worker_detail,
)
from nineplan_core.model import SECTION_FIELDS, Plan, PlanId, check_plan_id, is_stuck
from nineplan_core.plan_file import decode, render
from nineplan_core.ports import SessionStore, SessionTx
from nineplan_core.prerequisites import handed_over
from nineplan_core.pulls import Pull, Refusal, decide_pull, held_by, read_pull
from nineplan_core.results import PlacedPlan
from nineplan_core.retries import request
from nineplan_core.service.completing import pull_detail
from nineplan_core.service.envelope import Applied, Envelope, Refused
from nineplan_core.workers import MAIN, check_worker, worker_name

log = logging.getLogger("nineplan.service")

#: An agent's edits stored while it works are journaled at most this often per plan.
EDITS_JOURNALED_EVERY = dt.timedelta(minutes=1)


@attrs.frozen
class Renewal:
    """What a worker's file change did: whether the plan is still its (`held`), and the line
    saying what reading the file back salvaged (for the worker's next call), if anything."""

    held: bool
    salvage: str | None = None


def edited_sections(before: Plan, after: Plan) -> list[str]:
    """The sections (and `notes`) in which `after` differs from `before`."""
    changed = [
        field
        for field in SECTION_FIELDS
        if getattr(after.content, field) != getattr(before.content, field)
    ]
    return changed + (["notes"] if after.notes != before.notes else [])


async def _edit_unjournaled(tx: SessionTx, plan_id: PlanId, now: dt.datetime) -> bool:
    """Whether no `plan_edited` of `plan_id` was journaled in the last minute."""
    query = EventQuery(kinds=frozenset({EventKind.PLAN_EDITED}), plan_id=plan_id, last=1)
    last = readable(await tx.events(query))
    return not last or now - last[-1].at >= EDITS_JOURNALED_EVERY


class Pulling(Envelope):
    """The use cases that give a worker a plan and keep its hold on it, and a person's
    undoing of a session's workers mark."""

    __slots__ = ()

    async def pull_plan(
        self, name: str, *, caller: Caller = AGENT, take_over: str | None = None
    ) -> PlacedPlan:
        """Make the first ready plan of the queue the caller's active plan (`main`'s when it named no
        worker); with `take_over`, that stale plan of another worker instead. One decision
        (`pulls.decide_pull`) over one snapshot read in the pull's transaction; a refusal
        commits what it keeps (the caller's lease renewed, the workers mark), then is raised.

        Raises:
            PlanAlreadyActiveError: the worker holds a plan (LeaseLiveError: not stale).
            QueueBlockedError: plans are queued, each waiting for a plan not yet settled.
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
                await tx.name_workers(named=True)
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
        prerequisites = await handed_over(tx, plan)
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
                prerequisites=prerequisites,
            ),
            events=[
                plan_event(now, who, EventKind.PLAN_PULLED, plan, **where, **pull_detail(plan))
            ],
            said="plan pulled",
            about={"plan_id": plan.id},
        )

    async def renew_lease(self, name: str, worker: str, plan_id: str) -> "Renewal":
        """`worker`'s plan `plan_id` was just worked on (its file changed): the file is read
        back as complete reads it (tolerantly, salvaging what fits no section; a file that
        cannot be read as a plan is copied to recovered/ and the stored plan kept) and its
        edits are stored in the same write that makes `last_seen` now, so that a take-over
        elsewhere, history and the web view see the notes up to this moment. The journal
        gets `plan_edited` (actor agent) when the edits changed the plan and no such event
        of the plan is under a minute old, never for a bare renewal. Nothing is written, and
        `held` is False, when that plan is no longer the worker's active plan.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        holder, wanted = worker_name(check_worker(worker)), check_plan_id(plan_id)

        async def renew(store: SessionStore, tx: SessionTx) -> Applied[Renewal]:
            active = await held_by(tx, holder)
            if active is None or active.id != wanted:
                return Applied(result=Renewal(held=False), events=[], said="lease ended")
            now = self.clock()
            edited, salvage = await edits_so_far(
                tx, store.name, active, Actor.AGENT,
                clock=lambda: now, max_section_chars=self.limits.max_text_chars,
            )  # fmt: skip
            await tx.save(edited.seen(now))
            changed = edited_sections(active, edited)
            events = []
            if changed and await _edit_unjournaled(tx, wanted, now):
                detail = {"sections": changed} | worker_detail(holder)
                events.append(plan_event(now, Actor.AGENT, EventKind.PLAN_EDITED, edited, **detail))
            return Applied(
                result=Renewal(held=True, salvage=salvage),
                events=events,
                said="lease renewed" + (", edits stored" if changed else ""),
                about={"plan_id": wanted, "worker": holder},
            )

        return await self._apply(name, renew, reads_file=True)

    async def forget_workers(self, name: str) -> None:
        """Forget that workers other than `main` were named in the session (a person's
        `nineplan workers NAME --forget`): a call that names no worker is `main`'s again
        instead of refused, and the texts are a lone agent's. Not a journal event.

        Raises:
            WorkersHoldPlansError: a worker other than `main` holds a plan.
            InvalidInputError, SessionNotFoundError, StorageError.
        """

        async def forget(store: SessionStore, tx: SessionTx) -> Applied[None]:
            held = [(p.id, p.hold.worker) for p in await tx.active_plans() if p.hold is not None]
            if others := [(plan_id, worker) for plan_id, worker in held if worker != MAIN]:
                raise WorkersHoldPlansError(store.name, others)
            await tx.name_workers(named=False)
            return Applied(result=None, events=[], said="workers forgotten by a person")

        await self._apply(name, forget)

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
                prerequisites=await handed_over(tx, taken),
            ),
            events=[event],
            said="plan taken over",
            about={"plan_id": plan_id, "from": old, "to": decided.worker},
        )
