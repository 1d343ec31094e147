"""Steering a queued plan from the page in a real Chromium against a real `nineplan ui`, with
JavaScript off: a move before another plan and an edit reach the agent's next pull; a refused
edit or move keeps what was typed, with the reason beside the field; hostile text in the edit
form stays text."""

from pathlib import Path

from mcp import Client
from playwright.async_api import Browser, BrowserContext, Page

from tests.browser.test_web_view import new_session, queue_ids
from tests.fakes import PLAN
from tests.integration.servers import stdio_server
from tests.mcp_helpers import ok

WAIT_MS = 5000


async def without_javascript(browser: Browser) -> tuple[BrowserContext, Page]:
    context = await browser.new_context(java_script_enabled=False)
    return context, await context.new_page()


async def test_move_before_reaches_the_agents_next_pulls(tmp_path: Path, ui: str, browser: Browser):
    """The last plan moved before the second through its "Move before" field (no script) is
    pulled second; a refused move (before itself) comes back as the session page with the
    id typed and the reason beside that field, the queue unchanged."""
    context, page = await without_javascript(browser)
    try:
        async with Client(stdio_server(tmp_path)) as agent:
            name = await new_session(agent, "t", "A", "B", "C", "D")
            ids = [entry["id"] for entry in (await ok(agent, "9plan_admin_state"))["queue"]]
            await page.goto(f"{ui}/sessions/{name}")
            row = page.locator(f"[data-testid=queue] [data-plan-id='{ids[3]}']")
            await row.get_by_label("Move before").fill(ids[1])
            async with page.expect_navigation():
                await row.locator("[data-action=before]").click()
            assert page.url == f"{ui}/sessions/{name}"
            assert await queue_ids(page) == [ids[0], ids[3], ids[1], ids[2]]
            row = page.locator(f"[data-testid=queue] [data-plan-id='{ids[2]}']")
            await row.get_by_label("Move before").fill(ids[2])
            async with page.expect_navigation() as navigation:
                await row.locator("[data-action=before]").click()
            response = await navigation.value
            assert response is not None
            assert response.status == 400
            row = page.locator(f"[data-testid=queue] [data-plan-id='{ids[2]}']")
            field = row.get_by_label("Move before")
            assert await field.input_value() == ids[2]
            reason = row.locator("[data-testid=field-error][data-field=before]")
            assert "before: is the plan being moved" in await reason.inner_text()
            assert await field.get_attribute("aria-describedby") == await reason.get_attribute("id")
            pulled = [
                (await ok(agent, "9plan_queue_pull", worker=worker))["plan_id"]
                for worker in ("w1", "w2", "w3", "w4")
            ]
    finally:
        await context.close()
    assert pulled == [ids[0], ids[3], ids[1], ids[2]]


async def test_an_edit_reaches_the_pulled_plan_text(tmp_path: Path, ui: str, browser: Browser):
    """A queued plan edited through its Edit link's form (no script) is pulled with the new
    text; the session page is where the form leads back to."""
    context, page = await without_javascript(browser)
    try:
        async with Client(stdio_server(tmp_path)) as agent:
            name = await new_session(agent, "t", "old goal")
            [plan_id] = [e["id"] for e in (await ok(agent, "9plan_admin_state"))["queue"]]
            await page.goto(f"{ui}/sessions/{name}")
            await page.locator(f"[data-plan-id='{plan_id}'] [data-action=edit]").click()
            await page.wait_for_url(f"{ui}/sessions/{name}/plans/{plan_id}/edit")
            form = page.locator("[data-testid=edit-plan]")
            goal = form.get_by_label("Goal", exact=True)
            assert await goal.input_value() == "old goal"
            assert await form.locator("[name=context]").input_value() == PLAN["context"]
            await goal.fill("the goal a person wrote")
            await form.locator("[name=approach]").fill("step one\nstep two")
            async with page.expect_navigation():
                await form.get_by_role("button", name="Save plan").click()
            assert page.url == f"{ui}/sessions/{name}"
            pulled = await ok(agent, "9plan_queue_pull")
    finally:
        await context.close()
    assert pulled["goal"] == "the goal a person wrote"
    assert "# Approach\nstep one\nstep two\n" in pulled["plan_text"]


async def test_a_refused_edit_keeps_the_typed_text(tmp_path: Path, ui: str, browser: Browser):
    """A blank goal (spaces pass the browser's `required`) comes back as the edit form with
    the rest as typed and "goal: must not be blank" beside the goal; a stale revision (the
    plan edited in another tab) comes back naming what changed; nothing is saved."""
    context, page = await without_javascript(browser)
    try:
        async with Client(stdio_server(tmp_path)) as agent:
            name = await new_session(agent, "t", "A")
            [plan_id] = [e["id"] for e in (await ok(agent, "9plan_admin_state"))["queue"]]
            edit_url = f"{ui}/sessions/{name}/plans/{plan_id}/edit"
            await page.goto(edit_url)
            form = page.locator("[data-testid=edit-plan]")
            await form.get_by_label("Goal", exact=True).fill("   ")
            await form.locator("[name=context]").fill("a long context typed <b>here</b>")
            async with page.expect_navigation() as navigation:
                await form.get_by_role("button", name="Save plan").click()
            response = await navigation.value
            assert response is not None
            assert response.status == 400
            form = page.locator("[data-testid=edit-plan]")
            assert await form.locator("[name=context]").input_value() == (
                "a long context typed <b>here</b>"
            )
            reason = form.locator("[data-testid=field-error][data-field=goal]")
            assert await reason.locator("[data-testid=reason]").inner_text() == (
                "goal: must not be blank"
            )
            other = await context.new_page()
            await other.goto(edit_url)
            await other.locator("[name=outputs]").fill("a report, from the other tab")
            async with other.expect_navigation():
                await other.get_by_role("button", name="Save plan").click()
            await form.get_by_label("Goal", exact=True).fill("mine")
            async with page.expect_navigation():
                await form.get_by_role("button", name="Save plan").click()
            said = page.locator("[data-testid=form-error] [data-testid=reason]")
            assert (
                await said.inner_text() == f"Plan {plan_id} changed since you opened it: outputs."
            )
            assert await page.locator("[name=goal]").input_value() == "mine"
            state = await ok(agent, "9plan_admin_state")
    finally:
        await context.close()
    assert [entry["goal"] for entry in state["queue"]] == ["A"]


async def test_hostile_text_is_inert_in_the_edit_form(tmp_path: Path, ui: str, page: Page):
    """A goal of <script> and a context of <img onerror> show as the fields' text in the
    edit form and run nothing (JavaScript on, so a script would run if it were markup)."""
    script = "<script>window.pwned = 'script'</script>"
    image = "<img src=x onerror=\"window.pwned = 'img'\">"
    async with Client(stdio_server(tmp_path)) as agent:
        await new_session(agent, "t")
        added = await ok(agent, "9plan_queue_add", **{**PLAN, "goal": script, "context": image})
        name = (await ok(agent, "9plan_admin_state"))["session_name"]
    await page.goto(f"{ui}/sessions/{name}/plans/{added['plan_id']}/edit")
    form = page.locator("[data-testid=edit-plan]")
    assert await form.locator("[name=goal]").input_value() == script
    assert await form.locator("[name=context]").input_value() == image
    assert await page.locator("img[src=x]").count() == 0
    assert await page.evaluate("window.pwned") is None
