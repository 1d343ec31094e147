"""The agent's commands: create or resume a session, and add, pull, defer, complete or
discard a plan. Each change runs in the envelope (`Envelope._apply`)."""

import logging

import attrs

from nineplan_core.callers import AGENT, SEVERAL_WORKERS, Caller, check_caller
from nineplan_core.copies import kept_lines, render_if_never_here
from nineplan_core.edits import active_with_edits
from nineplan_core.errors import InvalidInputError
from nineplan_core.journal import (
    EventKind,
    plan_event,
    worker_detail,
)
from nineplan_core.model import (
    Plan,
    PlanId,
    Position,
    check_plan_id,
    check_position,
    check_session_name,
    check_text,
)
from nineplan_core.plan_file import render
from nineplan_core.ports import SessionStore, SessionTx
from nineplan_core.pulls import unnamed_beside_others
from nineplan_core.queue import insert_position, insert_rank
from nineplan_core.reconcile import active_file_notices, reconcile_level
from nineplan_core.results import Completion, Discarded, PlacedPlan, SessionState
from nineplan_core.retries import request
from nineplan_core.service.checks import (
    MAX_WORKSPACE_CHARS,
    check_notes,
    check_task_description,
)
from nineplan_core.service.completing import Completing
from nineplan_core.service.envelope import Applied
from nineplan_core.workers import MAIN, stored_worker

log = logging.getLogger("nineplan.service")


