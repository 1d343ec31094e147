"""Adding plans: one at a time (`add_plan`), or a decomposition in one call (`add_plans`,
docs/architecture.md, "Prerequisites"): 1-50 plans in one transaction, in the given order at
the front or the back, later items waiting for earlier ones by `key`. Every item is checked
before anything is stored: one bad item adds nothing."""

import re
from collections.abc import Mapping, Sequence

import attrs

from nineplan_core.callers import AGENT, Caller, check_caller
from nineplan_core.errors import InvalidInputError, QueueFullError
from nineplan_core.journal import Actor, EventKind, plan_event
from nineplan_core.model import (
    PLAN_ID,
    SECTION_FIELDS,
    Limits,
    PlanContent,
    PlanId,
    Position,
    check_position,
    check_text,
    check_type,
)
from nineplan_core.plan_file import render
from nineplan_core.ports import SessionStore, SessionTx
from nineplan_core.prerequisites import MAX_AFTER, check_after, check_named, unsettled
from nineplan_core.queue import insert_position, insert_rank
from nineplan_core.results import AddedPlans, BatchedPlan, PlacedPlan
from nineplan_core.retries import request
from nineplan_core.service.checks import OPTIONAL_SECTIONS, check_sections
from nineplan_core.service.envelope import Applied, Envelope

#: At most this many plans in one call.
MAX_BATCH = 50
#: What an item's `key` may be.
KEY = re.compile(r"[a-z0-9_-]{1,40}")
KEY_RULE = "must be 1-40 characters of lowercase letters, digits, '_' and '-'"
_FIELDS = frozenset({*SECTION_FIELDS, "key", "after"})


@attrs.frozen(kw_only=True)
class BatchItem:
    """One plan of a call, checked: its content, its key, and what it waits for, in the
    order named: plans of the session by id, items of the call by their index."""

    content: PlanContent
    key: str | None = None
    waits: tuple[PlanId | int, ...] = ()

    @property
    def after(self) -> tuple[PlanId, ...]:
        """The plans of the session it waits for, in the order named."""
        return tuple(named for named in self.waits if isinstance(named, str))

    def named(self, added: Sequence[PlanId]) -> tuple[PlanId, ...]:
        """What it waits for as plan ids, in the order named, `added` the ids of the items
        before it."""
        return tuple(added[named] if isinstance(named, int) else named for named in self.waits)


def check_batch(plans: object, limits: Limits) -> list[BatchItem]:
    """The items of an `add_plans` call, each checked (`plans[2].goal` names the third item's
    goal in an error).

    Raises:
        InvalidInputError: not a list of 1-50 objects, or the first item that breaks a rule.
    """
    if not isinstance(plans, list | tuple):
        raise InvalidInputError("plans", f"must be a list of plans, not {type(plans).__name__}")
    if not 1 <= len(plans) <= MAX_BATCH:
        raise InvalidInputError("plans", f"has {len(plans)} plans; give 1 to {MAX_BATCH}")
    keys: dict[str, int] = {}
    items: list[BatchItem] = []
    for index, raw in enumerate(plans):
        item = _item(index, raw, keys, limits)
        if item.key is not None:
            keys[item.key] = index
        items.append(item)
    return items


def _item(index: int, raw: object, keys: Mapping[str, int], limits: Limits) -> BatchItem:
    """Item `index`, checked against the keys of the items before it."""
    where = f"plans[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidInputError(where, f"must be an object, not {type(raw).__name__}")
    if unknown := sorted(str(field) for field in raw if field not in _FIELDS):
        raise InvalidInputError(f"{where}.{unknown[0]}", "is not a field of a plan")
    sections: dict[str, str] = {}
    for field in SECTION_FIELDS:
        value, optional = raw.get(field), field in OPTIONAL_SECTIONS
        if value is None and not optional:
            raise InvalidInputError(f"{where}.{field}", "is required")
        text = "" if value is None else check_type(f"{where}.{field}", value, str)
        check_text(f"{where}.{field}", text, max_chars=limits.max_text_chars, required=not optional)
        sections[field] = text
    key = raw.get("key")
    if key is not None:
        if not KEY.fullmatch(check_type(f"{where}.key", key, str)):
            raise InvalidInputError(f"{where}.key", KEY_RULE)
        if key in keys:
            raise InvalidInputError(f"{where}.key", f"{key!r} is the key of plans[{keys[key]}]")
    waits = _after(f"{where}.after", raw.get("after"), keys, key)
    return BatchItem(content=PlanContent(**sections), key=key, waits=waits)


def _after(
    field: str, after: object, keys: Mapping[str, int], own: str | None
) -> tuple[PlanId | int, ...]:
    """An item's `after`, in the order named: plan ids of the session, and the keys of
    earlier items (as their indexes); its own key, a later item's, an unknown key or one
    named twice is refused."""
    if after is None:
        return ()
    if not isinstance(after, list | tuple):
        raise InvalidInputError(field, f"must be a list, not {type(after).__name__}")
    if len(after) > MAX_AFTER:
        raise InvalidInputError(field, f"names {len(after)} plans; the limit is {MAX_AFTER}")
    waits: list[PlanId | int] = []
    for name in after:
        check_type(field, name, str)
        if name == own:
            raise InvalidInputError(field, f"names {name!r}, this plan itself")
        if name in keys:
            if keys[name] in waits:
                raise InvalidInputError(field, f"names {name!r} twice")
            waits.append(keys[name])
        elif PLAN_ID.fullmatch(name):
            if name in waits:
                raise InvalidInputError(field, f"names plan {name} twice")
            waits.append(PlanId(name))
        else:
            raise InvalidInputError(
                field,
                f"names {name!r}, which is neither a plan id nor the key of an earlier plan "
                "of this call",
            )
    return tuple(waits)


