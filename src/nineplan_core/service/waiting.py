"""A person's change of what a queued plan waits for (docs/architecture.md, "Prerequisites")."""

from collections.abc import Sequence

from nineplan_core.callers import check_actor
from nineplan_core.errors import InvalidInputError
from nineplan_core.journal import Actor, EventKind, plan_event
from nineplan_core.model import check_plan_id
from nineplan_core.ports import SessionStore, SessionTx
from nineplan_core.prerequisites import check_after, check_named, cycle_through
from nineplan_core.results import PlacedPlan
from nineplan_core.service.envelope import Applied, Envelope
from nineplan_core.service.steering import queued_plan


class Waiting(Envelope):
    """A person's steering of the prerequisites."""

    __slots__ = ()

    async def edit_plan_after(
        self,
        name: str,
        plan_id: str,
        after: Sequence[str],
        *,
        actor: Actor | str = Actor.PERSON,
    ) -> PlacedPlan:
        """Make a queued plan wait for the plans `after` names instead (an empty list: for
        none). A change that would make plans wait for each other is refused, naming the
        cycle; the journal gets `plan_edited` with the old and new lists.

        Raises:
            InvalidInputError: `after` breaks a rule (as for an added plan), names the plan
                itself, or would make a cycle.
            PlanHeldByAgentError: the plan is active (only the agent changes it).
            PlanNotFoundError: no queued plan with that id.
            SessionNotFoundError, StorageError.
        """
        checked, waits, who = check_plan_id(plan_id), check_after(after), check_actor(actor)

        async def change(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            queued = await queued_plan(tx, checked)
            await check_named(tx, waits, itself=checked)
            if cycle := await cycle_through(tx, checked, waits):
                raise InvalidInputError(
                    "after", f"would make plans wait for each other: {' -> '.join(cycle)}"
                )
            plan = queued.waiting_on(waits)
            await tx.save(plan)
            edited = plan_event(
                self.clock(), who, EventKind.PLAN_EDITED, plan,
                after=list(waits), after_was=list(queued.after),
            )  # fmt: skip
            rank = (await tx.ahead_of(queued.position or 0, plan.id))[1] + 1
            return Applied(
                result=PlacedPlan(plan=plan, path=store.plan_path(plan.id), rank=rank),
                events=[edited],
                said="prerequisites changed by a person",
                about={"plan_id": plan.id, "after": list(waits)},
            )

        return await self._apply(name, change)
