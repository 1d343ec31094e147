"""The session page as a board (DESIGN §8b) in a real Chromium against a real `nineplan ui`,
beside a real agent (a stdio server driven by the SDK client): columns and cards against the
session's state, badges, relative times, wrapping at phone width, light and dark."""

import datetime as dt
from pathlib import Path

import anyio
import pytest
from mcp import Client
from playwright.async_api import Browser, Page

from tests.fakes import PLAN
from tests.integration.servers import run_nineplan, spawned_ui, stdio_server
from tests.mcp_helpers import ok

WAIT_MS = 5000
#: Luminance (0-255) above which a colour reads as light, below which as dark.
LIGHT, DARK = 150, 80
SCRIPT = "<script>window.pwned = 'script'</script>"


async def new_session(agent: Client, *goals: str) -> str:
    name = str((await ok(agent, "9plan_session_create", task_description="t"))["session_name"])
    for goal in goals:
        await ok(agent, "9plan_queue_add", **{**PLAN, "goal": goal})
    return name


async def card_ids(page: Page, column: str) -> list[str]:
    """The plan ids of a column's cards, top to bottom."""
    cards = page.locator(f"[data-testid=column-{column}] [data-testid=card]")
    return [str(await card.get_attribute("data-plan-id")) for card in await cards.all()]


async def live(page: Page) -> None:
    await page.wait_for_selector("[data-testid=live-status][data-state=open]", timeout=WAIT_MS)


async def test_the_boards_columns_and_cards_are_the_sessions_state(
    tmp_path: Path, ui: str, page: Page
):
    """Queue cards are the queue in pull order (the `queue` hook too), Active has one card per
    worker with `data-worker`, Done the completed plans newest first with their outcome's first
    line, and the folded list the discarded and dropped plans with reason and who; a goal of
    `<script>` is text in every column and runs nothing; a card's goal opens the plan page."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, SCRIPT, "second", "third", "fourth", "fifth", "sixth")
        for outcome in ("first outcome line\nmore detail", "made <b>bold</b>"):
            await ok(agent, "9plan_queue_pull")
            await ok(agent, "9plan_plan_complete", outcome=outcome)
        await ok(agent, "9plan_queue_pull", worker="w1")
        await ok(agent, "9plan_plan_discard", worker="w1", reason="not needed <i>")
        held = await ok(agent, "9plan_queue_pull", worker="w2")
        state = await ok(agent, "9plan_admin_state", session_name=name)
        dropped = state["queue"][0]["id"]
        assert (
            run_nineplan(tmp_path, "drop", name, dropped, "--reason", "superseded").returncode == 0
        )
        state = await ok(agent, "9plan_admin_state", session_name=name)
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        queued = [entry["id"] for entry in state["queue"]]
        assert await card_ids(page, "queue") == queued
        hook = page.locator("[data-testid=queue] [data-plan-id]")
        assert [await item.get_attribute("data-plan-id") for item in await hook.all()] == queued
        assert await card_ids(page, "active") == [held["plan_id"]]
        active = page.locator("[data-testid=column-active] [data-testid=card]")
        assert await active.get_attribute("data-worker") == "w2"
        done = page.locator("[data-testid=column-done] [data-testid=card]")
        assert await done.count() == 2
        outcomes = await page.locator(
            "[data-testid=column-done] [data-testid=outcome]"
        ).all_inner_texts()
        assert outcomes == ["made <b>bold</b>", "first outcome line"]
        assert SCRIPT in await done.nth(1).inner_text()
        folded = page.locator("[data-testid=discarded]")
        assert await folded.get_attribute("open") is None
        await folded.locator("summary").click()
        items = await folded.locator("li").all_inner_texts()
        assert len(items) == 2
        assert "superseded" in items[0]
        assert "dropped by a person" in items[0]
        assert "not needed <i>" in items[1]
        assert "discarded by worker w1" in items[1]
        assert (
            await page.locator("[data-testid=column-done] i, [data-testid=column-done] b").count()
            == 0
        )
        assert await page.evaluate("window.pwned") is None
        first = await done.nth(1).get_attribute("data-plan-id")
        await done.nth(1).locator("a.goal").click()
        plan = page.locator(f"[data-testid=plan][data-plan-id='{first}']")
        await plan.wait_for(timeout=WAIT_MS)
        assert SCRIPT in await plan.inner_text()
        assert await page.evaluate("window.pwned") is None


async def test_cards_move_between_columns_live(tmp_path: Path, ui: str, page: Page):
    """The agent's pull moves a card from Queue to Active and its complete moves it to Done,
    on the open page without a reload; an opened folded list stays open across the swaps."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "one", "two", "three")
        await ok(agent, "9plan_queue_pull")
        await ok(agent, "9plan_plan_discard", reason="wrong idea")
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        await page.evaluate("window.notReloaded = true")
        await page.locator("[data-testid=discarded] summary").click()
        pulled = await ok(agent, "9plan_queue_pull")
        active = (
            f"[data-testid=column-active] [data-testid=card][data-plan-id='{pulled['plan_id']}']"
        )
        await page.wait_for_selector(active, timeout=WAIT_MS)
        assert pulled["plan_id"] not in await card_ids(page, "queue")
        await ok(agent, "9plan_plan_complete", outcome="all done\nsecond line")
        done = f"[data-testid=column-done] [data-testid=card][data-plan-id='{pulled['plan_id']}']"
        await page.wait_for_selector(done, timeout=WAIT_MS)
        assert await page.locator(done).locator("[data-testid=outcome]").inner_text() == "all done"
        assert await page.locator(active).count() == 0
        assert await page.locator("[data-testid=discarded]").get_attribute("open") is not None
        assert await page.evaluate("window.notReloaded") is True


