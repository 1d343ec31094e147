"""The use cases: one async method per operation an agent or a person can ask for."""

import datetime as dt
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import attrs

from nineplan_core.errors import (
    DatabaseError,
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
    RECENT_EVENTS,
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
    Completion,
    Discarded,
    HistoryMatch,
    Limits,
    Plan,
    PlanContent,
    Position,
    QueueEntry,
    Repair,
    Session,
    SessionState,
    SessionSummary,
    ValidationReport,
    check_plan_id,
    check_position,
    check_session_name,
    check_text,
    check_type,
    file_name,
    is_stuck,
    plan_id_of,
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
    SessionReader,
    SessionStore,
    SessionTx,
)
from nineplan_core.queue import insert_position, insert_rank
from nineplan_core.retries import check_replay, check_request_id, fingerprint

log = logging.getLogger("nineplan.service")
T = TypeVar("T")

_ATTEMPTS = 20
#: A workspace is a folder path; beyond this it is not one a file system gives.
MAX_WORKSPACE_CHARS = 4096


@attrs.frozen(kw_only=True)
class PlacedPlan:
    """A plan just added, pulled or deferred: where its file is and, when queued, its rank."""

    plan: Plan
    path: str
    rank: int | None = None
    #: The plan as its file reads (for a pull): what the agent works from.
    text: str | None = None
    #: One line saying what had to be salvaged from the agent's file, if anything (a defer).
    salvage: str | None = None
    #: How often the plan had been deferred (set by a pull), and whether that makes it stuck.
    defer_count: int = 0
    stuck: bool = False


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
    _reconciled: set[str] = attrs.field(factory=set, init=False)

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
        if request_id is not None:
            call = fingerprint("create_session", task_description=task_description)
            recorded = await self.catalog.creations.recall(check_request_id(request_id), str)
            if recorded is not None:
                check_replay(request_id, recorded[0], call)
                if recorded[1] is not None:
                    return await self.session_state(recorded[1])
                log.warning("unreadable session-creation record; treating the request as new")
        for _ in range(_ATTEMPTS):
            session = Session(
                name=self.session_names(),
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
            if request_id is not None:
                await self.catalog.creations.remember(request_id, call, session.name)
            log.info("session created", extra={"session": session.name})
            return await self._state(store)
        raise DatabaseError("No free session name was found.", suggestion="Retry create_session.")

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
        store = await self.catalog.open(check_session_name(name))
        if name in self._reconciled and not store.files_mirror:
            return await self._state(store)
        # A first resume (or a mirror to refresh) reconciles, and reads the state on the way.
        _, state = await self._reconcile(store, level=_reconcile_level(store))
        self._reconciled.add(name)
        return state

    async def names(self) -> list[str]:
        """The name of every session, sorted; cheap, as no session is opened."""
        return await self.catalog.names()

    async def list_sessions(self, names: list[str] | None = None) -> list[SessionSummary]:
        """Every session (or those of `names`) that can be read; one that cannot is logged
        and left out. Reads only: nothing is reconciled.

        Raises:
            StorageError: nothing could be read at all.
        """
        names = await self.catalog.names() if names is None else names
        summaries = []
        for name, summary in zip(names, await self.catalog.summaries(names), strict=True):
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
        request = _request(request_id, "add_plan", content=attrs.asdict(content), position=where)
        who = check_actor(actor)
        store = await self._open(name)
        async with store.transaction() as tx:
            if (replayed := await _replayed(tx, request, PlacedPlan)) is not None:
                return replayed
            tally = await tx.tally()
            if tally.queued >= self.limits.max_queue:
                raise QueueFullError(self.limits.max_queue)
            plan = await self._insert(tx, content, insert_position(tally, where))
            await tx.files.write(plan.id, render(content, plan.notes))
            placed = PlacedPlan(
                plan=plan, path=store.plan_path(plan.id), rank=insert_rank(tally, where)
            )
            await _record(
                tx,
                plan.created_at,
                who,
                EventKind.PLAN_ADDED,
                plan,
                position=where,
                rank=placed.rank,
            )
            await _remember(tx, request, placed)
        log.info("plan added", extra={"session": name, "plan_id": plan.id, "rank": placed.rank})
        return placed

    async def pull_plan(
        self, name: str, *, request_id: str | None = None, actor: Actor | str = Actor.AGENT
    ) -> PlacedPlan:
        """Make the front of the queue the active plan.

        Raises:
            PlanAlreadyActiveError: a plan is active already.
            QueueEmptyError: nothing is queued (the task is complete).
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        request = _request(request_id, "pull_plan")
        who = check_actor(actor)
        store = await self._open(name)
        await self._refresh_mirror(store)
        async with store.transaction() as tx:
            if (replayed := await _replayed(tx, request, PlacedPlan)) is not None:
                return replayed
            if (active := await tx.active_plan()) is not None:
                raise PlanAlreadyActiveError(active.id)
            if (queued := await tx.front_of_queue()) is None:
                raise QueueEmptyError(completed_count=(await tx.tally()).completed)
            plan = queued.pull()
            await tx.save(plan)
            data = await tx.files.read(plan.id)
            if data is None or not data.strip():
                text = render(plan.content, plan.notes)
                await tx.files.write(plan.id, text)
            else:  # the agent's own copy stays as it is; defer or complete reads it back
                text = decode(data)[0]
            deferred = defer_counts(await tx.events(deferrals([plan.id])))[plan.id]
            placed = PlacedPlan(
                plan=plan,
                path=store.plan_path(plan.id),
                text=text,
                defer_count=deferred,
                stuck=is_stuck(deferred, self.stuck_defers),
            )
            await _record(tx, self.clock(), who, EventKind.PLAN_PULLED, plan)
            await _remember(tx, request, placed)
        log.info("plan pulled", extra={"session": name, "plan_id": plan.id})
        return placed

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
        request = _request(request_id, "defer_plan", reason=reason, position=where, notes=notes)
        who = check_actor(actor)
        store = await self._open(name)
        async with store.transaction() as tx:
            if (replayed := await _replayed(tx, request, PlacedPlan)) is not None:
                return replayed
            active, salvage = await self._active_with_edits(tx, name, notes, who)
            tally = await tx.tally()
            plan = active.defer(
                reason=reason.strip(), position=insert_position(tally, where), at=self.clock()
            )
            await tx.save(plan)
            await tx.files.write(plan.id, render(plan.content, plan.notes))
            placed = PlacedPlan(
                plan=plan,
                path=store.plan_path(plan.id),
                rank=insert_rank(tally, where),
                salvage=salvage,
            )
            await _record(
                tx,
                self.clock(),
                who,
                EventKind.PLAN_DEFERRED,
                plan,
                position=where,
                rank=placed.rank,
                reason=reason.strip(),
            )
            await _remember(tx, request, placed)
        log.info("plan deferred", extra={"session": name, "plan_id": plan.id, "rank": placed.rank})
        return placed

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
        request = _request(request_id, "complete_plan", outcome=outcome, notes=notes)
        who = check_actor(actor)
        store = await self._open(name)
        async with store.transaction() as tx:
            if (replayed := await _replayed(tx, request, Completion)) is not None:
                return replayed
            active, salvage = await self._active_with_edits(tx, name, notes, who)
            plan = active.complete(outcome=outcome, at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            completion = Completion(plan=plan, tally=await tx.tally(), salvage=salvage)
            await _record(
                tx,
                plan.completed_at or self.clock(),
                who,
                EventKind.PLAN_COMPLETED,
                plan,
                outcome=excerpt(outcome),
            )
            await _remember(tx, request, completion)
        log.info("plan completed", extra={"session": name, "plan_id": plan.id})
        return completion

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
        request = _request(request_id, "discard_plan", reason=reason, notes=notes)
        who = check_actor(actor)
        store = await self._open(name)
        async with store.transaction() as tx:
            if (replayed := await _replayed(tx, request, Discarded)) is not None:
                return replayed
            active, salvage = await self._active_with_edits(tx, name, notes, who)
            plan = active.discard(reason=reason.strip(), at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            discarded = Discarded(plan=plan, tally=await tx.tally(), salvage=salvage)
            await _record(
                tx, self.clock(), who, EventKind.PLAN_DISCARDED, plan, reason=reason.strip()
            )
            await _remember(tx, request, discarded)
        log.info("plan discarded", extra={"session": name, "plan_id": plan.id})
        return discarded

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
            for field, value in attrs.asdict(text.content).items():
                try:
                    check_text(
                        field,
                        value,
                        max_chars=self.limits.max_text_chars,
                        required=field not in ("inputs", "outputs"),
                    )
                except InvalidInputError as exc:
                    raise InvalidInputError(
                        exc.field, f"(plan {index} of {len(plans)}) {exc.problem}"
                    ) from exc
        store = await self._open(name)
        placed: list[PlacedPlan] = []
        async with store.transaction() as tx:
            tally = await tx.tally()
            if tally.queued + len(plans) > self.limits.max_queue:
                raise QueueFullError(self.limits.max_queue)
            before = tally.queued
            # At the front, the last plan goes in first so that the first ends up first.
            order = list(plans) if where is Position.BACK else list(reversed(plans))
            for text in order:
                tally = await tx.tally()
                plan = await self._insert(tx, text.content, insert_position(tally, where))
                if text.notes:
                    plan = attrs.evolve(plan, notes=text.notes)
                    await tx.save(plan)
                await tx.files.write(plan.id, render(text.content, plan.notes))
                await _record(
                    tx,
                    plan.created_at,
                    who,
                    EventKind.PLAN_ADDED,
                    plan,
                    position=where,
                    rank=insert_rank(tally, where),
                )
                placed.append(PlacedPlan(plan=plan, path=store.plan_path(plan.id)))
        if where is Position.FRONT:
            placed.reverse()
        first = 1 if where is Position.FRONT else before + 1
        ranked = [attrs.evolve(p, rank=first + i) for i, p in enumerate(placed)]
        log.info("plans imported", extra={"session": name, "count": len(ranked)})
        return ranked

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
        check_plan_id(plan_id)
        where = check_position(position)
        who = check_actor(actor)
        store = await self._open(name)
        async with store.transaction() as tx:
            tally = await tx.tally()
            plan = (await self._queued_plan(tx, plan_id)).move(
                position=insert_position(tally, where)
            )
            await tx.save(plan)
            rank = 1 if where is Position.FRONT else tally.queued
            await _record(
                tx, self.clock(), who, EventKind.PLAN_MOVED, plan, position=where, rank=rank
            )
        placed = PlacedPlan(plan=plan, path=store.plan_path(plan.id), rank=rank)
        log.info(
            "plan moved by a person", extra={"session": name, "plan_id": plan_id, "rank": rank}
        )
        return placed

    async def drop_plan(
        self, name: str, plan_id: str, reason: str, *, actor: Actor | str = Actor.PERSON
    ) -> Discarded:
        """Discard a queued plan, noting why (a person's call); edits in its file are kept.

        Raises:
            PlanHeldByAgentError: the plan is the active one (only the agent changes it).
            PlanNotFoundError: no queued plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        check_plan_id(plan_id)
        check_text("reason", reason, max_chars=self.limits.max_text_chars)
        who = check_actor(actor)
        store = await self._open(name)
        async with store.transaction() as tx:
            queued = await self._queued_plan(tx, plan_id)
            queued, _ = await self._with_edits(tx, name, queued, None, who)
            plan = queued.drop(reason=reason.strip(), at=self.clock())
            await tx.save(plan)
            tx.files.remove_after_commit(plan.id)
            dropped = Discarded(plan=plan, tally=await tx.tally())
            await _record(
                tx, self.clock(), who, EventKind.PLAN_DISCARDED, plan, reason=reason.strip()
            )
        log.info("plan dropped by a person", extra={"session": name, "plan_id": plan_id})
        return dropped

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
        check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            plan = await reader.plan(plan_id)
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
        check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            plan = await reader.plan(plan_id)
        if plan is None:
            raise PlanNotFoundError(plan_id, kind="")
        return plan

    async def plan_file_text(self, name: str, plan_id: str) -> str:
        """The working copy of a queued or active plan: its file, or the stored copy rendered.

        Raises:
            PlanNotFoundError: no queued or active plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            plan = await reader.plan(plan_id)
            if plan is None or plan.status not in LIVE:
                raise PlanNotFoundError(plan_id, kind="queued or active")
            data = await reader.files.read(plan_id)
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
                    problem = unreadable(await reader.files.read(row.id))
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
        store = await self.catalog.open(check_session_name(name))
        repairs, _ = await self._reconcile(store, thorough=True)
        self._reconciled.add(name)
        return repairs

    # -- internals -----------------------------------------------------------------

    async def _open(self, name: str) -> SessionStore:
        store = await self.catalog.open(check_session_name(name))
        if name not in self._reconciled:
            await self._reconcile(store)
            self._reconciled.add(name)
        return store

    async def _refresh_mirror(self, store: SessionStore) -> None:
        """Bring this machine's copy of the plan files up to date with a shared database."""
        if store.files_mirror:
            await self._reconcile(store, level=logging.INFO)

    async def _reconcile(
        self, store: SessionStore, level: int = logging.WARNING, *, thorough: bool = False
    ) -> tuple[list[Repair], SessionState]:
        """Make the plan files match the live plans; return the repairs and the state read.

        The state comes from the same reads (one pass over the queue and the folder), as it
        will be once the removals that wait for the commit are done.
        """
        repairs: list[Repair] = []
        async with store.transaction() as tx:
            names = set(await tx.files.names())
            queue = await tx.queue()
            active = await tx.active_plan()
            live = {file_name(entry.id): entry.id for entry in queue}
            if active is not None:
                live[file_name(active.id)] = active.id
            for name, plan_id in live.items():
                # An empty file (what a power loss can leave of an unsynced write) is re-rendered
                # here for the active plan, and for a queued plan when it is pulled (or by a
                # thorough repair): no read of every file on open. A non-empty file stays as it
                # is, however damaged: the next defer, complete or discard salvages it.
                emptied = thorough or (active is not None and plan_id == active.id)
                missing = name not in names or (emptied and _is_empty(await tx.files.read(plan_id)))
                if missing and (plan := await tx.plan(plan_id)) is not None:
                    await tx.files.write(plan.id, render(plan.content, plan.notes))
                    repairs.append(Repair("rendered", name))
            # Only files that belong to no live plan need a look at the database.
            strays = sorted(names - live.keys())
            repairs += [await _stray_file_repair(tx, entry) for entry in strays]
            rendered = {repair.file_name for repair in repairs if repair.action == "rendered"}
            files = (names | rendered) - set(strays)
            # A mirror's files are this machine's copy, not the session: filling it is no change.
            if repairs and not store.files_mirror:
                await tx.append(
                    NewEvent(
                        kind=EventKind.FILES_REPAIRED,
                        at=self.clock(),
                        actor=Actor.SYSTEM,
                        detail={"repairs": [repair.describe() for repair in repairs]},
                    )
                )
            state = await _state_of(
                store, tx, queue=queue, active=active, plan_files=files, stuck=self.stuck_defers
            )
        for repair in repairs:
            log.log(
                level,
                "reconcile: %s %s",
                repair.action,
                repair.file_name,
                extra={"session": store.name},
            )
        return repairs, state

    async def _state(self, store: SessionStore) -> SessionState:
        async with store.reading() as reader:
            queue = await reader.queue()
            active = await reader.active_plan()
            files = set(await reader.files.names())
            return await _state_of(
                store, reader, queue=queue, active=active, plan_files=files, stuck=self.stuck_defers
            )

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
        raise DatabaseError("No free plan id was found.", suggestion="Retry the call.")

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

    async def _queued_plan(self, tx: SessionTx, plan_id: str) -> Plan:
        """A queued plan a person may steer; the active plan is the agent's."""
        plan = await tx.plan(plan_id)
        if plan is not None and plan.status is PlanStatus.ACTIVE:
            raise PlanHeldByAgentError(plan_id)
        if plan is None or plan.status is not PlanStatus.QUEUED:
            raise PlanNotFoundError(plan_id, kind="queued")
        return plan

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
            await _record(
                tx, self.clock(), actor, EventKind.EDITS_SALVAGED, plan, salvaged=line, **where
            )
        if notes and notes.strip():
            await _record(
                tx, self.clock(), actor, EventKind.NOTES_ADDED, plan, notes=excerpt(notes)
            )
        return plan, line


async def _state_of(
    store: SessionStore,
    reader: SessionReader,
    *,
    queue: list[QueueEntry],
    active: Plan | None,
    plan_files: set[str],
    stuck: int,
) -> SessionState:
    """The state from the queue, active plan and files already read, plus the counts and
    what the journal adds (recent events, defer counts, when the active plan was pulled)."""
    live = {entry.id for entry in queue} | ({active.id} if active else set())
    counts = defer_counts(await reader.events(deferrals(live))) if live else {}
    return SessionState(
        session=await reader.session(),
        path=store.path,
        queue=queue,
        active_plan=active,
        active_plan_path=store.plan_path(active.id) if active else None,
        completed_count=(await reader.tally()).completed,
        plan_files=sorted(plan_files),
        recent=await reader.events(RECENT_EVENTS),
        defer_counts=dict(counts),
        pulled_at=(
            pulled_at(await reader.events(last_pull(active.id)), active.id) if active else None
        ),
        stuck_defers=stuck,
    )


def _reconcile_level(store: SessionStore) -> int:
    """Refreshing a mirror routinely writes files: that is news, not a warning."""
    return logging.INFO if store.files_mirror else logging.WARNING


@attrs.frozen
class _Request:
    id: str
    fingerprint: str


def _request(request_id: str | None, operation: str, **arguments: object) -> _Request | None:
    if request_id is None:
        return None
    return _Request(check_request_id(request_id), fingerprint(operation, **arguments))


async def _replayed(tx: SessionTx, request: _Request | None, kind: type[T]) -> T | None:
    """The first result of a request applied before, or None to go ahead."""
    if request is None or (recorded := await tx.requests.recall(request.id, kind)) is None:
        return None
    check_replay(request.id, recorded[0], request.fingerprint)
    if recorded[1] is None:
        raise DatabaseError(f"The recorded result of request {request.id!r} cannot be read.")
    log.info("request replayed", extra={"request_id": request.id})
    return recorded[1]


async def _record(
    tx: SessionTx,
    at: dt.datetime,
    actor: Actor,
    kind: EventKind,
    plan: Plan,
    **detail: object,
) -> None:
    """Append the event of a change to `plan` (the journal's record, in its transaction)."""
    await tx.append(
        NewEvent(
            kind=kind,
            at=at,
            actor=actor,
            plan_id=plan.id,
            detail={key: _plain(value) for key, value in detail.items()},
        )
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


async def _remember(tx: SessionTx, request: _Request | None, result: object) -> None:
    if request is not None:
        await tx.requests.remember(request.id, request.fingerprint, result)


def _check_notes(notes: str | None) -> None:
    if notes is not None:
        check_text("notes", notes, max_chars=MAX_NOTES_CHARS, required=False)


def _is_empty(data: bytes | None) -> bool:
    """A regular file with nothing but white space in it (what a power loss can leave)."""
    return data is not None and not data.strip()


async def _stray_file_repair(tx: SessionTx, entry: str) -> Repair:
    """A file of a finished plan is removed; anything else is moved to recovered/."""
    plan = await tx.plan(plan_id) if (plan_id := plan_id_of(entry)) is not None else None
    if plan is not None:
        tx.files.remove_after_commit(plan.id)
        return Repair("removed", entry)
    tx.files.recover_after_commit(entry)
    return Repair("recovered", entry)


__all__ = ["Discarded", "NinePlan", "PlacedPlan"]
