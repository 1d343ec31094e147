"""Public test kit: the stateful conformance machine, and the strategies it draws from
(`strategies`, re-exported here).

Any adapter set proves itself by subclassing `QueueConformance` with a `service_context`
that opens a NinePlan over it, then exposing `TestX = Subclass.TestCase`. The machine drives
random add / pull / defer / complete / discard / search sequences, by 2 to 4 workers (`main`
and drawn names, one active plan each), with take-overs of stale plans and a person's moves
(to the front, the back, or before another plan), edits, drops and releases among them,
against a plain-list model and checks the invariants after every step, and that the journal
holds exactly one event per change the model made, in order. Plans wait for others
(`conformance_prerequisites`): adds, one plan or a batch, name prerequisites in `after`, a
person changes them (a cycle refused), and a pull must take exactly the first ready plan, or
be refused with QUEUE_BLOCKED when plans are queued and none is ready. Leases run on the
machine's `clock` (a `ManualClock` the adapter set must use as its Clock port): time passes by
steps around the lease, and a worker's plan is stale exactly when its `last_seen` (its pull or
take-over, its named state call, a renewal by its file's edits) is older than the lease; a
take-over moves the clock past the old worker's lease. Import it from tests only: it needs
hypothesis, which `pip install 'nineplan[testing]'` brings.
"""

import asyncio
import datetime as dt
from collections.abc import Coroutine
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, TypeVar

try:
    from hypothesis import strategies as st
    from hypothesis.stateful import initialize, precondition, rule
except ImportError as missing:  # pragma: no cover - the dev install has hypothesis
    raise ImportError(
        "nineplan_core.testing needs hypothesis: pip install 'nineplan[testing]'"
    ) from missing

from nineplan_core.callers import Caller
from nineplan_core.conformance_prerequisites import PrerequisiteRules
from nineplan_core.errors import (
    InvalidInputError,
    LeaseLiveError,
    NinePlanError,
    NoActivePlanError,
    PlanAlreadyActiveError,
    PlanHeldByAgentError,
    PlanNotFoundError,
)
from nineplan_core.journal import EventKind
from nineplan_core.model import Position
from nineplan_core.service import NinePlan
from nineplan_core.strategies import (
    ManualClock,
    free_text,
    positions,
    required_text,
    worker_names,
)
from nineplan_core.workers import MAIN

T = TypeVar("T")


