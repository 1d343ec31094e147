"""A person's Release button in a real Chromium against a real `nineplan ui`, beside a real
agent (a stdio server driven by the SDK client), with JavaScript on and off."""

import json
from pathlib import Path

import pytest
from mcp import Client
from playwright.async_api import Browser

from tests.fakes import PLAN
from tests.integration.servers import run_nineplan, stdio_server
from tests.mcp_helpers import error, ok

WAIT_MS = 5000


@pytest.mark.parametrize("javascript", [True, False], ids=["with-js", "without-js"])
async def test_release_puts_a_workers_plan_back_at_the_front(
    tmp_path: Path, ui: str, browser: Browser, javascript: bool
):
    """The page lists each active plan with its worker and a Release button; pressing it
    (a POST with the CSRF token) puts that plan back at the front of the queue with its
    file's notes read in, journalled `plan_released` by a person; the worker's next call is
    told a person released it; the other worker's plan stays its own."""
    context = await browser.new_context(java_script_enabled=javascript)
    page = await context.new_page()
    try:
        async with Client(stdio_server(tmp_path)) as agent:
            name = (await ok(agent, "9plan_session_create", task_description="t"))["session_name"]
            for goal in ("A", "B", "C"):
                await ok(agent, "9plan_queue_add", **{**PLAN, "goal": goal})
            a = await ok(agent, "9plan_queue_pull", worker="w1")
            b = await ok(agent, "9plan_queue_pull", worker="w2")
            path = Path(a["plan_path"])
            path.write_text(path.read_text() + "\nw1: started on it\n")
            await page.goto(f"{ui}/sessions/{name}")
            if javascript:
                await page.wait_for_selector(
                    "[data-testid=live-status][data-state=open]", timeout=WAIT_MS
                )
            held = page.locator("[data-testid=held]")
            assert await held.locator("[data-held]").count() == 2
            row = held.locator(f"[data-held='{a['plan_id']}']")
            assert await row.get_attribute("data-worker") == "w1"
            async with page.expect_navigation():
                await row.get_by_role("button", name="Release").click()
            await page.locator(f"[data-testid=queue] [data-plan-id='{a['plan_id']}']").wait_for(
                timeout=WAIT_MS
            )
            state = await ok(agent, "9plan_admin_state", session_name=name)
            assert state["queue"][0]["id"] == a["plan_id"]
            assert [(p["id"], p["worker"]) for p in state["active_plans"]] == [(b["plan_id"], "w2")]
            assert await page.locator(f"[data-held='{a['plan_id']}']").count() == 0
            kind, body = await error(agent, "9plan_plan_complete", worker="w1", outcome="done")
            assert kind == "NO_ACTIVE_PLAN"
            assert "was released back to the queue by a person" in body
            again = await ok(agent, "9plan_queue_pull", worker="w3")
            assert again["plan_id"] == a["plan_id"]
            assert "w1: started on it" in again["plan_text"]
            validation = await ok(agent, "9plan_admin_validate", session_name=name)
            assert validation["valid"], validation["issues"]
        log = run_nineplan(tmp_path, "log", name, "--json")
        released = [
            e for e in map(json.loads, log.stdout.splitlines()) if e["kind"] == "plan_released"
        ]
        assert [(e["plan_id"], e["actor"], e["detail"]["worker"]) for e in released] == [
            (a["plan_id"], "person", "w1")
        ]
    finally:
        await context.close()
