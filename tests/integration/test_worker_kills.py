"""kill -9 of a worker's server mid-pull (DESIGN §10): two workers on one session, each its own
stdio server; one worker's server is SIGKILLed at a random moment while its pull is in flight,
restarted, and the pull retried with the same request_id. The plan is in exactly one state, the
other worker's plan is untouched, and the words written into the plan's file before the kill
are in the database or in recovered/. The same for a take-over of a stale plan, and for a
person's `nineplan release` killed midway."""

import os
import random
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.fakes import postgres_schema
from tests.integration.servers import PROJECT, PYTHON, child_env, stdio_server
from tests.mcp_helpers import ok
from tests.reliability.race import PLAN
from tests.reliability.torture import SHIM, _death

#: Timing-bound (kills, races): `make test` runs these after the parallel phase, two at a time (each keeps a core).
pytestmark = pytest.mark.serial

ROUNDS = 5


def _killable(sessions: Path, pid_file: Path, **env: str) -> Any:
    """`nineplan serve` over stdio that writes its pid to `pid_file` before it starts."""
    params = stdio_server(sessions, NINEPLAN_DURABILITY="full", NINEPLAN_LOG_LEVEL="error", **env)
    params.args = ["-c", SHIM, str(pid_file), *params.args]
    return params


async def _pull_killed(
    params: Any, pid_file: Path, arguments: dict[str, Any], delay: float
) -> bool:
    """Send the pull and SIGKILL the server `delay` seconds later; whether the answer came first."""
    answered = False
    try:
        async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
            pid = int(pid_file.read_text())

            async def kill() -> None:
                await anyio.sleep(delay)
                os.kill(pid, signal.SIGKILL)

            async with anyio.create_task_group() as group:
                group.start_soon(kill)
                try:
                    result = await client.call_tool("9plan_queue_pull", arguments)
                    answered = not result.is_error
                except Exception:  # noqa: BLE001 - the server died under the call
                    answered = False
    except Exception as exc:
        if not _death(exc):
            raise
    return answered


@asynccontextmanager
async def _no_database() -> AsyncIterator[str | None]:
    """SQLite: no database URL."""
    yield None


def _recovered_words(session_folder: Path, words: str) -> bool:
    folder = session_folder / "recovered"
    return folder.is_dir() and any(
        words in entry.read_text(errors="replace") for entry in folder.iterdir() if entry.is_file()
    )


