"""Plans that wait for others, in a real Chromium against a real `nineplan ui`, beside a real
agent (a stdio server driven by the SDK client): waiting cards and their chips on the live
board, and the graph page (DESIGN §11, "People") at desktop and phone widths, from the
keyboard, under axe-core, and live."""

import json
from pathlib import Path

import pytest
from axe_playwright_python.async_playwright import Axe
from mcp import Client
from playwright.async_api import Browser, Page, ViewportSize

from tests.fakes import PLAN
from tests.integration.servers import stdio_server
from tests.mcp_helpers import ok

WAIT_MS = 5000
DESKTOP = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)
#: The axe-core impacts a page must not have.
SERIOUS = {"serious", "critical"}
#: A chain this long is wider than a desktop window (one column of boxes per plan).
CHAIN = 6
SCRIPT = "<script>window.pwned = 'script'</script>"


async def new_session(agent: Client) -> str:
    return str((await ok(agent, "9plan_session_create", task_description="t"))["session_name"])


async def add(agent: Client, goal: str, after: list[str] | None = None) -> str:
    placed = await ok(agent, "9plan_queue_add", **{**PLAN, "goal": goal}, after=after or [])
    return str(placed["plan_id"])


async def chain(agent: Client, length: int, first: list[str] | None = None) -> list[str]:
    """`length` plans, each after the one before (the first after `first`): one column each
    in the graph."""
    ids: list[str] = []
    for number in range(length):
        ids.append(await add(agent, f"step {number}", ids[-1:] or first))
    return ids


async def live(page: Page) -> None:
    await page.wait_for_selector("[data-testid=live-status][data-state=open]", timeout=WAIT_MS)


async def test_a_waiting_card_shows_its_chips_and_turns_ready_live(
    tmp_path: Path, ui: str, page: Page
):
    """A, then B after A: B's card is `data-waiting="true"` with a chip "waits for A" that
    links to A's page, A's card `false`; once the agent pulls and completes A, the open board
    shows B ready (`false`, no chip) without a reload."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent)
        a = await add(agent, "first")
        b = await add(agent, "second", [a])
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        await page.evaluate("window.notReloaded = true")
        card = page.locator(f"[data-testid=queue] > [data-plan-id='{b}']")
        assert await card.get_attribute("data-waiting") == "true"
        first = page.locator(f"[data-testid=queue] > [data-plan-id='{a}']")
        assert await first.get_attribute("data-waiting") == "false"
        chip = card.locator("[data-testid=waits-for]")
        assert await chip.count() == 1
        assert await chip.inner_text() == f"waits for {a}"
        assert await chip.get_attribute("href") == f"/sessions/{name}/plans/{a}"
        await ok(agent, "9plan_queue_pull")
        await ok(agent, "9plan_plan_complete", outcome="first is done")
        ready = f"[data-testid=queue] > [data-plan-id='{b}'][data-waiting=false]"
        await page.wait_for_selector(ready, timeout=WAIT_MS)
        assert await page.locator(ready).locator("[data-testid=waits-for]").count() == 0
        assert await page.evaluate("window.notReloaded") is True
        await page.locator(ready).locator("a.goal").click()
        plan = page.locator(f"[data-testid=plan][data-plan-id='{b}']")
        await plan.wait_for(timeout=WAIT_MS)
        waited = page.locator("[data-testid=waits-for-list] a")
        assert await waited.get_attribute("href") == f"/sessions/{name}/plans/{a}"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280x800", "390x844"])
async def test_the_graph_page_draws_boxes_and_arrows_and_only_its_drawing_scrolls(
    tmp_path: Path, ui: str, browser: Browser, viewport: ViewportSize
):
    """A chain of six plans (wider than either window) and a completed plan it names draws
    seven boxes and six arrows; the page itself does not scroll sideways while the drawing's
    own `.graph-scroll` container does; the session page links to the graph; a `<script>`
    goal is text."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent)
        done = await add(agent, SCRIPT)
        await ok(agent, "9plan_queue_pull")
        await ok(agent, "9plan_plan_complete", outcome="ok")
        await chain(agent, CHAIN, [done])
    context = await browser.new_context(viewport=viewport)
    page = await context.new_page()
    try:
        await page.goto(f"{ui}/sessions/{name}")
        await page.locator("[data-testid=graph-link]").click()
        await page.wait_for_url(f"{ui}/sessions/{name}/graph")
        graph = page.locator("[data-testid=graph]")
        boxes = graph.locator("a[data-plan-id]")
        assert await boxes.count() == CHAIN + 1
        assert await graph.locator("path.edge").count() == CHAIN
        assert await boxes.last.get_attribute("data-settled") == "true"
        assert await boxes.last.get_attribute("data-plan-id") == done
        assert await page.evaluate("window.pwned") is None
        page_width = await page.evaluate(
            "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
        )
        assert page_width[0] <= page_width[1] <= viewport["width"], page_width
        scroll = await page.locator(".graph-scroll").evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert scroll[0] > scroll[1], scroll
        assert await boxes.first.is_visible()
    finally:
        await context.close()


