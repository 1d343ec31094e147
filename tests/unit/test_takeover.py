"""Take-over of a stale plan and a person's release (DESIGN §10), on every backend: who may
take what, the journal's `plan_taken_over` and `plan_released`, what the old worker is told."""

import datetime as dt
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from nineplan_adapters.config import Settings
from nineplan_adapters.storage.clock import FixedClock
from nineplan_core.callers import Caller
from nineplan_core.errors import (
    InvalidInputError,
    LeaseLiveError,
    NoActivePlanError,
    PlanAlreadyActiveError,
    PlanNotFoundError,
)
from nineplan_core.journal import Actor, Event, EventKind
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import LEASE_MINUTES, PlanId, PlanRow, format_timestamp
from nineplan_core.replay import journal_issues
from tests.fakes import PLAN, Backend, open_service, postgres_schema

LAPSED = LEASE_MINUTES * 60 + 1  # seconds: a lease is over
K = EventKind


async def queue_of(backend: Backend, count: int) -> tuple[str, list[PlanId]]:
    name = await backend.session()
    ids = [(await backend.service.add_plan(name, **PLAN)).plan.id for _ in range(count)]
    return name, ids


async def test_a_stale_plan_is_taken_over_with_its_file_as_it_was(backend: Backend):
    """Once worker w1's lease has lapsed, w2 takes its plan over: the plan is w2's, its file
    is not rewritten (w1's notes are in what w2 is handed), `pulled_at` and `last_seen` are
    the take-over's time, the journal says from whom, to whom and how idle; when w2 completes
    it, w1's notes are in the plan."""
    service = backend.service
    name, (a, _) = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("w1"))
    written = (await backend.plan_text(name, a) or "") + "\nw1 found the index is missing\n"
    await backend.write_plan_text(name, a, written)
    backend.clock.advance(LAPSED)
    taken = await service.pull_plan(name, take_over=a, caller=Caller.of("w2"))
    assert (taken.plan.id, taken.plan.worker, taken.taken_from) == (a, "w2", "w1")
    assert taken.text == written
    assert await backend.plan_text(name, a) == written
    state = await service.session_state(name, caller=Caller.of("w2"))
    assert state.active_plan is not None
    assert state.active_plan.id == a
    [hold] = state.active_plans
    assert (hold.worker, hold.pulled_at, hold.plan.last_seen) == (
        "w2",
        backend.clock(),
        backend.clock(),
    )
    assert not hold.stale
    events = [e for e in await service.journal(name) if isinstance(e, Event)]
    over = events[-1]
    assert (over.kind, over.plan_id, over.actor.value) == (EventKind.PLAN_TAKEN_OVER, a, "agent")
    detail = {key: value for key, value in over.detail.items() if key != "machine"}
    assert detail == {"from": "w1", "to": "w2", "idle_minutes": round(LAPSED / 60, 1)}
    done = await service.complete_plan(name, "indexed", caller=Caller.of("w2"))
    assert "w1 found the index is missing" in done.plan.notes
    report = await service.validate_session(name)
    assert report.valid, report.issues


async def test_a_live_lease_is_refused_saying_who_holds_it_until_when(backend: Backend):
    """A take-over within the lease is PLAN_ALREADY_ACTIVE naming the worker and when its
    lease ends; nothing changes."""
    service = backend.service
    name, (a, _) = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("w1"))
    pulled = backend.clock()
    backend.clock.advance(60)
    with pytest.raises(LeaseLiveError) as caught:
        await service.pull_plan(name, take_over=a, caller=Caller.of("w2"))
    assert caught.value.category == "PLAN_ALREADY_ACTIVE"
    until = format_timestamp(pulled + dt.timedelta(minutes=LEASE_MINUTES))
    assert caught.value.message == (
        f"Plan {a} is held by worker w1, whose lease is live until {until}; only a stale plan "
        "can be taken over."
    )
    [hold] = (await service.session_state(name)).active_plans
    assert hold.worker == "w1"


