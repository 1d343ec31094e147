"""The web view in a real browser, beside a real agent: a stdio server driven by the SDK client."""

import re
from pathlib import Path

import anyio
import pytest
from mcp import Client
from playwright.async_api import Browser, Page

from tests.fakes import PLAN, postgres_schema
from tests.integration.servers import spawned_ui, stdio_server
from tests.mcp_helpers import ok

WAIT_MS = 5000  # every wait_for: the page must catch up within this, or the test fails


async def new_session(agent: Client, task: str = "build the thing", *goals: str) -> str:
    name = str((await ok(agent, "9plan_session_create", task_description=task))["session_name"])
    for goal in goals:
        await ok(agent, "9plan_queue_add", **{**PLAN, "goal": goal})
    return name


async def queue_ids(page: Page) -> list[str]:
    return [
        str(await item.get_attribute("data-plan-id"))
        for item in await page.locator("[data-testid=queue] [data-plan-id]").all()
    ]


async def live(page: Page) -> None:
    """Wait until the page's event stream is open and in step (its status line says so)."""
    await page.wait_for_selector("[data-testid=live-status][data-state=open]", timeout=WAIT_MS)


async def test_the_sessions_list_shows_every_session(tmp_path: Path, ui: str, page: Page):
    """`/` lists each session in its own row with its task and counts."""
    async with Client(stdio_server(tmp_path)) as agent:
        first = await new_session(agent, "first task", "a", "b")
        second = await new_session(agent, "second task")
    await page.goto(ui)
    rows = page.locator("[data-testid=sessions] [data-session]")
    assert sorted([str(await row.get_attribute("data-session")) for row in await rows.all()]) == (
        sorted([first, second])
    )
    first_row = page.locator(f"[data-session='{first}']")
    assert "first task" in await first_row.inner_text()
    assert (await first_row.locator("td.num").all_inner_texts())[0] == "2"
    await first_row.get_by_role("link").click()
    await page.wait_for_selector(f"h1[data-session='{first}']", timeout=WAIT_MS)


async def test_the_sessions_list_shows_the_active_plan_stuck_plans_and_activity(
    tmp_path: Path, page: Page
):
    """Each row shows the active plan with how long it has been held, the plans deferred
    NINEPLAN_STUCK_DEFERS times (2 here) as links, and how long ago the last change was."""
    async with Client(stdio_server(tmp_path, NINEPLAN_STUCK_DEFERS="2")) as agent:
        name = await new_session(agent, "t", "slips", "holds")
        slips = (await ok(agent, "9plan_queue_pull"))["plan_id"]
        await ok(agent, "9plan_plan_defer", reason="blocked", position="back")
        assert (await ok(agent, "9plan_queue_pull"))["goal"] == "holds"
        await ok(agent, "9plan_plan_defer", reason="later", position="back")
        assert (await ok(agent, "9plan_queue_pull"))["plan_id"] == slips
        await ok(agent, "9plan_plan_defer", reason="blocked again", position="back")
        held = await ok(agent, "9plan_queue_pull")
        quiet = await new_session(agent, "nothing yet")
    async with spawned_ui(tmp_path, env={"NINEPLAN_STUCK_DEFERS": "2"}) as stuck_ui:
        await page.goto(stuck_ui)
        row = page.locator(f"[data-session='{name}']")
        active = row.locator("[data-testid=active-plan]")
        assert await active.get_attribute("data-plan-id") == held["plan_id"]
        assert "holds" in await active.inner_text()
        assert "for under a minute" in await active.inner_text()
        stuck = row.locator("[data-testid=stuck] [data-plan-id]")
        assert [await link.get_attribute("data-plan-id") for link in await stuck.all()] == [slips]
        assert await row.locator("[data-testid=last-activity]").inner_text() == (
            "under a minute ago"
        )
        other = page.locator(f"[data-session='{quiet}']")
        assert await other.locator("[data-testid=active-plan]").inner_text() == "-"
        assert await other.locator("[data-testid=stuck]").inner_text() == "-"
        await stuck.first.click()
        await page.wait_for_selector(f"[data-testid=plan][data-plan-id='{slips}']")


