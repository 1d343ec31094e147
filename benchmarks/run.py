"""nineplan against its physical floors, each ratio taken in one run.

    python -m benchmarks.run [--size tiny|full]

Writes benchmarks/results/latest.md and latest.json and prints the table. Timings never fail
anything: the table says whether each target is met.
"""

import argparse
import datetime as dt
import itertools
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import attrs
from mcp import Client, StdioServerParameters

from benchmarks import prerequisites, web
from benchmarks.context import INSTRUCTION_BYTES, TOOL_TOKENS, context_cost
from benchmarks.data import queries, seed_session
from benchmarks.workers import drop_schema, new_schema
from nineplan_adapters import open_nineplan
from nineplan_adapters.entrypoints.cli.demo import server_command
from nineplan_adapters.storage.ids import random_plan_id
from nineplan_adapters.storage.rows import plan_to_row
from nineplan_adapters.storage.sqlite.queries import (
    ACTIVE,
    FRONT,
    INSERT_EVENT,
    INSERT_PLAN,
    SAVE_PLAN,
    TALLY,
)
from nineplan_core.model import Plan, PlanContent, PlanId
from nineplan_core.plan_file import render
from nineplan_core.workers import MAIN

RESULTS = Path(__file__).parent / "results"
MINIMAL_SERVER = """\
from mcp.server.mcpserver import MCPServer
server = MCPServer("minimal")

@server.tool()
async def noop() -> str:
    return "ok"

server.run()
"""
SIZES = {
    "tiny": {  # every row runs, few samples: that the suite works, not what it measures
        "repeat": 5,
        "completed": 500,
        "queued": 100,
        "sessions": 10,
        "spawns": 2,
        "cold_starts": 2,
        "cycle_runs": 1,
        "page_renders": 3,
        "events": 500,
        "batches": 3,  # rounds of row 23
        "drain_workers": 2,  # row 24: workers, plans per drain, rounds of a graph and a flat queue
        "drain_plans": 12,
        "drain_rounds": 1,
    },
    "full": {
        "repeat": 200,
        "completed": 100_000,
        "queued": 10_000,
        "sessions": 1_000,
        "spawns": 15,
        "cold_starts": 10,
        "cycle_runs": 5,
        "page_renders": 30,
        "events": 100_000,
        "batches": 50,
        "drain_workers": 8,
        "drain_plans": 200,
        "drain_rounds": 3,
    },
}
PLAN: dict[str, Any] = {  # Any: spread into add_plan beside its caller
    "context": "bench",
    "goal": "a unit of work",
    "approach": "steps",
    "success_criteria": "done",
}
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
})  # fmt: skip


#: How a row's samples are shown in its unit (samples are seconds, bytes or plain counts).
SCALES = {"ms": 1000, "MiB": 1 / 2**20, "tokens": 1, "bytes": 1, "plans/s": 1}


@attrs.define
class Row:
    number: int
    measure: str
    value: list[float]  # seconds (or bytes for memory)
    floor: list[float] | None
    target: str
    unit: str = "ms"
    limit_ratio: float | None = None
    limit_absolute: float | None = None  # in the unit shown
    #: The central value at most the floor's plus this, in the unit shown.
    limit_above_floor: float | None = None
    run_ratios: list[float] | None = None  # one ratio per run of fresh processes, when several
    statistic: str = "p50"  # or "p95": what is shown first and held to limit_absolute

    def _central(self, samples: list[float]) -> float:
        if self.statistic == "p95":
            return statistics.quantiles(samples, n=20, method="inclusive")[-1]
        return statistics.median(samples)

    def _shown(self, samples: list[float]) -> str:
        scale = SCALES[self.unit]
        shown = f"{self._central(samples) * scale:.2f} ({min(samples) * scale:.2f}-{max(samples) * scale:.2f})"
        return f"p95 {shown}" if self.statistic == "p95" else shown

    @property
    def ratio(self) -> float | None:
        if self.run_ratios:
            return statistics.median(self.run_ratios)
        return statistics.median(self.value) / statistics.median(self.floor) if self.floor else None

    @property
    def met(self) -> bool:
        scale = SCALES[self.unit]
        ok = True
        if self.limit_ratio is not None and self.ratio is not None:
            ok = ok and self.ratio <= self.limit_ratio
        if self.limit_absolute is not None:
            ok = ok and self._central(self.value) * scale < self.limit_absolute
        if self.limit_above_floor is not None and self.floor:
            above = (self._central(self.value) - self._central(self.floor)) * scale
            ok = ok and above <= self.limit_above_floor
        return ok

    def markdown(self) -> str:
        floor = self._shown(self.floor) if self.floor else "—"
        ratio = f"{self.ratio:.2f}" if self.ratio is not None else "—"
        if self.run_ratios:
            ratio += f" ({min(self.run_ratios):.2f}-{max(self.run_ratios):.2f}, {len(self.run_ratios)} runs)"
        return (
            f"| {self.number} | {self.measure} | {self._shown(self.value)} {self.unit} | {floor} | {ratio} | "
            f"{self.target} | {'yes' if self.met else 'NO'} |"
        )


