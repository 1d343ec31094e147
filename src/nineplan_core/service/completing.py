"""Completing a plan with verdicts (docs/architecture.md, "Criteria and verdicts"): the
verdicts judged against the criteria as stored at completion, and unmet criteria turned, in
the same transaction, into a follow-up plan at the front of the queue that the plans waiting
for the original wait for too."""

import attrs

from nineplan_core.criteria import criteria
from nineplan_core.follow_ups import (
    MAX_FOLLOW_UP_DEPTH,
    chain_depth,
    digest,
    follow_up_of,
    for_a_person,
    judge,
    verdict_counts,
    waiting_on,
    within,
)
from nineplan_core.journal import (
    Actor,
    EventKind,
    EventQuery,
    NewEvent,
    excerpt,
    plan_event,
    readable,
    worker_detail,
)
from nineplan_core.model import Plan, Position
from nineplan_core.plan_file import render
from nineplan_core.ports import SessionTx
from nineplan_core.queue import insert_position
from nineplan_core.results import Completion
from nineplan_core.service.envelope import Applied, Envelope
from nineplan_core.workers import Worker, stored_worker


class Completing(Envelope):
    """What a completion does beyond ending the hold: verdicts and follow-ups."""

    __slots__ = ()

    async def _completed(
        self,
        tx: SessionTx,
        active: Plan,
        outcome: str,
        raw: object,
        who: Actor,
        holder: Worker,
    ) -> Applied[Completion]:
        """`active` (its edits read back) completed in `tx` with the verdicts `raw`; unmet
        ones become a follow-up (or, past the chain's limit, wait for a person)."""
        judged = judge(active.content, raw, self.verdict_policy, await _pulled_criteria(tx, active))
        verdicts, capped = judged.verdicts, False
        if judged.unmet and await chain_depth(tx, active) >= MAX_FOLLOW_UP_DEPTH:
            verdicts, capped = for_a_person(verdicts), True
        plan = active.complete(outcome=outcome, at=self.clock(), verdicts=verdicts)
        events: list[NewEvent] = []
        follow_up = None
        if judged.unmet and not capped:
            plan, follow_up, added = await self._follow_up(tx, plan, who)
            events.append(added)
        await tx.save(plan)
        tx.files.remove_after_commit(plan.id)
        count = len(criteria(plan.content.success_criteria))
        events.insert(
            0,
            plan_event(
                plan.completed_at or self.clock(), who, EventKind.PLAN_COMPLETED, plan,
                outcome=excerpt(outcome), verdicts=verdict_counts(count, verdicts),
                **worker_detail(holder),
            ),
        )  # fmt: skip
        held = tuple((p.id, stored_worker(p.worker)) for p in await tx.active_plans())
        return Applied(
            result=Completion(
                plan=plan, tally=await tx.tally(), held=held, follow_up=follow_up,
                without=judged.without, missing=judged.missing, capped=capped,
            ),
            events=events,
            said="plan completed",
            about={"plan_id": plan.id, **({"follow_up": follow_up.id} if follow_up else {})},
        )  # fmt: skip

    async def _follow_up(
        self, tx: SessionTx, original: Plan, who: Actor
    ) -> tuple[Plan, Plan, NewEvent]:
        """The follow-up of `original`'s unmet criteria, added at the front of the queue in
        `tx`; the queued plans that waited for `original` wait for it too. Returns `original`
        linked to it, the follow-up, and its `plan_added` event."""
        unmet = [v for v in original.verdicts if v.status.value == "unmet"]
        tally = await tx.tally()
        content = within(follow_up_of(original, unmet), self.limits.max_text_chars)
        follow_up = await self._insert(tx, content, insert_position(tally, Position.FRONT))
        follow_up = attrs.evolve(follow_up, follow_up_of=original.id)
        await tx.save(follow_up)
        await tx.files.write(follow_up.id, render(follow_up.content, follow_up.notes))
        joined = []
        for waiting in await waiting_on(tx, original.id):
            await tx.save(waiting.waiting_on((*waiting.after, follow_up.id)))
            joined.append(waiting.id)
        added = plan_event(
            follow_up.created_at, who, EventKind.PLAN_ADDED, follow_up,
            position=Position.FRONT, rank=1, follow_up_of=original.id,
            **({"joins": joined} if joined else {}),
        )  # fmt: skip
        linked = attrs.evolve(original, follow_ups=(*original.follow_ups, follow_up.id))
        return linked, follow_up, added


async def _pulled_criteria(tx: SessionTx, plan: Plan) -> list[str]:
    """The digests of the criteria listed when `plan` was last pulled (none recorded: a pull
    from before criteria were counted)."""
    query = EventQuery(kinds=frozenset({EventKind.PLAN_PULLED}), plan_id=plan.id, last=1)
    pulls = readable(await tx.events(query))
    marks = pulls[-1].detail.get("criteria") if pulls else None
    return [str(mark) for mark in marks] if isinstance(marks, list) else []


def pull_detail(plan: Plan) -> dict[str, list[str]]:
    """What a pull records of the plan's criteria: a digest of each, in order."""
    return {"criteria": [digest(item) for item in criteria(plan.content.success_criteria)]}