async def _words_kept_to_the_end(
    client: Client, sessions: Path, name: str, worker: str, handed: dict[str, Any], words: str
) -> None:
    """The session is valid; `words` are in the plan text `worker` was `handed` (or in
    recovered/) and, once `worker` completes that plan, in its stored notes (or recovered/)."""
    validation = await ok(client, "9plan_admin_validate", session_name=name)
    assert validation["valid"], validation["issues"]
    assert words in handed["plan_text"] or _recovered_words(sessions / name, words)
    await ok(client, "9plan_plan_complete", session_name=name, worker=worker, outcome="done")
    got = await ok(client, "9plan_history_get", session_name=name, plan_id=handed["plan_id"])
    assert words in got["notes"] or _recovered_words(sessions / name, words)


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_a_worker_server_killed_mid_pull_leaves_the_plan_in_one_state(
    tmp_path: Path, backend: str
):
    """Over 5 rounds, worker `one`'s server is SIGKILLed at a random moment of its pull (words
    just written into the front plan's file), restarted, resumed and the pull retried with the
    same request_id: the plan is active for `one` alone (never queued too, never a second
    worker's, never lost), worker `two`'s plan is untouched, admin_validate is valid, and the
    words are in the database (the pull's text, then the completed plan's notes) or in
    recovered/."""
    sessions = tmp_path / "sessions"
    rng = random.Random(25)
    async with postgres_schema() if backend == "postgres" else _no_database() as url:
        env = {"NINEPLAN_DATABASE_URL": url} if url else {}
        pid_file = tmp_path / "server.pid"
        params = _killable(sessions, pid_file, **env)
        async with Client(
            stdio_server(sessions, NINEPLAN_LOG_LEVEL="error", **env), mode="legacy"
        ) as two:
            name = (await ok(two, "9plan_session_create", task_description="kills"))["session_name"]
            ids = [
                (await ok(two, "9plan_queue_add", goal=f"Plan {n}", **PLAN))["plan_id"]
                for n in range(ROUNDS + 1)
            ]
            held = await ok(two, "9plan_queue_pull", session_name=name, worker="two")
            assert held["plan_id"] == ids[0]
            answered = 0
            for number, plan_id in enumerate(ids[1:], start=1):
                plan_file = sessions / name / "plans" / f"{plan_id}.txt"
                words = f"words of round {number} before the kill"
                plan_file.write_text(
                    plan_file.read_text().replace("# Notes\n", f"# Notes\n{words}\n")
                )
                pull = {"session_name": name, "worker": "one", "request_id": f"pull-{number}"}
                answered += await _pull_killed(params, pid_file, pull, rng.uniform(0.0, 0.04))
                async with Client(params, mode="legacy") as one:
                    await ok(one, "9plan_session_resume", session_name=name, worker="one")
                    retried = await ok(one, "9plan_queue_pull", **pull)
                    assert (retried["plan_id"], retried["worker"]) == (plan_id, "one")
                    state = await ok(one, "9plan_admin_state", session_name=name)
                    assert sorted((p["id"], p["worker"]) for p in state["active_plans"]) == sorted(
                        [(ids[0], "two"), (plan_id, "one")]
                    )
                    assert plan_id not in [entry["id"] for entry in state["queue"]]
                    assert [entry["id"] for entry in state["queue"]] == ids[number + 1 :]
                    await _words_kept_to_the_end(one, sessions, name, "one", retried, words)
            mine = await ok(two, "9plan_admin_state", session_name=name, worker="two")
            assert mine["active_plan"]["id"] == ids[0]
            done = await ok(
                two,
                "9plan_plan_complete",
                session_name=name,
                worker="two",
                outcome="held throughout",
            )
            assert done["plan_id"] == ids[0]
            validation = await ok(two, "9plan_admin_validate", session_name=name)
            assert validation["valid"], validation["issues"]
    print(f"{backend}: {ROUNDS} kills mid-pull, {answered} after the answer")  # noqa: T201


#: A lease of 0.3 s: a worker that falls silent is stale almost at once.
SHORT_LEASE = "0.005"
TAKE_OVER_ROUNDS = 5


async def _until_stale(client: Client, name: str, plan_id: str) -> None:
    """Poll admin_state until `plan_id` is stale (under a deadline, never a timed assertion)."""
    with anyio.fail_after(60):
        while True:
            state = await ok(client, "9plan_admin_state", session_name=name)
            if any(p["id"] == plan_id and p["stale"] for p in state["active_plans"]):
                return
            await anyio.sleep(0.1)


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_a_worker_server_killed_mid_take_over_leaves_the_plan_in_one_state(
    tmp_path: Path, backend: str
):
    """Over 5 rounds, worker `old` pulls a plan, writes words into its file and falls silent;
    once the plan is stale, worker `new`'s server is SIGKILLed at a random moment of its
    take_over, restarted, and the take_over retried with the same request_id: the plan is
    active for `new` alone (never `old`'s too, never queued, never lost), admin_validate is
    valid, and `old`'s words are in the plan `new` was handed or in recovered/, then in the
    completed plan's notes."""
    sessions = tmp_path / "sessions"
    rng = random.Random(26)
    async with postgres_schema() if backend == "postgres" else _no_database() as url:
        env = {"NINEPLAN_DATABASE_URL": url} if url else {}
        lease = {"NINEPLAN_LEASE_MINUTES": SHORT_LEASE, **env}
        pid_file = tmp_path / "server.pid"
        params = _killable(sessions, pid_file, **lease)
        async with Client(
            stdio_server(sessions, NINEPLAN_LOG_LEVEL="error", **lease), mode="legacy"
        ) as old:
            name = (await ok(old, "9plan_session_create", task_description="kills"))["session_name"]
            ids = [
                (await ok(old, "9plan_queue_add", goal=f"Plan {n}", **PLAN))["plan_id"]
                for n in range(TAKE_OVER_ROUNDS)
            ]
            answered = 0
            for number, plan_id in enumerate(ids):
                pulled = await ok(old, "9plan_queue_pull", session_name=name, worker="old")
                assert pulled["plan_id"] == plan_id
                words = f"old's words of round {number} before the kill"
                plan_file = Path(pulled["plan_path"])
                plan_file.write_text(plan_file.read_text() + f"\n{words}\n")
                await _until_stale(old, name, plan_id)
                take = {
                    "session_name": name,
                    "worker": "new",
                    "take_over": plan_id,
                    "request_id": f"take-{number}",
                }
                answered += await _pull_killed(params, pid_file, take, rng.uniform(0.0, 0.04))
                async with Client(params, mode="legacy") as new:
                    retried = await ok(new, "9plan_queue_pull", **take)
                    assert (retried["plan_id"], retried["worker"]) == (plan_id, "new")
                    state = await ok(new, "9plan_admin_state", session_name=name)
                    assert [(p["id"], p["worker"]) for p in state["active_plans"]] == [
                        (plan_id, "new")
                    ]
                    assert [entry["id"] for entry in state["queue"]] == ids[number + 1 :]
                    await _words_kept_to_the_end(new, sessions, name, "new", retried, words)
    print(f"{backend}: {TAKE_OVER_ROUNDS} kills mid-take-over, {answered} after the answer")  # noqa: T201


