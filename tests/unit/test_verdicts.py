"""Done with evidence, on every backend (docs/architecture.md, "Criteria and verdicts"):
verdicts stored with their criteria's texts, unmet criteria becoming a follow-up at the front
that the plan's dependents wait for, a chain capped at three, the `require` policy, criteria
deleted since the pull, retries, and a person's decision on what waits for one."""

import datetime as dt

import attrs
import pytest

from nineplan_core.callers import Caller
from nineplan_core.errors import InvalidInputError
from nineplan_core.follow_ups import verdict_issues
from nineplan_core.journal import Event, EventKind, EventQuery
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, PlanContent, PlanId
from nineplan_core.verdicts import Verdict, VerdictStatus
from nineplan_core.workers import Worker
from tests.fakes import PLAN, Backend

CRITERIA = "- passwords are hashed with argon2\n- a wrong password gets 401\n- the form has a label"


def _met(n: int) -> dict[str, object]:
    return {"criterion": n, "status": "met", "evidence": f"pytest tests/test_{n}.py passed"}


def _unmet(n: int) -> dict[str, object]:
    return {"criterion": n, "status": "unmet", "evidence": f"no test covers criterion {n} yet"}


async def _pulled(backend: Backend, name: str, goal: str = "Add login", **extra: object) -> str:
    plan = {**PLAN, "goal": goal, "success_criteria": CRITERIA, **extra}
    await backend.service.add_plan(name, **plan)
    return (await backend.service.pull_plan(name)).plan.id


async def _events(backend: Backend, name: str, kind: EventKind) -> list[Event]:
    return [
        e for e in await backend.service.journal(name) if isinstance(e, Event) and e.kind is kind
    ]


async def test_met_verdicts_are_stored_with_their_criteria(backend: Backend):
    """All met: the completed plan keeps each verdict with its criterion's text, no follow-up
    is added, the journal counts them; the session is valid."""
    name = await backend.session()
    plan_id = await _pulled(backend, name)
    done = await backend.service.complete_plan(
        name, "login works", verdicts=[_met(1), _met(2), _met(3)]
    )
    assert (done.follow_up, done.without, done.missing) == (None, (), ())
    stored = await backend.service.get_history(name, plan_id)
    assert [(v.n, v.text, v.status) for v in stored.verdicts] == [
        (1, "passwords are hashed with argon2", VerdictStatus.MET),
        (2, "a wrong password gets 401", VerdictStatus.MET),
        (3, "the form has a label", VerdictStatus.MET),
    ]
    (completed,) = await _events(backend, name, EventKind.PLAN_COMPLETED)
    assert completed.detail["verdicts"] == {"met": 3, "unmet": 0, "needs_person": 0, "none": 0}
    assert (await backend.service.validate_session(name)).valid


async def test_unmet_criteria_become_the_next_plan_that_dependents_wait_for(backend: Backend):
    """One unmet: a follow-up at the front whose criteria are the unmet ones and whose
    approach is their evidence, linked both ways; a queued plan that waited for the original
    waits for the follow-up too, so the follow-up is pulled first; the session is valid."""
    name = await backend.session()
    plan_id = await _pulled(backend, name)
    later = await backend.service.add_plan(name, **{**PLAN, "goal": "Use login"}, after=[plan_id])
    done = await backend.service.complete_plan(
        name, "login mostly works", verdicts=[_met(1), _unmet(2), _met(3)]
    )
    follow_up = done.follow_up
    assert follow_up is not None
    assert follow_up.goal == f"Meet the unmet criteria of {plan_id}: Add login"
    assert follow_up.content.success_criteria.strip() == "- a wrong password gets 401"
    assert "no test covers criterion 2 yet" in follow_up.content.approach
    assert follow_up.follow_up_of == plan_id
    assert (await backend.service.get_history(name, plan_id)).follow_ups == (follow_up.id,)
    state = await backend.service.session_state(name)
    assert [(e.id, e.waiting_for) for e in state.queue] == [
        (follow_up.id, ()),
        (later.plan.id, (follow_up.id,)),
    ]
    assert (await backend.service.pull_plan(name)).plan.id == follow_up.id
    (added,) = [
        e for e in await _events(backend, name, EventKind.PLAN_ADDED) if e.plan_id == follow_up.id
    ]
    assert added.detail["follow_up_of"] == plan_id
    assert added.detail["joins"] == [later.plan.id]
    report = await backend.service.validate_session(name)
    assert report.valid, report.issues


