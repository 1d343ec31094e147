"""The web view at a glance, in Chromium: the chart against the journal, the session list's order,
filter and phone width, the favicon, and an axe-core scan of the three kinds of page."""

import collections
import datetime as dt
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from axe_playwright_python.async_playwright import Axe
from playwright.async_api import Browser, Page, Response, ViewportSize

from nineplan_adapters.config import Settings
from nineplan_adapters.storage.clock import FixedClock, utc_now
from nineplan_core.journal import Event, EventKind
from tests.fakes import PLAN, open_service
from tests.integration.servers import spawned_ui

WAIT_MS = 5000
PHONE = ViewportSize(width=390, height=844)
#: The axe-core impacts a page must not have.
SERIOUS = {"serious", "critical"}


def hour_of(at: dt.datetime) -> str:
    return at.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0).isoformat()


async def seeded(
    root: Path, task: str = "ship the release"
) -> tuple[str, dict[tuple[str, str], int]]:
    """A session whose plans were completed and deferred at known times (a fixed clock set back
    from now): one completion 30 hours ago (outside the chart), a deferral 5 hours ago, two
    completions and a deferral 2 hours ago. Returns its name and the journal's counts per
    (hour, kind) within the last 24 hours, as read back from the journal."""
    now = utc_now()
    clock = FixedClock(now - dt.timedelta(hours=30))
    async with open_service(Settings(sessions_path=root), clock=clock) as service:
        name = (await service.create_session(task)).session.name
        for number in range(6):
            await service.add_plan(name, **{**PLAN, "goal": f"plan {number}"})
        await service.pull_plan(name)
        await service.complete_plan(name, "long ago")
        clock.now = now - dt.timedelta(hours=5)
        await service.pull_plan(name)
        await service.defer_plan(name, "blocked", "back")
        clock.now = now - dt.timedelta(hours=2)
        for _ in range(2):
            await service.pull_plan(name)
            await service.complete_plan(name, "done")
        await service.pull_plan(name)
        await service.defer_plan(name, "blocked again", "back")
        events = await service.journal(name)
    since = now - dt.timedelta(hours=23)
    counts = collections.Counter(
        (hour_of(e.at), e.kind.removeprefix("plan_"))
        for e in events
        if isinstance(e, Event)
        and e.kind in (EventKind.PLAN_COMPLETED, EventKind.PLAN_DEFERRED)
        and hour_of(e.at) >= hour_of(since)
    )
    return name, dict(counts)


async def chart_bars(page: Page) -> dict[tuple[str, str], int]:
    """The chart's bars with a count, by (hour, kind), from their data attributes."""
    found: dict[tuple[str, str], int] = {}
    for bar in await page.locator("[data-testid=chart] rect.bar").all():
        hour, kind = await bar.get_attribute("data-hour"), await bar.get_attribute("data-kind")
        if count := int(str(await bar.get_attribute("data-count"))):
            found[(str(hour), str(kind))] = count
    return found


async def test_the_charts_bars_match_the_journal(tmp_path: Path, browser: Browser):
    """The chart's bars carry the journal's counts of completions and deferrals per UTC hour of
    the last 24 hours (the one 30 hours ago left out); the drawing has no style of its own; a
    hostile task shows as text in its description."""
    name, journal = await seeded(tmp_path, "<img src=x onerror=alert(1)>")
    now = utc_now()
    expected = {
        (hour_of(now - dt.timedelta(hours=5)), "deferred"): 1,
        (hour_of(now - dt.timedelta(hours=2)), "completed"): 2,
        (hour_of(now - dt.timedelta(hours=2)), "deferred"): 1,
    }
    assert journal == expected
    context = await browser.new_context()
    page = await context.new_page()
    async with spawned_ui(tmp_path) as ui:
        await page.goto(f"{ui}/sessions/{name}")
        chart = page.locator("[data-testid=chart]")
        assert await chart_bars(page) == journal
        assert await chart.locator("rect.bar").count() == 48
        assert await chart.locator("[style], style, img").count() == 0
        assert "<img src=x onerror=alert(1)>" in str(await chart.locator("desc").text_content())
        assert await chart.locator("svg").get_attribute("role") == "img"
        fill = await chart.locator("rect.bar.completed").first.evaluate(
            "bar => getComputedStyle(bar).fill"
        )
        assert fill not in ("", "none", "rgb(0, 0, 0)")  # style.css colours it
    await context.close()


