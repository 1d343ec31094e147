"""Judging a completion (docs/architecture.md, "Criteria and verdicts"): the verdicts checked
against the plan's criteria as stored at completion, the criteria left without one (and those
the agent deleted since the pull), the policy that may refuse, and the follow-up plan that
unmet criteria become, at most three deep.
"""

import hashlib
from collections.abc import Sequence

import attrs

from nineplan_core.criteria import (
    Criterion,
    check_verdicts,
    criteria,
    follow_up_content,
    without_verdict,
)
from nineplan_core.errors import InvalidInputError
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, PlanContent, PlanId
from nineplan_core.ports import SessionReader
from nineplan_core.verdicts import Verdict, VerdictStatus

#: A chain of follow-ups is at most this deep: completing the last with criteria unmet adds
#: no plan, and those criteria wait for a person.
MAX_FOLLOW_UP_DEPTH = 3
#: What NINEPLAN_VERDICTS may be: `ask` (a line names what has no verdict), `require` (such a
#: complete is refused), `off` (verdicts are taken, nothing is said).
POLICIES = ("ask", "require", "off")


def digest(item: Criterion) -> str:
    """A short fingerprint of a criterion's text: what a pull records of each, to tell at
    completion which criteria the agent deleted from the file since."""
    return hashlib.sha256(" ".join(item.text.split()).lower().encode()).hexdigest()[:12]


@attrs.frozen(kw_only=True)
class Judgement:
    """A completion's verdicts, each with its criterion's text; the numbers of the criteria
    without one; and the numbers (as listed at the pull) of those deleted since."""

    verdicts: tuple[Verdict, ...] = ()
    without: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()

    @property
    def unmet(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.status is VerdictStatus.UNMET)


def judge(content: PlanContent, raw: object, policy: str, pulled: Sequence[str] = ()) -> Judgement:
    """The verdicts `raw` (as a call sent them, None for none) on the criteria of `content`
    (the plan as stored at completion), with `pulled` the digests of the criteria listed at
    its pull. Under `require`, a criterion without a verdict (a deleted one counts) refuses.

    Raises:
        InvalidInputError: a verdict breaks a rule (naming `verdicts[i]`), or, under
            `require`, criteria have none (naming `verdicts` and the numbers).
    """
    items = criteria(content.success_criteria)
    verdicts = () if raw is None else check_verdicts(raw, items)
    now = {digest(item) for item in items}
    missing = tuple(n for n, mark in enumerate(pulled, start=1) if mark not in now)
    without = without_verdict(items, verdicts)
    if policy == "require" and (without or missing):
        raise InvalidInputError("verdicts", _require_problem(without, missing))
    return Judgement(verdicts=verdicts, without=without, missing=missing)


def _require_problem(without: tuple[int, ...], missing: tuple[int, ...]) -> str:
    parts = []
    if without:
        parts.append(f"criteria {', '.join(map(str, without))} have no verdict")
    if missing:
        listed = ", ".join(map(str, missing))
        parts.append(f"criteria {listed} as listed at the pull are gone from the plan")
    return (
        "; ".join(parts) + ": this server requires a verdict on every criterion "
        "(met, unmet or needs_person, with evidence)"
    )


async def chain_depth(reader: SessionReader, plan: Plan) -> int:
    """How many follow-up links lie above `plan` (0: it follows up nothing)."""
    depth, current = 0, plan
    while current.follow_up_of is not None and depth <= MAX_FOLLOW_UP_DEPTH:
        above = await reader.plan(current.follow_up_of)
        depth += 1
        if above is None:
            break
        current = above
    return depth


def for_a_person(verdicts: Sequence[Verdict]) -> tuple[Verdict, ...]:
    """Past the chain's limit: each unmet verdict waits for a person instead (its evidence
    kept), so an agent that cannot meet a criterion never loops."""
    return tuple(
        attrs.evolve(v, status=VerdictStatus.NEEDS_PERSON) if v.status is VerdictStatus.UNMET else v
        for v in verdicts
    )


def within(content: PlanContent, limit: int) -> PlanContent:
    """`content` with each section cut to `limit` characters (a follow-up's context is the
    original's context and outcome, which together may exceed what one section may hold):
    the start is kept, which says what the plan is."""
    cut = {
        field: value[: limit - 1] + "…"
        for field, value in attrs.asdict(content).items()
        if len(value) > limit
    }
    return attrs.evolve(content, **cut) if cut else content


def follow_up_of(original: Plan, unmet: Sequence[Verdict]) -> PlanContent:
    """The sections of the plan that meets `original`'s unmet criteria."""
    return follow_up_content(original.id, original.content, original.outcome, unmet)


async def waiting_on(reader: SessionReader, plan_id: PlanId) -> list[Plan]:
    """The queued plans that wait for `plan_id`: a follow-up of it joins their `after`."""
    found = [await reader.plan(other) for other in await reader.needed_by(plan_id)]
    return [plan for plan in found if plan is not None and plan.status is PlanStatus.QUEUED]


def verdict_counts(items: int, verdicts: Sequence[Verdict]) -> dict[str, int]:
    """How many of a plan's `items` criteria are met, unmet, need a person, or have no
    verdict: what the journal's `plan_completed` says."""
    counts = {status.value: 0 for status in VerdictStatus}
    for verdict in verdicts:
        counts[verdict.status.value] += 1
    return counts | {"none": max(0, items - len(verdicts))}


def verdict_issues(plans: Sequence[Plan]) -> list[str]:
    """What breaks `verdicts_consistent` among `plans` (the session's finished plans, and its
    live ones for the links): a verdict naming no criterion of its plan, an unmet criterion
    with no follow-up (but a person's, past the chain's limit), a plan met in every
    criterion that has follow-ups anyway."""
    by_id = {plan.id: plan for plan in plans}
    issues: list[str] = []
    for plan in plans:
        count = len(criteria(plan.content.success_criteria))
        issues += [
            f"plan {plan.id} has a verdict on criterion {v.n}, which it does not have"
            for v in plan.verdicts
            if not 1 <= v.n <= count
        ]
        unmet = [v for v in plan.verdicts if v.status is VerdictStatus.UNMET]
        exempt = all(v.by == "person" for v in unmet) and _depth(by_id, plan) >= MAX_FOLLOW_UP_DEPTH
        if unmet and not plan.follow_ups and not exempt:
            issues.append(f"plan {plan.id} has unmet criteria and no follow-up")
        if plan.follow_ups and plan.verdicts and not unmet:
            issues.append(f"plan {plan.id} has follow-ups but no unmet criterion")
    return issues


def _depth(by_id: dict[PlanId, Plan], plan: Plan) -> int:
    depth, current = 0, plan
    while current.follow_up_of is not None and depth <= MAX_FOLLOW_UP_DEPTH:
        depth += 1
        above = by_id.get(current.follow_up_of)
        if above is None:
            break
        current = above
    return depth
