"""Plans that wait for other plans, drained by many workers (DESIGN §11): a random graph of
`after`s added with 9plan_queue_add_many; workers, each `nineplan serve` over stdio with its
own SDK client, that hold each plan a while and wait when the queue is blocked; and what the
session's journal says of it: pulls made before a prerequisite was settled, completions per
plan, and the most plans active at once.

The workers' race with prerequisites (tests/reliability/graph_race.py) and benchmark row 24
(benchmarks/run.py) drain their graphs with it.
"""

import random
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import anyio
import attrs
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from nineplan_adapters import open_nineplan
from nineplan_adapters.entrypoints.cli.demo import server_command
from nineplan_core.journal import Event, EventKind, UnreadableEvent
from nineplan_core.results import ValidationReport

PLAN: dict[str, Any] = {  # Any: spread into add_plan beside its caller
    "context": "A task split into plans that wait for each other",
    "approach": "Do it",
    "success_criteria": "Done",
}
#: 9plan_queue_add_many takes at most this many plans a call.
BATCH = 50
#: How long a worker waits after QUEUE_BLOCKED before it pulls again, seconds.
BLOCKED_WAIT = 0.01
#: How long a worker holds each plan before completing it, seconds (drawn uniformly).
HOLD = (0.02, 0.05)
_SETTLING = frozenset({EventKind.PLAN_COMPLETED, EventKind.PLAN_DISCARDED})
_RELEASING = _SETTLING | {EventKind.PLAN_DEFERRED, EventKind.PLAN_RELEASED}


@attrs.frozen
class Graph:
    """Plans in queue order, each with the indexes of the earlier plans it waits for, and the
    sizes of its layers: a plan waits only for plans of the layer before its own, so the plans
    of one layer can all be worked at once, and the graph is as wide as its widest layer."""

    after: tuple[tuple[int, ...], ...]
    layers: tuple[int, ...]

    @property
    def width(self) -> int:
        return max(self.layers)

    @property
    def edges(self) -> int:
        return sum(len(named) for named in self.after)


def flat(plans: int) -> Graph:
    """`plans` plans that wait for nothing."""
    return Graph(after=((),) * plans, layers=(plans,))


def random_graph(
    plans: int, rng: random.Random, widths: tuple[int, int] = (5, 40), wide: int = 8
) -> Graph:
    """`plans` plans in layers of `widths` plans (at least one layer `wide`, when there are
    that many plans): the first layer's plans wait for nothing, every other plan for 1-3 plans
    of the layer before (so a layer starts as the one before it settles, and a narrow layer in
    progress can leave nothing ready)."""
    layers = _layer_sizes(plans, rng, widths, wide)
    after: list[tuple[int, ...]] = []
    start = 0
    for before, size in zip((0, *layers), layers, strict=False):
        previous = range(start - before, start)
        for _ in range(size):
            count = min(rng.randint(1, 3), len(previous))
            after.append(tuple(sorted(rng.sample(previous, count))))
        start += size
    return Graph(after=tuple(after), layers=layers)


def _layer_sizes(
    plans: int, rng: random.Random, widths: tuple[int, int], wide: int
) -> tuple[int, ...]:
    sizes: list[int] = []
    while sum(sizes) < plans:
        sizes.append(rng.randint(*widths))
    sizes[0] = max(sizes[0], wide if max(sizes) < wide else 0)
    while (over := sum(sizes) - plans) > 0:  # the last layers give back what is too many
        sizes[-1] -= min(over, sizes[-1])
        sizes = [size for size in sizes if size]
    return tuple(sizes)