async def timed(action: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await action()
    return time.perf_counter() - start


# -- row 1: one add -> pull -> complete cycle over stdio ------------------------------------


class RawDurableWork:
    """3 SQLite commits at synchronous=FULL, 2 atomic file writes and 1 unlink, done directly."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.db = sqlite3.connect(folder / "floor.db", isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, status TEXT, body TEXT)"
        )
        self.index = 0

    def once(self) -> float:
        index, self.index = self.index, self.index + 1
        temp, target = self.folder / f".plan{index}.tmp", self.folder / f"plan{index}.txt"
        text = "plan text " * 50
        start = time.perf_counter()
        for step, statement in enumerate(("INSERT INTO t VALUES (?, 'queued', 'x')",
                                          "UPDATE t SET status = 'active' WHERE id = ?",
                                          "UPDATE t SET status = 'completed' WHERE id = ?")):  # fmt: skip
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(statement, (index,))
            self.db.execute("COMMIT")
            if step < 2:  # the first two steps each write a file
                temp.write_text(text)
                temp.replace(target)
        target.unlink()
        return time.perf_counter() - start

    def close(self) -> None:
        self.db.close()


class NineplanSqlDirect:
    """nineplan's own statements for one add -> pull -> complete cycle, on its own schema
    (indexes, counters kept by triggers, the FTS index a completion feeds, a journal event per
    step), with the same file work, done directly with sqlite3: the cycle's durable work before
    any of nineplan's Python."""

    def __init__(self, database: Path, plans: Path) -> None:
        self.db = sqlite3.connect(database, isolation_level=None)
        for pragma in ("journal_mode = WAL", "synchronous = FULL", "foreign_keys = ON"):
            self.db.execute(f"PRAGMA {pragma}")
        self.plans = plans

    def once(self) -> float:
        now = dt.datetime.now(dt.UTC)
        queued = Plan(
            id=PlanId(random_plan_id()), content=PlanContent(**PLAN), position=1, created_at=now
        )
        active = queued.pull(worker=MAIN, at=now)
        rows = [
            plan_to_row(plan) for plan in (queued, active, active.complete(outcome="done", at=now))
        ]
        target, temp = self.plans / f"{queued.id}.txt", self.plans / f".{queued.id}.tmp"
        text = render(queued.content, "")
        events = [
            {"seq": None, "at": now.isoformat(), "kind": kind, "plan_id": queued.id,
             "actor": "agent", "detail": "{}"}
            for kind in ("plan_added", "plan_pulled", "plan_completed")
        ]  # fmt: skip
        start = time.perf_counter()
        self._transaction(TALLY, (INSERT_PLAN, rows[0]), event=events[0])
        temp.write_text(text)
        temp.replace(target)
        self._transaction(ACTIVE, FRONT, (SAVE_PLAN, rows[1]), event=events[1])
        target.read_text()
        self._transaction(ACTIVE, (SAVE_PLAN, rows[2]), TALLY, event=events[2])
        target.unlink()
        return time.perf_counter() - start

    def _transaction(
        self, *statements: str | tuple[str, dict[str, Any]], event: dict[str, Any]
    ) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        for statement in statements:
            sql, parameters = statement if isinstance(statement, tuple) else (statement, {})
            self.db.execute(sql, parameters).fetchall()
        (last,) = self.db.execute("SELECT max(seq) FROM journal").fetchone()
        self.db.execute(INSERT_EVENT, event | {"seq": (last or 0) + 1})
        self.db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()


async def row_schema(folder: Path, size: dict[str, int]) -> Row:
    """What nineplan's schema adds to the raw durable work: both done directly, in alternating
    order, after as many warm-up rounds (a new database's first commits, which grow its WAL
    file, are slower than the ones that reuse it)."""
    root = folder / "schema"
    async with open_nineplan(root) as nineplan:
        name = (await nineplan.create_session()).session.name
    raw = RawDurableWork(folder / "schema-raw")
    direct = NineplanSqlDirect(root / name / "session.db", root / name / "plans")
    ours: list[float] = []
    floor: list[float] = []
    for index in range(size["repeat"] * 2):
        if index % 2:
            sample, base = direct.once(), raw.once()
        else:
            base, sample = raw.once(), direct.once()
        if index >= size["repeat"]:
            ours.append(sample)
            floor.append(base)
    raw.close()
    direct.close()
    return Row(11, "a cycle's SQL on nineplan's schema + its file work, done directly", ours, floor,
               "— (explains row 1) vs the raw durable work")  # fmt: skip


async def row_cycle(folder: Path, size: dict[str, int], number: int = 1) -> Row:
    """Several runs, each with fresh server processes (where the OS places them moves a run's
    figures by up to 20% on this machine). Within a run the rounds are interleaved: each times
    the no-op calls, the raw work and nineplan's cycle back to back, so that drift falls on the
    floor and on nineplan alike. The ratio is the median of the runs' ratios."""
    folder.mkdir(parents=True, exist_ok=True)
    minimal = folder / "minimal_server.py"
    minimal.write_text(MINIMAL_SERVER)
    cycles: list[float] = []
    floors: list[float] = []
    ratios: list[float] = []
    for run in range(size["cycle_runs"]):
        raw = RawDurableWork(folder / f"raw{run}")
        run_cycles, run_floors = [], []
        async with (
            Client(StdioServerParameters(command=sys.executable, args=[str(minimal)]), mode="legacy") as noop,
            Client(server_command(folder / f"sessions{run}"), mode="legacy") as client,
        ):  # fmt: skip
            name = (await client.call_tool("9plan_session_create", {})).structured_content[
                "session_name"
            ]
            for index in range(size["repeat"] + 5):
                floor = await timed(partial(_noops, noop)) + raw.once()
                cycle = await timed(partial(_cycle, client, name))
                if index >= 5:  # warm-up rounds
                    run_floors.append(floor)
                    run_cycles.append(cycle)
        raw.close()
        ratios.append(statistics.median(run_cycles) / statistics.median(run_floors))
        cycles += run_cycles
        floors += run_floors
    where = " over stdio" if number == 1 else " over stdio, both on tmpfs (what is left is CPU)"
    return Row(number, f"add → pull → complete{where}", cycles, floors,
               "≤ 1.25 × (3 no-op calls + raw durable work)", limit_ratio=1.25, run_ratios=ratios)  # fmt: skip


#: Where row 21 puts nineplan's sessions folder and the floor's files: memory, not a disk.
TMPFS = Path("/dev/shm")  # noqa: S108 - each run makes its own private folder in it (mkdtemp)


async def row_cycle_tmpfs(size: dict[str, int]) -> Row | None:
    """Row 1 again with nineplan's sessions folder and the floor's database and files on tmpfs,
    where a commit's fsync costs nothing: the ratio left is the CPU nineplan spends beside the
    SDK's three calls. None where the machine has no /dev/shm."""
    if not TMPFS.is_dir():
        return None
    with tempfile.TemporaryDirectory(prefix="nineplan-bench-", dir=TMPFS) as temporary:
        return await row_cycle(Path(temporary), size, number=21)


async def _noops(client: Client) -> None:
    for _ in range(3):
        await client.call_tool("noop", {})


async def _cycle(client: Client, name: str) -> None:
    await client.call_tool("9plan_queue_add", {**PLAN, "session_name": name})
    await client.call_tool("9plan_queue_pull", {"session_name": name})
    await client.call_tool("9plan_plan_complete", {"outcome": "done", "session_name": name})


async def row_handoff(folder: Path, repeat: int) -> Row:
    """What one aiosqlite statement costs over the same statement on sqlite3 directly: the
    thread handoff that made the store run its short statements on the calling thread."""
    import aiosqlite

    ours, floor = [], []
    async with aiosqlite.connect(folder / "handoff.db", isolation_level=None) as db:
        for _ in range(repeat * 10):
            start = time.perf_counter()
            await db.execute_fetchall("SELECT 1")
            ours.append(time.perf_counter() - start)
    direct = sqlite3.connect(folder / "handoff.db")
    for _ in range(repeat * 10):
        start = time.perf_counter()
        direct.execute("SELECT 1").fetchall()
        floor.append(time.perf_counter() - start)
    direct.close()
    return Row(
        10,
        "one statement through aiosqlite vs sqlite3 directly",
        ours,
        floor,
        "— (why short statements skip the thread)",
    )


# -- row 2: history search at many completed plans ------------------------------------------


async def row_search(folder: Path, size: dict[str, int]) -> tuple[Row, Path, str]:
    root = folder / "search"
    name = "search-bench-session"
    await seed_session(root, name, completed=size["completed"], queued=0)
    asked = queries(size["repeat"])
    ours: list[float] = []
    async with open_nineplan(root, durability="normal") as nineplan:
        await nineplan.search_history(name, "warm up the cache")
        for query in asked:
            ours.append(await timed(lambda q=query: nineplan.search_history(name, q, 10)))  # type: ignore[misc]
    raw: list[float] = []
    with sqlite3.connect(root / name / "session.db") as db:
        for query in asked:
            match = " OR ".join(f'"{word}"' for word in query.split())
            start = time.perf_counter()
            db.execute("SELECT rowid FROM history_fts WHERE history_fts MATCH ? ORDER BY bm25(history_fts) LIMIT 10",
                       (match,)).fetchall()  # fmt: skip
            raw.append(time.perf_counter() - start)
    row = Row(2, f"history_search at {size['completed']:,} completed (library)", ours, raw,
              "≤ 1.5 × raw FTS5 query, p50 < 10 ms", limit_ratio=1.5, limit_absolute=10)  # fmt: skip
    return row, root, name


# -- row 3: the queue at 10,000 vs 10 ----------------------------------------------------------


async def row_queue(folder: Path, size: dict[str, int]) -> Row:
    """Interleaved rounds on a short and a long queue, so drift falls on both alike."""
    lengths = (10, size["queued"])
    samples: dict[int, list[float]] = {queued: [] for queued in lengths}
    name = "queue-bench-session"
    for queued in lengths:
        await seed_session(folder / f"queue{queued}", name, completed=0, queued=queued)
    async with (  # max_queue: 10,000 queued is the default limit, and the round adds one more
        open_nineplan(folder / "queue10", max_queue=1_000_000) as short,
        open_nineplan(folder / f"queue{size['queued']}", max_queue=1_000_000) as long,
    ):
        for index in range(size["repeat"] + 5):
            for queued, nineplan in ((10, short), (size["queued"], long))[
                :: 1 if index % 2 else -1
            ]:
                start = time.perf_counter()
                await nineplan.add_plan(name, **PLAN, position="front")
                await nineplan.pull_plan(name)
                elapsed = time.perf_counter() - start
                await nineplan.discard_plan(name, "benchmark")
                if index >= 5:
                    samples[queued].append(elapsed)
    return Row(3, f"add at front + pull, {size['queued']:,} queued vs 10", samples[size["queued"]], samples[10],
               "≤ 1.2", limit_ratio=1.2)  # fmt: skip


# -- rows 4 and 5: start-up and memory -------------------------------------------------------


def spawn_and_initialize(
    argv: list[str], env: dict[str, str], requests: tuple[str, ...] = ()
) -> tuple[float, int]:
    """Seconds from spawn to the initialize answer, and the peak RSS after `requests`."""
    start = time.perf_counter()
    with subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(INITIALIZE + "\n")
        process.stdin.flush()
        process.stdout.readline()
        elapsed = time.perf_counter() - start
        process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
        )
        for number, request in enumerate(requests, start=2):
            process.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": number, **json.loads(request)}) + "\n"
            )
            process.stdin.flush()
            process.stdout.readline()
        status = Path(f"/proc/{process.pid}/status").read_text()
        peak = (
            int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))
            * 1024
        )
        process.stdin.close()
        process.wait(timeout=30)
    return elapsed, peak


