"""The envelope every change runs in, `Envelope._apply`, and what it is made of.

Check the session name, open the session (reconciled once per process), replay a repeated
request, make the change in one transaction, journal it, remember its result for a retry, and
log it. Fresh plan ids and session names are drawn here too, again on a collision.
"""

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar, cast

import attrs

from nineplan_core.copies import kept_lines
from nineplan_core.errors import DatabaseError, NinePlanError, SessionExistsError
from nineplan_core.journal import Actor, EventKind, NewEvent
from nineplan_core.model import (
    DEFAULT_LIMITS,
    LEASE_MINUTES,
    STUCK_DEFERS,
    Limits,
    Plan,
    PlanContent,
    PlanId,
    Session,
    SessionName,
    check_plan_id,
    check_session_name,
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
from nineplan_core.pulls import hear_from
from nineplan_core.reconcile import (
    MirrorMarks,
    last_seq,
    log_repairs,
    newest_seq,
    reconcile,
    refresh_mirror,
    state_of,
)
from nineplan_core.results import Finished, PlacedPlan, Repair, SessionState
from nineplan_core.retries import Request, check_replay, replayed
from nineplan_core.workers import MAIN, Worker

log = logging.getLogger("nineplan.service")
T = TypeVar("T")

#: How often a fresh id or name is drawn before giving up on finding a free one.
_ATTEMPTS = 20


@attrs.frozen(kw_only=True)
class Applied(Generic[T]):
    """What a change did: its result, the journal events that record it, and its log line."""

    result: T
    events: list[NewEvent]
    said: str
    #: What the log line adds to the session name (the plan id, its rank).
    about: dict[str, object] = attrs.field(factory=dict)


@attrs.frozen
class Refused:
    """A change that decided to refuse: what it wrote so far commits, then `error` is raised."""

    error: NinePlanError


#: A change inside the envelope: given the open session and its transaction, do the work.
Change = Callable[[SessionStore, SessionTx], Awaitable[Applied[T] | Refused]]


@attrs.define
class Envelope:
    """What every use case shares: the ports, the limits, the sessions this process has
    reconciled, and the one envelope a change runs in."""

    catalog: SessionCatalog
    clock: Clock
    plan_ids: PlanIds
    session_names: SessionNames
    limits: Limits = DEFAULT_LIMITS
    #: A plan deferred this many times or more is stuck (NINEPLAN_STUCK_DEFERS).
    stuck_defers: int = STUCK_DEFERS
    #: A worker's lease on its active plan, in minutes (NINEPLAN_LEASE_MINUTES).
    lease_minutes: float = LEASE_MINUTES
    #: NINEPLAN_VERDICTS: `ask`, `require` or `off` (`follow_ups.POLICIES`).
    verdict_policy: str = "ask"
    _reconciled: set[SessionName] = attrs.field(factory=set, init=False)
    #: How far each shared session's file mirror is known to be current (reconcile's state).
    _mirrors: MirrorMarks = attrs.field(factory=MirrorMarks, init=False)

    @property
    def lease(self) -> dt.timedelta:
        """How long a worker's hold on its active plan lasts unheard from (`workers.Hold`)."""
        return dt.timedelta(minutes=self.lease_minutes)

    async def _apply(
        self,
        name: str,
        change: Change[T],
        *,
        retry: Request[T] | None = None,
        refresh: bool = False,
        reads_file: bool = False,
    ) -> T:
        """Run `change` in the envelope every change shares.

        Check the name, open the session (reconciled once per process), return the first
        result of a repeated request, else run the change in one transaction with its journal
        events, remembering its result for a retry, and log it. With `refresh`, a machine's
        copy of a shared session is brought up to the database in that same transaction,
        when the session changed since this process last knew the copy current. A result with a `salvage` line also carries the lines
        saying what opening the session moved to recovered/ (`copies.kept_lines`). A change
        that `reads_file` (the active plan's, to take the agent's edits) finds that file as
        the agent left it, even on the first open: reconcile does not render it first, so the
        change can say it was gone. A change that is `Refused` commits what it wrote (no
        events, nothing remembered for a retry), then raises its error.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError, and what `change` raises.
        """
        session = check_session_name(name)
        store, kept = await self._opened(session, spare_active=reads_file)
        seen: int | None = None
        repairs: list[Repair] = []
        appended: list[int] = []
        async with store.transaction() as tx:
            if refresh and store.files_mirror:
                seen, repairs = await self._refreshed(store, tx)
            if retry is not None and (first := await replayed(tx.requests, retry)) is not None:
                return first
            applied = await change(store, tx)
            if not isinstance(applied, Refused):
                appended = [(await tx.append(event)).seq for event in applied.events]
                if retry is not None:
                    await tx.requests.remember(
                        retry.worker, retry.id, retry.fingerprint, applied.result
                    )
        if store.files_mirror:
            self._mirrors.committed(session, seen, appended)
            log_repairs(store, repairs, logging.INFO)
            kept += kept_lines(repairs)
        if isinstance(applied, Refused):
            raise applied.error
        log.info(applied.said, extra={"session": session, **applied.about})
        return _told(applied.result, kept)

    async def _opened(
        self, name: SessionName, *, spare_active: bool = False
    ) -> tuple[SessionStore, list[str]]:
        """Open a session, reconciling it the first time this process opens it; with the
        lines saying what was kept.

        With `spare_active` the active plan's file is not rendered, and the session is not
        counted as reconciled (the next call renders that file if the change did not). A
        file mirror's missing file may never have been written on this machine, so it is
        rendered, not reported as deleted.
        """
        store = await self.catalog.open(name)
        spare_active = spare_active and not store.files_mirror
        repairs: list[Repair] = []
        if name not in self._reconciled:
            repairs, _ = await self._reconcile(store, spare_active=spare_active)
            if not spare_active:
                self._reconciled.add(name)
        return store, kept_lines(repairs)

    async def _refreshed(self, store: SessionStore, tx: SessionTx) -> tuple[int, list[Repair]]:
        """In a change's transaction on a machine's copy of a shared session: the journal's
        newest seq, and the repairs that brought the copy up to the database, when the
        session changed since this process last knew the copy current (none when not)."""
        seq = await last_seq(tx)
        if self._mirrors.current(store.name, seq):
            return seq, []
        return seq, await refresh_mirror(store, tx, clock=self.clock)

    async def _reconcile(
        self,
        store: SessionStore,
        level: int = logging.WARNING,
        *,
        thorough: bool = False,
        spare_active: bool = False,
        heard: Worker | None = None,
    ) -> tuple[list[Repair], SessionState]:
        repairs, state = await reconcile(
            store,
            clock=self.clock,
            stuck_defers=self.stuck_defers,
            level=level,
            thorough=thorough,
            spare_active=spare_active,
            heard=heard,
        )
        if store.files_mirror:  # the state is kept: it says how far the copy is current
            self._mirrors.committed(store.name, newest_seq(state), [])
        return repairs, state

    async def _state(self, store: SessionStore, worker: Worker) -> SessionState:
        """The queue, `worker`'s active plan, every active plan and the counts of an open
        session, in one read."""
        async with store.reading() as reader:
            state = await self._state_in(store, reader)
        return self._for_worker(state, worker)

    async def _state_in(self, store: SessionStore, reader: SessionReader) -> SessionState:
        """The state of an open session as `reader`, a read view the caller holds, sees it
        (before `_for_worker` judges its leases)."""
        queue = await reader.queue()
        held = await reader.active_plans()
        files = set(await reader.files.names())
        return await state_of(
            store,
            reader,
            queue=queue,
            plan_files=files,
            stuck=self.stuck_defers,
            held=held,
        )

    def _for_worker(self, state: SessionState, worker: Worker) -> SessionState:
        """`state` as `worker` sees it, each active plan's lease judged now."""
        now = self.clock()
        holds = [
            attrs.evolve(hold, stale=hold.hold.stale(now, self.lease))
            for hold in state.active_plans
        ]
        many = (
            state.session.workers_named
            or worker != MAIN
            or any(hold.worker != MAIN for hold in holds)
        )
        return for_worker(attrs.evolve(state, active_plans=holds, many_workers=many), worker)

    async def _heard_from(self, store: SessionStore, worker: Worker, *, naming: bool) -> None:
        """A worker's call: its active plan's `last_seen` is now (the Clock port), and (with
        `naming`) a worker other than `main` is remembered as named."""
        async with store.transaction() as tx:
            await hear_from(tx, worker, self.clock(), naming=naming)

    async def _created(self, call: Request[str]) -> str | None:
        """The session a repeated create made, or None to create one."""
        recorded = await self.catalog.creations.recall(call.worker, call.id, str)
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

    async def _insert(
        self, tx: SessionTx, content: PlanContent, position: int, after: tuple[PlanId, ...] = ()
    ) -> Plan:
        """Store a new queued plan under a fresh id (the store refuses an id that is taken),
        waiting for the plans `after` names."""
        for _ in range(_ATTEMPTS):
            plan = Plan(
                id=check_plan_id(self.plan_ids()),
                content=content,
                position=position,
                created_at=self.clock(),
                after=after,
            )
            if await tx.add(plan):
                return plan
            log.warning("plan id collision, drawing another", extra={"plan_id": plan.id})
        raise DatabaseError("No free plan id was found.", suggestion=DatabaseError.RETRY)


def for_worker(state: SessionState, worker: Worker) -> SessionState:
    """`state` as `worker` sees it: its own active plan as `active_plan` (or none)."""
    return attrs.evolve(state, mine=worker)


def _told(result: T, kept: list[str]) -> T:
    """`result` with the lines saying what opening moved to recovered/ put before its own
    salvage line, when it has one to carry them (a placed or finished plan)."""
    if kept and isinstance(result, PlacedPlan | Finished):
        said = [*kept, *filter(None, [result.salvage])]
        return cast("T", attrs.evolve(result, salvage="\n".join(said)))
    return result
