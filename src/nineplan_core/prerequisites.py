"""Plans that wait for other plans (docs/architecture.md, "Prerequisites"): the rules on what
`after` may name, the cycle a person's change would make, and what a blocked pull says.

A queued plan is *ready* when every plan it names in `after` is settled (completed or
discarded), else *waiting*; a pull takes the first ready plan in queue order. `after` names only
plans that exist when it is set, so adding never makes a cycle; a person's change is checked.
"""

import datetime as dt
from collections.abc import Mapping, Sequence

from nineplan_core.errors import InvalidInputError, NinePlanError
from nineplan_core.journal import heard_ago
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, PlanId, QueueEntry, check_plan_id, check_type
from nineplan_core.ports import SessionReader
from nineplan_core.results import Prerequisite
from nineplan_core.suggestions import Action, Suggestion

#: At most this many plans named in one `after`.
MAX_AFTER = 20
#: A blocked pull names what this many front plans wait for.
BLOCKED_NAMED = 3


class QueueBlockedError(NinePlanError):
    """Plans are queued, but each waits for a plan not yet settled (docs/architecture.md,
    "Prerequisites"): nothing can be pulled until one of those is completed or discarded."""

    category = "QUEUE_BLOCKED"

    def __init__(
        self,
        *,
        queued: int,
        waits: Sequence[tuple[str, Sequence[str]]],
        stale: str | None = None,
    ) -> None:
        """`waits`: the front plans, each `(plan id, [what it waits for, in words])`, like
        `("e7k2m", ["k3v9x (active, worker tests, last heard 2 min ago)"])`; `stale`: a
        stale plan among those, which the caller could take over."""
        fronts = "; ".join(f"{plan_id} waits for {', '.join(on)}" for plan_id, on in waits)
        more = "" if queued <= len(waits) else f"; {queued - len(waits)} more behind them"
        message = f"{queued} plan(s) are queued, all waiting: {fronts}{more}."
        suggestion = (
            Suggestion(Action.TAKE_OVER, plan_id=stale)
            if stale
            else Suggestion(Action.WAIT_FOR_PREREQUISITES)
        )
        super().__init__(message, suggestion=suggestion)
        self.queued = queued
        self.waits = [(plan_id, list(on)) for plan_id, on in waits]
        self.stale = stale


def check_after(after: object, field: str = "after") -> tuple[PlanId, ...]:
    """The shape of an `after` list: plan ids, each once, at most MAX_AFTER.

    Raises:
        InvalidInputError: not a list of plan ids, one named twice, or too many; the message
            names `field` and the id.
    """
    if after is None:
        return ()
    if not isinstance(after, list | tuple):
        raise InvalidInputError(field, f"must be a list of plan ids, not {type(after).__name__}")
    if len(after) > MAX_AFTER:
        raise InvalidInputError(field, f"names {len(after)} plans; the limit is {MAX_AFTER}")
    ids: list[PlanId] = []
    for item in after:
        plan_id = check_plan_id(check_type(field, item, str), field)
        if plan_id in ids:
            raise InvalidInputError(field, f"names plan {plan_id} twice")
        ids.append(plan_id)
    return tuple(ids)


async def check_named(
    reader: SessionReader,
    after: tuple[PlanId, ...],
    field: str = "after",
    *,
    itself: PlanId | None = None,
    new: Mapping[PlanId, Plan] | None = None,
) -> list[Plan]:
    """The plans `after` names, each read (or among `new`, plans the same call adds): every
    one must exist in the session and not be discarded, and none be `itself`.

    Raises:
        InvalidInputError: the message names `field` and the id.
    """
    found: list[Plan] = []
    for plan_id in after:
        if plan_id == itself:
            raise InvalidInputError(field, f"names plan {plan_id} itself")
        plan = (new or {}).get(plan_id) or await reader.plan(plan_id)
        if plan is None:
            raise InvalidInputError(field, f"names plan {plan_id}, which is not in this session")
        if plan.status is PlanStatus.DISCARDED:
            raise InvalidInputError(
                field, f"names plan {plan_id}, which was discarded: nothing can wait for it"
            )
        found.append(plan)
    return found


