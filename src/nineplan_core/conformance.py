"""The invariants the conformance machine (`testing.QueueConformance`) holds after every
step: the session's state (what each queued plan waits for included), the primer's read, the
journal and the invariants agree with the machine's plain-list model. Import it from tests
only: it needs hypothesis."""

import datetime as dt
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant

from nineplan_core.callers import Caller
from nineplan_core.errors import InvalidInputError, NinePlanError
from nineplan_core.journal import Event, EventKind
from nineplan_core.model import STUCK_DEFERS
from nineplan_core.primed import PrimedSession
from nineplan_core.results import SessionState
from nineplan_core.service import NinePlan
from nineplan_core.strategies import ManualClock
from nineplan_core.workers import MAIN

T = TypeVar("T")
E = TypeVar("E", bound=NinePlanError)


class ModelChecks(RuleBasedStateMachine):
    """The model a conformance machine keeps, and the invariants that hold it to the service."""

    clock: ManualClock
    service: NinePlan
    name: str
    workspace: str
    queue: list[str]  # plan ids, rank 1 first
    held: dict[str, str]  # worker -> its active plan
    last_seen: dict[str, dt.datetime]  # worker -> when its plan was last renewed
    workers: list[str]  # `main` and the drawn names
    several: bool  # a worker other than main has pulled: unnamed calls are refused
    completed: dict[str, str]  # id -> the unique word in its outcome
    discarded: set[str]
    after: dict[str, tuple[str, ...]]  # every plan added -> what it waits for, as named
    events: list[tuple[EventKind, str | None]]  # what the journal must hold

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a use case to its end (the machine's event loop)."""
        raise NotImplementedError

    def refused(self, coroutine: Coroutine[Any, Any, object], error: type[E]) -> E:
        """Run `coroutine`, which must raise `error`; the error raised."""
        try:
            self.run(coroutine)
        except error as raised:
            return raised
        raise AssertionError(f"expected {error.__name__}")

    def unnamed_refused(self, caller: Caller, call: Coroutine[Any, Any, object]) -> bool:
        """Whether `call` names no worker in a session that has had several: it is refused
        (InvalidInputError naming `worker`) and changes nothing, not even a lease."""
        if caller.named or not self.several:
            return False
        self.refused(call, InvalidInputError)
        return True

    def heard_from(self, worker: str) -> None:
        """`worker` pulled (or was refused one for the plan it holds): once it is not `main`,
        the session has several workers."""
        self.last_seen[worker] = self.clock()
        self.several = self.several or worker != MAIN

    def worker(self, data: st.DataObject) -> tuple[str, Caller]:
        """A worker drawn for a call, and the caller the call is (naming no worker: `main`)."""
        worker = data.draw(st.sampled_from(self.workers))
        named = worker if worker != MAIN or data.draw(st.booleans()) else None
        return worker, Caller.of(named)

    def settled(self, plan_id: str) -> bool:
        """Completed or discarded: nothing waits for it any more."""
        return plan_id in self.completed or plan_id in self.discarded

    def waiting_for(self, plan_id: str) -> tuple[str, ...]:
        """What `plan_id` still waits for: the plans it names not settled, in order."""
        return tuple(named for named in self.after[plan_id] if not self.settled(named))

    def first_ready(self) -> str | None:
        """The plan a pull takes: the first queued plan that waits for nothing unsettled."""
        return next((plan_id for plan_id in self.queue if not self.waiting_for(plan_id)), None)

    def primer(self) -> Callable[[str], PrimedSession | None] | None:
        """The backend's read for `nineplan prime` (folder -> what it finds), held to the
        session's state after every step; None (the default) leaves it out. Called after
        `service_context` is open."""
        return None

    @property
    def active(self) -> str | None:
        """The active plan of the worker `main` (a lone agent's)."""
        return self.held.get(MAIN)

    @invariant()
    def state_matches_model(self) -> None:
        """The session's state is the model's: the queue in order, what each queued plan
        waits for, who holds what and whether it is stale; the primer's read agrees."""
        if not self.name:
            return
        state = self.run(self.service.session_state(self.name))
        assert [entry.id for entry in state.queue] == self.queue
        assert [entry.rank for entry in state.queue] == list(range(1, len(self.queue) + 1))
        waits = [self.waiting_for(plan_id) for plan_id in self.queue]
        assert [entry.waiting_for for entry in state.queue] == waits, (waits, self.after)
        assert (state.active_plan.id if state.active_plan else None) == self.active
        assert {hold.worker: hold.plan.id for hold in state.active_plans} == self.held
        lease = dt.timedelta(minutes=self.service.lease_minutes)
        assert {hold.worker: hold.stale for hold in state.active_plans} == {
            worker: self.clock() - self.last_seen[worker] > lease for worker in self.held
        }
        assert state.completed_count == len(self.completed)
        assert state.file_db_match
        self.primer_matches(state)

    def primer_matches(self, state: SessionState) -> None:
        """The primer finds the session while it has work, with its active plan and the
        front of its queue (as `state` has them); nothing once it has none."""
        find = self.primer()
        if find is None:
            return
        primed = find(self.workspace)
        if not self.queue and not self.held:
            assert primed is None, primed
            return
        assert primed is not None
        assert primed.session_name == self.name
        assert primed.workspace == self.workspace
        assert primed.task_description == "conformance"
        assert (primed.active_plan.id if primed.active_plan else None) == self.active
        assert primed.next == [entry.goal for entry in state.queue][:3]
        live = {*self.queue, *self.held.values()}
        assert all(p.id in live and p.defers >= STUCK_DEFERS for p in primed.stuck), primed

    @invariant()
    def journal_matches_model(self) -> None:
        """One event per change, in order, seq 1, 2, 3 ...; replay is checked by validate."""
        if not self.name:
            return
        events = self.run(self.service.journal(self.name))
        assert [event.seq for event in events] == list(range(1, len(events) + 1))
        assert all(isinstance(event, Event) for event in events), events
        assert [
            (event.kind, event.plan_id) for event in events if isinstance(event, Event)
        ] == self.events

    @invariant()
    def invariants_hold(self) -> None:
        if not self.name:
            return
        report = self.run(self.service.validate_session(self.name))
        assert report.valid, report.issues
        assert report.journal_matches_state
        assert report.prerequisites_respected