class QueueConformance(PrerequisiteRules):
    """The queue's behaviour, held against a model: subclass and give `service_context`,
    whose use cases tell time by `self.clock`."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = ManualClock()
        self.last_seen: dict[str, dt.datetime] = {}  # worker -> when its plan was last renewed
        self.runner = asyncio.Runner()
        self.stack = AsyncExitStack()
        self.service = self.run(self.stack.enter_async_context(self.service_context()))
        self.name = ""
        self.queue: list[str] = []  # plan ids, rank 1 first
        self.workers: list[str] = [MAIN]
        self.several = False  # a worker other than main has pulled: unnamed calls are refused
        self.held: dict[str, str] = {}  # worker -> its active plan
        self.completed: dict[str, str] = {}  # id -> the unique word in its outcome
        self.discarded: set[str] = set()
        self.after: dict[str, tuple[str, ...]] = {}  # every plan added -> what it waits for
        self.words = 0
        self.events: list[tuple[EventKind, str | None]] = []  # what the journal must hold

    #: The folder the session is created in: what a primer is asked about.
    workspace = "/conformance/project"

    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        """Open the adapter set under test; closed when the example ends."""
        raise NotImplementedError

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return self.runner.run(coroutine)

    def teardown(self) -> None:
        try:
            self.run(self.stack.aclose())
        finally:
            self.runner.close()

    @initialize(others=st.lists(worker_names, min_size=1, max_size=3, unique=True))
    def create(self, others: list[str]) -> None:
        self.workers += [name for name in others if name != MAIN]
        created = self.service.create_session("conformance", workspace=self.workspace)
        self.name = self.run(created).session.name
        self.events.append((EventKind.SESSION_CREATED, None))

    @rule(step=st.sampled_from(["quarter", "just_under", "exactly", "just_over", "tick"]))
    def time_passes(self, step: str) -> None:
        """The clock moves by a step around the lease, so its edge is crossed exactly."""
        lease = round(self.service.lease_minutes * 60_000)
        steps = {
            "quarter": lease // 4,
            "just_under": lease - 1,
            "exactly": lease,
            "just_over": lease + 1,
            "tick": 1,
        }
        self.clock.advance(steps[step])

    @rule(data=st.data())
    def file_edit_renews(self, data: st.DataObject) -> None:
        """A change to a worker's plan file renews its lease (`renew_lease`, what the server
        that pulled the plan calls); for a plan that is not the worker's, nothing changes."""
        worker = data.draw(st.sampled_from(self.workers))
        plan_id = self.held.get(worker) or data.draw(st.sampled_from([*self.queue, "zzzzz"]))
        renewed = self.run(self.service.renew_lease(self.name, worker, plan_id)).held
        assert renewed is (self.held.get(worker) == plan_id)
        if renewed:
            self.last_seen[worker] = self.clock()

    @rule(data=st.data(), reason=required_text, where=positions)
    def defer(self, data: st.DataObject, reason: str, where: Position) -> None:
        worker, caller = self.worker(data)
        deferred = self.service.defer_plan(self.name, reason, where, caller=caller)
        if self.unnamed_refused(caller, deferred):
            return
        if worker not in self.held:
            self.refused(deferred, NoActivePlanError)
            return
        placed = self.run(deferred)
        assert placed.plan.id == self.held.pop(worker)
        assert "Deferred: " in placed.plan.notes
        self.enqueue(placed.plan.id, where, placed.rank)
        self.events.append((EventKind.PLAN_DEFERRED, placed.plan.id))

    @rule(data=st.data(), summary=free_text)
    def complete(self, data: st.DataObject, summary: str) -> None:
        """A worker, holding a plan or not, completes its plan."""
        self.complete_as(*self.worker(data), summary)

    @precondition(lambda self: bool(self.queue or self.held))
    @rule(data=st.data())  # one argument, as a pull's (conformance_prerequisites)
    def workers_take_turns(self, data: st.DataObject) -> None:
        """Each worker in turn, naming itself: one that holds a plan completes it or works
        on, one that holds none pulls. Plans settle, the plans that waited for them become
        ready, and a worker whose queue holds only waiting plans is refused QUEUE_BLOCKED."""
        for worker in self.workers:
            if worker not in self.held:
                self.pull_as(worker, Caller.of(worker))
            elif data.draw(st.booleans()):
                self.complete_as(worker, Caller.of(worker), data.draw(free_text))

    def complete_as(self, worker: str, caller: Caller, summary: str) -> None:
        """`worker` completes its plan as `caller`; with none, it is refused."""
        self.words += 1
        word = f"zq{self.words}x{len(self.completed)}k"
        completed = self.service.complete_plan(self.name, f"{summary} {word}", caller=caller)
        if self.unnamed_refused(caller, completed):
            return
        if worker not in self.held:
            self.refused(completed, NoActivePlanError)
            return
        done = self.run(completed)
        assert done.plan.id == self.held[worker]
        assert done.queue_length == len(self.queue)
        self.completed[self.held[worker]] = word
        self.events.append((EventKind.PLAN_COMPLETED, self.held.pop(worker)))
        assert done.completed_count == len(self.completed)

    @rule(data=st.data(), reason=required_text)
    def discard(self, data: st.DataObject, reason: str) -> None:
        worker, caller = self.worker(data)
        discarded = self.service.discard_plan(self.name, reason, caller=caller)
        if self.unnamed_refused(caller, discarded):
            return
        if worker not in self.held:
            self.refused(discarded, NoActivePlanError)
            return
        gone = self.run(discarded)
        assert gone.plan.id == self.held[worker]
        self.discarded.add(self.held[worker])
        self.events.append((EventKind.PLAN_DISCARDED, self.held.pop(worker)))

    @precondition(lambda self: bool(self.queue))
    @rule(data=st.data(), where=positions)
    def person_moves(self, data: st.DataObject, where: Position) -> None:
        plan_id = data.draw(st.sampled_from(self.queue))
        placed = self.run(self.service.move_plan(self.name, plan_id, where))
        self.queue.remove(plan_id)
        self.enqueue(plan_id, where, placed.rank)
        self.events.append((EventKind.PLAN_MOVED, plan_id))

    @precondition(lambda self: len(self.queue) > 1)
    @rule(data=st.data())
    def person_moves_before(self, data: st.DataObject) -> None:
        """A person moves a queued plan just before another (renumbering when no integer is
        free between them); before itself is refused."""
        plan_id, before = data.draw(
            st.lists(st.sampled_from(self.queue), min_size=2, max_size=2, unique=True)
        )
        self.refused(self.service.move_plan(self.name, plan_id, before=plan_id), InvalidInputError)
        placed = self.run(self.service.move_plan(self.name, plan_id, before=before))
        self.queue.remove(plan_id)
        self.queue.insert(self.queue.index(before), plan_id)
        assert placed.rank == self.queue.index(plan_id) + 1, (placed.rank, self.queue)
        self.events.append((EventKind.PLAN_MOVED, plan_id))

    @precondition(lambda self: bool(self.queue))
    @rule(data=st.data(), goal=required_text, outputs=free_text)
    def person_edits(self, data: st.DataObject, goal: str, outputs: str) -> None:
        """A person edits a queued plan's sections: it keeps its place; the next pull hands
        over the new text."""
        plan_id = data.draw(st.sampled_from(self.queue))
        changes = {"goal": goal, "outputs": outputs}
        placed = self.run(self.service.edit_plan(self.name, plan_id, changes))
        assert (placed.plan.goal, placed.plan.content.outputs) == (goal, outputs)
        assert placed.rank == self.queue.index(plan_id) + 1
        self.events.append((EventKind.PLAN_EDITED, plan_id))

    @precondition(lambda self: bool(self.queue))
    @rule(data=st.data(), reason=required_text)
    def person_drops(self, data: st.DataObject, reason: str) -> None:
        plan_id = data.draw(st.sampled_from(self.queue))
        gone = self.run(self.service.drop_plan(self.name, plan_id, reason))
        self.queue.remove(plan_id)
        assert gone.queue_length == len(self.queue)
        self.discarded.add(plan_id)
        self.events.append((EventKind.PLAN_DISCARDED, plan_id))

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data(), where=positions)
    def person_cannot_steer_an_active_plan(self, data: st.DataObject, where: Position) -> None:
        plan_id = data.draw(st.sampled_from(sorted(self.held.values())))
        self.refused(self.service.move_plan(self.name, plan_id, where), PlanHeldByAgentError)
        self.refused(self.service.drop_plan(self.name, plan_id, "no"), PlanHeldByAgentError)
        edit = self.service.edit_plan(self.name, plan_id, {"goal": "no"})
        self.refused(edit, PlanHeldByAgentError)
        waits = self.service.edit_plan_after(self.name, plan_id, [])
        self.refused(waits, PlanHeldByAgentError)
        if self.queue:  # nothing moves before the agent's plan: it is not in the queue
            queued = data.draw(st.sampled_from(self.queue))
            moving = self.service.move_plan(self.name, queued, before=plan_id)
            self.refused(moving, PlanNotFoundError)

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data(), lapse=st.booleans())
    def take_over(self, data: st.DataObject, *, lapse: bool) -> None:
        """A worker takes another's plan over once its lease has lapsed (the clock moved on);
        within the lease it is refused; its own plan, or while holding one, never."""
        old, plan_id = data.draw(st.sampled_from(sorted(self.held.items())))
        taker, caller = self.worker(data)
        taking = self.service.pull_plan(self.name, caller=caller, take_over=plan_id)
        if self.unnamed_refused(caller, taking):
            return
        if taker == old:
            self.refused(taking, InvalidInputError)
        elif taker in self.held:
            self.refused(taking, PlanAlreadyActiveError)
            self.heard_from(taker)  # it asked while holding a plan: it is alive
        elif not lapse:  # the old worker heard from just now: its lease is live
            self.run(self.service.session_state(self.name, caller=Caller.of(old)))
            self.last_seen[old] = self.clock()
            self.refused(taking, LeaseLiveError)
            self.several = self.several or taker != MAIN
        else:
            self.clock.advance(round(self.service.lease_minutes * 60_000) + 1)
            placed = self.run(taking)
            assert (placed.plan.id, placed.plan.worker) == (plan_id, taker)
            assert placed.taken_from == old
            self.held[taker] = self.held.pop(old)
            self.heard_from(taker)
            self.events.append((EventKind.PLAN_TAKEN_OVER, plan_id))

    @precondition(lambda self: bool(self.held))
    @rule(data=st.data())
    def person_releases(self, data: st.DataObject) -> None:
        """A person puts any active plan back at the front of the queue."""
        worker, plan_id = data.draw(st.sampled_from(sorted(self.held.items())))
        placed = self.run(self.service.release_plan(self.name, plan_id))
        assert (placed.plan.id, placed.rank, placed.plan.worker) == (plan_id, 1, None)
        del self.held[worker]
        self.queue.insert(0, plan_id)
        self.events.append((EventKind.PLAN_RELEASED, plan_id))

    @precondition(lambda self: bool(self.queue))
    @rule(data=st.data())
    def person_cannot_release_a_queued_plan(self, data: st.DataObject) -> None:
        plan_id = data.draw(st.sampled_from(self.queue))
        self.refused(self.service.release_plan(self.name, plan_id), PlanNotFoundError)

    @precondition(lambda self: bool(self.completed))
    @rule(data=st.data())
    def search_finds_completed(self, data: st.DataObject) -> None:
        plan_id = data.draw(st.sampled_from(sorted(self.completed)))
        matches = self.run(self.service.search_history(self.name, self.completed[plan_id], 100))
        assert plan_id in [match.id for match in matches]
        assert [match.rank for match in matches] == list(range(1, len(matches) + 1))
        plan = self.run(self.service.get_history(self.name, plan_id))
        assert plan.outcome is not None
        assert plan.outcome.endswith(self.completed[plan_id])

    @rule(query=free_text)
    def search_returns_only_completed(self, query: str) -> None:
        try:
            matches = self.run(self.service.search_history(self.name, query, 100))
        except NinePlanError as exc:
            assert exc.category == "VALIDATION_ERROR"
            return
        assert {match.id for match in matches} <= set(self.completed)

    @precondition(lambda self: bool(self.discarded))
    @rule(data=st.data())
    def discarded_plans_are_not_history(self, data: st.DataObject) -> None:
        plan_id = data.draw(st.sampled_from(sorted(self.discarded)))
        self.refused(self.service.get_history(self.name, plan_id), PlanNotFoundError)

    @rule(data=st.data())
    def state_of_a_worker(self, data: st.DataObject) -> None:
        worker, caller = self.worker(data)
        state = self.run(self.service.session_state(self.name, caller=caller))
        assert (state.active_plan.id if state.active_plan else None) == self.held.get(worker)
        if caller.named and worker in self.held:  # a worker's own call renews its lease
            self.last_seen[worker] = self.clock()
            assert not next(hold for hold in state.active_plans if hold.worker == worker).stale