async def test_a_caller_holding_a_plan_cannot_take_another_over(backend: Backend):
    """A worker that holds a plan is PLAN_ALREADY_ACTIVE, even for a stale plan; taking over
    its own plan is a VALIDATION_ERROR naming take_over."""
    service = backend.service
    name, (a, b) = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("w1"))
    await service.pull_plan(name, caller=Caller.of("w2"))
    backend.clock.advance(LAPSED)
    with pytest.raises(PlanAlreadyActiveError) as caught:
        await service.pull_plan(name, take_over=a, caller=Caller.of("w2"))
    assert not isinstance(caught.value, LeaseLiveError)
    assert caught.value.plan_id == b
    with pytest.raises(InvalidInputError) as own:
        await service.pull_plan(name, take_over=b, caller=Caller.of("w2"))
    assert own.value.field == "take_over"
    assert own.value.message == f"take_over: plan {b} is yours already"


async def test_only_an_active_plan_can_be_taken_over(backend: Backend):
    """take_over of a queued, completed or discarded plan is a VALIDATION_ERROR naming
    take_over; of an unknown id PLAN_NOT_FOUND; of a malformed id a VALIDATION_ERROR."""
    service = backend.service
    name, (a, b, c) = await queue_of(backend, 3)
    await service.pull_plan(name)
    await service.complete_plan(name, "done")
    await service.pull_plan(name)
    await service.discard_plan(name, "no")
    for plan_id, status in ((a, "completed"), (b, "discarded"), (c, "queued")):
        with pytest.raises(InvalidInputError) as caught:
            await service.pull_plan(name, take_over=plan_id, caller=Caller.of("w2"))
        assert caught.value.field == "take_over"
        assert f"plan {plan_id} is {status}" in caught.value.message
    with pytest.raises(PlanNotFoundError):
        await service.pull_plan(name, take_over="zzzzz", caller=Caller.of("w2"))
    with pytest.raises(InvalidInputError) as bad:
        await service.pull_plan(name, take_over="NOT-AN-ID", caller=Caller.of("w2"))
    assert bad.value.field == "take_over"
    assert (await service.session_state(name)).queue[0].id == c


async def test_the_old_worker_is_told_who_took_its_plan_and_when(backend: Backend):
    """After a take-over the old worker's defer, complete and discard are NO_ACTIVE_PLAN
    saying which worker took the plan and when; once it pulls again it is told nothing of it."""
    service = backend.service
    name, (a, b) = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("w1"))
    backend.clock.advance(LAPSED)
    await service.pull_plan(name, take_over=a, caller=Caller.of("w2"))
    when = format_timestamp(backend.clock())
    for call in (
        service.defer_plan(name, "later", caller=Caller.of("w1")),
        service.complete_plan(name, "done", caller=Caller.of("w1")),
        service.discard_plan(name, "no", caller=Caller.of("w1")),
    ):
        with pytest.raises(NoActivePlanError) as caught:
            await call
        assert caught.value.message == (
            f"No plan is active for worker w1: plan {a} was taken over by worker w2 at {when}. "
            f"Other workers hold 1 plan(s): {a} (w2)."
        )
    assert (await service.pull_plan(name, caller=Caller.of("w1"))).plan.id == b
    await service.complete_plan(name, "done", caller=Caller.of("w1"))
    with pytest.raises(NoActivePlanError) as later:
        await service.complete_plan(name, "again", caller=Caller.of("w1"))
    assert later.value.message == (  # w2 still holds the plan it took
        f"No plan is active for worker w1. Other workers hold 1 plan(s): {a} (w2)."
    )


async def test_main_taken_over_is_told_in_its_own_words(backend: Backend):
    """The lone agent (main) whose stale plan another worker took is told so too: naming no
    worker, it is first told the session now has several workers; as worker="main", that
    its plan was taken over, by whom and when."""
    service = backend.service
    name, (a,) = await queue_of(backend, 1)
    await service.pull_plan(name)
    backend.clock.advance(LAPSED)
    await service.pull_plan(name, take_over=a, caller=Caller.of("rescue"))
    with pytest.raises(InvalidInputError) as unnamed:
        await service.complete_plan(name, "done")
    assert unnamed.value.field == "worker"
    with pytest.raises(NoActivePlanError) as caught:
        await service.complete_plan(name, "done", caller=Caller.of("main"))
    assert caught.value.message.startswith(  # another worker holds it: main is named
        f"No plan is active for worker main: plan {a} was taken over by worker rescue at "
    )
    assert caught.value.message.endswith(f"Other workers hold 1 plan(s): {a} (rescue).")
    assert (await service.validate_session(name)).journal_matches_state


