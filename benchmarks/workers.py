"""Many agents on one queue (DESIGN §10, "Benchmark"): N workers, each `nineplan serve` over
stdio with its own SDK client, run pull -> complete cycles on one session until its queue is
empty; on SQLite (one sessions folder) and on PostgreSQL (two "machines": separate sessions
folders, one database). Beside each, in the same run, the raw floor: N processes making the
same commits with the driver directly (sqlite3 `BEGIN IMMEDIATE`; asyncpg with
`SELECT ... FOR UPDATE` on a session row).

    python -m benchmarks.workers [--size tiny|full]

PostgreSQL is measured when NINEPLAN_BENCH_DATABASE_URL or NINEPLAN_TEST_DATABASE_URL is set.
Prints the table; timings never fail anything (plans completed twice or lost do: exit 1).
"""

import argparse
import multiprocessing
import os
import sqlite3
import sys
import tempfile
import time
import uuid
from collections import Counter
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import attrs
from mcp import Client

from nineplan_adapters import open_nineplan
from nineplan_adapters.entrypoints.cli.demo import server_command

#: Plans per run, and the worker counts measured (the first is the baseline the others are held to).
SIZES: dict[str, tuple[int, tuple[int, ...]]] = {"tiny": (12, (1, 2)), "full": (400, (1, 2, 4, 8))}
PLAN: dict[str, Any] = {  # Any: spread into add_plan beside its caller
    "context": "bench",
    "goal": "a unit of work",
    "approach": "steps",
    "success_criteria": "done",
}


