"""Sessions that outlive the machine: two servers with their own folders on one PostgreSQL database."""

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.fakes import PLAN, postgres_schema
from tests.integration.servers import run_nineplan, stdio_server
from tests.mcp_helpers import ok, parsed_error, text

pytestmark = pytest.mark.postgres


@pytest.fixture
async def database() -> AsyncIterator[str]:
    async with postgres_schema() as url:
        yield url


async def test_a_session_moves_between_machines(tmp_path: Path, database: str):
    """Created through machine A, resumed through machine B with its files re-rendered there,
    then mutated by both at once (200+ calls): nothing lost, invariants valid on both."""
    machine_a = stdio_server(tmp_path / "a", NINEPLAN_DATABASE_URL=database)
    machine_b = stdio_server(tmp_path / "b", NINEPLAN_DATABASE_URL=database)
    async with Client(machine_a, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create", task_description="two machines"))[
            "session_name"
        ]
        for index in range(5):
            await ok(client, "9plan_queue_add", **{**PLAN, "goal": f"seed {index}"})
    assert not (tmp_path / "b").exists()
    async with Client(machine_b, mode="legacy") as client:
        state = await ok(client, "9plan_session_resume", session_name=name)
        assert [entry["goal"] for entry in state["queue"]] == [f"seed {i}" for i in range(5)]
        assert sorted(path.name for path in (tmp_path / "b" / name / "plans").iterdir()) == sorted(
            f"{entry['id']}.txt" for entry in state["queue"]
        )

    added: list[str] = []
    completed: list[str] = []
    discarded: list[str] = []
    calls = [0]

    async def machine(params: Any, seed: int) -> None:
        rng = random.Random(seed)
        async with Client(params, mode="legacy") as client:
            for index in range(110):
                tool = rng.choice(
                    ["add", "add", "pull", "complete", "complete", "defer", "discard"]
                )
                arguments: dict[str, Any] = {"session_name": name}
                full = {"add": "9plan_queue_add", "pull": "9plan_queue_pull", "complete": "9plan_plan_complete",
                        "defer": "9plan_plan_defer", "discard": "9plan_plan_discard"}[tool]  # fmt: skip
                if tool == "add":
                    arguments |= {
                        **PLAN,
                        "goal": f"m{seed}-{index}",
                        "position": rng.choice(["front", "back"]),
                    }
                elif tool == "complete":
                    arguments["outcome"] = f"done by machine {seed}"
                elif tool in {"defer", "discard"}:
                    arguments["reason"] = f"{tool} by machine {seed}"
                result = await client.call_tool(full, arguments)
                calls[0] += 1
                if result.is_error:
                    assert parsed_error(result)[0] in {
                        "PLAN_ALREADY_ACTIVE", "QUEUE_EMPTY", "NO_ACTIVE_PLAN"}, text(result)  # fmt: skip
                    continue
                plan_id = (result.structured_content or {})["plan_id"]
                {"add": added, "complete": completed, "discard": discarded}.get(tool, []).append(
                    plan_id
                )

    async with anyio.create_task_group() as group:
        group.start_soon(machine, machine_a, 1)
        group.start_soon(machine, machine_b, 2)

    for params in (machine_a, machine_b):
        async with Client(params, mode="legacy") as client:
            state = await ok(client, "9plan_admin_state", session_name=name)
            queue = [entry["id"] for entry in state["queue"]]
            active = [state["active_plan"]["id"]] if state["active_plan"] else []
            seeds = [f for f in queue + active + completed + discarded if f not in added]
            assert len(seeds) == 5, "a seed plan was lost or duplicated"
            assert sorted(queue + active + completed + discarded) == sorted(added + seeds)
            assert state["completed_count"] == len(completed)
            # Validating reports this machine's files as they are; resuming refreshes them.
            await ok(client, "9plan_session_resume", session_name=name)
            assert (await ok(client, "9plan_admin_validate", session_name=name))["valid"]
    assert calls[0] >= 200
    assert completed


def test_a_bad_database_url_is_one_clear_message(tmp_path: Path):
    """A URL that is not PostgreSQL's, or a server that is not there: a clear message, no
    traceback."""
    for url, expected in [
        ("mysql://x", "NINEPLAN_DATABASE_URL"),
        ("postgresql://nobody@127.0.0.1:1/none", "DATABASE_ERROR"),
    ]:
        completed = run_nineplan(tmp_path, "sessions", timeout=60, NINEPLAN_DATABASE_URL=url)
        assert completed.returncode in {1, 2}
        assert expected in completed.stderr
        # The error on one line, and for a domain error the suggested action on a second.
        lines = completed.stderr.strip().splitlines()
        assert len(lines) <= 2, completed.stderr
        assert lines[0].startswith("nineplan: ")