async def test_a_person_releases_an_active_plan_to_the_front(backend: Backend):
    """A person's release puts any active plan back at the front of the queue, its file's
    edits read into its Notes and the file left as it is; the journal's `plan_released`
    (actor person) names the worker; the worker is told a person released it; the journal
    replays to the state."""
    service = backend.service
    name, (a, b) = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("w1"))
    written = (await backend.plan_text(name, a) or "") + "\nhalf done: the table exists\n"
    await backend.write_plan_text(name, a, written)
    placed = await service.release_plan(name, a)
    assert (placed.plan.id, placed.rank, placed.plan.worker) == (a, 1, None)
    assert "half done: the table exists" in placed.plan.notes
    assert await backend.plan_text(name, a) == written
    state = await service.session_state(name)
    assert [entry.id for entry in state.queue] == [a, b]
    assert state.active_plans == []
    last = [e for e in await service.journal(name) if isinstance(e, Event)][-1]
    assert (last.kind, last.plan_id, last.actor.value) == (EventKind.PLAN_RELEASED, a, "person")
    assert last.detail == {"worker": "w1", "position": "front", "rank": 1}
    with pytest.raises(NoActivePlanError) as caught:
        await service.complete_plan(name, "done", caller=Caller.of("w1"))
    assert caught.value.message == (
        f"No plan is active for worker w1: plan {a} was released back to the queue by a "
        f"person at {format_timestamp(backend.clock())}."
    )
    again = await service.pull_plan(name, caller=Caller.of("w2"))
    assert again.plan.id == a
    assert "half done: the table exists" in again.plan.notes
    report = await service.validate_session(name)
    assert report.valid, report.issues


async def test_only_an_active_plan_can_be_released(backend: Backend):
    """Releasing a queued, finished or unknown plan is PLAN_NOT_FOUND naming an active plan;
    a malformed id a VALIDATION_ERROR; nothing changes."""
    service = backend.service
    name, (a, b) = await queue_of(backend, 2)
    await service.pull_plan(name)
    await service.complete_plan(name, "done")
    for plan_id in (a, b, "zzzzz"):
        with pytest.raises(PlanNotFoundError) as caught:
            await service.release_plan(name, plan_id)
        assert caught.value.message == f"No active plan with id {plan_id!r} in this session."
    with pytest.raises(InvalidInputError) as bad:
        await service.release_plan(name, "nope")
    assert bad.value.field == "plan_id"
    assert [entry.id for entry in (await service.session_state(name)).queue] == [b]


def _journal(*steps: tuple[EventKind, str, Mapping[str, object]]) -> list[Event]:
    at = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return [
        Event(seq=seq, kind=kind, at=at, actor=Actor.AGENT, plan_id=plan_id, detail=detail)
        for seq, (kind, plan_id, detail) in enumerate(steps, start=1)
    ]


