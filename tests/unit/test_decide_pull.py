"""The pull's one decision, with no store: every rule of a pull and a take-over (docs/agents.md,
"Many agents on one session" and "Taking over a stale plan") as a plain function of a snapshot."""

import datetime as dt
from typing import TypeVar

import attrs
import pytest

from nineplan_core.callers import Caller
from nineplan_core.errors import (
    InvalidInputError,
    LeaseLiveError,
    PlanAlreadyActiveError,
    PlanNotFoundError,
    QueueEmptyError,
)
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, PlanContent, PlanId, QueueEntry
from nineplan_core.prerequisites import QueueBlockedError
from nineplan_core.pulls import Pull, PullSnapshot, Refusal, decide_pull
from nineplan_core.suggestions import Action
from nineplan_core.workers import MAIN, UNNAMED, Worker

E = TypeVar("E", bound=Exception)

NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
LEASE = dt.timedelta(minutes=30)
LONG_AGO = NOW - LEASE - dt.timedelta(seconds=1)
CONTENT = PlanContent(context="c", goal="g", approach="a", success_criteria="s")
TESTS, DOCS = Worker("tests"), Worker("docs")


def queued(plan_id: str) -> Plan:
    return Plan(id=PlanId(plan_id), content=CONTENT, position=1, created_at=NOW)


def held(plan_id: str, worker: Worker, last_seen: dt.datetime = NOW) -> Plan:
    return queued(plan_id).pull(worker=worker, at=last_seen)


def caller(worker: Worker | None = None) -> Caller:
    return Caller(worker=UNNAMED if worker is None else worker)


def refused(decided: Pull | Refusal, kind: type[Exception]) -> Refusal:
    assert isinstance(decided, Refusal)
    assert type(decided.error) is kind
    return decided


def error_of(decided: Refusal, kind: type[E]) -> E:
    assert isinstance(decided.error, kind)
    return decided.error


def test_a_pull_gets_the_front_of_the_queue_at_the_snapshots_time() -> None:
    """With nothing held, the caller gets the front of the queue, pulled and seen at `now`."""
    snapshot = PullSnapshot(now=NOW, active=(), front=queued("aaaaa"))
    decided = decide_pull(snapshot, caller(TESTS), None, LEASE)
    assert isinstance(decided, Pull)
    assert decided.taken_from is None
    taken = decided.taken
    assert (taken.id, taken.status, taken.worker, taken.last_seen) == (
        "aaaaa",
        PlanStatus.ACTIVE,
        "tests",
        NOW,
    )


def test_a_call_that_names_no_worker_pulls_for_main_and_marks_nothing() -> None:
    """`Unnamed` acts as `main`: the plan is main's, and no worker is remembered as named."""
    decided = decide_pull(
        PullSnapshot(now=NOW, active=(), front=queued("aaaaa")), caller(), None, LEASE
    )
    assert isinstance(decided, Pull)
    assert (decided.worker, decided.name_workers) == (MAIN, False)


def test_a_named_worker_is_remembered_by_the_session() -> None:
    """A pull naming a worker other than `main` asks the session to remember it."""
    decided = decide_pull(
        PullSnapshot(now=NOW, active=(), front=queued("aaaaa")), caller(TESTS), None, LEASE
    )
    assert decided.name_workers


def test_another_workers_plan_does_not_stop_a_pull() -> None:
    """One active plan per worker: docs holding a plan leaves tests free to pull."""
    snapshot = PullSnapshot(now=NOW, active=(held("bbbbb", DOCS),), front=queued("aaaaa"))
    decided = decide_pull(snapshot, caller(TESTS), None, LEASE)
    assert isinstance(decided, Pull)
    assert decided.plan.id == "aaaaa"


def test_a_caller_already_holding_a_plan_is_refused_and_its_lease_renewed() -> None:
    """A worker that holds a plan is refused (PLAN_ALREADY_ACTIVE naming it), and the refusal
    keeps its plan heard from at `now` and the workers mark."""
    mine = held("bbbbb", TESTS, last_seen=LONG_AGO)
    snapshot = PullSnapshot(now=NOW, active=(mine,), front=queued("aaaaa"))
    decided = refused(decide_pull(snapshot, caller(TESTS), None, LEASE), PlanAlreadyActiveError)
    assert error_of(decided, PlanAlreadyActiveError).plan_id == "bbbbb"
    assert decided.renewed == mine.seen(NOW)
    assert decided.name_workers


