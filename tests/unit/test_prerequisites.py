"""Plans that wait for other plans, on every backend (docs/architecture.md, "Prerequisites"):
`after` checked, the first ready plan pulled, QUEUE_BLOCKED naming who holds what is waited
for, a discarded prerequisite settling, the outcomes handed over, `add_plans` in one
transaction, and the journal replaying to the state (`admin_validate` finds nothing)."""

import attrs
import pytest

from nineplan_core.callers import Caller
from nineplan_core.errors import InvalidInputError, QueueEmptyError
from nineplan_core.journal import Event, EventKind
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import SessionName
from nineplan_core.prerequisites import QueueBlockedError
from nineplan_core.suggestions import Action
from tests.fakes import PLAN, Backend

A, B = Caller.of("a"), Caller.of("b")


def _plan(goal: str, **extra: object) -> dict[str, object]:
    return {**PLAN, "goal": goal, **extra}


async def _added(backend: Backend, name: str, goal: str, after: list[str] | None = None) -> str:
    placed = await backend.service.add_plan(name, **{**PLAN, "goal": goal}, after=after)
    return placed.plan.id


async def test_a_waiting_plan_is_passed_over_for_the_next_ready_one(backend: Backend):
    """With A <- B (B after A) and C free, queued A, B, C: worker a gets A, worker b gets C
    (not B, whose prerequisite is active); once A completes, B's pull hands over A's outcome."""
    name = await backend.session()
    first = await _added(backend, name, "Design the users table")
    second = await _added(backend, name, "Build the login form", [first])
    third = await _added(backend, name, "Write the README")
    assert (await backend.service.pull_plan(name, caller=A)).plan.id == first
    assert (await backend.service.pull_plan(name, caller=B)).plan.id == third
    await backend.service.complete_plan(name, "users table in schema.sql", caller=B)
    with pytest.raises(QueueBlockedError) as blocked:
        await backend.service.pull_plan(name, caller=B)
    assert f"{second} waits for {first} (active, worker a" in blocked.value.message
    assert blocked.value.category == "QUEUE_BLOCKED"
    await backend.service.complete_plan(name, "the table: users(id, email, hash)", caller=A)
    pulled = await backend.service.pull_plan(name, caller=B)
    assert pulled.plan.id == second
    ((prerequisite),) = pulled.prerequisites
    assert (prerequisite.id, prerequisite.status) == (first, PlanStatus.COMPLETED)
    assert prerequisite.outcome == "the table: users(id, email, hash)"


async def test_a_discarded_prerequisite_settles(backend: Backend):
    """A discarded prerequisite makes its dependent ready; the pull carries it with no
    outcome and the discard's reason."""
    name = await backend.session()
    first = await _added(backend, name, "Try the old API")
    second = await _added(backend, name, "Use what it found", [first])
    await backend.service.pull_plan(name, caller=A)
    await backend.service.discard_plan(name, "the old API is gone", caller=A)
    pulled = await backend.service.pull_plan(name, caller=A)
    assert pulled.plan.id == second
    (prerequisite,) = pulled.prerequisites
    assert prerequisite.status is PlanStatus.DISCARDED
    assert (prerequisite.outcome, prerequisite.reason) == (None, "the old API is gone")


async def test_after_names_only_plans_that_can_settle(backend: Backend):
    """`after` refuses an unknown plan, a discarded one, one named twice and more than 20,
    each naming `after` and the id; a completed one is settled already (nothing to wait for)."""
    name = await backend.session()
    done = await _added(backend, name, "Done first")
    gone = await _added(backend, name, "Dropped")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "built")
    await backend.service.pull_plan(name)
    await backend.service.discard_plan(name, "not needed")
    for after, words in [
        (["zzzzz"], "names plan zzzzz, which is not in this session"),
        ([gone], f"names plan {gone}, which was discarded"),
        ([done, done], f"names plan {done} twice"),
        ([f"{n:05d}" for n in range(21)], "the limit is 20"),
        (["NOT-AN-ID"], "must be a plan id"),
    ]:
        with pytest.raises(InvalidInputError) as refused:
            await backend.service.add_plan(name, **PLAN, after=after)
        assert refused.value.field == "after"
        assert words in refused.value.problem
    placed = await backend.service.add_plan(name, **PLAN, after=[done])
    assert placed.waiting_for == ()
    assert (await backend.service.pull_plan(name)).plan.id == placed.plan.id


async def test_a_lone_agent_is_never_blocked_by_its_own_queue(backend: Backend):
    """One worker, plans added in any order with prerequisites among queued plans: every pull
    gets a plan until the queue is empty (the first ready one is always there)."""
    name = await backend.session()
    c = await _added(backend, name, "C")
    b = await _added(backend, name, "B")
    a = await _added(backend, name, "A")
    await backend.service.edit_plan_after(name, c, [b])
    await backend.service.edit_plan_after(name, b, [a])
    order = []
    for _ in range(3):
        order.append((await backend.service.pull_plan(name)).plan.id)
        await backend.service.complete_plan(name, "done")
    assert order == [a, b, c]
    with pytest.raises(QueueEmptyError):
        await backend.service.pull_plan(name)