class Batches(Envelope):
    """Adding plans: one at a time, or a task's decomposition in one call."""

    __slots__ = ()

    async def add_plan(
        self,
        name: str,
        *,
        context: str,
        goal: str,
        approach: str,
        success_criteria: str,
        inputs: str = "",
        outputs: str = "",
        position: Position | str = Position.BACK,
        caller: Caller = AGENT,
        after: Sequence[str] | None = None,
    ) -> PlacedPlan:
        """Add a plan at the front or the back of the queue and write its file; with `after`,
        it is pulled only once those plans of the session are settled (completed or
        discarded).

        Raises:
            QueueFullError: the queue holds as many plans as it may.
            InvalidInputError: a section, the position or `after` (an unknown or discarded
                plan, one named twice, more than 20) breaks a rule.
            SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        waits = check_after(after)
        texts = {
            "context": context,
            "goal": goal,
            "approach": approach,
            "success_criteria": success_criteria,
        }
        check_sections({**texts, "inputs": inputs, "outputs": outputs}, self.limits)
        where = check_position(position)
        content = PlanContent(**texts, inputs=inputs, outputs=outputs)
        call = request(
            caller.request_id,
            PlacedPlan,
            "add_plan",
            worker=caller.holder,
            content=attrs.asdict(content),
            position=where,
            **({"after": list(waits)} if waits else {}),
        )

        async def add(store: SessionStore, tx: SessionTx) -> Applied[PlacedPlan]:
            return await self._add(store, tx, content, where, waits, caller.actor)

        return await self._apply(name, add, retry=call)

    async def _add(
        self,
        store: SessionStore,
        tx: SessionTx,
        content: PlanContent,
        where: Position,
        waits: tuple[PlanId, ...],
        who: Actor,
    ) -> Applied[PlacedPlan]:
        """One plan added in `tx`, waiting for `waits` (checked against the session)."""
        tally = await tx.tally()
        if tally.queued >= self.limits.max_queue:
            raise QueueFullError(self.limits.max_queue)
        named = await check_named(tx, waits)
        plan = await self._insert(tx, content, insert_position(tally, where), waits)
        await tx.files.write(plan.id, render(plan.content, plan.notes))
        rank = insert_rank(tally, where)
        added = plan_event(
            plan.created_at, who, EventKind.PLAN_ADDED, plan, position=where, rank=rank,
            **({"after": list(waits)} if waits else {}),
        )  # fmt: skip
        return Applied(
            result=PlacedPlan(
                plan=plan, path=store.plan_path(plan.id), rank=rank, waiting_for=unsettled(named)
            ),
            events=[added],
            said="plan added",
            about={"plan_id": plan.id, "rank": rank},
        )

    async def add_plans(
        self,
        name: str,
        plans: Sequence[Mapping[str, object]],
        *,
        position: Position | str = Position.BACK,
        caller: Caller = AGENT,
    ) -> AddedPlans:
        """Add 1-50 plans in one transaction, in the given order: at the back as
        `[..., A, B, C]`, at the front as `[A, B, C, ...]`. Each item has a plan's sections,
        an optional `key` and an optional `after` naming plans of the session by id and
        earlier items of the call by key. Nothing is added unless every item is valid.

        Raises:
            QueueFullError: the plans would not fit in the queue.
            InvalidInputError: the first item that breaks a rule, named `plans[i].field`.
            SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        items = check_batch(plans, self.limits)
        where = check_position(position)
        call = request(
            caller.request_id,
            AddedPlans,
            "add_plans",
            worker=caller.holder,
            plans=[attrs.asdict(item) for item in items],
            position=where,
        )

        async def add(store: SessionStore, tx: SessionTx) -> Applied[AddedPlans]:
            return await self._add_batch(store, tx, items, where, caller.actor)

        return await self._apply(name, add, retry=call)

    async def _add_batch(
        self,
        store: SessionStore,
        tx: SessionTx,
        items: list[BatchItem],
        where: Position,
        who: Actor,
    ) -> Applied[AddedPlans]:
        """The checked `items` added in `tx`, in order, each with its file and `plan_added`."""
        tally = await tx.tally()
        if tally.queued + len(items) > self.limits.max_queue:
            raise QueueFullError(self.limits.max_queue)
        named = [
            await check_named(tx, item.after, f"plans[{index}].after")
            for index, item in enumerate(items)
        ]
        first = insert_position(tally, where)
        if where is Position.FRONT and tally.low is not None:
            first = tally.low - len(items)
        added: list[BatchedPlan] = []
        for index, item in enumerate(items):
            after = item.named([entry.plan.id for entry in added])
            plan = await self._insert(tx, item.content, first + index, after)
            await tx.files.write(plan.id, render(plan.content, plan.notes))
            rank = (1 if where is Position.FRONT else tally.queued + 1) + index
            settled = set(item.after) - set(unsettled(named[index]))
            waiting = tuple(plan_id for plan_id in after if plan_id not in settled)
            added.append(
                BatchedPlan(
                    plan=plan, key=item.key, path=store.plan_path(plan.id), rank=rank,
                    waiting_for=waiting,
                )
            )  # fmt: skip
        events = [
            plan_event(
                entry.plan.created_at,
                who,
                EventKind.PLAN_ADDED,
                entry.plan,
                position=where,
                rank=entry.rank,
                batch=len(items),
                **({"after": list(entry.plan.after)} if entry.plan.after else {}),
            )
            for entry in added
        ]
        return Applied(
            result=AddedPlans(plans=tuple(added), queue_length=tally.queued + len(items)),
            events=events,
            said="plans added",
            about={"count": len(added)},
        )