def test_an_empty_queue_is_refused_naming_the_plans_others_hold() -> None:
    """An empty queue is QUEUE_EMPTY with the other workers' plans and the completed count;
    it keeps nothing."""
    snapshot = PullSnapshot(now=NOW, active=(held("bbbbb", DOCS),), completed=4)
    decided = refused(decide_pull(snapshot, caller(TESTS), None, LEASE), QueueEmptyError)
    error = decided.error
    assert isinstance(error, QueueEmptyError)
    assert (error.held, error.completed_count) == ([("bbbbb", "docs")], 4)
    assert (decided.renewed, decided.name_workers) == (None, False)


def test_a_pull_names_the_stale_plans_beside_it_silent_longest_first() -> None:
    """The other active plans whose leases have lapsed come with the pull, oldest silence
    first; a live one does not."""
    older = held("ccccc", DOCS, last_seen=LONG_AGO - dt.timedelta(minutes=5))
    old = held("bbbbb", Worker("lint"), last_seen=LONG_AGO)
    live = held("ddddd", Worker("web"))
    snapshot = PullSnapshot(now=NOW, active=(old, older, live), front=queued("aaaaa"))
    decided = decide_pull(snapshot, caller(TESTS), None, LEASE)
    assert isinstance(decided, Pull)
    assert [plan.id for plan in decided.stale_beside] == ["ccccc", "bbbbb"]


def test_a_stale_plan_is_taken_over_at_the_snapshots_time() -> None:
    """A take-over of a plan whose lease lapsed gives it to the caller, seen at `now`, saying
    from whom and how long its worker was silent."""
    stale = held("bbbbb", DOCS, last_seen=LONG_AGO)
    snapshot = PullSnapshot(now=NOW, active=(stale,), target=stale)
    decided = decide_pull(snapshot, caller(TESTS), PlanId("bbbbb"), LEASE)
    assert isinstance(decided, Pull)
    assert (decided.taken_from, decided.idle) == (DOCS, NOW - LONG_AGO)
    taken = decided.taken
    assert (taken.worker, taken.last_seen, taken.status) == ("tests", NOW, PlanStatus.ACTIVE)
    assert decided.stale_beside == ()


def test_a_live_lease_is_not_taken_over_and_says_until_when() -> None:
    """A take-over of a plan heard from within the lease is PLAN_ALREADY_ACTIVE (a live lease)
    naming its worker and when the lease lapses; the workers mark is kept."""
    live = held("bbbbb", DOCS, last_seen=NOW - dt.timedelta(minutes=10))
    snapshot = PullSnapshot(now=NOW, active=(live,), target=live)
    decided = refused(decide_pull(snapshot, caller(TESTS), PlanId("bbbbb"), LEASE), LeaseLiveError)
    error = decided.error
    assert isinstance(error, LeaseLiveError)
    assert (error.worker, error.until) == ("docs", "2026-01-02T03:24:05Z")
    assert (decided.renewed, decided.name_workers) == (None, True)


def test_a_lease_exactly_at_its_edge_is_still_live() -> None:
    """At exactly one lease after `last_seen`, the lease has not lapsed yet."""
    edge = held("bbbbb", DOCS, last_seen=NOW - LEASE)
    snapshot = PullSnapshot(now=NOW, active=(edge,), target=edge)
    refused(decide_pull(snapshot, caller(TESTS), PlanId("bbbbb"), LEASE), LeaseLiveError)


def test_taking_over_your_own_plan_is_bad_input_and_renews_nothing() -> None:
    """take_over of the caller's own plan is a VALIDATION_ERROR naming take_over."""
    mine = held("bbbbb", TESTS, last_seen=LONG_AGO)
    snapshot = PullSnapshot(now=NOW, active=(mine,), target=mine)
    decided = refused(
        decide_pull(snapshot, caller(TESTS), PlanId("bbbbb"), LEASE), InvalidInputError
    )
    assert error_of(decided, InvalidInputError).field == "take_over"
    assert (decided.renewed, decided.name_workers) == (None, False)


def test_a_caller_holding_a_plan_cannot_take_over_another() -> None:
    """A worker that holds a plan may not take over a stale one: PLAN_ALREADY_ACTIVE for its own."""
    mine, stale = held("aaaaa", TESTS), held("bbbbb", DOCS, last_seen=LONG_AGO)
    snapshot = PullSnapshot(now=NOW, active=(mine, stale), target=stale)
    decided = refused(
        decide_pull(snapshot, caller(TESTS), PlanId("bbbbb"), LEASE), PlanAlreadyActiveError
    )
    assert error_of(decided, PlanAlreadyActiveError).plan_id == "aaaaa"