def unsettled(named: Sequence[Plan]) -> tuple[PlanId, ...]:
    """The ids of the plans among `named` that are not settled yet, in order."""
    return tuple(plan.id for plan in named if not plan.status.settled)


async def cycle_through(
    reader: SessionReader, plan_id: PlanId, after: tuple[PlanId, ...]
) -> list[PlanId] | None:
    """The cycle that giving `plan_id` the prerequisites `after` would make, as the ids along
    it from `plan_id` back to itself (`[a, b, a]`: a waits for b, which waits for a), or None.
    Walks what the named plans wait for, each plan read once."""
    parents: dict[PlanId, PlanId] = {}
    frontier = list(after)
    for first in after:
        parents.setdefault(first, plan_id)
    seen: set[PlanId] = set()
    while frontier:
        current = frontier.pop()
        if current == plan_id:
            path = [plan_id]
            step = parents[current]
            while step != plan_id:
                path.append(step)
                step = parents[step]
            return [plan_id, *reversed(path[1:]), plan_id]
        if current in seen:
            continue
        seen.add(current)
        plan = await reader.plan(current)
        for prerequisite in plan.after if plan is not None else ():
            if prerequisite not in seen:
                parents.setdefault(prerequisite, current)
                frontier.append(prerequisite)
    return None


def blocked(
    front: Sequence[QueueEntry],
    queued: int,
    active: Sequence[Plan],
    now: dt.datetime,
    lease: dt.timedelta,
) -> QueueBlockedError:
    """Why none of the `queued` plans can be pulled (each waits): what the `front` ones wait
    for and who holds it, and a stale active plan to take over (one they wait for first:
    taking any over lets the work move again)."""
    holding = {plan.id: plan for plan in active}
    named = [plan_id for entry in front for plan_id in entry.waiting_for]
    candidates = [*(holding[p] for p in named if p in holding), *active]
    stale = next(
        (plan.id for plan in candidates if (hold := plan.hold) and hold.stale(now, lease)), None
    )
    waits = [
        (entry.id, [_waited_for(plan_id, holding, now) for plan_id in entry.waiting_for])
        for entry in front[:BLOCKED_NAMED]
    ]
    return QueueBlockedError(queued=queued, waits=waits, stale=stale)


def _waited_for(plan_id: PlanId, holding: Mapping[PlanId, Plan], now: dt.datetime) -> str:
    """A plan waited for, in words: active with its worker and when it was last heard, or
    queued (itself waiting)."""
    plan = holding.get(plan_id)
    if plan is None or (hold := plan.hold) is None:
        return f"{plan_id} (queued)"
    heard = f", last heard {heard_ago(hold.last_seen, now)}" if hold.last_seen else ""
    return f"{plan_id} (active, worker {hold.worker}{heard})"


async def handed_over(reader: SessionReader, plan: Plan) -> tuple[Prerequisite, ...]:
    """What a pull of `plan` hands over: each plan it waited for, in the order named, with
    its outcome or why it was discarded (one read each; at most MAX_AFTER)."""
    found = [await reader.plan(plan_id) for plan_id in plan.after]
    return tuple(
        Prerequisite(
            id=named.id,
            goal=named.goal,
            status=named.status,
            outcome=named.outcome,
            reason=named.discard_reason,
        )
        for named in found
        if named is not None
    )


def first_ready(queued: Sequence[Plan], status: Mapping[PlanId, PlanStatus]) -> Plan | None:
    """The first of `queued` (in queue order) whose prerequisites are all settled, by
    `status` (a plan missing from it counts as settled): a store without an index's rule."""
    for plan in queued:
        if all(status.get(p, PlanStatus.COMPLETED).settled for p in plan.after):
            return plan
    return None