@attrs.define
class Run:
    """One measurement: `workers` workers (or floor processes) emptying a `plans`-plan queue."""

    backend: str
    kind: str  # "nineplan" or "floor"
    workers: int
    plans: int
    seconds: float
    latencies: list[float]  # one per call (nineplan) or per commit (floor), seconds
    completed: list[str]
    #: CPU seconds the worker processes (nineplan's servers, or the floor's processes) spent
    #: while timed, from /proc (0 where there is none).
    cpu: float = 0.0

    @property
    def throughput(self) -> float:
        return self.plans / self.seconds

    @property
    def p99_ms(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1000

    @property
    def cpu_ms_per_cycle(self) -> float:
        return self.cpu / self.plans * 1000

    def twice_lost(self, ids: list[str]) -> tuple[int, int]:
        counts = Counter(self.completed)
        return sum(1 for i in ids if counts[i] > 1), sum(1 for i in ids if counts[i] == 0)


def children_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's live children, from /proc."""
    total, me, tick = 0.0, str(os.getpid()), os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the process ended meanwhile
        if fields[1] == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


# -- nineplan: N stdio servers ------------------------------------------------------------------


async def _worker(client: Client, name: str, worker: str, run: Run) -> None:
    arguments = {"session_name": name, "worker": worker}
    while True:
        start = time.perf_counter()
        pulled = await client.call_tool("9plan_queue_pull", arguments)
        run.latencies.append(time.perf_counter() - start)
        if pulled.is_error:
            assert "QUEUE_EMPTY" in pulled.content[0].text, pulled.content[0].text  # type: ignore[union-attr]
            return
        start = time.perf_counter()
        done = await client.call_tool("9plan_plan_complete", {**arguments, "outcome": "done"})
        run.latencies.append(time.perf_counter() - start)
        assert not done.is_error, done.content[0].text  # type: ignore[union-attr]
        run.completed.append((pulled.structured_content or {})["plan_id"])


async def nineplan_run(
    folder: Path, workers: int, plans: int, url: str | None
) -> tuple[Run, list[str]]:
    """Fill a session through the library, connect `workers` servers (not timed), then time
    them emptying it."""
    machines = [folder / "machine-a", folder / "machine-b"] if url else [folder / "sessions"]
    settings: dict[str, Any] = {"database_url": url} if url else {}
    async with open_nineplan(machines[0], durability="full", **settings) as nineplan:
        name = (await nineplan.create_session("bench")).session.name
        ids = [str((await nineplan.add_plan(name, **PLAN)).plan.id) for _ in range(plans)]
    run = Run("postgres" if url else "sqlite", "nineplan", workers, plans, 0.0, [], [])
    async with AsyncExitStack() as stack:
        clients = []
        for number in range(workers):
            params = server_command(machines[number % len(machines)])
            params.env = {**(params.env or {}), "NINEPLAN_LOG_LEVEL": "error"}
            if url:
                params.env["NINEPLAN_DATABASE_URL"] = url
            clients.append(await stack.enter_async_context(Client(params, mode="legacy")))
        start, cpu = time.perf_counter(), children_cpu()
        async with anyio.create_task_group() as group:
            for number, client in enumerate(clients):
                group.start_soon(_worker, client, name, f"w{number}", run)
        run.seconds, run.cpu = time.perf_counter() - start, children_cpu() - cpu
    return run, ids


# -- the floor: N processes making the same commits with the driver ------------------------------


def _sqlite_floor(database: str, worker: str, ready: Any, go: Any, out: Any) -> None:
    db = sqlite3.connect(database, isolation_level=None, timeout=60)
    db.execute("PRAGMA synchronous = FULL")
    latencies, done = [], []
    ready.release()
    go.wait()
    while True:
        start = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        row = db.execute(
            "SELECT id FROM plans WHERE status = 'queued' ORDER BY position LIMIT 1"
        ).fetchone()
        if row is None:
            db.execute("COMMIT")
            break
        db.execute("UPDATE plans SET status = 'active', worker = ? WHERE id = ?", (worker, row[0]))
        db.execute(
            "INSERT INTO journal (kind, plan_id, worker) VALUES ('plan_pulled', ?, ?)",
            (row[0], worker),
        )
        db.execute("COMMIT")
        latencies.append(time.perf_counter() - start)
        start = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE plans SET status = 'completed', worker = NULL WHERE id = ?", (row[0],))
        db.execute(
            "INSERT INTO journal (kind, plan_id, worker) VALUES ('plan_completed', ?, ?)",
            (row[0], worker),
        )
        db.execute("COMMIT")
        latencies.append(time.perf_counter() - start)
        done.append(row[0])
    out.put((latencies, done))


def _postgres_floor(url: str, worker: str, ready: Any, go: Any, out: Any) -> None:
    import asyncpg

    async def work() -> tuple[list[float], list[str]]:
        db = await asyncpg.connect(url)
        latencies, done = [], []
        ready.release()
        await anyio.to_thread.run_sync(go.wait)
        while True:
            start = time.perf_counter()
            async with db.transaction():
                await db.execute("SELECT 1 FROM floor_sessions WHERE name = 's' FOR UPDATE")
                plan = await db.fetchval(
                    "SELECT id FROM floor_plans WHERE status = 'queued' ORDER BY position LIMIT 1"
                )
                if plan is not None:
                    await db.execute(
                        "UPDATE floor_plans SET status = 'active', worker = $1 WHERE id = $2",
                        worker,
                        plan,
                    )
                    await db.execute(
                        "INSERT INTO floor_journal (kind, plan_id, worker) VALUES ('plan_pulled', $1, $2)",
                        plan,
                        worker,
                    )
            if plan is None:
                break
            latencies.append(time.perf_counter() - start)
            start = time.perf_counter()
            async with db.transaction():
                await db.execute("SELECT 1 FROM floor_sessions WHERE name = 's' FOR UPDATE")
                await db.execute(
                    "UPDATE floor_plans SET status = 'completed', worker = NULL WHERE id = $1", plan
                )
                await db.execute(
                    "INSERT INTO floor_journal (kind, plan_id, worker) VALUES ('plan_completed', $1, $2)",
                    plan,
                    worker,
                )
            latencies.append(time.perf_counter() - start)
            done.append(plan)
        await db.close()
        return latencies, done

    out.put(anyio.run(work))


async def _prepare_floor(folder: Path, plans: int, url: str | None) -> tuple[str, list[str]]:
    ids = [f"p{number:05d}" for number in range(plans)]
    if url:
        import asyncpg

        db = await asyncpg.connect(url)
        await db.execute(
            "DROP TABLE IF EXISTS floor_sessions, floor_plans, floor_journal;"
            "CREATE TABLE floor_sessions (name TEXT PRIMARY KEY);"
            "CREATE TABLE floor_plans (id TEXT PRIMARY KEY, position INTEGER, status TEXT, worker TEXT);"
            "CREATE INDEX ON floor_plans (status, position);"
            "CREATE TABLE floor_journal (seq BIGSERIAL PRIMARY KEY, kind TEXT, plan_id TEXT, worker TEXT);"
            "INSERT INTO floor_sessions VALUES ('s')"
        )
        await db.executemany(
            "INSERT INTO floor_plans VALUES ($1, $2, 'queued', NULL)",
            [(i, n) for n, i in enumerate(ids)],
        )
        await db.close()
        return url, ids
    folder.mkdir(parents=True, exist_ok=True)
    database = str(folder / "floor.db")
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.executescript(
            "CREATE TABLE plans (id TEXT PRIMARY KEY, position INTEGER, status TEXT, worker TEXT);"
            "CREATE INDEX plans_queue ON plans (status, position);"
            "CREATE TABLE journal (seq INTEGER PRIMARY KEY, kind TEXT, plan_id TEXT, worker TEXT);"
        )
        db.executemany(
            "INSERT INTO plans VALUES (?, ?, 'queued', NULL)", [(i, n) for n, i in enumerate(ids)]
        )
    db.close()
    return database, ids


async def floor_run(
    folder: Path, workers: int, plans: int, url: str | None
) -> tuple[Run, list[str]]:
    """Start `workers` processes (not timed), release them at once, time them emptying the queue."""
    target, ids = await _prepare_floor(folder, plans, url)
    spawn = multiprocessing.get_context("spawn")
    ready, go, out = spawn.Semaphore(0), spawn.Event(), spawn.Queue()
    function = _postgres_floor if url else _sqlite_floor
    processes = [
        spawn.Process(target=function, args=(target, f"w{n}", ready, go, out))
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        await anyio.to_thread.run_sync(ready.acquire)
    start, cpu = time.perf_counter(), children_cpu()
    go.set()
    results = [await anyio.to_thread.run_sync(out.get) for _ in processes]
    seconds, cpu = time.perf_counter() - start, children_cpu() - cpu
    for process in processes:
        process.join()
    run = Run("postgres" if url else "sqlite", "floor", workers, plans, seconds, [], [], cpu)
    for latencies, done in results:
        run.latencies += latencies
        run.completed += done
    return run, ids


# -- the table --------------------------------------------------------------------------------


@attrs.define
class Line:
    """One backend and worker count over every round: the runs pooled (plans and seconds
    summed, latencies together), and each round's throughput."""

    backend: str
    workers: int
    ours: Run
    floor: Run
    twice: int
    lost: int
    rounds: list[tuple[float, float]] = attrs.field(factory=list)  # (nineplan, floor) cycles/s

    def add(self, ours: Run, floor: Run, twice: int, lost: int) -> None:
        self.rounds.append((ours.throughput, floor.throughput))
        for pooled, run in ((self.ours, ours), (self.floor, floor)):
            pooled.plans += run.plans
            pooled.seconds += run.seconds
            pooled.latencies += run.latencies
            pooled.cpu += run.cpu
        self.twice += twice
        self.lost += lost


async def measure(size_name: str, url: str | None = None, rounds: int = 1) -> list[Line]:
    """Every line: each backend, each worker count, nineplan then its floor, one after another;
    `rounds` times, every other round from the most workers down, so drift falls on all."""
    plans, counts = SIZES[size_name]
    lines: dict[tuple[str, int], Line] = {}
    backends: list[str | None] = [None, url] if url else [None]
    with tempfile.TemporaryDirectory(prefix="nineplan-workers-") as temporary:
        for round_number in range(rounds):
            for backend in backends:
                for workers in counts if round_number % 2 == 0 else counts[::-1]:
                    folder = (
                        Path(temporary)
                        / f"{round_number}-{'pg' if backend else 'sqlite'}-{workers}"
                    )
                    scoped = await new_schema(backend) if backend else None
                    try:
                        ours, ids = await nineplan_run(folder / "nineplan", workers, plans, scoped)
                        floor, floor_ids = await floor_run(folder / "floor", workers, plans, scoped)
                    finally:
                        if backend and scoped:
                            await drop_schema(backend, scoped)
                    twice, lost = ours.twice_lost(ids)
                    assert floor.twice_lost(floor_ids) == (0, 0), (
                        "the floor lost or repeated a plan"
                    )
                    pooled = Line(
                        ours.backend, workers, _empty(ours, "nineplan"), _empty(ours, "floor"), 0, 0
                    )
                    line = lines.setdefault((ours.backend, workers), pooled)
                    line.add(ours, floor, twice, lost)
    return sorted(lines.values(), key=lambda line: (line.backend != "sqlite", line.workers))


def _empty(run: Run, kind: str) -> Run:
    return Run(run.backend, kind, run.workers, 0, 0.0, [], [])


async def new_schema(url: str) -> str:
    """A fresh schema on the server at `url`, as a URL that makes it the search path."""
    import asyncpg

    schema = f"bench_workers_{uuid.uuid4().hex[:8]}"
    db = await asyncpg.connect(url)
    await db.execute(f"CREATE SCHEMA {schema}")
    await db.close()
    return f"{url}{'&' if '?' in url else '?'}search_path={schema}"


async def drop_schema(url: str, scoped: str) -> None:
    """Drop the schema `new_schema` made for `scoped`."""
    import asyncpg

    schema = scoped.rsplit("search_path=", 1)[1]
    db = await asyncpg.connect(url)
    await db.execute(f"DROP SCHEMA {schema} CASCADE")
    await db.close()


def spread(line: Line, which: int) -> str:
    """The lowest and highest of one round's cycles per second."""
    values = [pair[which] for pair in line.rounds]
    return f"{min(values):.0f}-{max(values):.0f}"


def table(lines: list[Line], size_name: str) -> str:
    per_run = lines[0].ours.plans // len(lines[0].rounds)
    rows = [
        (
            f"Size `{size_name}`: {per_run} plans per run, {len(lines[0].rounds)} rounds, on "
            f"{os.cpu_count()} cores. Cycles per second pooled over the rounds (each round's range)."
        ),
        "",
        (
            "| backend | workers | nineplan cycles/s | p99 call ms | × 1 worker | floor cycles/s "
            "| floor p99 commit ms | floor × 1 | CPU ms/cycle, nineplan / floor | completed twice | lost |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for backend in dict.fromkeys(line.backend for line in lines):
        mine = [line for line in lines if line.backend == backend]
        one = mine[0]
        for line in mine:
            ours = line.ours.throughput / one.ours.throughput
            floor = line.floor.throughput / one.floor.throughput
            rows.append(
                f"| {backend} | {line.workers} | {line.ours.throughput:.1f} ({spread(line, 0)}) "
                f"| {line.ours.p99_ms:.1f} "
                f"| {ours:.2f} | {line.floor.throughput:.1f} ({spread(line, 1)}) | {line.floor.p99_ms:.1f} | {floor:.2f} "
                f"| {line.ours.cpu_ms_per_cycle:.1f} / {line.floor.cpu_ms_per_cycle:.1f} "
                f"| {line.twice} | {line.lost} |"
            )
        most = mine[-1]
        ours = most.ours.throughput / one.ours.throughput
        floor = most.floor.throughput / one.floor.throughput
        scaled = ours >= 0.8
        fair = ours >= 0.8 * floor
        verdicts.append(
            f"- {backend}: {most.workers} workers reach {ours:.2f}x the throughput of 1 "
            f"(target >= 0.8): {'met' if scaled else 'NOT met'}."
        )
        verdicts.append(
            f"- {backend}: (nineplan {most.workers} / nineplan 1) = {ours:.2f} against 0.8 x "
            f"(floor {most.workers} / floor 1) = {0.8 * floor:.2f}: {'met' if fair else 'NOT met'}."
        )
    return "\n".join([*rows, "", *verdicts])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", choices=list(SIZES), default="full")
    parser.add_argument("--rounds", type=int, default=3, help="each count this many times")
    options = parser.parse_args()
    url = os.environ.get("NINEPLAN_BENCH_DATABASE_URL") or os.environ.get(
        "NINEPLAN_TEST_DATABASE_URL"
    )
    started = time.perf_counter()
    lines = anyio.run(measure, options.size, url, options.rounds)
    print(table(lines, options.size))
    print(f"\n{time.perf_counter() - started:.0f} s", file=sys.stderr)
    sys.exit(1 if any(line.twice or line.lost for line in lines) else 0)


if __name__ == "__main__":
    main()
