"""What the model sees (DESIGN §4): Claude Code and Codex hand the model only a success
result's structured content, so every session-scoped result carries `session_name` and
`notices`, and its text is the breadcrumb, one renderer of the fields, then the notices word
for word. Driven through the server `nineplan serve` builds, with the SDK client."""

from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.types import CallToolResult

from nineplan_adapters.entrypoints.mcp.render import RENDERERS, text_of
from tests.integration.servers import memory_client
from tests.mcp_helpers import text

PLAN = {"context": "A queue agents share", "approach": "Do it", "success_criteria": "Done"}
#: How the lines an agent must act on begin: never produced by a renderer, always notices.
ADVICE = (
    "Keep notes",
    "Next: ",
    "Pull the next plan",
    "Continue the active plan",
    "The queue is empty",
    "Remember this name",
    "Took over plan",
)
#: A lease of 1.2 s: a worker that falls silent goes stale within the test.
SHORT_LEASE = "0.02"


def _advice(line: str) -> bool:
    """Whether `line` is one an agent must act on, which only notices may say (a state's
    `Active plan:` field line has no time; the reminder has)."""
    if line.startswith("Active plan: "):
        return "(pulled " in line
    return line.startswith(ADVICE) or "is stale: worker" in line


class Walk:
    """Calls tools and keeps every success result, for the checks at the end."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.results: list[tuple[str, CallToolResult]] = []

    async def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(f"9plan_{tool}", arguments)
        assert not result.is_error, text(result)
        assert result.structured_content is not None
        self.results.append((tool, result))
        return dict(result.structured_content)

    def notices(self, tool: str) -> list[str]:
        """Every notice the results of `tool` carried, in order."""
        return [
            line
            for called, result in self.results
            if called == tool
            for line in (result.structured_content or {})["notices"]
        ]


async def _walk_every_tool(client: Client) -> tuple[str, Walk]:
    """A session with a lead and three workers: adds (one of a batch), pulls (one of them by
    a worker that then falls silent, one a take-over), defers, a completion with an unmet
    verdict (its follow-up), a discard, searches, gets, validation, state, resume and the
    session list."""
    walk = Walk(client)
    name = (await walk.call("session_create", task_description="ship it"))["session_name"]
    ids = [(await walk.call("queue_add", goal=f"Plan {n}", **PLAN))["plan_id"] for n in range(6)]
    await walk.call("queue_pull", worker="silent")
    await anyio.sleep(1.5)  # the lease of `silent` lapses
    await walk.call("queue_pull", session_name=name, worker="main")
    await walk.call("plan_defer", session_name=name, worker="main", reason="blocked")
    await walk.call("queue_pull", session_name=name, worker="main")
    await walk.call("queue_add", session_name=name, worker="main", goal="Later", **PLAN)
    await walk.call(
        "plan_complete",
        session_name=name,
        worker="main",
        outcome="made users.sql",
        verdicts=[{"criterion": 1, "status": "unmet", "evidence": "no test for it yet"}],
    )
    await walk.call(
        "queue_add_many", session_name=name, worker="main", plans=[{**PLAN, "goal": "Split"}]
    )
    await walk.call("queue_pull", session_name=name, worker="w2", take_over=ids[0])
    await walk.call("history_search", session_name=name, worker="w2", query="users")
    await walk.call("history_search", session_name=name, worker="w2", query="nothing matches")
    await walk.call("history_get", session_name=name, worker="w2", plan_id=ids[2])
    await walk.call("history_get", session_name=name, worker="main", plan_id=ids[0])
    await walk.call("plan_discard", session_name=name, worker="w2", reason="obsolete")
    await walk.call("queue_pull", session_name=name, worker="w3")
    await walk.call("admin_validate", session_name=name)
    await walk.call("admin_state", session_name=name, worker="main")
    await walk.call("session_resume", session_name=name, worker="main")
    await walk.call("admin_sessions")
    return name, walk


async def test_every_result_is_its_fields_then_its_notices(tmp_path: Path):
    """Every tool's success result: structured content with `session_name` (but the session
    list's, which names no session) and `notices`, and a text that is exactly the breadcrumb,
    the tool's renderer of that structured content, then the notices; so every line the
    renderer did not produce is a notice, and a client that hands the model only the
    structured content loses no line; no renderer says what only a notice may (the next step,
    the notes hint, a stale line). The notices hold the next step, the notes hint, the
    stale line, the take-over and the reminder in the text's words."""
    async with memory_client(tmp_path, lease_minutes=SHORT_LEASE) as client:
        name, walk = await _walk_every_tool(client)
    assert {tool for tool, _ in walk.results} == set(RENDERERS)
    for tool, result in walk.results:
        view = result.structured_content or {}
        advice = [line for line in RENDERERS[tool](view).splitlines() if _advice(line)]
        assert not advice, tool
        if tool == "admin_sessions":  # the breadcrumb names the client's current session
            assert not {"session_name", "notices"} & view.keys()
            assert view["current_session"] == name
            expected = text_of(name, RENDERERS[tool](view), [])
        else:
            assert view["session_name"] == name, tool
            expected = text_of(name, RENDERERS[tool](view), view["notices"])
        assert text(result) == expected, tool
    pulled = walk.notices("queue_pull")
    assert "Keep notes in its # Notes section (or pass notes when you finish)." in pulled
    assert any(line.startswith("Plan ") and "is stale: worker silent" in line for line in pulled)
    assert any(line.startswith("Took over plan ") for line in pulled)
    assert any(line.startswith("Next: ") for line in walk.notices("plan_complete"))
    assert any(line.startswith("Active plan: ") for line in walk.notices("history_search"))
    assert walk.notices("admin_state") == ["Pull the next plan with 9plan_queue_pull."]