def rows_startup_memory(
    folder: Path, size: dict[str, int], search_root: Path, search_name: str
) -> list[Row]:
    minimal = folder / "minimal_server.py"
    minimal.write_text(MINIMAL_SERVER)  # also when this row runs alone (--rows 4)
    env = {**server_command(search_root).env}  # type: ignore[dict-item]
    ours_argv = [sys.executable, "-m", "nineplan_adapters", "serve"]
    minimal_argv = [sys.executable, str(minimal)]
    ours: list[float] = []
    floor: list[float] = []
    for _ in range(size["cold_starts"]):  # alternated, so that a change of load hits both
        ours.append(spawn_and_initialize(ours_argv, env)[0])
        floor.append(spawn_and_initialize(minimal_argv, env)[0])
    searches = [json.dumps({"method": "tools/call", "params": {"name": "9plan_history_search",
                "arguments": {"query": query, "session_name": search_name}}}) for query in queries(50)]  # fmt: skip
    noop = [json.dumps({"method": "tools/call", "params": {"name": "noop", "arguments": {}}})]
    rss = [float(spawn_and_initialize(ours_argv, env, tuple(searches))[1]) for _ in range(3)]
    rss_floor = [float(spawn_and_initialize(minimal_argv, env, tuple(noop))[1]) for _ in range(3)]
    return [
        Row(4, f"spawn nineplan serve → initialize answered (p50 of {len(ours)} cold starts)", ours, floor,
            "≤ minimal MCPServer + 150 ms", limit_above_floor=150),
        Row(5, f"peak RSS after 50 searches of {size['completed']:,} plans", rss, rss_floor,
            "≤ 1.5 × minimal MCPServer", unit="MiB", limit_ratio=1.5),
    ]  # fmt: skip


