"""A person's steering (the web view, the CLI): import plans, move, edit or drop a queued
plan, and repair a session's files. The active plan is the agent's: a person never changes it here."""

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import cast

import attrs

from nineplan_core.callers import check_actor
from nineplan_core.edits import with_edits
from nineplan_core.errors import (
    InvalidInputError,
    PlanChangedError,
    PlanHeldByAgentError,
    PlanNotFoundError,
    QueueFullError,
)
from nineplan_core.journal import Actor, EventKind, NewEvent, plan_event
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import (
    SECTION_FIELDS,
    Plan,
    PlanId,
    Position,
    check_plan_id,
    check_position,
    check_session_name,
    check_text,
)
from nineplan_core.plan_file import PlanText, render
from nineplan_core.ports import SessionStore, SessionTx
from nineplan_core.queue import insert_position, insert_rank, make_room, position_between
from nineplan_core.results import Discarded, PlacedPlan, Repair
from nineplan_core.revisions import changed_since, check_revision
from nineplan_core.service.checks import check_changes, check_imported
from nineplan_core.service.envelope import Applied, Envelope
from nineplan_core.workers import stored_worker


class Steering(Envelope):
    """The use cases a person calls to steer a session's queue."""

    __slots__ = ()

    async def import_plans(
        self,
        name: str,
        plans: Sequence[PlanText],
        position: Position | str = Position.BACK,
        *,
        actor: Actor | str = Actor.PERSON,
    ) -> list[PlacedPlan]:
        """Add many plans in one transaction, all or none, keeping their order.

        At the back they are pulled in the order given after the plans already queued; at the
        front they are pulled in the order given before them. Each plan's file is written.

        Raises:
            InvalidInputError: a plan is invalid (its index is in the message); nothing is added.
            QueueFullError: the queue cannot take them all; nothing is added.
            SessionNotFoundError, StorageError.
        """
        where = check_position(position)
        who = check_actor(actor)
        for index, text in enumerate(plans, start=1):
            check_imported(text, f"(plan {index} of {len(plans)})", self.limits)

        async def import_all(store: SessionStore, tx: SessionTx) -> Applied[list[PlacedPlan]]:
            tally = await tx.tally()
            if tally.queued + len(plans) > self.limits.max_queue:
                raise QueueFullError(self.limits.max_queue)
            first = 1 if where is Position.FRONT else tally.queued + 1
            # At the front, the last plan goes in first so that the first ends up first.
            order = list(plans) if where is Position.BACK else list(reversed(plans))
            placed, events = [], []
            for text in order:
                plan, added = await self._import_one(tx, text, where, who)
                events.append(added)
                placed.append(PlacedPlan(plan=plan, path=store.plan_path(plan.id)))
            if where is Position.FRONT:
                placed.reverse()
            ranked = [attrs.evolve(p, rank=first + i) for i, p in enumerate(placed)]
            return Applied(
                result=ranked, events=events, said="plans imported", about={"count": len(ranked)}
            )

        return await self._apply(name, import_all)

    async def move_plan(
        self,
        name: str,
        plan_id: str,
        position: Position | str | None = None,
        *,
        before: str | None = None,
        actor: Actor | str = Actor.PERSON,
    ) -> PlacedPlan:
        """Move a queued plan to the front or the back of the queue, or `before` another
        queued plan (give one of the two); its file is unchanged.

        Before another plan it takes a free stored position between that plan and the one
        ahead of it, or, when none is free, the shorter side of the queue is renumbered in the
        same transaction (O(n): a person's rare move; adds and defers stay O(1)).

        Raises:
            PlanHeldByAgentError: the plan is the active one (only the agent changes it).
            PlanNotFoundError: no queued plan with that id, or none with the id `before` names.
            InvalidInputError: both or neither of `position` and `before`, or `before` is the
                plan itself; SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        who = check_actor(actor)
        if (position is None) == (before is None):
            raise InvalidInputError(
                "before",
                "give either a position ('front' or 'back') or before (a queued plan's id), "
                + ("not both" if before is not None else "not neither"),
            )
        if before is not None:
            ahead_of = check_plan_id(before, "before")
            if ahead_of == checked:
                raise InvalidInputError("before", "is the plan being moved; name another plan")
            return await self._apply(name, self._move_before(checked, ahead_of, who))
        where = check_position(cast("str", position))

        async def move(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            tally = await tx.tally()
            queued = await queued_plan(tx, checked)
            plan = queued.move(position=insert_position(tally, where))
            await tx.save(plan)
            rank = 1 if where is Position.FRONT else tally.queued
            return self._moved(store, plan, rank, who, position=where)

        return await self._apply(name, move)

    def _move_before(
        self, plan_id: PlanId, ahead_of: PlanId, who: Actor
    ) -> Callable[[SessionStore, SessionTx], Awaitable[Applied[PlacedPlan]]]:
        """The change that moves queued `plan_id` just before queued `ahead_of`."""

        async def move(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            queued = await queued_plan(tx, plan_id)
            target = await tx.plan(ahead_of)
            if target is None or target.status is not PlanStatus.QUEUED or target.position is None:
                raise PlanNotFoundError(ahead_of, kind="queued")
            ahead, count = await tx.ahead_of(target.position, plan_id)
            free = position_between(ahead, target.position)
            if free is None:  # no integer between the two: one side of the queue makes room
                free = await _make_room(tx, plan_id, target.position)
            plan = queued.move(position=free)
            await tx.save(plan)
            return self._moved(store, plan, count + 1, who, before=ahead_of)

        return move

    def _moved(
        self, store: SessionStore, plan: Plan, rank: int, who: Actor, **where: object
    ) -> Applied[PlacedPlan]:
        """What a move did: the plan at `rank`, journalled `plan_moved` with `where` (its
        `position`, or the plan it is now `before`) and its rank."""
        moved = plan_event(self.clock(), who, EventKind.PLAN_MOVED, plan, **where, rank=rank)
        return Applied(
            result=PlacedPlan(plan=plan, path=store.plan_path(plan.id), rank=rank),
            events=[moved],
            said="plan moved by a person",
            about={"plan_id": plan.id, "rank": rank},
        )

    async def edit_plan(
        self,
        name: str,
        plan_id: str,
        changes: Mapping[str, str],
        *,
        revision: str | None = None,
        actor: Actor | str = Actor.PERSON,
    ) -> PlacedPlan:
        """Change sections of a queued plan (a person's call): its file's edits are read back
        first, as drop reads them, then the sections in `changes` replace theirs and the file
        is rendered again. With `revision` (`plan_revision` of the copy the person edited), an
        edit of a plan that changed since is refused, naming what changed; nothing changes.

        Raises:
            InvalidInputError: no section, a section that is not one, a blank required one,
                a text over the limit, a malformed revision.
            PlanChangedError: the plan changed since `revision`.
            PlanHeldByAgentError: the plan is the active one (only the agent changes it).
            PlanNotFoundError: no queued plan with that id.
            SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        sections = check_changes(changes, self.limits)
        if revision is not None:
            check_revision(revision)
        who = check_actor(actor)

        async def edit(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            queued, salvage = await self._with_edits(store, tx, await queued_plan(tx, checked), who)
            plan, changed = _edited(queued, sections, revision)
            await tx.save(plan)
            await tx.files.write(plan.id, render(plan.content, plan.notes))
            edited = plan_event(self.clock(), who, EventKind.PLAN_EDITED, plan, sections=changed)
            rank = (await tx.ahead_of(queued.position or 0, plan.id))[1] + 1
            return Applied(
                result=PlacedPlan(
                    plan=plan, path=store.plan_path(plan.id), rank=rank, salvage=salvage
                ),
                events=[edited],
                said="plan edited by a person",
                about={"plan_id": plan.id, "sections": changed},
            )

        return await self._apply(name, edit, refresh=True)

    async def drop_plan(
        self, name: str, plan_id: str, reason: str, *, actor: Actor | str = Actor.PERSON
    ) -> Discarded:
        """Discard a queued plan, noting why (a person's call); edits in its file are kept.

        Raises:
            PlanHeldByAgentError: the plan is the active one (only the agent changes it).
            PlanNotFoundError: no queued plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        check_text("reason", reason, max_chars=self.limits.max_text_chars)
        who = check_actor(actor)

        async def drop(store: SessionStore, tx: SessionTx) -> Applied[Discarded]:
            queued, _ = await self._with_edits(store, tx, await queued_plan(tx, checked), who)
            plan = queued.drop(reason=reason.strip(), at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            dropped = plan_event(
                self.clock(), who, EventKind.PLAN_DISCARDED, plan, reason=reason.strip()
            )
            return Applied(
                result=Discarded(plan=plan, tally=await tx.tally()),
                events=[dropped],
                said="plan dropped by a person",
                about={"plan_id": plan.id},
            )

        return await self._apply(name, drop)

    async def release_plan(
        self, name: str, plan_id: str, *, actor: Actor | str = Actor.PERSON
    ) -> PlacedPlan:
        """Put any active plan back at the front of the queue (a person's call): its file's
        edits are read back into the plan where the file is on this machine, and the file is
        left as it is. The worker's next call is told a person released it.

        Raises:
            PlanNotFoundError: no active plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        who = check_actor(actor)

        async def release(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            active = await tx.plan(checked)
            if active is None or active.status is not PlanStatus.ACTIVE:
                raise PlanNotFoundError(checked, kind="active")
            salvage = None
            # A shared database's plan pulled on another machine: no file here to read back.
            if not store.files_mirror or await tx.files.written(checked) is not None:
                active, salvage = await self._with_edits(store, tx, active, who)
            worker = stored_worker(active.worker)
            plan = active.release(position=insert_position(await tx.tally(), Position.FRONT))
            await tx.save(plan)
            released = plan_event(
                self.clock(), who, EventKind.PLAN_RELEASED, plan, worker=worker,
                position=Position.FRONT, rank=1,
            )  # fmt: skip
            return Applied(
                result=PlacedPlan(
                    plan=plan, path=store.plan_path(plan.id), rank=1, salvage=salvage
                ),
                events=[released],
                said="plan released by a person",
                about={"plan_id": plan.id, "worker": worker},
            )

        return await self._apply(name, release, reads_file=True)

    async def _with_edits(
        self, store: SessionStore, tx: SessionTx, plan: Plan, who: Actor
    ) -> tuple[Plan, str | None]:
        """`plan` with its file's edits read back (a person's edit, drop or release), and the
        line saying what was salvaged, if anything."""
        return await with_edits(
            tx,
            store.name,
            plan,
            None,
            who,
            clock=self.clock,
            max_section_chars=self.limits.max_text_chars,
        )

    async def repair_session(self, name: str) -> list[Repair]:
        """Bring the plan files back in line with the database: what opening a session does,
        and an empty queued plan's file re-rendered too (this pass reads every live file).

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        session = check_session_name(name)
        store = await self.catalog.open(session)
        # Asked for, and each repair is in the result: news, not a warning.
        repairs, _ = await self._reconcile(store, logging.INFO, thorough=True)
        self._reconciled.add(session)
        return repairs

    async def _import_one(
        self, tx: SessionTx, text: PlanText, where: Position, who: Actor
    ) -> tuple[Plan, NewEvent]:
        """Store one imported plan (its notes too) and write its file; its `plan_added`."""
        tally = await tx.tally()
        plan = await self._insert(tx, text.content, insert_position(tally, where))
        if text.notes:
            plan = attrs.evolve(plan, notes=text.notes)
            await tx.save(plan)
        await tx.files.write(plan.id, render(text.content, plan.notes))
        rank = insert_rank(tally, where)
        return plan, plan_event(
            plan.created_at, who, EventKind.PLAN_ADDED, plan, position=where, rank=rank
        )


def _edited(
    queued: Plan, sections: Mapping[str, str], revision: str | None
) -> tuple[Plan, list[str]]:
    """`queued` with `sections` in place of its own, and the sections that changed.

    Raises:
        PlanChangedError: `queued` is no longer the plan of `revision`.
        InvalidInputError: `revision` is not a revision.
    """
    if revision is not None and (stale := changed_since(revision, queued.content)):
        raise PlanChangedError(queued.id, stale)
    content = attrs.evolve(queued.content, **sections)
    changed = [
        field
        for field in SECTION_FIELDS
        if getattr(content, field) != getattr(queued.content, field)
    ]
    return queued.with_edits(content, queued.notes), changed


async def _make_room(tx: SessionTx, moving: PlanId, target: int) -> int:
    """Renumber the shorter side of the full gap before the plan at `target` (`make_room`,
    in one write) and return the free position in it for the plan `moving`."""
    rows = sorted(
        (row for row in await tx.plan_rows() if row.status is PlanStatus.QUEUED),
        key=lambda row: row.position or 0,
    )
    held: dict[str, int] = {row.id: row.position or 0 for row in rows}
    order = [row.id for row in rows if row.id != moving]
    ahead = [plan_id for plan_id in order if held[plan_id] < target]
    behind = [plan_id for plan_id in order if held[plan_id] >= target]
    fresh = make_room(ahead, behind, min(held.values()), max(held.values()))
    await tx.renumber({PlanId(plan_id): position for plan_id, position in fresh.items()})
    now: dict[str, int] = {**held, **fresh}
    # make_room leaves GAP or more between the two sides: the middle is free.
    return (now[ahead[-1]] + now[behind[0]]) // 2


async def queued_plan(tx: SessionTx, plan_id: PlanId) -> Plan:
    """A queued plan a person may steer; the active plan is the agent's."""
    plan = await tx.plan(plan_id)
    if plan is not None and plan.status is PlanStatus.ACTIVE:
        raise PlanHeldByAgentError(plan_id)
    if plan is None or plan.status is not PlanStatus.QUEUED:
        raise PlanNotFoundError(plan_id, kind="queued")
    return plan
