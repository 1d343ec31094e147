"""Four server processes on one session at once: nothing lost or duplicated, never locked."""

import random
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.fakes import PLAN
from tests.integration.servers import stdio_server
from tests.mcp_helpers import ok, parsed_error, text

#: Timing-bound (kills, races): `make test` runs these after the parallel phase, two at a time (each keeps a core).
pytestmark = pytest.mark.serial

PROCESSES = 4
OPERATIONS = 110
ALLOWED_REFUSALS = {"PLAN_ALREADY_ACTIVE", "QUEUE_EMPTY", "NO_ACTIVE_PLAN"}


async def test_four_processes_mutating_one_session(tmp_path: Path):
    """Four server processes mutating one session at random lose nothing and keep every invariant."""
    async with Client(stdio_server(tmp_path), mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
    added: list[str] = []
    completed: dict[str, str] = {}
    discarded: list[str] = []
    refusals: dict[str, int] = {}
    snapshots: list[bool] = []

    async def worker(number: int) -> None:
        rng = random.Random(number)
        async with Client(stdio_server(tmp_path), mode="legacy") as client:
            for index in range(OPERATIONS):
                tool = rng.choice(
                    ["add", "add", "pull", "pull", "complete", "complete", "defer", "discard"]
                )
                arguments: dict[str, Any] = {"session_name": name}
                if tool == "add":
                    arguments |= {
                        **PLAN,
                        "goal": f"p{number}-{index}",
                        "position": rng.choice(["front", "back"]),
                    }
                elif tool == "complete":
                    arguments |= {"outcome": f"outcome {number}-{index}"}
                elif tool in {"defer", "discard"}:
                    arguments |= {
                        "reason": f"{tool} {number}-{index}",
                        **({"position": "front"} if tool == "defer" else {}),
                    }
                full = {
                    "add": "9plan_queue_add",
                    "pull": "9plan_queue_pull",
                    "complete": "9plan_plan_complete",
                    "defer": "9plan_plan_defer",
                    "discard": "9plan_plan_discard",
                }[tool]
                result = await client.call_tool(full, arguments)
                if result.is_error:
                    category, _ = parsed_error(result)
                    assert category in ALLOWED_REFUSALS, text(result)
                    refusals[category] = refusals.get(category, 0) + 1
                    continue
                out = result.structured_content or {}
                if tool == "add":
                    added.append(out["plan_id"])
                elif tool == "complete":
                    completed[out["plan_id"]] = arguments["outcome"]
                elif tool == "discard":
                    discarded.append(out["plan_id"])

    async def monitor() -> None:
        async with Client(stdio_server(tmp_path), mode="legacy") as client:
            for _ in range(40):
                report = await ok(client, "9plan_admin_validate", session_name=name)
                snapshots.append(
                    report["invariants"]["single_active_plan"]
                    and report["invariants"]["queue_order_preserved"]
                )
                await anyio.sleep(0.02)

    async with anyio.create_task_group() as group:
        for number in range(PROCESSES):
            group.start_soon(worker, number)
        group.start_soon(monitor)

    async with Client(stdio_server(tmp_path), mode="legacy") as client:
        state = await ok(client, "9plan_admin_state", session_name=name)
        queue = [entry["id"] for entry in state["queue"]]
        active = [state["active_plan"]["id"]] if state["active_plan"] else []
        assert len(queue) == len(set(queue)), "a plan is queued twice"
        assert len(added) == len(set(added))
        assert sorted(queue + active + list(completed) + discarded) == sorted(added), (
            "a plan was lost or duplicated"
        )
        assert state["completed_count"] == len(completed)
        for plan_id, outcome in completed.items():
            assert (await ok(client, "9plan_history_get", plan_id=plan_id, session_name=name))[
                "outcome"
            ] == outcome
        assert (await ok(client, "9plan_admin_validate", session_name=name))["valid"]
    assert all(snapshots)
    assert len(added) > 100