async def test_a_chain_of_follow_ups_stops_at_three_and_waits_for_a_person(backend: Backend):
    """The third follow-up completed with a criterion unmet adds no plan: that verdict is
    stored as needs_person (its evidence kept) and the result says the chain was capped."""
    name = await backend.session()
    await _pulled(backend, name)
    chain = []
    done = await backend.service.complete_plan(name, "no", verdicts=[_met(1), _unmet(2), _met(3)])
    for _ in range(3):
        assert done.follow_up is not None
        chain.append(done.follow_up.id)
        await backend.service.pull_plan(name)
        done = await backend.service.complete_plan(
            name, "still no", verdicts=[_unmet(1) | {"evidence": "still no 401 test"}]
        )
    assert (done.follow_up, done.capped) == (None, True)
    assert [(v.status, v.evidence) for v in done.plan.verdicts] == [
        (VerdictStatus.NEEDS_PERSON, "still no 401 test")
    ]
    assert len(chain) == 3
    assert (await backend.service.session_state(name)).queue == []


async def test_require_refuses_a_complete_without_every_verdict(backend: Backend):
    """Under NINEPLAN_VERDICTS=require a complete that leaves criteria without a verdict is
    refused naming `verdicts` and the numbers, and nothing changes: the plan is still active."""
    name = await backend.session()
    plan_id = await _pulled(backend, name)
    strict = attrs.evolve(backend.service, verdict_policy="require")
    with pytest.raises(InvalidInputError) as refused:
        await strict.complete_plan(name, "done", verdicts=[_met(1)])
    assert refused.value.field == "verdicts"
    assert "criteria 2, 3 have no verdict" in refused.value.problem
    state = await backend.service.session_state(name)
    assert state.active_plan is not None
    assert state.active_plan.id == plan_id


async def test_a_criterion_deleted_since_the_pull_is_named(backend: Backend):
    """The agent deletes a criterion from the file before completing: the completion names it
    (numbered as listed at the pull) among those without a verdict; `require` refuses it."""
    name = await backend.session()
    plan_id = await _pulled(backend, name)
    text = await backend.plan_text(name, plan_id)
    assert text is not None
    await backend.write_plan_text(name, plan_id, text.replace("- a wrong password gets 401\n", ""))
    strict = attrs.evolve(backend.service, verdict_policy="require")
    with pytest.raises(InvalidInputError) as refused:
        await strict.complete_plan(name, "done", verdicts=[_met(1), _met(2)])
    assert "criteria 2 as listed at the pull are gone" in refused.value.problem
    done = await backend.service.complete_plan(name, "done", verdicts=[_met(1), _met(2)])
    assert (done.without, done.missing) == ((), (2,))


async def test_a_bad_verdict_names_its_place_and_changes_nothing(backend: Backend):
    """An unknown criterion number names `verdicts[1]`; the plan stays active."""
    name = await backend.session()
    await _pulled(backend, name)
    with pytest.raises(InvalidInputError) as refused:
        await backend.service.complete_plan(name, "done", verdicts=[_met(1), _met(9)])
    assert refused.value.field == "verdicts[1]"
    assert (await backend.service.session_state(name)).active_plan is not None


async def test_a_retried_complete_adds_no_second_follow_up(backend: Backend):
    """The same `request_id` again returns the first completion and its follow-up; the queue
    holds one follow-up."""
    name = await backend.session()
    await _pulled(backend, name)
    caller = Caller.of(None, request_id="finish-1")
    verdicts = [_met(1), _unmet(2), _met(3)]
    first = await backend.service.complete_plan(name, "x", verdicts=verdicts, caller=caller)
    again = await backend.service.complete_plan(name, "x", verdicts=verdicts, caller=caller)
    assert first.follow_up is not None
    assert again.follow_up is not None
    assert again.follow_up.id == first.follow_up.id
    assert len((await backend.service.session_state(name)).queue) == 1


async def test_a_person_decides_what_waits_for_a_person(backend: Backend):
    """A needs_person criterion marked met keeps the agent's evidence, adds `by: person` and
    the note; one marked unmet adds a follow-up; a criterion that waits for no one is refused;
    the journal has `verdict_decided`; the session is valid."""
    name = await backend.session()
    plan_id = await _pulled(backend, name)
    person = {"status": "needs_person", "evidence": "look at the login page's contrast"}
    await backend.service.complete_plan(
        name, "done", verdicts=[_met(1), {"criterion": 2, **person}, {"criterion": 3, **person}]
    )
    decided = await backend.service.decide_verdict(name, plan_id, 2, "met", note="looks fine")
    second = decided.plan.verdicts[1]
    assert (second.status, second.by, second.note) == (VerdictStatus.MET, "person", "looks fine")
    assert second.evidence == "look at the login page's contrast"
    with pytest.raises(InvalidInputError):
        await backend.service.decide_verdict(name, plan_id, 1, "unmet")
    unmet = await backend.service.decide_verdict(name, plan_id, 3, "unmet")
    assert unmet.follow_up is not None
    assert unmet.follow_up.content.success_criteria.strip() == "- the form has a label"
    assert [e.detail["n"] for e in await _events(backend, name, EventKind.VERDICT_DECIDED)] == [
        2,
        3,
    ]
    report = await backend.service.validate_session(name)
    assert report.valid, report.issues
    assert (await backend.service.get_plan(name, unmet.follow_up.id)).status is PlanStatus.QUEUED