async def test_the_sessions_list_is_live(tmp_path: Path, ui: str, page: Page):
    """A new session, an added plan and a pull by the agent's own server show up on the open
    list without a reload, the session with the newest activity moving to the top."""
    async with Client(stdio_server(tmp_path)) as agent:
        first = await new_session(agent, "first task")
        await page.goto(ui)
        await live(page)
        await page.evaluate("window.notReloaded = true")
        second = await new_session(agent, "second task", "a plan")
        row = page.locator(f"[data-session='{second}']")
        await row.wait_for(timeout=WAIT_MS)
        await row.locator("[data-testid=queue-length]").get_by_text("1").wait_for(timeout=WAIT_MS)
        names = page.locator("[data-testid=sessions] [data-session]")
        assert [second, first] == [
            str(await r.get_attribute("data-session")) for r in await names.all()
        ]
        pulled = await ok(agent, "9plan_queue_pull")
        await page.wait_for_selector(
            f"[data-session='{second}'] [data-testid=active-plan][data-plan-id='{pulled['plan_id']}']",
            timeout=WAIT_MS,
        )
        await ok(agent, "9plan_plan_complete", outcome="done")
        await (
            page.locator(f"[data-session='{second}'] [data-testid=completed-count]")
            .get_by_text("1")
            .wait_for(timeout=WAIT_MS)
        )
        await ok(agent, "9plan_queue_add", **{**PLAN, "goal": "busy again"}, session_name=first)
        top = "[data-testid=sessions] tbody tr:first-child"
        await page.wait_for_selector(f"{top}[data-session='{first}']", timeout=WAIT_MS)
        assert await page.evaluate("window.notReloaded") is True


async def test_the_session_page_shows_the_queue_in_pull_order(tmp_path: Path, ui: str, page: Page):
    """The queue's [data-plan-id] children are in the order the agent will pull them."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "t", "A", "B")
        await ok(agent, "9plan_queue_add", **{**PLAN, "goal": "C"}, position="front")
        state = await ok(agent, "9plan_admin_state")
        await page.goto(f"{ui}/sessions/{name}")
        assert await queue_ids(page) == [entry["id"] for entry in state["queue"]]
        assert [entry["goal"] for entry in state["queue"]] == ["C", "A", "B"]
        pulled = await ok(agent, "9plan_queue_pull")
    assert pulled["goal"] == "C"


async def test_an_agents_call_from_another_process_appears_without_reload(
    tmp_path: Path, ui: str, page: Page
):
    """A plan added, then pulled, by the agent's own server shows up on the open page, live."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "t", "first")
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        await page.evaluate("window.notReloaded = true")
        added = await ok(agent, "9plan_queue_add", **{**PLAN, "goal": "added by the agent"})
        await page.wait_for_selector(
            f"[data-testid=queue] [data-plan-id='{added['plan_id']}']", timeout=WAIT_MS
        )
        pulled = await ok(agent, "9plan_queue_pull")
        await page.wait_for_selector(
            f"[data-testid=active-plan][data-plan-id='{pulled['plan_id']}']", timeout=WAIT_MS
        )
        await page.wait_for_selector(
            f"[data-testid=queue] [data-plan-id='{pulled['plan_id']}']", state="detached"
        )
        assert await page.evaluate("window.notReloaded") is True