# -- rows 6 and 7: many sessions, a big session ------------------------------------------------


async def row_sessions(folder: Path, size: dict[str, int]) -> Row:
    root = folder / "many"
    async with open_nineplan(root, durability="normal") as nineplan:
        for _ in range(size["sessions"]):
            await nineplan.create_session("one of many")
    samples = []
    for _ in range(5):
        async with open_nineplan(root) as nineplan:
            samples.append(await timed(nineplan.list_sessions))
    return Row(6, f"admin_sessions over {size['sessions']:,} sessions (library, cold)", samples, None, "< 1 s",
               limit_absolute=1000)  # fmt: skip


async def row_resume(folder: Path, size: dict[str, int]) -> Row:
    root = folder / "big"
    name = "big-bench-session"
    await seed_session(root, name, completed=size["completed"], queued=size["queued"])
    samples = []
    for _ in range(15):
        async with open_nineplan(
            root
        ) as nineplan:  # a new process's first resume: open + reconcile
            samples.append(await timed(lambda n=nineplan: n.session_state(name)))  # type: ignore[misc]
    return Row(7, f"session_resume, {size['queued']:,} queued + {size['completed']:,} completed (cold)",
               samples, None, "< 100 ms", limit_absolute=100)  # fmt: skip


# -- rows 14 to 16: the journal ------------------------------------------------------------------