async def _release_killed(sessions: Path, name: str, plan_id: str, delay: float, **env: str) -> int:
    """`nineplan release NAME PLAN_ID`, SIGKILLed `delay` seconds after it starts; its exit
    code (negative when the kill came first)."""
    process = await anyio.open_process(
        [PYTHON, "-m", "nineplan_adapters", "release", name, plan_id],
        env=child_env(sessions, NINEPLAN_DURABILITY="full", NINEPLAN_LOG_LEVEL="error", **env),
        cwd=PROJECT,
    )
    async with process:
        with anyio.move_on_after(delay):
            return await process.wait()
        process.kill()
        return await process.wait()


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
async def test_a_release_killed_midway_leaves_the_plan_in_one_state(tmp_path: Path, backend: str):
    """Over 5 rounds, a worker pulls a plan and writes words into its file; a person's
    `nineplan release` is SIGKILLed at a random moment (from start-up to past its commit): the
    plan is either still the worker's or at the front of the queue, never both and never lost;
    a second release (when needed) puts it at the front; the worker's next pull is handed it
    with the words (in the database or the file, never lost); admin_validate is valid."""
    sessions = tmp_path / "sessions"
    rng = random.Random(27)
    async with postgres_schema() if backend == "postgres" else _no_database() as url:
        env = {"NINEPLAN_DATABASE_URL": url} if url else {}
        async with Client(
            stdio_server(sessions, NINEPLAN_LOG_LEVEL="error", **env), mode="legacy"
        ) as agent:
            name = (await ok(agent, "9plan_session_create", task_description="kills"))[
                "session_name"
            ]
            ids = [
                (await ok(agent, "9plan_queue_add", goal=f"Plan {n}", **PLAN))["plan_id"]
                for n in range(ROUNDS)
            ]
            finished = 0
            for number, plan_id in enumerate(ids):
                pulled = await ok(agent, "9plan_queue_pull", session_name=name, worker="w")
                words = f"words of round {number} before the release"
                plan_file = Path(pulled["plan_path"])
                plan_file.write_text(plan_file.read_text() + f"\n{words}\n")
                delay = rng.uniform(0.05, 0.45)
                code = await _release_killed(sessions, name, plan_id, delay, **env)
                finished += code == 0
                state = await ok(agent, "9plan_admin_state", session_name=name)
                active = [p["id"] for p in state["active_plans"]]
                queue = [entry["id"] for entry in state["queue"]]
                assert (plan_id in active) != (plan_id in queue), (active, queue)
                if plan_id in active:
                    assert await _release_killed(sessions, name, plan_id, 120, **env) == 0
                state = await ok(agent, "9plan_admin_state", session_name=name)
                assert state["active_plans"] == []
                assert [entry["id"] for entry in state["queue"]] == ids[number:]
                again_pulled = await ok(agent, "9plan_queue_pull", session_name=name, worker="w")
                assert again_pulled["plan_id"] == plan_id
                await _words_kept_to_the_end(agent, sessions, name, "w", again_pulled, words)
    print(f"{backend}: {ROUNDS} releases killed, {finished} finished first")  # noqa: T201
