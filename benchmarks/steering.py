"""A person's drag-move on a big board (issue 26, "Benchmarks"): in a queue of 10,000 plans,
each move of a card before another commits through the library's `move_plan(..., before=...)`,
timed from the call to its commit. Two kinds of move are measured apart:

- random: a random card before another random card (a free integer is found between most
  pairs once the seeded queue, numbered 1, 2, 3 ..., has been renumbered where the moves land);
- same place: the last card before the middle one, again and again, so the gap there is used
  up and half the queue is renumbered every 17th move or so (the worst case: the shorter side
  of the queue, n / 2 rows, rewritten in the move's transaction).

    python -m benchmarks.steering [--size tiny|full]

SQLite always; PostgreSQL too when NINEPLAN_BENCH_DATABASE_URL or NINEPLAN_TEST_DATABASE_URL
is set (in a schema of its own, dropped afterwards). Prints the table; timings never fail
anything (a wrong order does: exit 1).
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import attrs

from benchmarks.data import seed_session
from nineplan_adapters import open_nineplan
from nineplan_core.model import PlanContent, SessionName
from nineplan_core.plan_file import PlanText
from nineplan_core.ports import SessionStore
from nineplan_core.service import NinePlan

#: Queue size, random moves, same-place moves.
SIZES: dict[str, tuple[int, int, int]] = {"tiny": (200, 20, 20), "full": (10_000, 200, 100)}
#: The target for a drag-move's commit (issue 26): p95 under this many milliseconds.
TARGET_MS = 50.0
NAME = "drag-bench-session"


@attrs.frozen
class Line:
    """The moves of one kind on one backend: seconds per move, and how many renumbered."""

    backend: str
    kind: str
    samples: list[float]
    renumbered: int

    def ms(self, quantile: float) -> float:
        ordered = sorted(self.samples)
        return 1000 * ordered[min(len(ordered) - 1, int(quantile * len(ordered)))]


async def moves(
    service: NinePlan, name: str, order: list[str], count: int, *, same_place: bool, seed: int = 5
) -> tuple[list[float], int]:
    """Time `count` moves before another card, keeping `order` (the queue, pull order) in
    step; the seconds of each, and how many renumbered the queue (the moved plan's new
    position lies above every position held before)."""
    rng = random.Random(seed)
    samples, renumbered = [], 0
    store = await service.catalog.open(SessionName(name))
    for _ in range(count):
        if same_place:  # the last card before the middle one: the costliest renumber
            plan_id, before = order[-1], order[len(order) // 2]
        else:
            plan_id, before = rng.sample(order, 2)
        ends = await _ends(store)  # outside the timing, as is the count of renumbers
        start = time.perf_counter()
        await service.move_plan(name, plan_id, before=before)
        samples.append(time.perf_counter() - start)
        order.remove(plan_id)
        order.insert(order.index(before), plan_id)
        low, high = await _ends(store)
        # A renumber moves one side of the queue beyond its ends; a move to the front takes
        # only the position just below the lowest.
        renumbered += low < ends[0] - 1 or high > ends[1]
    return samples, renumbered


async def _ends(store: SessionStore) -> tuple[int, int]:
    """The lowest and highest stored positions of the queue."""
    async with store.reading() as reader:
        tally = await reader.tally()
    return tally.low or 0, tally.high or 0


async def measure_backend(
    backend: str, service: NinePlan, name: str, order: list[str], size: str
) -> list[Line]:
    """Both kinds of move on one seeded session; the order is checked against the queue."""
    _, random_moves, same_moves = SIZES[size]
    await moves(service, name, order, 3, same_place=False, seed=1)  # warm: first open, caches
    lines = []
    for kind, count, same in (("random", random_moves, False), ("same place", same_moves, True)):
        samples, renumbered = await moves(service, name, order, count, same_place=same)
        lines.append(Line(backend, kind, samples, renumbered))
    queue = [entry.id for entry in (await service.session_state(name)).queue]
    if queue != order:
        raise SystemExit(f"{backend}: the queue is not in the order the moves made")
    return lines


async def measure(size: str, url: str | None) -> list[Line]:
    """Every backend's lines."""
    queued = SIZES[size][0]
    lines = []
    with tempfile.TemporaryDirectory(prefix="nineplan-drag-") as folder:
        root = Path(folder) / "sqlite"
        order = await seed_session(root, NAME, completed=0, queued=queued)
        async with open_nineplan(root) as service:
            lines += await measure_backend("sqlite", service, NAME, order, size)
        if url:
            machine = Path(folder) / "postgres"
            async with (
                postgres(url) as scoped,
                open_nineplan(machine, database_url=scoped) as service,
            ):
                name, order = await seeded(service, queued)
                lines += await measure_backend("postgres", service, name, order, size)
    return lines


async def seeded(service: NinePlan, queued: int) -> tuple[str, list[str]]:
    """A new session with `queued` plans, added in one import: its name, their ids in order."""
    name = (await service.create_session("benchmark")).session.name
    content = PlanContent(context="bench", goal="a card", approach="steps", success_criteria="ok")
    placed = await service.import_plans(name, [PlanText(content, "")] * queued)
    return name, [p.plan.id for p in placed]


@asynccontextmanager
async def postgres(url: str) -> AsyncIterator[str]:
    """`url` with a schema of its own, dropped afterwards."""
    import asyncpg

    schema = f"bench_drag_{uuid.uuid4().hex[:8]}"
    db = await asyncpg.connect(url)
    await db.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{url}{'&' if '?' in url else '?'}search_path={schema}"
    finally:
        await db.execute(f"DROP SCHEMA {schema} CASCADE")
        await db.close()


def table(lines: list[Line], size: str) -> str:
    """The measured lines as a Markdown table, with the target's verdict per backend."""
    queued = SIZES[size][0]
    rows = [
        f"Drag-move in a {queued:,}-plan queue: ms from `move_plan(..., before=...)` to its commit",
        "",
        "| backend | moves | n | renumbered | p50 ms | p95 ms | max ms | mean ms |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for line in lines:
        rows.append(
            f"| {line.backend} | {line.kind} | {len(line.samples)} | {line.renumbered} | "
            f"{line.ms(0.5):.1f} | {line.ms(0.95):.1f} | {max(line.samples) * 1000:.1f} | "
            f"{statistics.fmean(line.samples) * 1000:.1f} |"
        )
    rows.append("")
    for backend in dict.fromkeys(line.backend for line in lines):
        every = [s for line in lines if line.backend == backend for s in line.samples]
        p95 = Line(backend, "all", every, 0).ms(0.95)
        verdict = "met" if p95 < TARGET_MS else "NOT met"
        rows.append(
            f"- {backend}: p95 of every move {p95:.1f} ms (target < {TARGET_MS:.0f}): {verdict}"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", choices=list(SIZES), default="full")
    options = parser.parse_args(argv)
    url = os.environ.get("NINEPLAN_BENCH_DATABASE_URL") or os.environ.get(
        "NINEPLAN_TEST_DATABASE_URL"
    )
    started = time.perf_counter()
    lines = anyio.run(measure, options.size, url)
    print(table(lines, options.size))
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