FLOOR_LOG = (
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); print(db.execute('SELECT * FROM "
    "(SELECT * FROM journal ORDER BY seq DESC LIMIT 100) ORDER BY seq').fetchall())"
)


def seed_journal(database: Path, events: int, queued: list[PlanId]) -> None:
    """Append `events` journal events to a session, as a long-lived one gathers them: plan
    after plan added, pulled, deferred, pulled again and completed; every queued plan deferred
    twice along the way."""
    at = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
    deferred = '{"reason": "blocked", "position": "back", "rank": 1}'
    with sqlite3.connect(database) as db:
        seq = db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()[0]
        kinds = ["plan_added", "plan_pulled", "plan_deferred", "plan_pulled", "plan_completed"]
        rows = [(kind, f"{offset // 5:05x}"[-5:]) for offset, kind in
                zip(range(events - 2 * len(queued)), itertools.cycle(kinds), strict=False)]  # fmt: skip
        rows[len(rows) // 2 : len(rows) // 2] = [
            ("plan_deferred", plan_id) for plan_id in queued * 2
        ]
        db.executemany(
            "INSERT INTO journal VALUES (?, ?, ?, ?, 'agent', ?)",
            [(seq + index, at, kind, plan_id, deferred if kind == "plan_deferred" else "{}")
             for index, (kind, plan_id) in enumerate(rows, start=1)],
        )  # fmt: skip
    db.close()


async def rows_journal(folder: Path, size: dict[str, int]) -> list[Row]:
    """`nineplan log` and a cold resume on a session with a long journal, and how soon a
    follower in another process prints an add."""
    root = folder / "journal"
    async with open_nineplan(root, durability="normal") as nineplan:
        name = (await nineplan.create_session("a long journal")).session.name
        queued = [(await nineplan.add_plan(name, **PLAN)).plan.id for _ in range(20)]
        await nineplan.pull_plan(name)
    seed_journal(root / name / "session.db", size["events"], queued)
    env = {**os.environ, "NINEPLAN_SESSIONS_PATH": str(root)}
    log_command = [sys.executable, "-m", "nineplan_adapters", "log", name]
    floor_command = [sys.executable, "-c", FLOOR_LOG, str(root / name / "session.db")]
    logs: list[float] = []
    floors: list[float] = []
    for _ in range(size["spawns"]):
        for command, samples in ((log_command, logs), (floor_command, floors)):
            start = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True)
            samples.append(time.perf_counter() - start)
    resumes = []
    for _ in range(15):
        async with open_nineplan(root) as nineplan:
            resumes.append(await timed(lambda n=nineplan: n.session_state(name)))  # type: ignore[misc]
    latencies = await follow_latencies(root, name, size["spawns"] * 2)
    events = f"{size['events']:,} events"
    return [
        Row(14, f"nineplan log (the last 100 of {events}), a process", logs, floors,
            "< 1 s (floor: a Python process reading the 100 rows with sqlite3)", limit_absolute=1000),
        Row(15, f"session_resume with {events} in the journal (cold)", resumes, None, "< 100 ms",
            limit_absolute=100),
        Row(16, "an add reaches `nineplan log --follow` in another process",
            latencies, None, "p95 < 1 s", limit_absolute=1000, statistic="p95"),
    ]  # fmt: skip


