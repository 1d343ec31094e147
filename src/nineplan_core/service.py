"""The use cases: one async method per operation an agent or a person can ask for.

A change runs in `NinePlan._apply`, the one envelope: check the session name, open the
session (reconciled once per process), replay a repeated request, make the change in one
transaction, journal it, remember its result for a retry, and log it.
"""

import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

import attrs

from nineplan_core.errors import (
    DatabaseError,
    FileSystemError,
    InvalidInputError,
    NinePlanError,
    NoActivePlanError,
    PlanAlreadyActiveError,
    PlanHeldByAgentError,
    PlanNotFoundError,
    QueueEmptyError,
    QueueFullError,
    SessionExistsError,
)
from nineplan_core.history import search_terms
from nineplan_core.invariants import check
from nineplan_core.journal import (
    Actor,
    Event,
    EventKind,
    EventQuery,
    NewEvent,
    UnreadableEvent,
    defer_counts,
    deferrals,
    excerpt,
    journal_issues,
    last_pull,
    pulled_at,
    reminder_line,
)
from nineplan_core.lifecycle import LIVE, PlanStatus
from nineplan_core.model import (
    DEFAULT_LIMITS,
    STUCK_DEFERS,
    Limits,
    Plan,
    PlanContent,
    PlanId,
    Position,
    Session,
    SessionName,
    check_plan_id,
    check_position,
    check_session_name,
    check_text,
    check_type,
    file_name,
    is_stuck,
)
from nineplan_core.plan_file import (
    MAX_NOTES_CHARS,
    PlanText,
    decode,
    read_back,
    render,
    salvage_line,
    unreadable,
)
from nineplan_core.ports import (
    Clock,
    PlanIds,
    SessionCatalog,
    SessionNames,
    SessionStore,
    SessionTx,
)
from nineplan_core.queue import insert_position, insert_rank
from nineplan_core.reconcile import reconcile, reconcile_level, state_of
from nineplan_core.results import (
    Completion,
    Discarded,
    HistoryMatch,
    PlacedPlan,
    Repair,
    SessionState,
    SessionSummary,
    ValidationReport,
)
from nineplan_core.retries import Request, check_replay, replayed, request

log = logging.getLogger("nineplan.service")
T = TypeVar("T")

_ATTEMPTS = 20
#: A workspace is a folder path; beyond this it is not one a file system gives.
MAX_WORKSPACE_CHARS = 4096


@attrs.frozen(kw_only=True)
class Applied(Generic[T]):
    """What a change did: its result, the journal events that record it, and its log line."""

    result: T
    events: list[NewEvent]
    said: str
    #: What the log line adds to the session name (the plan id, its rank).
    about: dict[str, object] = attrs.field(factory=dict)


#: A change inside the envelope: given the open session and its transaction, do the work.
Change = Callable[[SessionStore, SessionTx], Awaitable[Applied[T]]]


