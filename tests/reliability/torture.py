"""Crash torture: kill `nineplan serve` with SIGKILL at random moments, then prove nothing
acknowledged was lost.

Each round spawns a server over stdio, resumes the session (which reconciles), retries the
call that was in flight when the last server died (with its request_id, so it applies at most
once), checks the whole session against a model of every acknowledged call (its journal too:
every acknowledged change has its one event, and there is no event of a change that was not
acknowledged), then runs a random workload until a killer task SIGKILLs the server.

    python -m tests.reliability.torture --rounds 500
"""

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import attrs
from mcp import Client, MCPError

from nineplan_adapters import open_nineplan
from nineplan_adapters.entrypoints.journal_views import journal_entry
from tests.integration.servers import run_nineplan, stdio_server

SHIM = "import os, sys; open(sys.argv[1], 'w').write(str(os.getpid())); os.execv(sys.executable, [sys.executable, *sys.argv[2:]])"


class ServerDiedError(Exception):
    """The server stopped answering (it was killed)."""


@attrs.define
class Model:
    """What the acknowledged calls say the session holds."""

    queue: list[str] = attrs.field(factory=list)
    active: str | None = None
    completed: dict[str, str] = attrs.field(factory=dict)
    discarded: set[str] = attrs.field(factory=set)
    #: The journal events the acknowledged changes make: (kind, plan id), oldest first.
    events: list[tuple[str, str]] = attrs.field(factory=list)


@attrs.define
class Report:
    rounds: int = 0
    kills: int = 0
    acknowledged: int = 0
    retried: int = 0
    checks: int = 0
    journal_events: int = 0
    losses: list[str] = attrs.field(factory=list)
    seconds: float = 0.0


