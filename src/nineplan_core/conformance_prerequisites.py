"""The conformance machine's adds and pulls, and what plans wait for (docs/architecture.md,
"Prerequisites"): an agent's add of one plan or of a batch, each naming plans of the session
(and a batch's earlier items, by key) in `after`, and a person's change of `after`, cycles
refused; invalid ones refused with nothing changed. A pull by any worker takes exactly the
first ready plan in queue order, or is refused with QUEUE_BLOCKED exactly when plans are
queued and none is ready. Import it from tests only: it needs hypothesis."""

import datetime as dt
from collections.abc import Iterable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from nineplan_core.callers import AGENT, Caller
from nineplan_core.conformance import ModelChecks
from nineplan_core.errors import InvalidInputError, PlanAlreadyActiveError, QueueEmptyError
from nineplan_core.journal import EventKind
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Position
from nineplan_core.prerequisites import BLOCKED_NAMED, QueueBlockedError
from nineplan_core.strategies import plan_contents, positions

#: A plan id no plan of the machine's session has (repeatable ids count up from 00001).
UNKNOWN = "zzzzz"
#: A batch item's sections, and its goal: short, so that a few items do not run out
#: hypothesis' data (the single add draws whole plans of any text).
BATCH_ITEM = {"context": "c", "approach": "a", "success_criteria": "s"}
BATCH_GOALS = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=8
).map(lambda text: f"item {text}")