async def test_tab_reaches_a_box_and_enter_opens_its_plan(tmp_path: Path, ui: str, page: Page):
    """From the graph page's load, Tab reaches a box's link (within 20 stops, the skip link
    and the scroll region among them) and Enter opens that plan's page."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent)
        ids = await chain(agent, 2)
    await page.goto(f"{ui}/sessions/{name}/graph")
    reached = None
    for _ in range(20):
        await page.keyboard.press("Tab")
        reached = await page.evaluate(
            "() => { const e = document.activeElement;"
            " return e && e.closest('[data-testid=graph] a[data-plan-id]')"
            " ? e.closest('a').dataset.planId : null; }"
        )
        if reached:
            break
    assert reached == ids[0]
    await page.keyboard.press("Enter")
    plan = page.locator(f"[data-testid=plan][data-plan-id='{ids[0]}']")
    await plan.wait_for(timeout=WAIT_MS)
    assert page.url == f"{ui}/sessions/{name}/plans/{ids[0]}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_axe_finds_no_serious_violation_on_the_graph_page(
    tmp_path: Path, ui: str, browser: Browser, scheme: str
):
    """axe-core reports no serious or critical violation on a graph page with active,
    queued, waiting and completed boxes, nor on the board showing a waiting card, light and
    dark (the CSP bypassed: axe injects a script)."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent)
        done = await add(agent, "done")
        await ok(agent, "9plan_queue_pull")
        await ok(agent, "9plan_plan_complete", outcome="ok")
        held = await add(agent, "held")
        await ok(agent, "9plan_queue_pull", worker="w1")
        await add(agent, "waits", [held, done])
        await add(agent, "free", [done])
    context = await browser.new_context(bypass_csp=True, color_scheme=scheme)  # type: ignore[arg-type]
    page = await context.new_page()
    axe = Axe()
    found = {}
    try:
        for path in (f"/sessions/{name}/graph", f"/sessions/{name}"):
            await page.goto(ui + path)
            results = await axe.run(page)
            bad = [v for v in results.response["violations"] if v["impact"] in SERIOUS]
            if bad:
                found[path] = [
                    {
                        "id": v["id"],
                        "impact": v["impact"],
                        "help": v["help"],
                        "nodes": [node["target"] for node in v["nodes"]][:5],
                    }
                    for v in bad
                ]
    finally:
        await context.close()
    assert found == {}, json.dumps(found, indent=1)


async def test_the_graph_turns_a_waiting_box_ready_live(tmp_path: Path, ui: str, page: Page):
    """B after A: on the open graph page B's box is waiting and A's queued; when the agent
    pulls A, A's box turns active with its worker, and when it completes A, A's box is
    settled and B's ready, without a reload."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent)
        a = await add(agent, "first")
        b = await add(agent, "second", [a])
        await page.goto(f"{ui}/sessions/{name}/graph")
        await live(page)
        await page.evaluate("window.notReloaded = true")
        box = "[data-testid=graph] a[data-plan-id='{}']"
        assert await page.locator(box.format(b)).get_attribute("data-waiting") == "true"
        assert await page.locator(box.format(a)).get_attribute("data-status") == "queued"
        await ok(agent, "9plan_queue_pull", worker="w1")
        await page.wait_for_selector(
            box.format(a) + "[data-status=active][data-worker=w1]", timeout=WAIT_MS
        )
        await ok(agent, "9plan_plan_complete", worker="w1", outcome="done")
        await page.wait_for_selector(box.format(b) + "[data-waiting=false]", timeout=WAIT_MS)
        assert await page.locator(box.format(a)).get_attribute("data-settled") == "true"
        assert await page.evaluate("window.notReloaded") is True
