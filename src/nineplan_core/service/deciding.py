"""A person decides what an agent left to a person (docs/architecture.md, "Criteria and
verdicts"): a completed plan's `needs_person` criterion marked met or unmet; unmet adds a
follow-up as an agent's unmet verdict does, under the same depth limit."""

import attrs

from nineplan_core.callers import check_actor
from nineplan_core.errors import InvalidInputError, PlanNotFoundError
from nineplan_core.follow_ups import MAX_FOLLOW_UP_DEPTH, chain_depth
from nineplan_core.journal import Actor, EventKind, NewEvent, plan_event
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanId, check_plan_id, check_text, check_type
from nineplan_core.ports import SessionStore, SessionTx
from nineplan_core.results import Completion
from nineplan_core.service.completing import Completing
from nineplan_core.service.envelope import Applied
from nineplan_core.verdicts import VerdictStatus

#: What a person may decide a criterion is.
DECISIONS = (VerdictStatus.MET, VerdictStatus.UNMET)
#: The longest note a person's decision keeps.
MAX_NOTE_CHARS = 2_000


class Deciding(Completing):
    """A person's decisions on the criteria that wait for one."""

    __slots__ = ()

    async def decide_verdict(
        self,
        name: str,
        plan_id: str,
        criterion: int,
        status: str,
        *,
        note: str | None = None,
        actor: Actor | str = Actor.PERSON,
    ) -> Completion:
        """Mark criterion `criterion` of completed plan `plan_id`, which waits for a person
        (`needs_person`), met or unmet, keeping the agent's evidence and adding `by:
        person` and the `note`. Unmet adds a follow-up (below the chain's limit).

        Raises:
            InvalidInputError: not a whole number, not `met` or `unmet`, a note too long, a
                criterion that has no verdict waiting for a person.
            PlanNotFoundError: no completed plan with that id.
            SessionNotFoundError, StorageError.
        """
        checked, who = check_plan_id(plan_id), check_actor(actor)
        number = check_type("criterion", criterion, int)
        if status not in {decision.value for decision in DECISIONS}:
            raise InvalidInputError("status", "must be 'met' or 'unmet'")
        if note is not None:
            check_text("note", note, max_chars=MAX_NOTE_CHARS, required=False)
        decided = VerdictStatus(status)

        async def decide(_: SessionStore, tx: SessionTx) -> Applied[Completion]:
            return await self._decide(tx, checked, number, decided, note, who)

        return await self._apply(name, decide)

    async def _decide(
        self,
        tx: SessionTx,
        checked: PlanId,
        number: int,
        decided: VerdictStatus,
        note: str | None,
        who: Actor,
    ) -> Applied[Completion]:
        """The decision applied in `tx`."""
        plan = await tx.plan(checked)
        if plan is None or plan.status is not PlanStatus.COMPLETED:
            raise PlanNotFoundError(checked)
        waiting = {v.n: v for v in plan.verdicts if v.status is VerdictStatus.NEEDS_PERSON}
        if number not in waiting:
            raise InvalidInputError(
                "criterion", f"criterion {number} of plan {checked} waits for no person"
            )
        verdict = attrs.evolve(waiting[number], status=decided, by="person", note=note)
        plan = attrs.evolve(
            plan, verdicts=tuple(verdict if v.n == number else v for v in plan.verdicts)
        )
        events: list[NewEvent] = [
            plan_event(
                self.clock(),
                who,
                EventKind.VERDICT_DECIDED,
                plan,
                n=number,
                status=decided.value,
                note=note,
            )
        ]
        follow_up, capped = None, False
        if decided is VerdictStatus.UNMET:
            # Past the chain's limit a person's unmet stands with no follow-up (`capped`).
            capped = await chain_depth(tx, plan) >= MAX_FOLLOW_UP_DEPTH
            if not capped:
                only = attrs.evolve(plan, verdicts=(verdict,))
                linked, follow_up, added = await self._follow_up(tx, only, who)
                plan = attrs.evolve(plan, follow_ups=linked.follow_ups)
                events.append(added)
        await tx.save(plan)
        return Applied(
            result=Completion(
                plan=plan, tally=await tx.tally(), follow_up=follow_up, capped=capped
            ),
            events=events,
            said="verdict decided by a person",
            about={"plan_id": checked, "criterion": number, "status": decided.value},
        )
