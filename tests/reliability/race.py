"""The workers' race (DESIGN §10): N workers, each its own `nineplan serve` over stdio with its
own SDK client, pull and complete on one session until its queue is empty; then count the
plans completed once, twice and never, and ask admin_validate whether the journal replays.

On SQLite every worker shares one sessions folder; on PostgreSQL the workers are spread over
two "machines" (separate sessions folders) sharing one database.

    python -m tests.reliability.race --runs 20 [--workers 8] [--plans 200]

runs the SQLite race (and the PostgreSQL one when NINEPLAN_TEST_DATABASE_URL is set) that many
times, prints a table and exits 1 when any plan was completed twice or lost, or a journal was
invalid. `make torture` runs it after the SIGKILL rounds.
"""

import argparse
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import attrs
from mcp import Client

from tests.fakes import postgres_schema
from tests.integration.servers import stdio_server
from tests.mcp_helpers import ok, text

PLAN = {
    "context": "A queue several agents share",
    "approach": "Do it",
    "success_criteria": "Done",
}


@attrs.define
class RaceResult:
    """What one race left: how often each plan was completed, and whether the session is valid."""

    backend: str
    plans: int
    once: int
    twice: int
    lost: int
    seconds: float
    valid: bool
    issues: list[str] = attrs.field(factory=list)
    #: Result texts that said "Task complete!" while a plan was still queued or active.
    premature: int = 0

    @property
    def clean(self) -> bool:
        return (
            self.once == self.plans
            and not self.twice
            and not self.lost
            and self.valid
            and not self.premature
        )


#: What an empty pull says once every plan is done: "... and N plan(s) are completed. Task complete!"
_COMPLETED = re.compile(r"and (\d+) plan\(s\) are completed\. Task complete!")


def _completes_early(said: str, completed: int, plans: int) -> bool:
    """Whether a result text says the task is complete while fewer than `plans` plans are
    completed (`completed`, as the result counts them): some plan was queued or active."""
    return "Task complete!" in said and completed < plans


async def _work(
    sessions: Path,
    name: str,
    worker: str,
    plans: int,
    env: dict[str, str],
    done: list[str],
    early: list[str],
) -> None:
    """One worker in its own server process: pull and complete until the queue of `plans`
    is empty, keeping in `early` each text that said "Task complete!" before every plan was."""
    async with Client(stdio_server(sessions, **env), mode="legacy") as client:
        while True:
            result = await client.call_tool(
                "9plan_queue_pull", {"session_name": name, "worker": worker}
            )
            if result.is_error:
                said = text(result)
                assert "Error: QUEUE_EMPTY" in said, said
                counted = _COMPLETED.search(said)
                if _completes_early(said, int(counted.group(1)) if counted else 0, plans):
                    early.append(said)
                return
            pulled: dict[str, Any] = result.structured_content or {}
            assert pulled["worker"] == worker
            finished = await client.call_tool(
                "9plan_plan_complete",
                {"session_name": name, "worker": worker,
                 "outcome": f"{worker} did {pulled['plan_id']}"},
            )  # fmt: skip
            assert not finished.is_error, text(finished)
            completed = finished.structured_content or {}
            assert completed["plan_id"] == pulled["plan_id"]
            if _completes_early(text(finished), completed["completed_count"], plans):
                early.append(text(finished))
            done.append(pulled["plan_id"])


