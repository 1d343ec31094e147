"""What plans that wait for other plans cost (DESIGN §11, "Benchmark rows"), measured for
benchmarks/run.py's rows 22-25: a pull past thousands of waiting plans against a pull on a
queue of ready ones; one 9plan_queue_add_many of 20 plans against 20 single adds; and 8
workers draining a random graph against the same workers on plans that wait for nothing,
with the journal's check that no plan was pulled before its prerequisites were settled."""

import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
from mcp import Client

from benchmarks.graph import (
    PLAN,
    Graph,
    add_graph,
    drain,
    flat,
    random_graph,
    read_back,
    server,
)
from nineplan_adapters import open_nineplan
from nineplan_core.callers import Caller
from nineplan_core.service import NinePlan

#: The worker that holds the plan the waiting plans wait for, and the one whose pulls are timed.
HOLDER, BENCH = Caller.of("holder"), Caller.of("bench")
#: Ready plans behind the waiting ones: the pull passes every waiting plan to reach one.
READY_BEHIND = 10


async def _fill(nineplan: NinePlan, name: str, count: int, after: list[str]) -> None:
    """Add `count` plans at the back, 50 a transaction, each waiting for `after`."""
    for start in range(0, count, 50):
        items = [{**PLAN, "goal": f"Plan {start + n}", "after": after}
                 for n in range(min(50, count - start))]  # fmt: skip
        await nineplan.add_plans(name, items)


async def _queue(nineplan: NinePlan, queued: int, *, waiting: bool) -> str:
    """A session of `queued` queued plans: all ready, or (`waiting`) all but the last
    `READY_BEHIND` waiting for one plan that worker `holder` holds."""
    name = (await nineplan.create_session("a queue to pull from")).session.name
    if waiting:
        held = (await nineplan.add_plan(name, **PLAN, goal="Hold the others up")).plan.id
        await nineplan.pull_plan(name, caller=HOLDER)
        await _fill(nineplan, name, queued - READY_BEHIND, [held])
        await _fill(nineplan, name, READY_BEHIND, [])
    else:
        await _fill(nineplan, name, queued, [])
    return name


async def pull_samples(
    folder: Path, queued: int, repeat: int, settings: dict[str, Any]
) -> tuple[list[float], list[float]]:
    """Pulls by worker `bench` (each timed from the call to its commit) on a queue of `queued`
    plans whose first `queued - 10` wait for an active plan, and on one of `queued` ready
    plans, in alternating rounds after 5 warm-up ones. After each pull the plan is discarded
    and a ready plan added at the back (not timed), so both queues keep their shape."""
    async with open_nineplan(folder, durability="normal", **settings) as nineplan:
        names = {waiting: await _queue(nineplan, queued, waiting=waiting) for waiting in (True, False)}  # fmt: skip
    samples: dict[bool, list[float]] = {True: [], False: []}
    async with open_nineplan(folder, max_queue=1_000_000, **settings) as nineplan:
        for index in range(repeat + 5):
            for waiting in (True, False)[:: 1 if index % 2 else -1]:
                start = time.perf_counter()
                pulled = await nineplan.pull_plan(names[waiting], caller=BENCH)
                elapsed = time.perf_counter() - start
                assert pulled.plan.after == (), "a waiting plan was pulled"
                await nineplan.discard_plan(names[waiting], "benchmark", caller=BENCH)
                await nineplan.add_plan(names[waiting], **PLAN, goal="One more ready plan")
                if index >= 5:
                    samples[waiting].append(elapsed)
    return samples[True], samples[False]


async def batch_samples(
    folder: Path, rounds: int, plans: int = 20
) -> tuple[list[float], list[float]]:
    """Over stdio, one 9plan_queue_add_many of `plans` plans and `plans` 9plan_queue_add
    calls, each timed whole, in alternating order, after 2 warm-up rounds."""
    items = [{**PLAN, "goal": f"Plan {n}", "key": f"p{n}", "after": [f"p{n - 1}"] if n else []}
             for n in range(plans)]  # fmt: skip
    many: list[float] = []
    single: list[float] = []
    async with Client(server(folder, None), mode="legacy") as client:
        created = await client.call_tool("9plan_session_create", {})
        name = (created.structured_content or {})["session_name"]
        for index in range(rounds + 2):
            for batched in (True, False)[:: 1 if index % 2 else -1]:
                start = time.perf_counter()
                if batched:
                    result = await client.call_tool(
                        "9plan_queue_add_many", {"session_name": name, "plans": items}
                    )
                    assert not result.is_error, result.content
                else:
                    for item in items:
                        one = {
                            key: value for key, value in item.items() if key not in ("key", "after")
                        }
                        result = await client.call_tool(
                            "9plan_queue_add", {**one, "session_name": name}
                        )
                        assert not result.is_error, result.content
                if index >= 2:
                    (many if batched else single).append(time.perf_counter() - start)  # fmt: skip
    return many, single


@attrs.define
class Drains:
    """Rounds of workers draining a graph and the same count of plans without `after`:
    throughputs (plans a second), the graphs' widest layers, and what the journals say."""

    graph: list[float] = attrs.field(factory=list)
    flat: list[float] = attrs.field(factory=list)
    widths: list[int] = attrs.field(factory=list)
    early: list[str] = attrs.field(factory=list)
    twice: int = 0
    lost: int = 0
    blocked: int = 0


def _widths(plans: int) -> tuple[int, int]:
    """Layers 5-40 wide; narrower for a graph of a few plans, so that it has several layers."""
    return min(5, max(1, plans // 6)), min(40, max(1, plans // 3))


async def drain_samples(folder: Path, workers: int, plans: int, rounds: int) -> Drains:
    """`rounds` rounds, each a random graph (seeded by the round) and a flat queue of `plans`
    plans drained by `workers` stdio servers (started before the clock), in alternating order;
    each session's journal checked afterwards."""
    drains = Drains()
    for index in range(rounds):
        graph = random_graph(plans, random.Random(index), _widths(plans))
        for shape, label in ((graph, "graph"), (flat(plans), "flat"))[:: 1 if index % 2 else -1]:
            throughput = await _drained(folder / f"{label}{index}", shape, workers, drains, index)
            (drains.graph if shape is graph else drains.flat).append(throughput)
        drains.widths.append(graph.width)
    return drains


async def _drained(folder: Path, graph: Graph, workers: int, drains: Drains, seed: int) -> float:
    """Plans a second of `workers` workers draining `graph`; what its journal says goes into
    `drains`."""
    async with Client(server(folder, None), mode="legacy") as client:
        created = await client.call_tool("9plan_session_create", {})
        name = (created.structured_content or {})["session_name"]
        ids = await add_graph(client, name, graph)
    drained = await drain([folder], name, workers, None, seed)
    after = await read_back(folder, name, None)
    done, completed = Counter(drained.done), after.journal.completions
    drains.early += after.journal.early
    drains.twice += sum(1 for plan in ids if max(done[plan], completed[plan]) > 1)
    drains.lost += sum(1 for plan in ids if not (done[plan] and completed[plan]))
    drains.blocked += drained.blocked
    return len(ids) / drained.seconds
