"""Plans that wait for other plans (docs/architecture.md, "Prerequisites") through a real
`nineplan serve` process and the SDK client, over stdio and over streamable HTTP: two
workers and A <- B, QUEUE_BLOCKED naming A's worker, A's outcome handed to B's pull, a
discarded prerequisite, and `9plan_queue_add_many` in order, all-or-nothing and retried."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client

from nineplan_adapters.entrypoints.cli.demo import spawned_http_server
from tests.integration.servers import stdio_server
from tests.mcp_helpers import error, ok

PLAN = {
    "context": "Login for the notekeeper app",
    "approach": "Do it",
    "success_criteria": "It works",
}


@asynccontextmanager
async def _client(transport: str, tmp_path: Path) -> AsyncIterator[Client]:
    """An SDK client of a real server process on `transport`."""
    if transport == "stdio":
        async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
            yield client
    else:
        async with spawned_http_server(tmp_path) as url, Client(url, mode="legacy") as client:
            yield client


TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


@TRANSPORTS
async def test_a_worker_gets_the_ready_plan_not_the_waiting_one(transport: str, tmp_path: Path):
    """Queued A, B (after A), C: worker a pulls A; worker b gets C, not B; with only B left b
    is refused QUEUE_BLOCKED naming A and worker a; once a completes A, b's pull of B carries
    A's outcome in `prerequisites` and in a notice of its text."""
    async with _client(transport, tmp_path) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        a = (await ok(client, "9plan_queue_add", goal="Design the users table", **PLAN))["plan_id"]
        added = await ok(client, "9plan_queue_add", goal="Build the login form", after=[a], **PLAN)
        b = added["plan_id"]
        assert added["waiting_for"] == [a]
        c = (await ok(client, "9plan_queue_add", goal="Write the README", **PLAN))["plan_id"]
        assert (await ok(client, "9plan_queue_pull", worker="a"))["plan_id"] == a
        assert (await ok(client, "9plan_queue_pull", worker="b"))["plan_id"] == c
        await ok(client, "9plan_plan_complete", outcome="README written", worker="b")
        kind, body = await error(client, "9plan_queue_pull", session_name=name, worker="b")
        assert kind == "QUEUE_BLOCKED", body
        assert f"{b} waits for {a} (active, worker a" in body
        assert "9plan_queue_pull again" in body
        state = await ok(client, "9plan_session_resume", session_name=name, worker="b")
        assert [(item["id"], item["waiting_for"]) for item in state["queue"]] == [(b, [a])]
        outcome = "users(id, email, password_hash) in migrations/0002.sql"
        await ok(client, "9plan_plan_complete", outcome=outcome, worker="a")
        pulled = await client.call_tool("9plan_queue_pull", {"worker": "b"})
        assert not pulled.is_error
        content = pulled.structured_content or {}
        assert content["plan_id"] == b
        assert content["prerequisites"] == [
            {
                "id": a,
                "goal": "Design the users table",
                "status": "completed",
                "outcome": outcome,
                "reason": None,
            }
        ]
        line = (
            f"Outcome of plan {a} (Design the users table), which this plan waited for: {outcome}"
        )
        assert line in content["notices"]
        text = "\n".join(block.text for block in pulled.content if hasattr(block, "text"))
        assert line in text
        got = await ok(client, "9plan_history_get", plan_id=a, worker="b")
        assert (got["after"], got["needed_by"]) == ([], [b])
        assert (await ok(client, "9plan_admin_validate"))["invariants"][
            "prerequisites_respected"
        ] is True


@TRANSPORTS
async def test_a_discarded_prerequisite_lets_its_dependent_go(transport: str, tmp_path: Path):
    """A discarded prerequisite settles: the dependent is pulled next, and its pull says in
    one line that what it waited for was discarded, and why."""
    async with _client(transport, tmp_path) as client:
        await ok(client, "9plan_session_create")
        a = (await ok(client, "9plan_queue_add", goal="Try the old API", **PLAN))["plan_id"]
        b = (await ok(client, "9plan_queue_add", goal="Use it", after=[a], **PLAN))["plan_id"]
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_discard", reason="the old API is gone")
        pulled = await ok(client, "9plan_queue_pull")
        assert pulled["plan_id"] == b
        line = f"Plan {a}, which this plan waited for, was discarded: the old API is gone"
        assert line in pulled["notices"]
        assert pulled["prerequisites"][0]["status"] == "discarded"


@TRANSPORTS
async def test_add_many_adds_in_order_all_or_nothing(transport: str, tmp_path: Path):
    """`9plan_queue_add_many` at the front gives [A, B, C, ...] (three single front adds
    give [C, B, A]); an invalid third item adds nothing and names plans[2]; a retried
    request_id adds nothing twice."""
    async with _client(transport, tmp_path) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        old = (await ok(client, "9plan_queue_add", goal="Old", **PLAN))["plan_id"]
        plans = [
            {**PLAN, "goal": "A", "key": "a"},
            {**PLAN, "goal": "B", "after": ["a"]},
            {**PLAN, "goal": "C"},
        ]
        added = await ok(
            client, "9plan_queue_add_many", plans=plans, position="front", request_id="split"
        )
        ids = [item["plan_id"] for item in added["plans"]]
        assert [item["key"] for item in added["plans"]] == ["a", None, None]
        assert added["plans"][1]["waiting_for"] == [ids[0]]
        again = await ok(
            client, "9plan_queue_add_many", plans=plans, position="front", request_id="split"
        )
        assert [item["plan_id"] for item in again["plans"]] == ids
        bad = [{**PLAN, "goal": "D"}, {**PLAN, "goal": "E"}, {**PLAN, "goal": "  "}]
        kind, body = await error(client, "9plan_queue_add_many", session_name=name, plans=bad)
        assert kind == "VALIDATION_ERROR"
        assert "plans[2].goal: must not be blank" in body
        state = await ok(client, "9plan_session_resume", session_name=name)
        assert [item["id"] for item in state["queue"]] == [*ids, old]