async def follow_latencies(root: Path, name: str, count: int) -> list[float]:
    """From an add's commit to its line on a follower's stdout."""
    from anyio.streams.buffered import BufferedByteReceiveStream

    command = [sys.executable, "-m", "nineplan_adapters", "log", name, "--follow", "--limit", "1"]
    env = {**os.environ, "NINEPLAN_SESSIONS_PATH": str(root)}
    samples = []
    async with (
        open_nineplan(root) as nineplan,
        await anyio.open_process(command, env=env) as follower,
    ):
        assert follower.stdout is not None
        lines = BufferedByteReceiveStream(follower.stdout)
        await lines.receive_until(b"\n", 1 << 20)  # the last event: the follower is watching
        for _ in range(count):
            await nineplan.add_plan(name, **PLAN)
            start = time.perf_counter()
            await lines.receive_until(b"\n", 1 << 20)
            samples.append(time.perf_counter() - start)
        follower.terminate()
    return samples


# -- rows 17 to 19: the way back after compaction, and what nineplan costs a client's context --


async def row_prime(folder: Path, size: dict[str, int]) -> Row:
    """`nineplan prime` as a hook runs it, in fresh processes, among `sessions` sessions each
    bound to a workspace of its own and with a plan queued. The workspace's session is the one
    active longest ago, so every other session is looked at first. The floor is a fresh
    `python -c pass`."""
    root, project = folder / "prime", folder / "project"
    project.mkdir()
    async with open_nineplan(root, durability="normal") as nineplan:
        for index in range(size["sessions"]):
            workspace = str(project) if index == 0 else str(folder / f"elsewhere{index}")
            name = (await nineplan.create_session("one of many", workspace=workspace)).session.name
            await nineplan.add_plan(name, **PLAN)
    command = [str(Path(sys.executable).parent / "nineplan"), "prime", "--workspace", str(project)]
    env = {**server_command(root).env}  # type: ignore[dict-item]
    ours, floor = [], []
    for _ in range(10):
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        ours.append(time.perf_counter() - start)
        assert "session is" in done.stdout
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        floor.append(time.perf_counter() - start)
    return Row(17, f"nineplan prime, {size['sessions']:,} sessions (fresh process)", ours, floor,
               "p50 < 300 ms", limit_absolute=300)  # fmt: skip


async def rows_context() -> list[Row]:
    tokens, instructions = await context_cost()
    return [
        Row(18, "tools/list (description + input schema chars / 4)", [float(tokens)], None,
            f"< {TOOL_TOKENS:,} tokens", unit="tokens", limit_absolute=TOOL_TOKENS),
        Row(19, "server instructions", [float(instructions)], None,
            f"< {INSTRUCTION_BYTES:,} bytes (2 KB)", unit="bytes", limit_absolute=INSTRUCTION_BYTES),
    ]  # fmt: skip


# -- rows 8 and 9: PostgreSQL beside SQLite (when a server is given) ---------------------------