async def test_the_agents_notes_appear_live(tmp_path: Path, ui: str, page: Page):
    """Notes the agent writes into its active plan file appear on the page as they are written."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "t", "write notes")
        pulled = await ok(agent, "9plan_queue_pull")
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        plan_file = Path(pulled["plan_path"])
        with plan_file.open("a", encoding="utf-8") as file:
            file.write("\nFound the old schema in db/legacy.sql\n")
        notes = page.locator("[data-testid=active-plan] [data-testid=plan-file]")
        await notes.get_by_text("Found the old schema in db/legacy.sql").wait_for(timeout=WAIT_MS)
        with plan_file.open("a", encoding="utf-8") as file:
            file.write("Second finding: the users table has no index\n")
        await notes.get_by_text("Second finding").wait_for(timeout=WAIT_MS)
        done = await ok(agent, "9plan_plan_complete", outcome="done")
    assert done["completed_count"] == 1


async def test_steering_from_the_page_reaches_the_agents_next_pull(
    tmp_path: Path, ui: str, page: Page
):
    """Moving a plan to the front and dropping another on the page is what the agent pulls next."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "t", "A", "B", "C")
        ids = [entry["id"] for entry in (await ok(agent, "9plan_admin_state"))["queue"]]
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)  # the stream's first swap done: the buttons stay where they are
        await page.locator(f"[data-plan-id='{ids[2]}'] [data-action=front]").click()
        await page.wait_for_url(f"{ui}/sessions/{name}")
        await live(page)
        assert await queue_ids(page) == [ids[2], ids[0], ids[1]]
        row = page.locator(f"[data-plan-id='{ids[0]}']")
        await row.get_by_label("reason").fill("not needed any more")
        await row.locator("[data-action=drop]").click()
        await page.wait_for_selector(
            f"[data-plan-id='{ids[0]}']", state="detached", timeout=WAIT_MS
        )
        assert (await ok(agent, "9plan_queue_pull"))["plan_id"] == ids[2]
        state = await ok(agent, "9plan_admin_state")
        assert [entry["id"] for entry in state["queue"]] == [ids[1]]
        await page.reload()
        # The agent's plan is not moved or dropped; a person can only release it.
        held = page.locator(f"[data-plan-id='{ids[2]}'] [data-action]")
        assert await held.evaluate_all("els => els.map(e => e.dataset.action)") == ["release"]
        assert (
            await page.locator("[data-testid=active-plan]").get_attribute("data-plan-id")
            == (ids[2])
        )


async def test_the_page_works_without_javascript(tmp_path: Path, ui: str, browser: Browser):
    """With JavaScript off the page shows everything, says to reload, and its forms steer."""
    context = await browser.new_context(java_script_enabled=False)
    page = await context.new_page()
    try:
        async with Client(stdio_server(tmp_path)) as agent:
            name = await new_session(agent, "t", "A")
            await page.goto(f"{ui}/sessions/{name}")
            assert "reload" in await page.locator("[data-testid=live-status]").inner_text()
            form = page.locator("[data-testid=add-plan]")
            for label, value in [("Goal", "added without script"), ("Context", "c"),
                                 ("Approach", "a"), ("Success criteria", "s")]:  # fmt: skip
                await form.get_by_label(label, exact=True).fill(value)
            await form.get_by_label("Position").select_option("front")
            await form.get_by_role("button").click()
            await page.wait_for_url(f"{ui}/sessions/{name}")
            state = await ok(agent, "9plan_admin_state")
            assert [entry["goal"] for entry in state["queue"]] == ["added without script", "A"]
            assert await queue_ids(page) == [entry["id"] for entry in state["queue"]]
            await page.get_by_role("searchbox").fill("anything")
            await page.locator("[data-testid=search] button").click()
            await page.get_by_text("No completed plan matches.").wait_for(timeout=WAIT_MS)
    finally:
        await context.close()