def test_inconsistent_verdicts_are_named():
    """`verdicts_consistent` finds a verdict on a criterion the plan lacks, an unmet criterion
    with no follow-up, and follow-ups on a plan met in every criterion; a consistent plan and
    a person's unmet past the chain's limit pass."""
    at = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    content = PlanContent(**{**PLAN, "success_criteria": CRITERIA})

    def done(
        plan_id: str,
        *verdicts: Verdict,
        follow_up_of: str | None = None,
        follow_ups: tuple[str, ...] = (),
    ) -> Plan:
        plan = Plan(id=PlanId(plan_id), content=content, created_at=at, position=1)
        finished = plan.pull(worker=Worker("main"), at=at).complete(
            outcome="x", at=at, verdicts=verdicts
        )
        above = None if follow_up_of is None else PlanId(follow_up_of)
        below = tuple(PlanId(i) for i in follow_ups)
        return attrs.evolve(finished, follow_up_of=above, follow_ups=below)

    def verdict(n: int, status: str, by: str = "agent") -> Verdict:
        return Verdict(n=n, text="t", status=VerdictStatus(status), evidence="e", by=by)

    issues = verdict_issues(
        [
            done("aaaaa", verdict(9, "met")),
            done("bbbbb", verdict(1, "unmet")),
            done("ccccc", verdict(1, "met"), follow_ups=("ddddd",)),
            done("eeeee", verdict(1, "unmet"), follow_ups=("fffff",)),
        ]
    )
    assert issues == [
        "plan aaaaa has a verdict on criterion 9, which it does not have",
        "plan bbbbb has unmet criteria and no follow-up",
        "plan ccccc has follow-ups but no unmet criterion",
    ]
    chain = [done("00000", verdict(1, "unmet"), follow_ups=("00001",))]
    for n in range(1, 4):
        below = (f"0000{n + 1}",) if n < 3 else ()
        last = verdict(1, "unmet", by="person" if n == 3 else "agent")
        chain.append(done(f"0000{n}", last, follow_up_of=f"0000{n - 1}", follow_ups=below))
    assert verdict_issues(chain) == []


async def test_the_board_reads_only_the_plans_waiting_for_a_person(backend: Backend):
    """The board's read of what waits for a person holds the completed plans with a
    needs_person verdict, the earliest completed first, at most as many as asked: not a plan
    whose evidence merely mentions the word, nor one a person has decided; none unless
    asked."""
    name = await backend.session()
    person = {"status": "needs_person", "evidence": "look at the login page's contrast"}
    first = await _pulled(backend, name, "first")
    await backend.service.complete_plan(name, "done", verdicts=[{"criterion": 1, **person}])
    await _pulled(backend, name, "words")
    said = {"criterion": 1, "status": "met", "evidence": "not needs_person: argon2 in use"}
    await backend.service.complete_plan(name, "done", verdicts=[said])
    second = await _pulled(backend, name, "second")
    await backend.service.complete_plan(name, "done", verdicts=[{"criterion": 2, **person}])
    third = await _pulled(backend, name, "third")
    await backend.service.complete_plan(name, "done", verdicts=[{"criterion": 3, **person}])
    await backend.service.decide_verdict(name, third, 3, "met")

    async def waiting(limit: int) -> list[str]:
        board = await backend.service.session_board(
            name,
            journal=EventQuery(last=1),
            finished=1,
            counted=frozenset(),
            since=backend.service.clock(),
            waiting=limit,
        )
        return [plan.id for plan in board.waiting_for_person]

    assert await waiting(10) == [first, second]
    assert await waiting(1) == [first]
    assert await waiting(0) == []


async def test_the_evidence_is_searchable(backend: Backend):
    """A word only a verdict's evidence holds finds the completed plan, on every backend."""
    name = await backend.session()
    plan_id = await _pulled(backend, name)
    evidence = {"criterion": 1, "status": "met", "evidence": "checked with zygomorphic fixtures"}
    await backend.service.complete_plan(name, "done", verdicts=[evidence])
    found = await backend.service.search_history(name, "zygomorphic", 5)
    assert [match.id for match in found] == [plan_id]


async def test_a_follow_up_keeps_within_the_section_limit(backend: Backend):
    """The follow-up's context is the original's context and outcome: when together they pass
    the section limit, it is cut to the limit (its start kept), so the follow-up is a plan
    like any other."""
    name = await backend.session()
    await _pulled(backend, name, context="c" * 90_000)
    done = await backend.service.complete_plan(name, "o" * 90_000, verdicts=[_unmet(1)])
    assert done.follow_up is not None
    context = done.follow_up.content.context
    assert len(context) == backend.service.limits.max_text_chars
    assert context.startswith("c" * 1000)
    assert context.endswith("…")