async def rows_postgres(folder: Path, size: dict[str, int], url: str) -> list[Row]:
    """The library's cycle on PostgreSQL against the same on SQLite, and search at the same size."""
    import asyncpg

    from benchmarks.data import plan_records

    # A random schema name, not the process id: runs in other PID namespaces (containers) may
    # share the server, and one's DROP SCHEMA of the same name would break the other's run.
    scoped = await new_schema(url)
    try:
        cycles: dict[str, list[float]] = {}
        for label, settings in (("sqlite", {}), ("postgres", {"database_url": scoped})):
            async with open_nineplan(folder / f"cycle-{label}", **settings) as nineplan:
                name = (await nineplan.create_session()).session.name
                cycles[label] = []
                for index in range(size["repeat"] + 5):
                    start = time.perf_counter()
                    await nineplan.add_plan(name, **PLAN)
                    await nineplan.pull_plan(name)
                    await nineplan.complete_plan(name, "done")
                    if index >= 5:
                        cycles[label].append(time.perf_counter() - start)
        asked = queries(size["repeat"])
        async with open_nineplan(folder / "pg-search", database_url=scoped) as nineplan:
            name = (await nineplan.create_session()).session.name
            stamp = dt.datetime.now(dt.UTC)
            rows = [(name, r[0], "completed", r[1], r[2], r[3], r[4], r[5], r[6], "", r[7], stamp, stamp)
                    for r in plan_records(size["completed"])]  # fmt: skip
            connection = await asyncpg.connect(scoped)
            await connection.copy_records_to_table(
                "nineplan_plans", records=rows,
                columns=["session_name", "id", "status", "goal", "context", "inputs", "outputs", "approach",
                         "success_criteria", "notes", "outcome", "created_at", "completed_at"],
            )  # fmt: skip
            await connection.execute("ANALYZE nineplan_plans")
            await nineplan.search_history(name, "warm up")
            ours = []
            for query in asked:
                start = time.perf_counter()
                await nineplan.search_history(name, query, 10)
                ours.append(time.perf_counter() - start)
            raw = []
            for query in asked:
                start = time.perf_counter()
                await connection.fetch(
                    "SELECT id FROM nineplan_plans, to_tsquery('english', $2) q WHERE session_name = $1 "
                    "AND search @@ q ORDER BY ts_rank(search, q) DESC LIMIT 10",
                    name, " | ".join(query.split()),
                )  # fmt: skip
                raw.append(time.perf_counter() - start)
            await connection.close()
    finally:
        await drop_schema(url, scoped)
    return [
        Row(8, "add → pull → complete (library), PostgreSQL vs SQLite", cycles["postgres"], cycles["sqlite"],
            "— (informational)"),
        Row(9, f"history_search at {size['completed']:,} completed, PostgreSQL (library)", ours, raw,
            "≤ 1.5 × raw tsquery (the raw query alone is over 10 ms)", limit_ratio=1.5),
    ]  # fmt: skip


# -- rows 22 to 25: plans that wait for other plans ----------------------------------------------


async def row_waiting_pull(folder: Path, size: dict[str, int], url: str | None = None) -> Row:
    """Row 22 (SQLite), or 25 on the PostgreSQL server at `url` (in a schema of its own)."""
    settings: dict[str, Any] = {}
    if url:
        settings["database_url"] = scoped = await new_schema(url)
    try:
        waiting, ready = await prerequisites.pull_samples(
            folder / ("waiting-pg" if url else "waiting"), size["queued"], size["repeat"], settings
        )
    finally:
        if url:
            await drop_schema(url, scoped)
    waits = size["queued"] - prerequisites.READY_BEHIND
    where = ", PostgreSQL" if url else ""
    return Row(25 if url else 22,
               f"pull, {size['queued']:,} queued of which the first {waits:,} wait, vs {size['queued']:,} ready{where} (library)",
               waiting, ready, "≤ 1.2", limit_ratio=1.2)  # fmt: skip


async def row_add_many(folder: Path, size: dict[str, int]) -> Row:
    many, single = await prerequisites.batch_samples(folder / "batches", size["batches"])
    return Row(23, "9plan_queue_add_many of 20 plans (1 call) vs 20 × 9plan_queue_add (20 calls), over stdio",
               many, single, "— (informational)")  # fmt: skip


async def row_graph_drain(folder: Path, size: dict[str, int]) -> Row:
    """Throughputs: the ratio is a graph's over a flat queue's (higher is better)."""
    workers, plans = size["drain_workers"], size["drain_plans"]
    drains = await prerequisites.drain_samples(
        folder / "drains", workers, plans, size["drain_rounds"]
    )
    checked = (
        f"journal: {len(drains.early)} pulled early, {drains.twice} completed twice, "
        f"{drains.lost} lost; {drains.blocked} pulls blocked"
    )
    return Row(24,
               f"{workers} workers drain a {plans}-plan graph (widest layer {min(drains.widths)}-{max(drains.widths)}, "
               f"held 20-50 ms) vs {plans} plans without after, over stdio; {checked}",
               drains.graph, drains.flat, "— (informational; throughput, graph / flat)", unit="plans/s")  # fmt: skip