async def race(
    machines: list[Path], workers: int, plans: int, env: dict[str, str] | None = None
) -> RaceResult:
    """Fill a session with `plans` plans on the first machine, race `workers` workers spread
    over `machines` until the queue is empty, and check the session from the last machine."""
    env = {"NINEPLAN_LOG_LEVEL": "error", **(env or {})}
    async with Client(stdio_server(machines[0], **env), mode="legacy") as client:
        name = (await ok(client, "9plan_session_create", task_description="shared"))["session_name"]
        ids = [
            (await ok(client, "9plan_queue_add", goal=f"Plan {number}", **PLAN))["plan_id"]
            for number in range(plans)
        ]
    done: list[str] = []
    early: list[str] = []
    started = time.monotonic()
    with anyio.fail_after(600):
        async with anyio.create_task_group() as group:
            for number in range(workers):
                machine = machines[number % len(machines)]
                worker = f"{machine.name}.w{number}" if len(machines) > 1 else f"w{number}"
                group.start_soon(_work, machine, name, worker, plans, env, done, early)
    seconds = time.monotonic() - started
    async with Client(stdio_server(machines[-1], **env), mode="legacy") as client:
        state = await ok(client, "9plan_admin_state", session_name=name)
        validation = await ok(client, "9plan_admin_validate", session_name=name)
    counts = Counter(done)
    issues = list(validation["issues"])
    if (state["queue"], state["active_plans"], state["completed_count"]) != ([], [], plans):
        issues.append(f"state after the race: {len(state['queue'])} queued, "
                      f"{len(state['active_plans'])} active, {state['completed_count']} completed")  # fmt: skip
    return RaceResult(
        backend="postgres" if "NINEPLAN_DATABASE_URL" in env else "sqlite",
        plans=plans,
        once=sum(1 for plan in ids if counts[plan] == 1),
        twice=sum(1 for plan in ids if counts[plan] > 1),
        lost=sum(1 for plan in ids if plan not in counts),
        seconds=seconds,
        valid=bool(validation["valid"]) and not issues,
        issues=issues,
        premature=len(early),
    )


async def sqlite_race(folder: Path, workers: int = 8, plans: int = 200) -> RaceResult:
    """The race on one SQLite sessions folder."""
    return await race([folder / "sessions"], workers, plans)


async def postgres_race(folder: Path, url: str, workers: int = 8, plans: int = 200) -> RaceResult:
    """The race on two machines (sessions folders) sharing the PostgreSQL database at `url`."""
    machines = [folder / "machine-a", folder / "machine-b"]
    return await race(machines, workers, plans, {"NINEPLAN_DATABASE_URL": url})


async def races(runs: int, workers: int, plans: int, url: str | None) -> list[RaceResult]:
    results = []
    for run in range(runs):
        with tempfile.TemporaryDirectory(prefix="nineplan-race-") as folder:
            results.append(await sqlite_race(Path(folder) / "sqlite", workers, plans))
            if url:
                async with postgres_schema() as scoped:
                    results.append(await postgres_race(Path(folder) / "pg", scoped, workers, plans))
        print(f"run {run + 1}/{runs} done", file=sys.stderr, flush=True)
    return results


def table(results: list[RaceResult], workers: int) -> str:
    lines = [
        (
            "| backend | workers | runs | plans | completed once | completed twice | lost "
            '| journal valid | early "Task complete!" | seconds (min-max) |'
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for backend in sorted({result.backend for result in results}, reverse=True):
        mine = [result for result in results if result.backend == backend]
        seconds = [result.seconds for result in mine]
        lines.append(
            f"| {backend} | {workers} | {len(mine)} | {sum(r.plans for r in mine)} "
            f"| {sum(r.once for r in mine)} | {sum(r.twice for r in mine)} "
            f"| {sum(r.lost for r in mine)} | {sum(r.valid for r in mine)}/{len(mine)} "
            f"| {sum(r.premature for r in mine)} | {sum(seconds):.0f} ({min(seconds):.1f}-{max(seconds):.1f}) |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--plans", type=int, default=200)
    options = parser.parse_args()
    url = os.environ.get("NINEPLAN_TEST_DATABASE_URL")
    results = anyio.run(races, options.runs, options.workers, options.plans, url)
    print(table(results, options.workers))
    for result in results:
        for issue in result.issues:
            print(f"INVALID ({result.backend}): {issue}")
    sys.exit(0 if all(result.clean for result in results) else 1)


if __name__ == "__main__":
    main()