@attrs.define
class Torture:
    folder: Path
    rng: random.Random
    report: Report = attrs.field(factory=Report)
    model: Model = attrs.field(factory=Model)
    session: str | None = None
    in_flight: tuple[str, dict[str, Any]] | None = None
    counter: int = 0

    def _params(self) -> Any:
        params = stdio_server(
            self.folder / "sessions", NINEPLAN_DURABILITY="full", NINEPLAN_LOG_LEVEL="error"
        )
        params.args = ["-c", SHIM, str(self.folder / "server.pid"), *params.args]
        return params

    async def _call(self, client: Client, tool: str, arguments: dict[str, Any]) -> Any:
        try:
            result = await client.call_tool(tool, arguments)
        except Exception as exc:
            raise ServerDiedError from exc
        return result

    def _apply(self, tool: str, arguments: dict[str, Any], result: Any) -> None:
        """Update the model with an acknowledged call."""
        out = result.structured_content or {}
        model = self.model
        if result.is_error:
            # The workload only makes calls that are valid for the acknowledged state.
            self.report.losses.append(f"{tool} failed: {result.content[0].text[:200]!r}")
            return
        self.report.acknowledged += 1
        event = _EVENTS.get(tool)
        plan_id = (
            out.get("plan_id") if tool in {"9plan_queue_add", "9plan_queue_pull"} else model.active
        )
        if event and plan_id:
            model.events.append((event, plan_id))
        if tool == "9plan_queue_add":
            if arguments.get("position") == "front":
                model.queue.insert(0, out["plan_id"])
            else:
                model.queue.append(out["plan_id"])
        elif tool == "9plan_queue_pull":
            front = model.queue.pop(0)
            if out["plan_id"] != front:
                self.report.losses.append(f"pull took {out['plan_id']}, not the front plan {front}")
            model.active = out["plan_id"]
        elif tool == "9plan_plan_defer" and model.active is not None:
            if arguments.get("position") == "front":
                model.queue.insert(0, model.active)
            else:
                model.queue.append(model.active)
            model.active = None
        elif tool == "9plan_plan_complete" and model.active is not None:
            model.completed[model.active] = arguments["outcome"]
            model.active = None
        elif tool == "9plan_plan_discard" and model.active is not None:
            model.discarded.add(model.active)
            model.active = None

    def _next_call(self) -> tuple[str, dict[str, Any]]:
        self.counter += 1
        request = {"request_id": f"r{self.counter}", "session_name": self.session}
        choices = ["9plan_queue_add"] * 3
        if self.model.active is None and self.model.queue:
            choices += ["9plan_queue_pull"] * 3
        if self.model.active is not None:
            choices += ["9plan_plan_complete"] * 3 + ["9plan_plan_defer", "9plan_plan_discard"]
        tool = self.rng.choice(choices)
        where = self.rng.choice(["front", "back"])
        arguments: dict[str, Any] = {
            "9plan_queue_add": {
                "context": "torture",
                "goal": f"goal {self.counter}",
                "approach": "a",
                "success_criteria": "s",
                "outputs": f"output{self.counter}",
                "position": where,
            },
            "9plan_queue_pull": {},
            "9plan_plan_defer": {"reason": f"deferred {self.counter}", "position": where},
            "9plan_plan_complete": {"outcome": f"outcome{self.counter} done"},
            "9plan_plan_discard": {"reason": f"discarded {self.counter}"},
        }[tool]
        return tool, {**arguments, **request}

    async def _verify(self, client: Client) -> None:
        """Compare the session with the model: every acknowledged call must be there."""
        state = (
            await self._call(client, "9plan_admin_state", {"session_name": self.session})
        ).structured_content
        validate = (
            await self._call(client, "9plan_admin_validate", {"session_name": self.session})
        ).structured_content
        self.report.checks += 1
        queue = [entry["id"] for entry in state["queue"]]
        active = state["active_plan"]["id"] if state["active_plan"] else None
        problems = []
        if not validate["valid"]:
            problems.append(f"invalid after reconcile: {validate['issues']}")
        if queue != self.model.queue:
            extra, missing = (
                sorted(set(queue) - set(self.model.queue)),
                sorted(set(self.model.queue) - set(queue)),
            )
            problems.append(
                f"queue differs from the acknowledged one: extra {extra}, missing {missing}"
            )
        if active != self.model.active:
            problems.append(f"active {active} != acknowledged {self.model.active}")
        if state["completed_count"] != len(self.model.completed):
            problems.append(
                f"completed_count {state['completed_count']} != {len(self.model.completed)}"
            )
        try:
            log = await client.read_resource(f"nineplan://sessions/{self.session}/log")
        except Exception as exc:
            raise ServerDiedError from exc
        problems += self._journal_problems(json.loads(log.contents[0].text)["events"])  # type: ignore[union-attr]
        for plan_id, outcome in list(self.model.completed.items())[-5:]:
            got = await self._call(
                client, "9plan_history_get", {"plan_id": plan_id, "session_name": self.session}
            )
            if got.is_error or got.structured_content["outcome"] != outcome:
                problems.append(f"completed plan {plan_id} lost its outcome")
        self.report.losses += [f"round {self.report.rounds}: {problem}" for problem in problems]

    def _journal_problems(self, events: list[dict[str, Any]]) -> list[str]:
        """How the journal (all of it, or only its newest events) differs from the acknowledged
        changes: an event missing, an event of a change never acknowledged, a gap in seq."""
        if not events:
            return ["the journal is empty"]
        problems = []
        seqs = [event["seq"] for event in events]
        if seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            problems.append(f"journal seq has a gap: {seqs}")
        changes = [
            (event.get("kind", "unreadable"), event.get("plan_id"))
            for event in events
            if event.get("kind", "unreadable") in {*_EVENTS.values(), "unreadable"}
        ]
        whole = seqs[0] == 1
        expected = self.model.events if whole else self.model.events[-len(changes) :]
        if changes != expected or (not whole and len(changes) > len(self.model.events)):
            missing = [event for event in expected if event not in changes]
            extra = [change for change in changes if change not in expected]
            problems.append(
                f"journal differs from the acknowledged changes: missing {missing[:3]}, "
                f"extra {extra[:3]} ({len(changes)} events, {len(expected)} acknowledged)"
            )
        return problems

    async def verify_whole_journal(self) -> None:
        """Read all of the journal and hold it to the model: the newest events with
        `nineplan log --json` (it shows at most 10,000), all of them through the library."""
        done = run_nineplan(self.folder / "sessions", "log", str(self.session), "--json",
                            "--limit", "10000")  # fmt: skip
        if done.returncode != 0:
            self.report.losses.append(f"nineplan log failed: {done.stderr[:200]}")
            return
        newest = [json.loads(line) for line in done.stdout.splitlines()]
        async with open_nineplan(self.folder / "sessions") as nineplan:
            journal = await nineplan.journal(str(self.session))
        events = [json.loads(json.dumps(journal_entry(event))) for event in journal]
        if newest != events[-len(newest) :]:
            self.report.losses.append("end: nineplan log differs from the journal's newest events")
        self.report.journal_events = len(events)
        if events and events[0]["seq"] != 1:
            self.report.losses.append("end: the journal does not start at 1")
        self.report.losses += [f"end: {p}" for p in self._journal_problems(events)]

    async def _workload(self, client: Client, pid: int) -> None:
        async def killer() -> None:
            await anyio.sleep(self.rng.uniform(0.0, 0.25))
            os.kill(pid, signal.SIGKILL)
            self.report.kills += 1

        async with anyio.create_task_group() as group:
            group.start_soon(killer)
            try:
                while True:
                    self.in_flight = self._next_call()
                    result = await self._call(client, *self.in_flight)
                    self._apply(*self.in_flight, result)
                    self.in_flight = None
            except ServerDiedError:
                pass

    async def round(self) -> None:
        self.report.rounds += 1
        try:
            async with Client(self._params(), mode="legacy", read_timeout_seconds=30) as client:
                pid = int((self.folder / "server.pid").read_text())
                if self.session is None:
                    self.counter += 1
                    created = await self._call(
                        client, "9plan_session_create", {"request_id": "create"}
                    )
                    self.session = created.structured_content["session_name"]
                else:
                    await self._call(client, "9plan_session_resume", {"session_name": self.session})
                if self.in_flight is not None:
                    # Retried with its request_id: applied before the kill or now, never twice.
                    result = await self._call(client, *self.in_flight)
                    self._apply(*self.in_flight, result)
                    self.in_flight = None
                    self.report.retried += 1
                await self._verify(client)
                await self._workload(client, pid)
        except Exception as exc:
            if not _death(exc):
                raise  # a real failure of the harness or of nineplan