@pytest.mark.parametrize("status", ["queued", "completed", "discarded"])
def test_taking_over_a_plan_that_is_not_active_is_bad_input(status: str) -> None:
    """take_over of a queued or finished plan is a VALIDATION_ERROR naming take_over and its status."""
    plan = queued("bbbbb")
    if status == "completed":
        plan = plan.pull(worker=MAIN, at=NOW).complete(outcome="done", at=NOW)
    elif status == "discarded":
        plan = plan.pull(worker=MAIN, at=NOW).discard(reason="no", at=NOW)
    snapshot = PullSnapshot(now=NOW, active=(), target=plan)
    decided = refused(
        decide_pull(snapshot, caller(TESTS), PlanId("bbbbb"), LEASE), InvalidInputError
    )
    assert error_of(decided, InvalidInputError).field == "take_over"
    assert f"is {status}" in decided.error.message


def test_taking_over_an_unknown_plan_is_not_found() -> None:
    """take_over of an id the session does not have is PLAN_NOT_FOUND."""
    snapshot = PullSnapshot(now=NOW, active=(held("aaaaa", DOCS, last_seen=LONG_AGO),))
    refused(decide_pull(snapshot, caller(TESTS), PlanId("zzzzz"), LEASE), PlanNotFoundError)


def test_a_plan_never_heard_from_is_never_stale() -> None:
    """An active plan with no `last_seen` (pulled before leases) is never taken over."""
    old = attrs.evolve(held("bbbbb", DOCS), last_seen=None)
    snapshot = PullSnapshot(now=NOW, active=(old,), target=old)
    refused(decide_pull(snapshot, caller(TESTS), PlanId("bbbbb"), LEASE), LeaseLiveError)


def test_a_caller_naming_no_worker_is_refused_once_the_session_has_several() -> None:
    """In a session that has had a worker other than `main` named, a pull or a take-over that
    names no worker is refused first (InvalidInputError naming `worker`, saying the lead agent
    may pass worker="main"), keeping nothing: no lease renewed, no mark."""
    for take_over in (None, PlanId("bbbbb")):
        snapshot = PullSnapshot(now=NOW, active=(), front=queued("aaaaa"), workers_named=True)
        decided = refused(decide_pull(snapshot, caller(), take_over, LEASE), InvalidInputError)
        error = error_of(decided, InvalidInputError)
        assert error.field == "worker"
        assert 'worker="main"' in error.problem
        assert (decided.renewed, decided.name_workers) == (None, False)


def test_worker_main_named_still_pulls_in_a_session_of_several() -> None:
    """worker="main", named, is always valid: it gets the front of the queue as `main`."""
    snapshot = PullSnapshot(now=NOW, active=(held("ccccc", TESTS),), front=queued("aaaaa"))
    decided = decide_pull(attrs.evolve(snapshot, workers_named=True), caller(MAIN), None, LEASE)
    assert isinstance(decided, Pull)
    assert decided.worker == MAIN


def test_a_lone_agent_naming_no_worker_pulls_as_before() -> None:
    """A session that never had another worker named: a call naming none is `main`'s."""
    snapshot = PullSnapshot(now=NOW, active=(), front=queued("aaaaa"))
    decided = decide_pull(snapshot, caller(), None, LEASE)
    assert isinstance(decided, Pull)
    assert decided.worker == MAIN


def test_plans_queued_with_none_ready_are_blocked_naming_what_they_wait_for() -> None:
    """No ready plan while plans are queued: QueueBlockedError naming the front plans and the
    plan they wait for with its worker; nothing renewed; the suggestion is to wait, or to take
    over the plan waited for once its lease has lapsed."""
    front = (QueueEntry(PlanId("bbbbb"), "g", 1, (PlanId("aaaaa"),)),)
    snapshot = PullSnapshot(now=NOW, active=(held("aaaaa", DOCS),), waiting=front, queued=4)
    decided = refused(decide_pull(snapshot, caller(TESTS), None, LEASE), QueueBlockedError)
    error = error_of(decided, QueueBlockedError)
    assert decided.renewed is None
    assert error.message == (
        "4 plan(s) are queued, all waiting: bbbbb waits for aaaaa (active, worker docs, last "
        "heard 0 s ago); 3 more behind them."
    )
    assert error.suggestion.action is Action.WAIT_FOR_PREREQUISITES
    stale = attrs.evolve(snapshot, active=(held("aaaaa", DOCS, LONG_AGO),))
    error = error_of(
        refused(decide_pull(stale, caller(TESTS), None, LEASE), QueueBlockedError),
        QueueBlockedError,
    )
    assert (error.suggestion.action, error.stale) == (Action.TAKE_OVER, "aaaaa")