# -- rows 12 and 13: the web view -------------------------------------------------------------


async def rows_web(folder: Path, size: dict[str, int], changes: int) -> list[Row]:
    root, name = await web.big_session(folder, size)
    rows = [
        Row(12, f"session page, {size['queued']:,} queued + {size['completed']:,} completed "
            "(server-side render, warm)", await web.page_renders(root, name, size), None,
            "p50 < 200 ms", limit_absolute=200),
    ]  # fmt: skip
    rows.append(Row(20, f"agent's add → its SSE event, {size['queued']:,} queued + "
                    f"{size['completed']:,} completed (nineplan ui, plain SSE client, {changes} adds)",
                    await web.sse_delays(root, name, changes), None, "p95 < 1 s",
                    limit_absolute=1000, statistic="p95"))  # fmt: skip
    if (delays := await web.live_delays(folder, changes)) is not None:
        rows.append(Row(13, f"MCP call → change shown in the open page (browser, {changes} changes)",
                        delays, None, "p95 < 1 s", limit_absolute=1000, statistic="p95"))  # fmt: skip
    return rows


async def run(size_name: str, only: set[int] | None = None) -> list[Row]:
    """Every row, or the rows numbered in `only` (and what they need)."""
    size = SIZES[size_name]

    def wanted(*numbers: int) -> bool:
        return only is None or bool(only & set(numbers))

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="nineplan-bench-") as temporary:
        folder = Path(temporary)
        for number, measure in (
            (1, row_cycle), (11, row_schema), (3, row_queue), (6, row_sessions), (7, row_resume),
            (22, row_waiting_pull), (23, row_add_many), (24, row_graph_drain),
        ):  # fmt: skip
            if wanted(number):
                rows.append(await measure(folder, size))
        if wanted(2, 4, 5):
            search_row, search_root, search_name = await row_search(folder, size)
            rows.append(search_row)
            if wanted(4, 5):
                rows += rows_startup_memory(folder, size, search_root, search_name)
        if wanted(21) and (tmpfs_row := await row_cycle_tmpfs(size)) is not None:
            rows.append(tmpfs_row)
        if wanted(10):
            rows.append(await row_handoff(folder, size["repeat"]))
        if wanted(12, 13, 20):
            rows += await rows_web(folder, size, changes=50 if size_name == "full" else 5)
        if wanted(14, 15, 16):
            rows += await rows_journal(folder, size)
        if wanted(17):
            rows.append(await row_prime(folder, size))
        if wanted(18, 19):
            rows += await rows_context()
        url = os.environ.get("NINEPLAN_BENCH_DATABASE_URL") or os.environ.get(
            "NINEPLAN_TEST_DATABASE_URL"
        )
        if url and wanted(8, 9):
            rows += await rows_postgres(folder, size, url)
        if url and wanted(25):
            rows.append(await row_waiting_pull(folder, size, url))
    return sorted(rows, key=lambda row: row.number)


def table(rows: list[Row], size_name: str) -> str:
    """The Markdown table of `rows`, headed by the size and the machine."""
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}"
    return "\n".join([
        f"Size `{size_name}` on {machine}. Medians with (min-max); each ratio is taken within this run.",
        "",
        "| # | measure | nineplan | floor | ratio | target | met |",
        "|---|---|---|---|---|---|---|",
        *(row.markdown() for row in rows),
    ])  # fmt: skip


def write(rows: list[Row], size_name: str, folder: Path = RESULTS) -> str:
    """Write the table and the rows as JSON to `folder`; return the table."""
    text = table(rows, size_name)
    folder.mkdir(exist_ok=True)
    (folder / "latest.md").write_text(text + "\n")
    (folder / "latest.json").write_text(
        json.dumps(
            [attrs.asdict(row) | {"ratio": row.ratio, "met": row.met} for row in rows], indent=2
        )
    )
    return text


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", choices=list(SIZES), default="full")
    parser.add_argument(
        "--rows", help="only these rows, comma-separated (e.g. 17,18,19); results/ is left alone"
    )
    options = parser.parse_args()
    only = {int(number) for number in options.rows.split(",")} if options.rows else None
    measured = anyio.run(run, options.size, only)
    print(write(measured, options.size) if only is None else table(measured, options.size))