async def test_agent_text_renders_inert(tmp_path: Path, ui: str, page: Page):
    """A goal of <script> or <img onerror> shows as text and runs nothing, on load and live."""
    script = "<script>window.pwned = 'script'</script>"
    image = "<img src=x onerror=\"window.pwned = 'img'\">"
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, script)
        await ok(agent, "9plan_queue_add", **{**PLAN, "goal": script, "context": image})
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        added = await ok(agent, "9plan_queue_add", **{**PLAN, "goal": image})
        await page.wait_for_selector(f"[data-plan-id='{added['plan_id']}']", timeout=WAIT_MS)
        queue = await page.locator("[data-testid=queue]").inner_text()
        assert script in queue
        assert image in queue
        assert script in await page.locator(".task").inner_text()
        pulled = await ok(agent, "9plan_queue_pull")
        await page.wait_for_selector("[data-testid=active-plan]", timeout=WAIT_MS)
        await page.goto(f"{ui}/sessions/{name}/plans/{pulled['plan_id']}")
        assert image in await page.locator("[data-testid=plan-file]").inner_text()
        assert await page.locator("img").count() == 0
        assert await page.evaluate("window.pwned") is None


async def test_the_token_flow(tmp_path: Path, browser: Browser):
    """With a token the pages ask for it once, then keep an HttpOnly, SameSite=Strict cookie."""
    async with (
        Client(stdio_server(tmp_path)) as agent,
        spawned_ui(tmp_path, env={"NINEPLAN_HTTP_TOKEN": "pa55-word"}) as ui,
    ):
        name = await new_session(agent)
        context = await browser.new_context()
        page = await context.new_page()
        await page.goto(f"{ui}/sessions/{name}")
        await page.wait_for_selector("[data-testid=login]")
        await page.get_by_label("Token").fill("wrong")
        await page.get_by_role("button").click()
        assert "not right" in await page.locator("[data-testid=error]").inner_text()
        await page.get_by_label("Token").fill("pa55-word")
        await page.get_by_role("button").click()
        await page.wait_for_selector(f"h1[data-session='{name}']", timeout=WAIT_MS)
        await live(page)  # the event stream passes the guard with the cookie too
        [cookie] = await context.cookies()
        assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
        assert "pa55-word" not in cookie["value"]
        assert await page.evaluate("document.cookie") == ""
        await page.goto(ui)
        await page.wait_for_selector(f"[data-session='{name}']")  # asked once
        await context.close()


async def test_a_session_page_with_notes_renders_as_a_picture(tmp_path: Path, ui: str, page: Page):
    """A session page with an active plan, notes and a queue renders and shows the notes the
    agent appended (the docs' pictures come from scripts/screenshots.py)."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "Add accounts to the app", "Design the users table")
        for goal in ("Write the sign-up endpoint", "Hash passwords with argon2", "Add login"):
            await ok(agent, "9plan_queue_add", **{**PLAN, "goal": goal})
        pulled = await ok(agent, "9plan_queue_pull")
        with Path(pulled["plan_path"]).open("a", encoding="utf-8") as file:
            file.write("- users.email needs a unique index\n")
        await page.set_viewport_size({"width": 1100, "height": 900})
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        await page.get_by_text("unique index").wait_for(timeout=WAIT_MS)
        picture = tmp_path / "ui-session.png"
        await page.screenshot(path=str(picture), full_page=False)
    assert picture.read_bytes().startswith(b"\x89PNG")


async def test_the_change_appears_within_the_wait(tmp_path: Path, ui: str, page: Page):
    """Several agent changes in a row each reach the page (no change is lost when they bunch)."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "t")
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        ids = [
            (await ok(agent, "9plan_queue_add", **{**PLAN, "goal": f"plan {n}"}))["plan_id"]
            for n in range(5)
        ]
        with anyio.fail_after(5):
            while await queue_ids(page) != ids:
                await page.wait_for_timeout(50)