@pytest.mark.serial
async def test_stale_and_stuck_badges(tmp_path: Path, page: Page):
    """With NINEPLAN_STUCK_DEFERS=2 a plan deferred twice carries a stuck badge on its queue
    card and, once pulled, on its active card; with a 3 s lease (NINEPLAN_LEASE_MINUTES=0.05)
    worker `slow`'s card gets a stale badge once its lease lapses, `main`'s live one none."""
    env = {"NINEPLAN_LEASE_MINUTES": "0.05", "NINEPLAN_STUCK_DEFERS": "2"}
    async with (
        spawned_ui(tmp_path, env=env) as ui,
        Client(stdio_server(tmp_path, **env)) as agent,
    ):
        name = await new_session(agent, "slips", "fresh", "other")
        slips = (await ok(agent, "9plan_queue_pull"))["plan_id"]
        for _ in range(2):
            await ok(agent, "9plan_plan_defer", reason="blocked", position="front")
            assert (await ok(agent, "9plan_queue_pull"))["plan_id"] == slips
        await ok(agent, "9plan_plan_defer", reason="blocked", position="front")
        await page.goto(f"{ui}/sessions/{name}")
        cards = page.locator("[data-testid=column-queue] [data-testid=card]")
        assert await cards.evaluate_all("cs => cs.map(c => c.dataset.planId)") == (
            [slips, *[entry["id"] for entry in (await ok(agent, "9plan_admin_state"))["queue"][1:]]]
        )
        assert await cards.first.locator("[data-testid=stuck-mark]").inner_text() == "stuck"
        assert await cards.first.locator("[data-testid=defers]").inner_text() == "deferred 3 times"
        assert (
            await cards.nth(1).locator("[data-testid=stuck-mark], [data-testid=defers]").count()
            == 0
        )
        theirs = await ok(agent, "9plan_queue_pull", session_name=name, worker="slow")
        assert theirs["plan_id"] == slips
        with anyio.fail_after(30):
            while not (await ok(agent, "9plan_admin_state"))["active_plans"][0]["stale"]:
                await anyio.sleep(0.2)
        mine = await ok(agent, "9plan_queue_pull", session_name=name, worker="main")
        await page.goto(f"{ui}/sessions/{name}")
        column = page.locator("[data-testid=column-active]")
        slow = column.locator(f"[data-testid=card][data-plan-id='{theirs['plan_id']}']")
        assert await slow.get_attribute("data-worker") == "slow"
        assert await slow.locator("[data-testid=stale-mark]").inner_text() == "stale"
        main = column.locator(f"[data-testid=card][data-plan-id='{mine['plan_id']}']")
        assert await main.locator("[data-testid=stale-mark]").count() == 0
        assert await slow.locator("[data-testid=stuck-mark]").inner_text() == "stuck"
        assert await main.locator("[data-testid=stuck-mark]").count() == 0