class Commands(Completing):
    """The use cases an agent calls (through MCP, or an embedding program)."""

    __slots__ = ()

    async def create_session(
        self,
        task_description: str | None = None,
        *,
        caller: Caller = AGENT,
        workspace: str | None = None,
    ) -> SessionState:
        """Create a session with a fresh three-word name.

        `workspace` is the folder the session belongs to (named by the call, else found by the
        way in: docs/clients.md), recorded for `nineplan prime`; it is not part of a retry's
        fingerprint (a retry returns the first session, with the first call's folder).
        A repeat with the same `request_id` returns the session the first call created.

        Raises:
            InvalidInputError: task_description or workspace is too long or contains NUL;
                request_id reused.
            StorageError: the session could not be created.
        """
        caller = check_caller(caller)
        if workspace is not None:
            check_text("workspace", workspace, max_chars=MAX_WORKSPACE_CHARS)
        task_description = check_task_description(task_description, self.limits)
        call = request(
            caller.request_id, str, "create_session", worker=MAIN, task_description=task_description
        )  # a session is created for every worker: the id alone is the key
        if call is not None and (created := await self._created(call)) is not None:
            return await self._state(await self.catalog.open(check_session_name(created)), MAIN)
        store = await self._new_session(task_description, workspace, caller.actor)
        if call is not None:
            await self.catalog.creations.remember(
                call.worker, call.id, call.fingerprint, store.name
            )
        log.info("session created", extra={"session": store.name})
        return await self._state(store, MAIN)

    async def resume_session(self, name: str, *, caller: Caller = AGENT) -> SessionState:
        """The state of a session an agent picks back up, with the caller's active plan (a
        worker named is heard from: its plan's `last_seen`); the first resume in a process
        reconciles its files (re-renders missing or empty ones, moves strays aside).

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        session, who = check_session_name(name), caller.holder
        store = await self.catalog.open(session)
        heard = who if caller.named else None
        if session in self._reconciled and not store.files_mirror:
            if heard is not None:  # a bookkeeping write; the state is read in a snapshot
                await self._heard_from(store, heard, naming=True)
            return await self._state(store, who)
        # A first resume (or a mirror to refresh) reconciles, and reads the state on the way,
        # hearing from the worker in that one transaction.
        repairs, state = await self._reconcile(store, level=reconcile_level(store), heard=heard)
        self._reconciled.add(session)
        state = self._for_worker(state, who)
        return attrs.evolve(
            state,
            kept=kept_lines(repairs),
            notices=active_file_notices(repairs, state.active_plan),
        )

    async def defer_plan(
        self,
        name: str,
        reason: str,
        position: Position | str = Position.BACK,
        *,
        notes: str | None = None,
        caller: Caller = AGENT,
        plan_id: str | None = None,
    ) -> PlacedPlan:
        """Put the caller's active plan back in the queue, noting why; file edits kept, notes after.

        Raises:
            NoActivePlanError, InvalidInputError, SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        check_text("reason", reason, max_chars=self.limits.max_text_chars)
        where = check_position(position)
        check_notes(notes)
        holder, mine = caller.holder, _plan_named(plan_id)
        call = request(
            caller.request_id,
            PlacedPlan,
            "defer_plan",
            worker=holder,
            reason=reason,
            position=where,
            notes=notes,
            **_naming(mine),
        )

        async def defer(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            active, salvage = await self._active_with_edits(tx, store, notes, caller, mine)
            tally = await tx.tally()
            plan = active.defer(
                reason=reason.strip(), position=insert_position(tally, where), at=self.clock()
            )
            await tx.save(plan)
            await tx.files.write(plan.id, render(plan.content, plan.notes))
            rank = insert_rank(tally, where)
            deferred = plan_event(
                self.clock(),
                caller.actor,
                EventKind.PLAN_DEFERRED,
                plan,
                position=where,
                rank=rank,
                reason=reason.strip(),
                **worker_detail(holder),
            )
            return Applied(
                result=PlacedPlan(
                    plan=plan, path=store.plan_path(plan.id), rank=rank, salvage=salvage
                ),
                events=[deferred],
                said="plan deferred",
                about={"plan_id": plan.id, "rank": rank},
            )

        return await self._apply(name, defer, retry=call, reads_file=True)

    async def complete_plan(
        self,
        name: str,
        outcome: str,
        *,
        notes: str | None = None,
        caller: Caller = AGENT,
        plan_id: str | None = None,
        verdicts: object = None,
    ) -> Completion:
        """Finish the caller's active plan: its outcome goes into searchable history, its file
        goes away (its edits read back first, `notes` appended after them). `verdicts`
        answer its success criteria as stored then (`[{criterion, status, evidence}]`);
        unmet ones become a follow-up plan at the front of the queue (docs/agents.md,
        "Done with evidence").

        Raises:
            NoActivePlanError, SessionNotFoundError, StorageError.
            InvalidInputError: a bad argument; a verdict that breaks a rule (naming
                `verdicts[i]`); under NINEPLAN_VERDICTS=require, criteria without one.
        """
        caller = check_caller(caller)
        check_text("outcome", outcome, max_chars=self.limits.max_text_chars)
        check_notes(notes)
        holder, mine = caller.holder, _plan_named(plan_id)
        call = request(
            caller.request_id,
            Completion,
            "complete_plan",
            worker=holder,
            outcome=outcome,
            notes=notes,
            **_naming(mine),
            **({} if verdicts is None else {"verdicts": verdicts}),
        )

        async def complete(store: SessionStore, tx: SessionTx) -> Applied[Completion]:
            active, salvage = await self._active_with_edits(tx, store, notes, caller, mine)
            done = await self._completed(tx, active, outcome, verdicts, caller.actor, holder)
            return attrs.evolve(done, result=attrs.evolve(done.result, salvage=salvage))

        return await self._apply(name, complete, retry=call, reads_file=True)

    async def discard_plan(
        self,
        name: str,
        reason: str,
        *,
        notes: str | None = None,
        caller: Caller = AGENT,
        plan_id: str | None = None,
    ) -> Discarded:
        """Abandon the caller's active plan; it is kept (file edits and `notes` too) but never searchable.

        Raises:
            NoActivePlanError, InvalidInputError, SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        check_text("reason", reason, max_chars=self.limits.max_text_chars)
        check_notes(notes)
        holder, mine = caller.holder, _plan_named(plan_id)
        call = request(
            caller.request_id,
            Discarded,
            "discard_plan",
            worker=holder,
            reason=reason,
            notes=notes,
            **_naming(mine),
        )

        async def discard(store: SessionStore, tx: SessionTx) -> Applied[Discarded]:
            active, salvage = await self._active_with_edits(tx, store, notes, caller, mine)
            plan = active.discard(reason=reason.strip(), at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            discarded = plan_event(
                self.clock(),
                caller.actor,
                EventKind.PLAN_DISCARDED,
                plan,
                reason=reason.strip(),
                **worker_detail(holder),
            )
            return Applied(
                result=Discarded(
                    plan=plan, tally=await tx.tally(), salvage=salvage, held=await _held(tx)
                ),
                events=[discarded],
                said="plan discarded",
                about={"plan_id": plan.id},
            )

        return await self._apply(name, discard, retry=call, reads_file=True)

    async def _active_with_edits(
        self,
        tx: SessionTx,
        store: SessionStore,
        notes: str | None,
        caller: Caller,
        plan_id: PlanId | None,
    ) -> tuple[Plan, str | None]:
        """The caller's active plan (which must be `plan_id` when the call named one) with the
        agent's file edits read back, then `notes`.

        Raises:
            InvalidInputError: the call named no worker in a session that has had several.
            NoActivePlanError, PlanNotFoundError: the caller holds no plan, or not `plan_id`.
        """
        if await unnamed_beside_others(tx, caller):
            raise InvalidInputError("worker", SEVERAL_WORKERS)
        if store.files_mirror:
            await render_if_never_here(tx, caller.holder)
        return await active_with_edits(
            tx,
            store.name,
            notes,
            caller.actor,
            clock=self.clock,
            max_section_chars=self.limits.max_text_chars,
            worker=caller.holder,
            plan_id=plan_id,
        )


async def _held(tx: SessionTx) -> tuple[tuple[str, str], ...]:
    """The plans still active in `tx` (after a finish saved), each with its worker."""
    return tuple((plan.id, stored_worker(plan.worker)) for plan in await tx.active_plans())


def _plan_named(plan_id: str | None) -> PlanId | None:
    """The plan a defer, complete or discard named (None: the caller's active plan, whichever).

    Raises:
        InvalidInputError: not a plan id.
    """
    return None if plan_id is None else check_plan_id(plan_id, "plan_id")


def _naming(plan_id: PlanId | None) -> dict[str, str]:
    """`plan_id` among a retry's arguments only when given, so a request remembered before the
    argument existed is still the same request."""
    return {} if plan_id is None else {"plan_id": plan_id}