def test_the_journal_replays_who_holds_what_through_take_overs_and_releases():
    """Replay follows a take-over to its new worker and a release to the front of the queue;
    a take-over from a worker that did not hold the plan, or to one that holds another, and
    a stored holder the journal does not give, are each reported."""
    added = [(K.PLAN_ADDED, plan_id, {"position": "back"}) for plan_id in ("aaaaa", "bbbbb")]
    steps = [
        *added,
        (K.PLAN_PULLED, "aaaaa", {"worker": "w1"}),
        (K.PLAN_TAKEN_OVER, "aaaaa", {"from": "w1", "to": "w2"}),
    ]
    held = [PlanRow(PlanId("aaaaa"), PlanStatus.ACTIVE, None, "w2")]
    queued = [PlanRow(PlanId("bbbbb"), PlanStatus.QUEUED, 1)]
    assert journal_issues(_journal(*steps), [*held, *queued]) == []
    wrong_holder = [PlanRow(PlanId("aaaaa"), PlanStatus.ACTIVE, None, "w1"), *queued]
    assert journal_issues(_journal(*steps), wrong_holder) == [
        "the journal replays plan aaaaa as held by w2, it is held by w1"
    ]
    released = [*steps, (K.PLAN_RELEASED, "aaaaa", {"worker": "w2", "position": "front"})]
    front = [PlanRow(PlanId("aaaaa"), PlanStatus.QUEUED, 0), *queued]
    assert journal_issues(_journal(*released), front) == []
    stolen = [*added, (K.PLAN_PULLED, "aaaaa", {"worker": "w1"})]
    stolen += [(K.PLAN_TAKEN_OVER, "aaaaa", {"from": "w9", "to": "w2"})]
    assert journal_issues(_journal(*stolen), [*held, *queued]) == [
        "journal event 4 (plan_taken_over) is worker w9's, plan aaaaa is held by w1"
    ]
    greedy = [*added, (K.PLAN_PULLED, "aaaaa", {"worker": "w1"})]
    greedy += [(K.PLAN_PULLED, "bbbbb", {"worker": "w2"})]
    greedy += [(K.PLAN_TAKEN_OVER, "aaaaa", {"from": "w1", "to": "w2"})]
    both = [held[0], PlanRow(PlanId("bbbbb"), PlanStatus.ACTIVE, None, "w2")]
    assert journal_issues(_journal(*greedy), both) == [
        "journal event 5 gives aaaaa to worker w2, who holds a plan already"
    ]


async def test_a_take_over_repeated_with_its_request_id_returns_the_first_answer(
    backend: Backend,
):
    """A take-over retried with the same request_id (its answer lost on the way) returns the
    first result, whose lease is now the caller's, instead of being refused; the journal
    holds one take-over."""
    service = backend.service
    name, (a, _) = await queue_of(backend, 2)
    await service.pull_plan(name, caller=Caller.of("w1"))
    backend.clock.advance(LAPSED)
    first = await service.pull_plan(name, take_over=a, caller=Caller.of("w2", request_id="take-1"))
    again = await service.pull_plan(name, take_over=a, caller=Caller.of("w2", request_id="take-1"))
    assert (again.plan.id, again.plan.worker, again.taken_from) == (a, "w2", "w1")
    assert again.text == first.text
    kinds = [e.kind for e in await service.journal(name) if isinstance(e, Event)]
    assert kinds.count(K.PLAN_TAKEN_OVER) == 1


@pytest.mark.postgres
async def test_a_take_over_on_another_machine_gives_that_machine_the_file(tmp_path: Path):
    """Two machines (their own sessions folders) on one PostgreSQL database: worker w2 on
    machine B takes over the stale plan w1 pulled on machine A and gets a file there with the
    stored text, while A's file stays as w1 left it."""
    clock = FixedClock(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    async with postgres_schema() as url, AsyncExitStack() as stack:
        a, b = [
            await stack.enter_async_context(
                open_service(Settings(sessions_path=tmp_path / side, database_url=url), clock=clock)
            )
            for side in ("a", "b")
        ]
        name = (await a.create_session("two machines")).session.name
        plan = (await a.add_plan(name, **PLAN)).plan
        pulled = await a.pull_plan(name, caller=Caller.of("w1"))
        mine = Path(pulled.path)
        mine.write_text(mine.read_text() + "\nw1 on machine a\n")
        clock.advance(LAPSED)
        taken = await b.pull_plan(name, take_over=plan.id, caller=Caller.of("w2"))
        assert Path(taken.path) != mine
        assert Path(taken.path).read_text() == taken.text
        assert PLAN["goal"] in taken.text
        assert "w1 on machine a" in mine.read_text()
        report = await b.validate_session(name)
        assert report.valid, report.issues