async def test_times_are_relative_with_the_utc_time_on_hover(tmp_path: Path, ui: str, page: Page):
    """Held-for on an active card, a done card's time and each journal entry are `<time>`
    elements whose `datetime` and `title` are the same UTC time and whose text is relative."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "one", "two")
        await ok(agent, "9plan_queue_pull")
        await ok(agent, "9plan_plan_complete", outcome="done")
        await ok(agent, "9plan_queue_pull")
    before = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    await page.goto(f"{ui}/sessions/{name}")
    times = {
        "held": "[data-testid=column-active] [data-testid=card] time",
        "done": "[data-testid=column-done] [data-testid=card] time",
        "journal": "[data-testid=journal] [data-seq] time",
    }
    for where, selector in times.items():
        found = page.locator(selector)
        assert await found.count() >= 1, where
        for time in await found.all():
            stamp = str(await time.get_attribute("datetime"))
            assert await time.get_attribute("title") == stamp, where
            at = dt.datetime.fromisoformat(stamp)
            assert before < at <= dt.datetime.now(dt.UTC), where
            text = await time.inner_text()
            assert text == "under a minute" + ("" if where == "held" else " ago"), where


async def test_no_horizontal_scrolling_on_a_phone(tmp_path: Path, ui: str, browser: Browser):
    """At 390 by 844, a session of 130 queued plans, one with a 300-character unbroken goal,
    an active and a completed plan with such goals too, scrolls only vertically; so does the
    plan page of the long goal."""
    long_goal = "x" * 300
    context = await browser.new_context(viewport={"width": 390, "height": 844})
    page = await context.new_page()
    try:
        async with Client(stdio_server(tmp_path)) as agent:
            name = await new_session(agent, long_goal, long_goal)
            for number in range(130):
                goal = long_goal if number == 7 else f"plan number {number}"
                await ok(agent, "9plan_queue_add", **{**PLAN, "goal": goal, "context": "y" * 300})
            await ok(agent, "9plan_queue_pull")
            await ok(agent, "9plan_plan_complete", outcome="z" * 300)
            pulled = await ok(agent, "9plan_queue_pull")
        await page.goto(f"{ui}/sessions/{name}")
        assert await page.locator("[data-testid=column-queue] [data-testid=card]").count() == 130
        for path in (f"/sessions/{name}", f"/sessions/{name}/plans/{pulled['plan_id']}"):
            await page.goto(f"{ui}{path}")
            width = await page.evaluate(
                "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
            )
            assert width[0] <= width[1], (path, width)
    finally:
        await context.close()


async def test_light_and_dark_follow_the_colour_scheme(tmp_path: Path, ui: str, browser: Browser):
    """With prefers-color-scheme light the page is dark text on a light background, with dark
    the reverse; cards follow."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "one")
    colours = {}
    for scheme in ("light", "dark"):
        context = await browser.new_context(color_scheme=scheme)
        page = await context.new_page()
        try:
            await page.goto(f"{ui}/sessions/{name}")
            colours[scheme] = await page.evaluate(
                """() => [document.body, document.querySelector('[data-testid=card]')].map(
                    e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color])"""
            )
        finally:
            await context.close()

    def luminance(colour: str) -> float:
        red, green, blue = (int(part) for part in colour[colour.index("(") + 1 : -1].split(",")[:3])
        return 0.2126 * red + 0.7152 * green + 0.0722 * blue

    for background, text in colours["light"]:
        assert luminance(background) > LIGHT
        assert luminance(text) < DARK
    for background, text in colours["dark"]:
        assert luminance(background) < DARK
        assert luminance(text) > LIGHT


async def test_every_workers_notes_grow_live_on_its_card(tmp_path: Path, ui: str, page: Page):
    """Notes written into the file of a plan that worker w1 holds (not `main`) appear in that
    card's file text on the open page, without a reload; the other worker's card is unchanged."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "one", "two")
        first = await ok(agent, "9plan_queue_pull", worker="w1")
        second = await ok(agent, "9plan_queue_pull", worker="w2")
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        await page.evaluate("window.notReloaded = true")
        with Path(first["plan_path"]).open("a", encoding="utf-8") as file:
            file.write("\nw1 found the <b>old</b> schema\n")
        card = "[data-testid=column-active] [data-testid=card][data-plan-id='{}']"
        notes = page.locator(card.format(first["plan_id"])).locator("[data-testid=plan-file]")
        await notes.get_by_text("w1 found the <b>old</b> schema").wait_for(timeout=WAIT_MS)
        other = page.locator(card.format(second["plan_id"])).locator("[data-testid=plan-file]")
        assert "w1 found" not in await other.inner_text()
        assert await page.evaluate("window.notReloaded") is True
