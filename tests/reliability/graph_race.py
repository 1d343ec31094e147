"""The workers' race on plans that wait for each other (DESIGN §10 and §11): a random
200-plan graph (layers 5-40 wide, at least one 8 wide; the first layer's plans wait for
nothing, every other plan for 1-3 plans of the layer before) added up front with 9plan_queue_add_many, then N workers, each its own `nineplan
serve` over stdio with its own SDK client, pull, hold each plan 20-50 ms and complete it,
waiting briefly on QUEUE_BLOCKED, until the queue is empty. Then, from the journal: no plan
pulled before every plan it waits for was settled (event seqs compared), every plan completed
exactly once, none lost, and the most plans active at once; and admin_validate (with
`prerequisites_respected`) finds the session valid.

On SQLite every worker shares one sessions folder; on PostgreSQL the workers are spread over
two "machines" (separate sessions folders) sharing one database.

    python -m tests.reliability.graph_race --runs 20 [--workers 8] [--plans 200]

runs the SQLite race (and the PostgreSQL one when NINEPLAN_TEST_DATABASE_URL is set) that many
times, prints a table and exits 1 when any plan was pulled early, completed twice or lost, a
journal was invalid, or no moment had 4 plans active (with 4 workers or more). `make torture`
runs it after tests.reliability.race.
"""

import argparse
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

import anyio
import attrs
from benchmarks.graph import add_graph, drain, random_graph, read_back, server
from mcp import Client

from tests.fakes import postgres_schema
from tests.mcp_helpers import ok

#: The fewest plans that must be active at one moment of a race of this many workers or more.
CONCURRENT = 4


@attrs.define
class GraphRaceResult:
    """What one race left: the graph, how often each plan was completed, what the journal
    says, and whether the session is valid."""

    backend: str
    plans: int
    width: int
    edges: int
    once: int
    twice: int
    lost: int
    early: list[str]
    peak_active: int
    blocked: int
    seconds: float
    valid: bool
    issues: list[str] = attrs.field(factory=list)

    def clean(self, workers: int) -> bool:
        """Every plan completed once, none pulled early, the journal valid, and (with at
        least `CONCURRENT` workers) that many plans active at some moment."""
        return (
            self.once == self.plans
            and not (self.twice or self.lost or self.early or self.issues)
            and self.valid
            and self.peak_active >= min(CONCURRENT, workers)
        )


async def graph_race(
    machines: list[Path], workers: int, plans: int, seed: int, url: str | None = None
) -> GraphRaceResult:
    """Add a random `plans`-plan graph on the first machine, race `workers` workers spread
    over `machines` until the queue is empty, and read the session back on the last machine."""
    graph = random_graph(plans, random.Random(seed))
    async with Client(server(machines[0], url), mode="legacy") as client:
        name = (await ok(client, "9plan_session_create", task_description="graph"))["session_name"]
        ids = await add_graph(client, name, graph)
    with anyio.fail_after(600):
        drained = await drain(machines, name, workers, url, seed)
    after = await read_back(machines[-1], name, url)
    done, completed = Counter(drained.done), after.journal.completions
    issues = [*after.validation.issues, *after.journal.unreadable]
    if not after.validation.prerequisites_respected:
        issues.append("admin_validate: prerequisites_respected is false")
    if after.counts != (0, 0, plans):
        issues.append(f"state after the race: {after.counts[0]} queued, "
                      f"{after.counts[1]} active, {after.counts[2]} completed")  # fmt: skip
    return GraphRaceResult(
        backend="postgres" if url else "sqlite",
        plans=plans,
        width=graph.width,
        edges=graph.edges,
        once=sum(1 for plan in ids if done[plan] == 1 == completed[plan]),
        twice=sum(1 for plan in ids if max(done[plan], completed[plan]) > 1),
        lost=sum(1 for plan in ids if not (done[plan] or completed[plan])),
        early=after.journal.early,
        peak_active=after.journal.peak_active,
        blocked=drained.blocked,
        seconds=drained.seconds,
        valid=after.validation.valid,
        issues=issues,
    )


async def sqlite_graph_race(
    folder: Path, seed: int, workers: int = 8, plans: int = 200
) -> GraphRaceResult:
    """The race on one SQLite sessions folder."""
    return await graph_race([folder / "sessions"], workers, plans, seed)


async def postgres_graph_race(
    folder: Path, url: str, seed: int, workers: int = 8, plans: int = 200
) -> GraphRaceResult:
    """The race on two machines (sessions folders) sharing the PostgreSQL database at `url`."""
    machines = [folder / "machine-a", folder / "machine-b"]
    return await graph_race(machines, workers, plans, seed, url)


async def graph_races(
    runs: int, workers: int, plans: int, url: str | None, seed: int
) -> list[GraphRaceResult]:
    results = []
    for run in range(runs):
        with tempfile.TemporaryDirectory(prefix="nineplan-graph-race-") as folder:
            results.append(
                await sqlite_graph_race(Path(folder) / "sqlite", seed + run, workers, plans)
            )
            if url:
                async with postgres_schema() as scoped:
                    results.append(
                        await postgres_graph_race(
                            Path(folder) / "pg", scoped, seed + run, workers, plans
                        )
                    )
        print(f"run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    return results


def table(results: list[GraphRaceResult], workers: int) -> str:
    lines = [
        (
            "| backend | workers | runs | plans | widest layer | completed once | completed twice "
            "| lost | pulled early | journal valid | most active at once (min-max) "
            "| blocked pulls | seconds (min-max) |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for backend in sorted({result.backend for result in results}, reverse=True):
        mine = [result for result in results if result.backend == backend]
        seconds = [result.seconds for result in mine]
        peaks = [result.peak_active for result in mine]
        widths = [result.width for result in mine]
        lines.append(
            f"| {backend} | {workers} | {len(mine)} | {sum(r.plans for r in mine)} "
            f"| {min(widths)}-{max(widths)} | {sum(r.once for r in mine)} "
            f"| {sum(r.twice for r in mine)} | {sum(r.lost for r in mine)} "
            f"| {sum(len(r.early) for r in mine)} "
            f"| {sum(r.valid and not r.issues for r in mine)}/{len(mine)} "
            f"| {min(peaks)}-{max(peaks)} | {sum(r.blocked for r in mine)} "
            f"| {sum(seconds):.0f} ({min(seconds):.1f}-{max(seconds):.1f}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--plans", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1, help="run k uses the graph of seed + k")
    options = parser.parse_args()
    url = os.environ.get("NINEPLAN_TEST_DATABASE_URL")
    results = anyio.run(
        graph_races, options.runs, options.workers, options.plans, url, options.seed
    )
    print(table(results, options.workers))
    for result in results:
        for line in [*result.early, *result.issues]:
            print(f"INVALID ({result.backend}): {line}")
    sys.exit(0 if all(result.clean(options.workers) for result in results) else 1)


if __name__ == "__main__":
    main()