def _said(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def _called(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, _said(result)
    return dict(result.structured_content or {})


async def add_graph(client: Client, name: str, graph: Graph) -> list[str]:
    """Add the graph's plans in queue order with 9plan_queue_add_many, `BATCH` a call: each
    plan names the plans of its own call by key and those of earlier calls by id. Returns the
    plan ids in queue order."""
    ids: list[str] = []
    for start in range(0, len(graph.after), BATCH):
        indexes = range(start, min(start + BATCH, len(graph.after)))
        items = [
            {**PLAN, "goal": f"Plan {index}", "key": f"p{index}",
             "after": [ids[named] if named < start else f"p{named}" for named in graph.after[index]]}
            for index in indexes
        ]  # fmt: skip
        added = await _called(client, "9plan_queue_add_many", session_name=name, plans=items)
        ids += [entry["plan_id"] for entry in added["plans"]]
    return ids


@attrs.define
class Drained:
    """What the workers did: each plan id as a worker completed it, how often a pull was
    refused with QUEUE_BLOCKED, and the seconds from the start signal to the last worker's end."""

    done: list[str] = attrs.field(factory=list)
    blocked: int = 0
    seconds: float = 0.0


async def work(
    client: Client, name: str, worker: str, rng: random.Random, drained: Drained
) -> None:
    """Pull, hold the plan `HOLD` seconds, complete it; on QUEUE_BLOCKED wait `BLOCKED_WAIT`
    and pull again; stop at QUEUE_EMPTY."""
    arguments = {"session_name": name, "worker": worker}
    while True:
        pulled = await client.call_tool("9plan_queue_pull", arguments)
        if pulled.is_error:
            said = _said(pulled)
            assert "Error: QUEUE_BLOCKED" in said or "Error: QUEUE_EMPTY" in said, said
            if "Error: QUEUE_EMPTY" in said:
                return
            drained.blocked += 1
            await anyio.sleep(BLOCKED_WAIT)
            continue
        plan_id = (pulled.structured_content or {})["plan_id"]
        await anyio.sleep(rng.uniform(*HOLD))
        outcome = f"{worker} did {plan_id}"
        finished = await _called(client, "9plan_plan_complete", **arguments, outcome=outcome)
        assert finished["plan_id"] == plan_id, finished
        drained.done.append(plan_id)


def server(machine: Path, url: str | None) -> StdioServerParameters:
    """`nineplan serve` over stdio on the sessions folder `machine` (and the database `url`)."""
    params = server_command(machine)
    params.env = {**(params.env or {}), "NINEPLAN_LOG_LEVEL": "error"}
    if url:
        params.env["NINEPLAN_DATABASE_URL"] = url
    return params


def worker_name(machines: Sequence[Path], number: int) -> str:
    """`w3`, or `machine-b.w3` when the workers are spread over several machines."""
    return (
        f"{machines[number % len(machines)].name}.w{number}" if len(machines) > 1 else f"w{number}"
    )


async def drain(
    machines: Sequence[Path], name: str, workers: int, url: str | None, seed: int
) -> Drained:
    """Start `workers` servers spread over `machines`, each with its own client (not timed),
    then let them all `work` at once until the session's queue is empty."""
    drained = Drained()
    connected, go = [0], anyio.Event()

    async def one(number: int) -> None:
        async with Client(server(machines[number % len(machines)], url), mode="legacy") as client:
            connected[0] += 1
            if connected[0] == workers:
                go.set()
            await go.wait()
            worker = worker_name(machines, number)
            await work(client, name, worker, random.Random(seed * 1000 + number), drained)

    async with anyio.create_task_group() as group:
        for number in range(workers):
            group.start_soon(one, number)
        await go.wait()
        started = time.perf_counter()
    drained.seconds = time.perf_counter() - started
    return drained


@attrs.frozen
class JournalCheck:
    """What a session's journal says of a drain."""

    #: One line per pull made before one of its plan's prerequisites was settled.
    early: list[str]
    #: How many `plan_completed` events each plan has.
    completions: Counter[str]
    #: The most plans active at once (pulled and not yet completed, discarded or put back).
    peak_active: int
    #: One line per journal row that is not a readable event.
    unreadable: list[str]


def check_journal(events: Iterable[Event | UnreadableEvent]) -> JournalCheck:
    """Compare each `plan_pulled` event's seq with the seqs of the events that settled its
    plan's prerequisites (`plan_added`'s `detail.after`), count completions, and replay the
    pulls and completions in seq order for the most plans active at once."""
    readable = sorted((e for e in events if isinstance(e, Event)), key=lambda e: e.seq)
    unreadable = [f"journal row {e.seq} is unreadable" for e in events if isinstance(e, UnreadableEvent)]  # fmt: skip
    after = {e.plan_id: list(e.detail.get("after", [])) for e in readable if e.kind is EventKind.PLAN_ADDED}  # fmt: skip
    settled: dict[str | None, int] = {}
    for event in readable:
        if event.kind in _SETTLING:
            settled.setdefault(event.plan_id, event.seq)
    early = [
        f"plan {event.plan_id} pulled at seq {event.seq}, its prerequisite {named} "
        f"settled {f'at seq {settled[named]}' if named in settled else 'never'}"
        for event in readable
        if event.kind is EventKind.PLAN_PULLED
        for named in after.get(event.plan_id, [])
        if settled.get(named, event.seq) >= event.seq
    ]
    completions = Counter(e.plan_id for e in readable if e.kind is EventKind.PLAN_COMPLETED)
    return JournalCheck(early, Counter({str(k): v for k, v in completions.items()}),
                        _peak_active(readable), unreadable)  # fmt: skip


def _peak_active(events: list[Event]) -> int:
    active: set[str | None] = set()
    peak = 0
    for event in events:
        if event.kind is EventKind.PLAN_PULLED:
            active.add(event.plan_id)
            peak = max(peak, len(active))
        elif event.kind in _RELEASING:
            active.discard(event.plan_id)
    return peak


@attrs.frozen
class Afterwards:
    """A session read back through the library once its workers are done."""

    journal: JournalCheck
    validation: ValidationReport
    #: (queued, active, completed) plans.
    counts: tuple[int, int, int]


async def read_back(machine: Path, name: str, url: str | None) -> Afterwards:
    """The session's journal checked, its validation, and what is left of it, read on `machine`."""
    settings: dict[str, Any] = {"database_url": url} if url else {}
    async with open_nineplan(machine, **settings) as nineplan:
        events = await nineplan.journal(name)
        validation = await nineplan.validate_session(name)
        state = await nineplan.session_state(name)
    counts = (len(state.queue), len(state.active_plans), state.completed_count)
    return Afterwards(check_journal(events), validation, counts)