async def test_add_plans_adds_in_order_in_one_call(backend: Backend):
    """`add_plans` at the front gives [A, B, C, ...] ahead of what was queued; a key names an
    earlier item in `after`; the journal has one `plan_added` per plan with `batch` and
    `after`; it replays to the state."""
    name = await backend.session()
    old = await _added(backend, name, "Old")
    added = await backend.service.add_plans(
        name,
        [_plan("A", key="a"), _plan("B", key="b", after=["a"]), _plan("C", after=["a", "b"])],
        position="front",
    )
    ids = [entry.plan.id for entry in added.plans]
    assert [entry.key for entry in added.plans] == ["a", "b", None]
    assert [entry.rank for entry in added.plans] == [1, 2, 3]
    assert added.queue_length == 4
    state = await backend.service.session_state(name)
    assert [entry.id for entry in state.queue] == [*ids, old]
    assert [entry.waiting_for for entry in state.queue] == [(), (ids[0],), (ids[0], ids[1]), ()]
    events = [e for e in await backend.service.journal(name) if isinstance(e, Event)]
    batch = [e for e in events if e.kind is EventKind.PLAN_ADDED and "batch" in e.detail]
    assert [e.detail.get("after") for e in batch] == [None, [ids[0]], [ids[0], ids[1]]]
    report = await backend.service.validate_session(name)
    assert report.valid, report.issues


async def test_an_invalid_item_adds_nothing(backend: Backend):
    """One bad item (a blank goal in the third, an unknown key, a key named before it is
    given) refuses the whole call, naming `plans[i].field`; nothing is added."""
    name = await backend.session()
    for plans, field in [
        ([_plan("A"), _plan("B"), _plan(" ")], "plans[2].goal"),
        ([_plan("A", after=["later"]), _plan("B", key="later")], "plans[0].after"),
        ([_plan("A", key="x"), _plan("B", key="x")], "plans[1].key"),
        ([_plan("A", after=["zzzzz"])], "plans[0].after"),
        ([], "plans"),
    ]:
        with pytest.raises(InvalidInputError) as refused:
            await backend.service.add_plans(name, plans)
        assert refused.value.field == field
    assert (await backend.service.session_state(name)).queue == []


async def test_a_retried_batch_adds_nothing_twice(backend: Backend):
    """The same `request_id` again returns the first call's plans and adds none."""
    name = await backend.session()
    caller = Caller.of(None, request_id="split-1")
    first = await backend.service.add_plans(name, [_plan("A"), _plan("B")], caller=caller)
    again = await backend.service.add_plans(name, [_plan("A"), _plan("B")], caller=caller)
    assert [p.plan.id for p in again.plans] == [p.plan.id for p in first.plans]
    assert len((await backend.service.session_state(name)).queue) == 2


async def test_a_restored_prerequisite_makes_its_dependents_wait_again(backend: Backend):
    """The store's count follows a prerequisite both ways: dropped, its dependent is ready;
    put back in the queue (a person's restore, written as the store's own save), the
    dependent waits for it again and the restored plan is pulled first."""
    name = await backend.session()
    first = await _added(backend, name, "First")
    second = await _added(backend, name, "Second", [first])
    dropped = await backend.service.drop_plan(name, first, "not now")
    store = await backend.catalog.open(SessionName(name))
    async with store.reading() as reader:
        assert [(e.id, e.waiting_for) for e in await reader.queue()] == [(second, ())]
    async with store.transaction() as tx:
        await tx.save(attrs.evolve(dropped.plan, status=PlanStatus.QUEUED, position=0))
    async with store.reading() as reader:
        assert [(e.id, e.waiting_for) for e in await reader.queue()] == [
            (first, ()),
            (second, (first,)),
        ]
        front = await reader.front_of_queue()
    assert front is not None
    assert front.id == first


async def test_a_queue_blocked_by_a_stale_plan_suggests_taking_it_over(backend: Backend):
    """Plans wait for a plan whose worker went silent past its lease: the refusal still names
    what they wait for (with how long ago its worker was heard), and its suggestion is to take
    that plan over, not to wait."""
    name = await backend.session()
    first = await _added(backend, name, "Slow work")
    second = await _added(backend, name, "Needs the slow work", [first])
    await backend.service.pull_plan(name, caller=A)
    with pytest.raises(QueueBlockedError) as live:
        await backend.service.pull_plan(name, caller=B)
    assert live.value.suggestion.action is Action.WAIT_FOR_PREREQUISITES
    assert live.value.message == (
        f"1 plan(s) are queued, all waiting: {second} waits for {first} "
        "(active, worker a, last heard 0 s ago)."
    )
    backend.clock.advance(31 * 60)
    with pytest.raises(QueueBlockedError) as stale:
        await backend.service.pull_plan(name, caller=B)
    assert stale.value.suggestion.action is Action.TAKE_OVER
    assert stale.value.suggestion.plan_id == first
    assert "last heard 31 min ago" in stale.value.message


async def test_a_batch_item_waits_in_the_order_it_names(backend: Backend):
    """An item naming an earlier item's key before a plan id keeps that order: its `after`,
    its `waiting_for`, the journal's `detail.after` and the prerequisites its pull hands
    over all list the keyed plan first (they listed the plan ids first)."""
    name = await backend.session()
    old = await _added(backend, name, "Old")
    added = await backend.service.add_plans(
        name, [_plan("A", key="a"), _plan("B", after=["a", old])]
    )
    first, second = (entry.plan.id for entry in added.plans)
    assert added.plans[1].plan.after == (first, old)
    assert added.plans[1].waiting_for == (first, old)
    state = await backend.service.session_state(name)
    assert state.queue[2].waiting_for == (first, old)
    events = [e for e in await backend.service.journal(name) if isinstance(e, Event)]
    assert events[-1].detail["after"] == [first, old]
    for _ in range(2):
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, "done")
    pulled = await backend.service.pull_plan(name)
    assert pulled.plan.id == second
    assert [prerequisite.id for prerequisite in pulled.prerequisites] == [first, old]