#: The journal event each acknowledged change makes.
_EVENTS = {
    "9plan_queue_add": "plan_added",
    "9plan_queue_pull": "plan_pulled",
    "9plan_plan_defer": "plan_deferred",
    "9plan_plan_complete": "plan_completed",
    "9plan_plan_discard": "plan_discarded",
}

_DEATH = (
    ServerDiedError,
    OSError,
    RuntimeError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    MCPError,
)


def _death(exc: BaseException) -> bool:
    """Whether `exc` is only what closing a client of a killed server raises."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_death(inner) for inner in exc.exceptions)
    return isinstance(exc, _DEATH)


async def torture(rounds: int, folder: Path, seed: int = 0) -> Report:
    harness = Torture(folder, random.Random(seed))
    started = time.perf_counter()
    for _ in range(rounds):
        await harness.round()
    # A last, clean round checks what the final kill left behind.
    async with Client(harness._params(), mode="legacy") as client:
        await harness._call(client, "9plan_session_resume", {"session_name": harness.session})
        if harness.in_flight is not None:
            harness._apply(*harness.in_flight, await harness._call(client, *harness.in_flight))
        await harness._verify(client)
    await harness.verify_whole_journal()
    harness.report.seconds = time.perf_counter() - started
    return harness.report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nineplan-torture-") as folder:
        report = anyio.run(torture, options.rounds, Path(folder), options.seed)
    print(
        "| rounds | SIGKILLs | acknowledged calls | in-flight retries | checks | journal events "
        "| losses | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print(
        f"| {report.rounds} | {report.kills} | {report.acknowledged} | {report.retried} | {report.checks} | "
        f"{report.journal_events} | {len(report.losses)} | {report.seconds:.0f} |"
    )
    for loss in report.losses:
        print(f"LOSS: {loss}")
    sys.exit(1 if report.losses else 0)


if __name__ == "__main__":
    main()