async def test_the_list_is_newest_first_and_filters_with_and_without_javascript(
    tmp_path: Path, browser: Browser
):
    """The list puts the session with the newest event first; typing in the filter box hides
    the rows whose name and task do not hold the text; without JavaScript the same box is a
    GET form the server answers with the matching rows only."""
    older, _ = await seeded(tmp_path, "write the docs")
    clock = FixedClock(utc_now())
    async with open_service(Settings(sessions_path=tmp_path), clock=clock, seed=2) as service:
        newer = (await service.create_session("build the api")).session.name
    async with spawned_ui(tmp_path) as ui:
        for javascript in (True, False):
            context = await browser.new_context(java_script_enabled=javascript)
            page = await context.new_page()
            await page.goto(ui)
            rows = page.locator("[data-testid=sessions] tr[data-session]")
            assert [await r.get_attribute("data-session") for r in await rows.all()] == [
                newer,
                older,
            ]
            box = page.get_by_label("Filter by name or task")
            await box.fill("DOCS")
            if javascript:
                await page.locator(f"tr[data-session='{newer}']").wait_for(
                    state="hidden", timeout=WAIT_MS
                )
                assert await page.locator(f"tr[data-session='{older}']").is_visible()
            else:
                await box.press("Enter")
                await page.wait_for_url("**/?q=DOCS")
                assert [await r.get_attribute("data-session") for r in await rows.all()] == [older]
            await context.close()


async def test_the_list_fits_a_phone_and_pages_ask_for_no_missing_file(
    tmp_path: Path, browser: Browser
):
    """At 390 px the session list, with a 300-character unbroken task, scrolls no wider than
    the screen; no page load meets a 404 (the favicon among them)."""
    async with open_service(Settings(sessions_path=tmp_path)) as service:
        for number in range(5):
            name = (await service.create_session("x" * 300 + str(number))).session.name
            await service.add_plan(name, **{**PLAN, "goal": "y" * 300})
            await service.pull_plan(name)
    context = await browser.new_context(viewport=PHONE)
    page = await context.new_page()
    missing: list[str] = []

    def seen(response: Response) -> None:
        if response.status == 404:
            missing.append(response.url)

    page.on("response", seen)
    async with spawned_ui(tmp_path) as ui:
        for path in ("/", f"/sessions/{name}"):
            await page.goto(ui + path)
            await page.wait_for_load_state("networkidle")
            width = await page.evaluate("document.documentElement.scrollWidth")
            assert width <= PHONE["width"], f"{path} is {width} px wide on a 390 px screen"
        icon = await page.request.get(f"{ui}/favicon.ico")
        assert icon.status == 200
    assert missing == []
    await context.close()


@asynccontextmanager
async def scanning(browser: Browser, scheme: str) -> AsyncIterator[Page]:
    """A page in `scheme` (light or dark) with the CSP bypassed: axe-core injects a script."""
    context = await browser.new_context(
        bypass_csp=True,
        color_scheme=scheme,  # type: ignore[arg-type]
    )
    try:
        yield await context.new_page()
    finally:
        await context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
async def test_axe_finds_no_serious_violation(tmp_path: Path, browser: Browser, scheme: str):
    """axe-core reports no serious or critical violation on the session list, a session page
    (with an active plan, a queue, a chart and a journal) and a plan page, light and dark."""
    name, _ = await seeded(tmp_path)
    clock = FixedClock(utc_now())
    async with open_service(Settings(sessions_path=tmp_path), clock=clock, seed=3) as service:
        await service.pull_plan(name)
        plan_id = (await service.session_state(name)).queue[0].id
    axe = Axe()
    async with spawned_ui(tmp_path) as ui, scanning(browser, scheme) as page:
        found = {}
        for path in ("/", f"/sessions/{name}", f"/sessions/{name}/plans/{plan_id}"):
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
        assert found == {}, json.dumps(found, indent=1)