@attrs.define
class NinePlan:
    """nineplan's use cases over a session catalog.

    Every method validates its input before it touches storage and raises only
    NinePlanError subclasses. Mutations run in one transaction per call.
    """

    catalog: SessionCatalog
    clock: Clock
    plan_ids: PlanIds
    session_names: SessionNames
    limits: Limits = DEFAULT_LIMITS
    #: A plan deferred this many times or more is stuck (NINEPLAN_STUCK_DEFERS).
    stuck_defers: int = STUCK_DEFERS
    _reconciled: set[SessionName] = attrs.field(factory=set, init=False)

    # -- sessions ------------------------------------------------------------------

    async def create_session(
        self,
        task_description: str | None = None,
        *,
        request_id: str | None = None,
        workspace: str | None = None,
        actor: Actor | str = Actor.AGENT,
    ) -> SessionState:
        """Create a session with a fresh three-word name.

        `workspace` is the folder the session belongs to (the stdio server's working
        directory), recorded for `nineplan prime`; it is not part of a retry's fingerprint.
        A repeat with the same `request_id` returns the session the first call created.

        Raises:
            InvalidInputError: task_description or workspace is too long or contains NUL;
                request_id reused.
            StorageError: the session could not be created.
        """
        who = check_actor(actor)
        if workspace is not None:
            check_text("workspace", workspace, max_chars=MAX_WORKSPACE_CHARS)
        if task_description is not None:
            check_text(
                "task_description",
                task_description,
                max_chars=self.limits.max_task_chars,
                required=False,
            )
            task_description = task_description.strip() or None
        call = request(request_id, str, "create_session", task_description=task_description)
        if call is not None and (created := await self._created(call)) is not None:
            return await self.session_state(created)
        store = await self._new_session(task_description, workspace, who)
        if call is not None:
            await self.catalog.creations.remember(call.id, call.fingerprint, store.name)
        log.info("session created", extra={"session": store.name})
        return await self._state(store)

    async def session_state(self, name: str) -> SessionState:
        """The queue, the active plan and the counts of a session; reads only, never repairs.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        return await self._state(await self.catalog.open(check_session_name(name)))

    async def resume_session(self, name: str) -> SessionState:
        """The state of a session an agent picks back up; the first resume in a process
        reconciles its files (re-renders missing or empty ones, moves strays aside).

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        session = check_session_name(name)
        store = await self.catalog.open(session)
        if session in self._reconciled and not store.files_mirror:
            return await self._state(store)
        # A first resume (or a mirror to refresh) reconciles, and reads the state on the way.
        _, state = await self._reconcile(store, level=reconcile_level(store))
        self._reconciled.add(session)
        return state

    async def names(self) -> list[SessionName]:
        """The name of every session, sorted; cheap, as no session is opened."""
        return await self.catalog.names()

    async def list_sessions(self, names: list[str] | None = None) -> list[SessionSummary]:
        """Every session (or those of `names`) that can be read; one that cannot is logged
        and left out. Reads only: nothing is reconciled.

        Raises:
            InvalidInputError: a name in `names` is not a session name.
            StorageError: nothing could be read at all.
        """
        checked = (
            await self.catalog.names()
            if names is None
            else [check_session_name(name) for name in names]
        )
        summaries = []
        for name, summary in zip(checked, await self.catalog.summaries(checked), strict=True):
            if isinstance(summary, NinePlanError):
                log.warning(
                    "session unreadable, left out of the list",
                    extra={"session": name, "error": summary.message},
                )
            else:
                summaries.append(attrs.evolve(summary, stuck_defers=self.stuck_defers))
        return summaries

    # -- the queue -----------------------------------------------------------------

    async def add_plan(
        self,
        name: str,
        *,
        context: str,
        goal: str,
        approach: str,
        success_criteria: str,
        inputs: str = "",
        outputs: str = "",
        position: Position | str = Position.BACK,
        request_id: str | None = None,
        actor: Actor | str = Actor.AGENT,
    ) -> PlacedPlan:
        """Add a plan at the front or the back of the queue and write its file.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        texts = {
            "context": context,
            "goal": goal,
            "approach": approach,
            "success_criteria": success_criteria,
        }
        for field, value in texts.items():
            check_text(field, value, max_chars=self.limits.max_text_chars)
        for field, value in {"inputs": inputs, "outputs": outputs}.items():
            check_text(field, value, max_chars=self.limits.max_text_chars, required=False)
        where = check_position(position)
        content = PlanContent(**texts, inputs=inputs, outputs=outputs)
        call = request(
            request_id, PlacedPlan, "add_plan", content=attrs.asdict(content), position=where
        )
        who = check_actor(actor)

        async def add(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            tally = await tx.tally()
            if tally.queued >= self.limits.max_queue:
                raise QueueFullError(self.limits.max_queue)
            plan = await self._insert(tx, content, insert_position(tally, where))
            await tx.files.write(plan.id, render(content, plan.notes))
            rank = insert_rank(tally, where)
            return Applied(
                result=PlacedPlan(plan=plan, path=store.plan_path(plan.id), rank=rank),
                events=[
                    _event(
                        plan.created_at, who, EventKind.PLAN_ADDED, plan, position=where, rank=rank
                    )
                ],
                said="plan added",
                about={"plan_id": plan.id, "rank": rank},
            )

        return await self._apply(name, add, retry=call)

    async def pull_plan(
        self, name: str, *, request_id: str | None = None, actor: Actor | str = Actor.AGENT
    ) -> PlacedPlan:
        """Make the front of the queue the active plan.

        Raises:
            PlanAlreadyActiveError: a plan is active already.
            QueueEmptyError: nothing is queued (the task is complete).
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        call = request(request_id, PlacedPlan, "pull_plan")
        who = check_actor(actor)

        async def pull(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            if (active := await tx.active_plan()) is not None:
                raise PlanAlreadyActiveError(active.id)
            if (queued := await tx.front_of_queue()) is None:
                raise QueueEmptyError(completed_count=(await tx.tally()).completed)
            plan = queued.pull()
            await tx.save(plan)
            text = await _working_copy(tx, plan)
            deferred = defer_counts(await tx.events(deferrals([plan.id])))[plan.id]
            return Applied(
                result=PlacedPlan(
                    plan=plan,
                    path=store.plan_path(plan.id),
                    text=text,
                    defer_count=deferred,
                    stuck=is_stuck(deferred, self.stuck_defers),
                ),
                events=[_event(self.clock(), who, EventKind.PLAN_PULLED, plan)],
                said="plan pulled",
                about={"plan_id": plan.id},
            )

        return await self._apply(name, pull, retry=call, refresh=True)

    async def defer_plan(
        self,
        name: str,
        reason: str,
        position: Position | str = Position.BACK,
        *,
        notes: str | None = None,
        request_id: str | None = None,
        actor: Actor | str = Actor.AGENT,
    ) -> PlacedPlan:
        """Put the active plan back in the queue, noting why; the agent's file edits are kept,
        and `notes` appended after them.

        Raises:
            NoActivePlanError, InvalidInputError, SessionNotFoundError, StorageError.
        """
        check_text("reason", reason, max_chars=self.limits.max_text_chars)
        where = check_position(position)
        _check_notes(notes)
        call = request(
            request_id, PlacedPlan, "defer_plan", reason=reason, position=where, notes=notes
        )
        who = check_actor(actor)

        async def defer(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            active, salvage = await self._active_with_edits(tx, store.name, notes, who)
            tally = await tx.tally()
            plan = active.defer(
                reason=reason.strip(), position=insert_position(tally, where), at=self.clock()
            )
            await tx.save(plan)
            await tx.files.write(plan.id, render(plan.content, plan.notes))
            rank = insert_rank(tally, where)
            deferred = _event(
                self.clock(),
                who,
                EventKind.PLAN_DEFERRED,
                plan,
                position=where,
                rank=rank,
                reason=reason.strip(),
            )
            return Applied(
                result=PlacedPlan(
                    plan=plan, path=store.plan_path(plan.id), rank=rank, salvage=salvage
                ),
                events=[deferred],
                said="plan deferred",
                about={"plan_id": plan.id, "rank": rank},
            )

        return await self._apply(name, defer, retry=call)

    async def complete_plan(
        self,
        name: str,
        outcome: str,
        *,
        notes: str | None = None,
        request_id: str | None = None,
        actor: Actor | str = Actor.AGENT,
    ) -> Completion:
        """Finish the active plan: its outcome goes into searchable history, its file goes away
        (its edits read back first, `notes` appended after them).

        Raises:
            NoActivePlanError, InvalidInputError, SessionNotFoundError, StorageError.
        """
        check_text("outcome", outcome, max_chars=self.limits.max_text_chars)
        _check_notes(notes)
        call = request(request_id, Completion, "complete_plan", outcome=outcome, notes=notes)
        who = check_actor(actor)

        async def complete(store: SessionStore, tx: SessionTx) -> Applied[Completion]:
            active, salvage = await self._active_with_edits(tx, store.name, notes, who)
            plan = active.complete(outcome=outcome, at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            at = plan.completed_at or self.clock()
            return Applied(
                result=Completion(plan=plan, tally=await tx.tally(), salvage=salvage),
                events=[_event(at, who, EventKind.PLAN_COMPLETED, plan, outcome=excerpt(outcome))],
                said="plan completed",
                about={"plan_id": plan.id},
            )

        return await self._apply(name, complete, retry=call)

    async def discard_plan(
        self,
        name: str,
        reason: str,
        *,
        notes: str | None = None,
        request_id: str | None = None,
        actor: Actor | str = Actor.AGENT,
    ) -> Discarded:
        """Abandon the active plan; it is kept (file edits and `notes` too) but never searchable.

        Raises:
            NoActivePlanError, InvalidInputError, SessionNotFoundError, StorageError.
        """
        check_text("reason", reason, max_chars=self.limits.max_text_chars)
        _check_notes(notes)
        call = request(request_id, Discarded, "discard_plan", reason=reason, notes=notes)
        who = check_actor(actor)

        async def discard(store: SessionStore, tx: SessionTx) -> Applied[Discarded]:
            active, salvage = await self._active_with_edits(tx, store.name, notes, who)
            plan = active.discard(reason=reason.strip(), at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            return Applied(
                result=Discarded(plan=plan, tally=await tx.tally(), salvage=salvage),
                events=[
                    _event(self.clock(), who, EventKind.PLAN_DISCARDED, plan, reason=reason.strip())
                ],
                said="plan discarded",
                about={"plan_id": plan.id},
            )

        return await self._apply(name, discard, retry=call)

    # -- steering by a person (the web view, the CLI) -------------------------------

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
            self._check_imported(text, f"(plan {index} of {len(plans)})")

        async def import_all(store: SessionStore, tx: SessionTx) -> Applied[list[PlacedPlan]]:
            tally = await tx.tally()
            if tally.queued + len(plans) > self.limits.max_queue:
                raise QueueFullError(self.limits.max_queue)
            first = 1 if where is Position.FRONT else tally.queued + 1
            # At the front, the last plan goes in first so that the first ends up first.
            order = list(plans) if where is Position.BACK else list(reversed(plans))
            placed, events = [], []
            for text in order:
                tally = await tx.tally()
                plan = await self._insert(tx, text.content, insert_position(tally, where))
                if text.notes:
                    plan = attrs.evolve(plan, notes=text.notes)
                    await tx.save(plan)
                await tx.files.write(plan.id, render(text.content, plan.notes))
                rank = insert_rank(tally, where)
                events.append(
                    _event(
                        plan.created_at, who, EventKind.PLAN_ADDED, plan, position=where, rank=rank
                    )
                )
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
        position: Position | str,
        *,
        actor: Actor | str = Actor.PERSON,
    ) -> PlacedPlan:
        """Move a queued plan to the front or the back of the queue; its file is unchanged.

        Raises:
            PlanHeldByAgentError: the plan is the active one (only the agent changes it).
            PlanNotFoundError: no queued plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        where = check_position(position)
        who = check_actor(actor)

        async def move(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            tally = await tx.tally()
            queued = await _queued_plan(tx, checked)
            plan = queued.move(position=insert_position(tally, where))
            await tx.save(plan)
            rank = 1 if where is Position.FRONT else tally.queued
            return Applied(
                result=PlacedPlan(plan=plan, path=store.plan_path(plan.id), rank=rank),
                events=[
                    _event(self.clock(), who, EventKind.PLAN_MOVED, plan, position=where, rank=rank)
                ],
                said="plan moved by a person",
                about={"plan_id": plan.id, "rank": rank},
            )

        return await self._apply(name, move)

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
            queued = await _queued_plan(tx, checked)
            queued, _ = await self._with_edits(tx, store.name, queued, None, who)
            plan = queued.drop(reason=reason.strip(), at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            return Applied(
                result=Discarded(plan=plan, tally=await tx.tally()),
                events=[
                    _event(self.clock(), who, EventKind.PLAN_DISCARDED, plan, reason=reason.strip())
                ],
                said="plan dropped by a person",
                about={"plan_id": plan.id},
            )

        return await self._apply(name, drop)

    # -- history -------------------------------------------------------------------

    async def search_history(
        self, name: str, query: str, max_results: int = 10, *, snippets: bool = False
    ) -> list[HistoryMatch]:
        """Completed plans matching the words of `query`, best first.

        Raises:
            InvalidInputError: no searchable word, or max_results out of range.
            SessionNotFoundError, StorageError.
        """
        check_text("query", query, max_chars=self.limits.max_text_chars)
        if not 1 <= check_type("max_results", max_results, int) <= self.limits.max_results:
            raise InvalidInputError(
                "max_results", f"must be between 1 and {self.limits.max_results}"
            )
        if not (terms := search_terms(query)):
            raise InvalidInputError("query", "has no searchable word (only punctuation or spaces)")
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            return await reader.search(terms, max_results, snippets=snippets)

    async def get_history(self, name: str, plan_id: str) -> Plan:
        """A completed plan, whole.

        Raises:
            PlanNotFoundError: no completed plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            plan = await reader.plan(checked)
        if plan is None or plan.status is not PlanStatus.COMPLETED:
            raise PlanNotFoundError(plan_id)
        return plan

    async def finished_plans(self, name: str) -> list[Plan]:
        """Every completed and discarded plan of a session, in the order they finished.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            return await reader.finished()

    async def get_plan(self, name: str, plan_id: str) -> Plan:
        """Any plan of the session by id, whatever its status, as stored; repairs nothing.

        Raises:
            PlanNotFoundError: no plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            plan = await reader.plan(checked)
        if plan is None:
            raise PlanNotFoundError(plan_id, kind="")
        return plan

    async def plan_file_text(self, name: str, plan_id: str) -> str:
        """The working copy of a queued or active plan: its file, or the stored copy rendered.

        Raises:
            PlanNotFoundError: no queued or active plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            plan = await reader.plan(checked)
            if plan is None or plan.status not in LIVE:
                raise PlanNotFoundError(plan_id, kind="queued or active")
            data = await reader.files.read(checked)
        if data is None or not data.strip():
            return render(plan.content, plan.notes)
        return decode(data)[0]

    # -- checks and repair ---------------------------------------------------------

    async def validate_session(self, name: str) -> ValidationReport:
        """Check the five invariants; only reports, never repairs (not even by opening).

        A damaged journal row makes `journal_matches_state` false with an issue line.

        A live plan's file that cannot be read as a plan (not a regular file, not UTF-8, no
        plan heading) counts against files_match_database.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            rows = await reader.plan_rows()
            names = await reader.files.names()
            present = set(names)
            damaged: dict[str, str] = {}
            for row in rows:
                if row.status in LIVE and file_name(row.id) in present:
                    try:
                        problem = unreadable(await reader.files.read(row.id))
                    except FileSystemError as exc:  # reported, like any other damage
                        problem = exc.message
                    if problem is not None:
                        damaged[file_name(row.id)] = problem
            journal = journal_issues(await reader.events(EventQuery()), rows)
            return check(rows, names, damaged, journal=journal)

    async def journal(
        self, name: str, query: EventQuery | None = None
    ) -> list[Event | UnreadableEvent]:
        """The session's journal events, oldest first (every one unless `query` narrows them).

        A read only: the session is not reconciled, so nothing is written.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            return await reader.events(query or EventQuery())

    def follow(self, name: str, after_seq: int = 0) -> AsyncIterator[Event | UnreadableEvent]:
        """The session's events after `after_seq`, then every new one, from any process.

        Raises (when iterated):
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        return self.catalog.follow(check_session_name(name), after_seq)

    async def reminder(self, name: str) -> str | None:
        """`Active plan: {id} {goal} (pulled N min ago)` while a plan is active, else None.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            if (active := await reader.active_plan()) is None:
                return None
            pulled = pulled_at(await reader.events(last_pull(active.id)), active.id)
        return reminder_line(active.id, active.goal, pulled, self.clock())

    async def repair_session(self, name: str) -> list[Repair]:
        """Bring the plan files back in line with the database: what opening a session does,
        and an empty queued plan's file re-rendered too (this pass reads every live file).

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        session = check_session_name(name)
        store = await self.catalog.open(session)
        repairs, _ = await self._reconcile(store, thorough=True)
        self._reconciled.add(session)
        return repairs

    # -- internals -----------------------------------------------------------------

    async def _apply(
        self,
        name: str,
        change: Change[T],
        *,
        retry: Request[T] | None = None,
        refresh: bool = False,
    ) -> T:
        """Run `change` in the envelope every change shares.

        Check the name, open the session (reconciled once per process; with `refresh`, a
        mirror's files brought up to date), return the first result of a repeated request,
        else run the change in one transaction with its journal events, remembering its
        result for a retry, and log it.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError, and what `change` raises.
        """
        session = check_session_name(name)
        store = await self._open(session)
        if refresh and store.files_mirror:
            await self._reconcile(store, level=logging.INFO)
        async with store.transaction() as tx:
            if retry is not None and (first := await replayed(tx.requests, retry)) is not None:
                return first
            applied = await change(store, tx)
            for event in applied.events:
                await tx.append(event)
            if retry is not None:
                await tx.requests.remember(retry.id, retry.fingerprint, applied.result)
        log.info(applied.said, extra={"session": session, **applied.about})
        return applied.result

    async def _open(self, name: SessionName) -> SessionStore:
        store = await self.catalog.open(name)
        if name not in self._reconciled:
            await self._reconcile(store)
            self._reconciled.add(name)
        return store

    async def _reconcile(
        self, store: SessionStore, level: int = logging.WARNING, *, thorough: bool = False
    ) -> tuple[list[Repair], SessionState]:
        return await reconcile(
            store, clock=self.clock, stuck_defers=self.stuck_defers, level=level, thorough=thorough
        )

    async def _state(self, store: SessionStore) -> SessionState:
        async with store.reading() as reader:
            queue = await reader.queue()
            active = await reader.active_plan()
            files = set(await reader.files.names())
            return await state_of(
                store, reader, queue=queue, active=active, plan_files=files, stuck=self.stuck_defers
            )

    async def _created(self, call: Request[str]) -> str | None:
        """The session a repeated create made, or None to create one."""
        recorded = await self.catalog.creations.recall(call.id, str)
        if recorded is None:
            return None
        check_replay(call.id, recorded[0], call.fingerprint)
        if recorded[1] is None:
            log.warning("unreadable session-creation record; treating the request as new")
            return None
        return recorded[1]

    async def _new_session(
        self, task_description: str | None, workspace: str | None, who: Actor
    ) -> SessionStore:
        """Create a session under a fresh name (drawing again on a collision), with its
        `session_created` event in the same transaction."""
        for _ in range(_ATTEMPTS):
            session = Session(
                name=check_session_name(self.session_names()),
                task_description=task_description,
                created_at=self.clock(),
                workspace=workspace,
            )
            created = NewEvent(kind=EventKind.SESSION_CREATED, at=session.created_at, actor=who)
            try:
                store = await self.catalog.create(session, created)
            except SessionExistsError:
                log.warning(
                    "session name collision, drawing another", extra={"session": session.name}
                )
                continue
            self._reconciled.add(session.name)
            return store
        raise DatabaseError("No free session name was found.", suggestion=DatabaseError.RETRY)

    def _check_imported(self, text: PlanText, which: str) -> None:
        """Check one imported plan's sections; the error says which plan it was."""
        for field, value in attrs.asdict(text.content).items():
            try:
                check_text(
                    field,
                    value,
                    max_chars=self.limits.max_text_chars,
                    required=field not in ("inputs", "outputs"),
                )
            except InvalidInputError as exc:
                raise InvalidInputError(exc.field, f"{which} {exc.problem}") from exc

    async def _insert(self, tx: SessionTx, content: PlanContent, position: int) -> Plan:
        """Store a new queued plan under a fresh id (the store refuses an id that is taken)."""
        for _ in range(_ATTEMPTS):
            plan = Plan(
                id=check_plan_id(self.plan_ids()),
                content=content,
                position=position,
                created_at=self.clock(),
            )
            if await tx.add(plan):
                return plan
            log.warning("plan id collision, drawing another", extra={"plan_id": plan.id})
        raise DatabaseError("No free plan id was found.", suggestion=DatabaseError.RETRY)

    async def _active_with_edits(
        self, tx: SessionTx, name: str, notes: str | None, actor: Actor
    ) -> tuple[Plan, str | None]:
        """The active plan with what the agent wrote in its file, then `notes`, and one line
        saying what had to be salvaged (None when the file read as a clean plan).

        Nothing the agent wrote is dropped: what fits no section goes to the notes, and a file
        that cannot be read whole is first copied to recovered/. The journal gets
        `edits_salvaged` (when the file was messy) and then `notes_added` (when notes came),
        before the caller's own event.
        """
        if (active := await tx.active_plan()) is None:
            raise NoActivePlanError
        return await self._with_edits(tx, name, active, notes, actor)

    async def _with_edits(
        self, tx: SessionTx, name: str, live: Plan, notes: str | None, actor: Actor
    ) -> tuple[Plan, str | None]:
        """`live` (a queued or active plan) with what was written in its file, then `notes`,
        and one line saying what had to be salvaged (None when the file read as a clean plan).

        Nothing written there is dropped: what fits no section goes to the notes, and a file
        that cannot be read whole is first copied to recovered/.
        """
        data = await tx.files.read(live.id)
        got = read_back(
            data,
            PlanText(live.content, live.notes),
            max_section_chars=self.limits.max_text_chars,
        )
        copy = await tx.files.keep_recovered(live.id, data) if got.keep_original and data else None
        # An agent appending under "# Notes" leaves blank lines around its text; drop them.
        parts = [got.text.notes.strip("\n"), (notes or "").strip("\n")]
        plan = live.with_edits(got.text.content, "\n".join(part for part in parts if part.strip()))
        line = salvage_line(got.salvaged, copy) if got.salvaged else None
        if line is not None:
            log.warning("plan file salvaged: %s", line, extra={"session": name, "plan_id": live.id})
            where = {"recovered": copy} if copy else {}
            await tx.append(
                _event(self.clock(), actor, EventKind.EDITS_SALVAGED, plan, salvaged=line, **where)
            )
        if notes and notes.strip():
            await tx.append(
                _event(self.clock(), actor, EventKind.NOTES_ADDED, plan, notes=excerpt(notes))
            )
        return plan, line


async def _queued_plan(tx: SessionTx, plan_id: PlanId) -> Plan:
    """A queued plan a person may steer; the active plan is the agent's."""
    plan = await tx.plan(plan_id)
    if plan is not None and plan.status is PlanStatus.ACTIVE:
        raise PlanHeldByAgentError(plan_id)
    if plan is None or plan.status is not PlanStatus.QUEUED:
        raise PlanNotFoundError(plan_id, kind="queued")
    return plan


async def _working_copy(tx: SessionTx, plan: Plan) -> str:
    """The text of a plan just pulled: its file as the agent left it, or rendered afresh when
    it is missing or empty (the agent's own copy stays as it is; defer or complete reads it
    back)."""
    data = await tx.files.read(plan.id)
    if data is not None and data.strip():
        return decode(data)[0]
    text = render(plan.content, plan.notes)
    await tx.files.write(plan.id, text)
    return text


def _event(
    at: dt.datetime, actor: Actor, kind: EventKind, plan: Plan, **detail: object
) -> NewEvent:
    """The journal's record of a change to `plan`."""
    return NewEvent(
        kind=kind,
        at=at,
        actor=actor,
        plan_id=plan.id,
        detail={key: _plain(value) for key, value in detail.items()},
    )


def check_actor(actor: Actor | str) -> Actor:
    """Who makes a change: `agent`, `person` or `system`.

    Raises:
        InvalidInputError: anything else.
    """
    try:
        return Actor(actor)
    except ValueError:
        raise InvalidInputError("actor", "must be 'agent', 'person' or 'system'") from None


def _plain(value: object) -> Any:
    return value.value if isinstance(value, Position) else value


def _check_notes(notes: str | None) -> None:
    if notes is not None:
        check_text("notes", notes, max_chars=MAX_NOTES_CHARS, required=False)


__all__ = ["Applied", "Completion", "Discarded", "NinePlan", "PlacedPlan"]