async def test_a_reason_being_typed_survives_a_live_update(tmp_path: Path, ui: str, page: Page):
    """A live change waits while a person types a drop reason, and shows once they leave the field."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "t", "A")
        [first] = [entry["id"] for entry in (await ok(agent, "9plan_admin_state"))["queue"]]
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        reason = page.locator(f"[data-plan-id='{first}']").get_by_label("reason")
        await reason.fill("half a thou")
        added = await ok(agent, "9plan_queue_add", **{**PLAN, "goal": "B"})
        await page.locator("[data-testid=queue-length]").get_by_text("2").wait_for(timeout=WAIT_MS)
        assert await reason.input_value() == "half a thou"
        await page.get_by_role("searchbox").focus()
        await page.wait_for_selector(f"[data-plan-id='{added['plan_id']}']", timeout=WAIT_MS)


@pytest.mark.postgres
async def test_a_postgres_session_page_updates_live(tmp_path: Path, page: Page):
    """On PostgreSQL the session page is live: a plan the agent adds through its own server
    (another process, with its own sessions folder: another machine) appears without a reload."""
    async with (
        postgres_schema() as database,
        Client(stdio_server(tmp_path / "agent", NINEPLAN_DATABASE_URL=database)) as agent,
        spawned_ui(tmp_path / "viewer", env={"NINEPLAN_DATABASE_URL": database}) as ui,
    ):
        name = await new_session(agent, "t", "first")
        await page.goto(f"{ui}/sessions/{name}")
        assert await page.locator("body").get_attribute("data-live") is not None
        await live(page)
        await page.evaluate("window.notReloaded = true")
        added = await ok(agent, "9plan_queue_add", **{**PLAN, "goal": "added on another machine"})
        await page.wait_for_selector(
            f"[data-testid=queue] [data-plan-id='{added['plan_id']}']", timeout=WAIT_MS
        )
        pulled = await ok(agent, "9plan_queue_pull")
        await page.wait_for_selector(
            f"[data-testid=active-plan][data-plan-id='{pulled['plan_id']}']", timeout=WAIT_MS
        )
        assert await page.evaluate("window.notReloaded") is True


async def test_the_journal_pages_back_without_javascript(tmp_path: Path, ui: str, browser: Browser):
    """With JavaScript off, the journal shows the newest 100 events newest first, and its
    Older and Newest links page through the rest by seq."""
    context = await browser.new_context(java_script_enabled=False)
    page = await context.new_page()
    try:
        async with Client(stdio_server(tmp_path)) as agent:
            name = await new_session(agent, "t")
            for number in range(120):
                await ok(agent, "9plan_queue_add", **{**PLAN, "goal": f"plan {number}"})
        await page.goto(f"{ui}/sessions/{name}")
        assert await journal_seqs(page) == list(range(121, 21, -1))
        await page.locator("[data-testid=journal-pages] [data-action=older]").click()
        await page.wait_for_url(f"{ui}/sessions/{name}?before=22")
        assert await journal_seqs(page) == list(range(21, 0, -1))
        assert await page.locator("[data-action=older]").count() == 0
        await page.locator("[data-action=newest]").click()
        await page.wait_for_url(f"{ui}/sessions/{name}?")
        assert (await journal_seqs(page))[0] == 121
    finally:
        await context.close()


async def test_the_newest_journal_page_stays_live(tmp_path: Path, ui: str, page: Page):
    """On the newest page a new event arrives at the top, live; an older page keeps its events."""
    async with Client(stdio_server(tmp_path)) as agent:
        name = await new_session(agent, "t", *(f"plan {n}" for n in range(104)))
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        assert (await journal_seqs(page))[0] == 105
        await ok(agent, "9plan_queue_pull")
        await page.wait_for_selector("[data-testid=journal] [data-seq='106']", timeout=WAIT_MS)
        assert len(await journal_seqs(page)) == 100
        await page.goto(f"{ui}/sessions/{name}?before=7")
        await live(page)
        await ok(agent, "9plan_plan_complete", outcome="done")
        completed = page.locator("[data-testid=completed-count]")
        await completed.get_by_text("1").wait_for(timeout=WAIT_MS)
        assert await page.locator("[data-testid=active-plan]").count() == 0
        assert await journal_seqs(page) == [6, 5, 4, 3, 2, 1]


async def journal_seqs(page: Page) -> list[int]:
    return [
        int(str(await item.get_attribute("data-seq")))
        for item in await page.locator("[data-testid=journal] [data-seq]").all()
    ]


@pytest.mark.serial
async def test_the_session_page_shows_each_workers_plan_and_marks_the_stale_one(
    tmp_path: Path, page: Page
):
    """With a 3 s lease, once worker `slow` holds a plan the session page lists every active
    plan with its worker and held-for time; after the lease lapses (polled under fail_after)
    the page marks `slow`'s plan stale and says how to take it over; `main`'s section keeps
    its meaning."""
    lease = {"NINEPLAN_LEASE_MINUTES": "0.05"}
    async with (
        spawned_ui(tmp_path, env=lease) as ui,
        Client(stdio_server(tmp_path, **lease)) as agent,
    ):
        name = await new_session(agent, "t", "mine", "theirs")
        mine = await ok(agent, "9plan_queue_pull")
        theirs = await ok(agent, "9plan_queue_pull", session_name=name, worker="slow")
        await page.goto(f"{ui}/sessions/{name}")
        held = page.locator("[data-testid=column-active] [data-testid=card]")
        assert await held.evaluate_all("els => els.map(e => e.dataset.worker)") == ["main", "slow"]
        slow = page.locator(
            f"[data-testid=column-active] [data-testid=card][data-plan-id='{theirs['plan_id']}']"
        )
        assert "held for under a minute" in await slow.inner_text()
        section = f"[data-testid=active-plan][data-plan-id='{mine['plan_id']}']"
        assert await page.locator(section).count() == 1
        with anyio.fail_after(30):
            while not (await ok(agent, "9plan_admin_state"))["active_plans"][1]["stale"]:
                await anyio.sleep(0.2)
        await page.goto(f"{ui}/sessions/{name}")
        assert await slow.get_attribute("data-stale") == "true"
        assert await slow.locator("[data-testid=stale-mark]").inner_text() == "stale"
        lines = await page.locator("[data-testid=stale-line]").all_inner_texts()
        said = (  # a person's words: the board offers Release, not take_over
            rf"Plan {theirs['plan_id']} is stale: worker slow last heard \d+ s ago; "
            "Release puts it back at the front of the queue for another agent"
        )
        assert any(re.fullmatch(said, line) for line in lines), lines
        assert not any("take_over" in line for line in lines)


@pytest.mark.serial
async def test_an_open_session_page_marks_a_plan_stale_when_its_lease_lapses(
    tmp_path: Path, page: Page
):
    """With a 6 s lease, worker `w1` and `main` pull and fall silent: nothing changes in the
    session, yet the page left open (no reload) marks `w1`'s card stale and shows the stale
    line once the lease lapses (the live stream wakes at the lapse), and the card still says
    how long it has been held."""
    lease = {"NINEPLAN_LEASE_MINUTES": "0.1"}
    async with (
        spawned_ui(tmp_path, env=lease) as ui,
        Client(stdio_server(tmp_path, **lease)) as agent,
    ):
        name = await new_session(agent, "t", "mine", "theirs")
        await ok(agent, "9plan_queue_pull")
        theirs = (await ok(agent, "9plan_queue_pull", session_name=name, worker="w1"))["plan_id"]
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        card = f"[data-testid=column-active] [data-testid=card][data-plan-id='{theirs}']"
        assert await page.locator(card).get_attribute("data-stale") is None
        await page.wait_for_selector(f"{card}[data-stale=true]", timeout=30_000)
        assert await page.locator(f"{card} [data-testid=stale-mark]").inner_text() == "stale"
        lines = await page.locator("[data-testid=stale-line]").all_inner_texts()
        assert any(line.startswith(f"Plan {theirs} is stale: worker w1") for line in lines)
        assert "held for under a minute" in await page.locator(card).inner_text()