class PrerequisiteRules(ModelChecks):
    """Adds, one plan or a batch, with `after`, a person's change of `after`, and pulls,
    against the model's `after` (every plan added -> what it names)."""

    def enqueue(self, plan_id: str, where: Position, rank: int | None) -> None:
        """`plan_id` joins the model's queue at `where`; the service said `rank`."""
        if where is Position.FRONT:
            self.queue.insert(0, plan_id)
        else:
            self.queue.append(plan_id)
        assert rank == self.queue.index(plan_id) + 1, (rank, self.queue)

    def nameable(self, itself: str | None = None) -> list[str]:
        """The plans `after` may name: every plan added and not discarded (completed ones
        are settled already), but `itself`."""
        return [plan_id for plan_id in self.after if plan_id not in self.discarded | {itself}]

    def drawn_after(self, data: st.DataObject, itself: str | None = None) -> tuple[list[str], bool]:
        """An `after` list for an add or a person's change, and whether it is valid: up to
        three plans the session has, or, now and then, with one name that breaks a rule (an
        unknown plan, a discarded one, one named twice, the plan itself)."""
        known = self.nameable(itself)
        after = (
            data.draw(st.lists(st.sampled_from(known), max_size=3, unique=True)) if known else []
        )
        if data.draw(st.integers(0, 4)):
            return after, True
        bad = [UNKNOWN, *sorted(self.discarded), *after, *([itself] if itself else [])]
        at = data.draw(st.integers(0, len(after)))
        return [*after[:at], data.draw(st.sampled_from(bad)), *after[at:]], False

    def reaches(self, sources: Iterable[str], target: str) -> bool:
        """Whether a plan of `sources`, or one they wait for at any depth (settled plans'
        prerequisites included, as the service walks them), is `target`."""
        seen: set[str] = set()
        frontier = list(sources)
        while frontier:
            plan_id = frontier.pop()
            if plan_id == target:
                return True
            if plan_id not in seen:
                seen.add(plan_id)
                frontier += self.after.get(plan_id, ())
        return False

    # The adds and pulls take one argument, drawn from: hypothesis draws a rule with fewer
    # arguments more often, and plans must be added and pulled for them to wait for others.
    @rule(data=st.data())
    def add(self, data: st.DataObject) -> None:
        """An agent adds a plan at the front or the back, waiting for plans of the session
        (often none); an `after` that breaks a rule is refused and adds nothing."""
        content, where = data.draw(plan_contents()), data.draw(positions)
        after, valid = self.drawn_after(data)
        adding = self.service.add_plan(
            self.name, position=where, caller=AGENT, after=after, **content
        )
        if not valid:
            self.refused(adding, InvalidInputError)
            return
        placed = self.run(adding)
        plan_id = placed.plan.id
        assert plan_id not in self.after
        assert placed.plan.after == tuple(after)
        self.after[plan_id] = tuple(after)
        self.enqueue(plan_id, where, placed.rank)
        assert placed.waiting_for == self.waiting_for(plan_id)
        self.events.append((EventKind.PLAN_ADDED, plan_id))

    @rule(data=st.data())
    def add_batch(self, data: st.DataObject) -> None:
        """An agent adds 1-4 plans in one call, in order: at the front `[A, B, ...]` before
        the queue, at the back after it; an item names earlier items by key and plans of
        the session by id. One invalid item refuses the call: nothing is added."""
        where, size = data.draw(positions), data.draw(st.integers(1, 4))
        keys = [data.draw(st.sampled_from([f"k{index}", None])) for index in range(size)]
        items: list[dict[str, Any]] = []
        for index in range(size):
            nameable = [*(key for key in keys[:index] if key is not None), *self.nameable()]
            drawn = st.lists(st.sampled_from(nameable), max_size=4, unique=True)
            named = data.draw(drawn) if nameable else []
            item = {**BATCH_ITEM, "goal": data.draw(BATCH_GOALS), "after": named}
            items.append(item | ({"key": keys[index]} if keys[index] else {}))
        valid = bool(data.draw(st.integers(0, 4)))
        if not valid:
            self.spoil(data, items, keys)
        adding = self.service.add_plans(self.name, items, position=where)
        if not valid:
            self.refused(adding, InvalidInputError)
            return
        added = self.run(adding)
        ids = [entry.plan.id for entry in added.plans]
        assert [entry.key for entry in added.plans] == keys
        by_key = {key: plan_id for key, plan_id in zip(keys, ids, strict=True) if key}
        for plan_id, item in zip(ids, items, strict=True):
            assert plan_id not in self.after
            self.after[plan_id] = tuple(by_key.get(name, name) for name in item["after"])
            self.events.append((EventKind.PLAN_ADDED, plan_id))
        if where is Position.FRONT:
            self.queue[0:0] = ids
        else:
            self.queue += ids
        assert [entry.rank for entry in added.plans] == [self.queue.index(p) + 1 for p in ids]
        assert [entry.plan.after for entry in added.plans] == [self.after[p] for p in ids]
        assert [entry.waiting_for for entry in added.plans] == [self.waiting_for(p) for p in ids]
        assert added.queue_length == len(self.queue)

    def spoil(
        self, data: st.DataObject, items: list[dict[str, Any]], keys: list[str | None]
    ) -> None:
        """Make one item of a batch invalid: a blank goal, a plan unknown or discarded, a
        key not given before it (its own, a later item's, none at all), a key given twice."""
        index = data.draw(st.integers(0, len(items) - 1))
        item = items[index]
        names = [UNKNOWN, "no-such-key", *sorted(self.discarded)]
        names += [key for key in keys[index:] if key is not None]  # its own, or a later one
        mistake = data.draw(st.sampled_from(["goal", "after", "key"]))
        if mistake == "goal":
            item["goal"] = " \n"
        elif mistake == "after" or not (given := [key for key in keys[:index] if key]):
            item["after"] = [*item["after"][:3], data.draw(st.sampled_from(names))]
        else:
            item["key"] = data.draw(st.sampled_from(given))

    @precondition(lambda self: bool(self.queue))
    @rule(data=st.data(), cycle=st.booleans())
    def person_edits_after(self, data: st.DataObject, *, cycle: bool) -> None:
        """A person changes what a queued plan waits for (to none, or to plans of the
        session): it keeps its place. A change that would make plans wait for each other
        (`cycle`: naming a plan that waits for this one, at any depth) is refused, as is an
        `after` that breaks a rule; nothing changes."""
        plan_id = data.draw(st.sampled_from(self.queue))
        after, valid = self.drawn_after(data, itself=plan_id)
        waiting = [
            p for p in self.nameable(plan_id) if p not in after and self.reaches([p], plan_id)
        ]
        if cycle and waiting:
            after.append(data.draw(st.sampled_from(waiting)))
        changing = self.service.edit_plan_after(self.name, plan_id, after)
        if not valid or self.reaches(after, plan_id):
            self.refused(changing, InvalidInputError)
            return
        placed = self.run(changing)
        assert placed.plan.after == tuple(after)
        assert placed.rank == self.queue.index(plan_id) + 1
        self.after[plan_id] = tuple(after)
        self.events.append((EventKind.PLAN_EDITED, plan_id))

    @rule(data=st.data())
    def pull(self, data: st.DataObject) -> None:
        """A worker, holding a plan or not, pulls."""
        self.pull_as(*self.worker(data))

    @precondition(lambda self: bool(self.queue) and len(self.held) < len(self.workers))
    @rule(data=st.data())
    def idle_worker_pulls(self, data: st.DataObject) -> None:
        """A worker that holds no plan pulls from a queue that has plans, naming itself."""
        worker = data.draw(st.sampled_from([w for w in self.workers if w not in self.held]))
        self.pull_as(worker, Caller.of(worker))

    def pull_as(self, worker: str, caller: Caller) -> None:
        """`worker` pulls as `caller`: it gets the first ready plan in queue order, with what
        it waited for; QUEUE_BLOCKED exactly when plans are queued and none is ready."""
        pulling = self.service.pull_plan(self.name, caller=caller)
        if self.unnamed_refused(caller, pulling):
            return
        if worker in self.held:
            self.refused(pulling, PlanAlreadyActiveError)
            self.heard_from(worker)  # a worker that asks is alive: its lease renews
        elif not self.queue:
            self.refused(pulling, QueueEmptyError)
        elif (ready := self.first_ready()) is None:
            self.blocked(self.refused(pulling, QueueBlockedError))
        else:
            placed = self.run(pulling)
            assert placed.plan.id == ready
            assert placed.plan.worker == worker
            settled = {True: PlanStatus.COMPLETED, False: PlanStatus.DISCARDED}
            assert [(p.id, p.status) for p in placed.prerequisites] == [
                (named, settled[named in self.completed]) for named in self.after[ready]
            ]
            self.queue.remove(ready)
            self.held[worker] = ready
            self.heard_from(worker)
            self.events.append((EventKind.PLAN_PULLED, ready))

    def blocked(self, error: QueueBlockedError) -> None:
        """A blocked pull counts the queue, names its front plans and the first stale plan
        they wait for (to take over), in queue order."""
        assert error.queued == len(self.queue)
        assert [plan_id for plan_id, _ in error.waits] == self.queue[:BLOCKED_NAMED]
        lease = dt.timedelta(minutes=self.service.lease_minutes)
        stale = {
            plan_id
            for worker, plan_id in self.held.items()
            if self.clock() - self.last_seen[worker] > lease
        }
        waited = (named for plan_id in self.queue for named in self.waiting_for(plan_id))
        assert error.stale == next((named for named in waited if named in stale), None)
