"""Moving queued cards with JavaScript on, in a real Chromium against a real `nineplan ui`,
beside a real agent (a stdio server driven by the SDK client): a card moved before another by
drag and drop or by the keyboard reaches the agent's next pulls in that order and the journal
as `plan_moved` with `detail.before` by a person (without JavaScript: test_board_steering.py)."""

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client
from playwright.async_api import FloatRect, Page

from tests.fakes import PLAN
from tests.integration.servers import run_nineplan, stdio_server
from tests.mcp_helpers import ok

#: Drags and key presses raced against live redraws with short deadlines: `make test` runs
#: these last, one at a time (a keyboard move failed beside the parallel phase, and again
#: beside one other timing-bound test).
pytestmark = [pytest.mark.serial, pytest.mark.alone]

WAIT_MS = 5000


async def new_session(agent: Client, *goals: str) -> tuple[str, list[str]]:
    """A session with plans of these goals, and their ids in pull order."""
    name = str((await ok(agent, "9plan_session_create", task_description="t"))["session_name"])
    for goal in goals:
        await ok(agent, "9plan_queue_add", **{**PLAN, "goal": goal})
    state = await ok(agent, "9plan_admin_state", session_name=name)
    return name, [entry["id"] for entry in state["queue"]]


async def queue_ids(page: Page) -> list[str]:
    items = page.locator("[data-testid=queue] [data-plan-id]")
    return [str(await item.get_attribute("data-plan-id")) for item in await items.all()]


async def wait_for_order(page: Page, ids: list[str]) -> None:
    """Wait until the page's queue shows `ids` in this order (the live update's redraw)."""
    await page.wait_for_function(
        """ids => Array.from(document.querySelectorAll('[data-testid=queue] > [data-plan-id]'))
                 .map(e => e.dataset.planId).join() === ids.join()""",
        arg=ids,
        timeout=WAIT_MS,
    )


async def settled(page: Page, agent: Client, ids: list[str]) -> None:
    """Wait until the session's queue (as the agent reads it) is `ids` in this order, and the
    page shows it so with no card still being moved (the move committed and redrawn)."""
    with anyio.fail_after(WAIT_MS / 1000):
        while [e["id"] for e in (await ok(agent, "9plan_admin_state"))["queue"]] != ids:
            await anyio.sleep(0.05)
    await wait_for_order(page, ids)
    await page.wait_for_selector("[data-grabbed]", state="detached", timeout=WAIT_MS)


async def live(page: Page) -> None:
    await page.wait_for_selector("[data-testid=live-status][data-state=open]", timeout=WAIT_MS)


async def drag(page: Page, source: str, target: str, *, lower_half: bool = False) -> None:
    """Drag the queue card `source` onto the card `target` with the mouse (pressed, moved in
    steps, released: the way a person drags), onto its upper or lower half."""
    card = "[data-testid=queue] > [data-plan-id='{}']"
    start, end = await _box(page, card.format(source)), await _box(page, card.format(target))
    await page.mouse.move(start["x"] + 10, start["y"] + 10)
    await page.mouse.down()
    await page.mouse.move(start["x"] + 20, start["y"] + 20, steps=3)
    y = end["y"] + (end["height"] - 4 if lower_half else 4)
    await page.mouse.move(end["x"] + 20, y, steps=5)
    await page.mouse.up()


async def _box(page: Page, selector: str) -> FloatRect:
    """Where the card is on the page; a live redraw may be replacing it, so wait for it."""
    with anyio.fail_after(10):
        while (box := await page.locator(selector).bounding_box()) is None:
            await anyio.sleep(0.05)
    return box


async def pulls(agent: Client, count: int) -> list[str]:
    """The plans the agent's next `count` pulls give, each by a worker of its own."""
    return [
        (await ok(agent, "9plan_queue_pull", worker=f"w{number}"))["plan_id"]
        for number in range(count)
    ]


def moves(sessions: Path, name: str) -> list[tuple[str, str | None, str]]:
    """The journal's `plan_moved` events: (plan, before, actor)."""
    log = run_nineplan(sessions, "log", name, "--json")
    events = [json.loads(line) for line in log.stdout.splitlines()]
    return [
        (e["plan_id"], e["detail"].get("before"), e["actor"])
        for e in events
        if e["kind"] == "plan_moved"
    ]


async def test_a_card_dragged_before_another_is_pulled_in_that_order(
    tmp_path: Path, ui: str, page: Page
):
    """Dragging the last card onto the upper half of the first puts it before that card;
    dragging the (new) second card onto the lower half of the third puts it after that one;
    the agent's next pulls follow the new order, each move journalled with `detail.before`
    by a person."""
    async with Client(stdio_server(tmp_path)) as agent:
        name, (a, b, c, d) = await new_session(agent, "A", "B", "C", "D")
        await page.set_viewport_size({"width": 1280, "height": 1600})  # every card in view
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        await drag(page, d, a)
        await settled(page, agent, [d, a, b, c])
        assert await page.locator("[data-testid=announce]").inner_text() == "Moved D to place 1."
        await drag(page, a, b, lower_half=True)
        await settled(page, agent, [d, b, a, c])
        assert await pulls(agent, 4) == [d, b, a, c]
    assert moves(tmp_path, name) == [(d, a, "person"), (a, c, "person")]


async def test_a_card_moved_by_the_keyboard_is_pulled_in_that_order(
    tmp_path: Path, ui: str, page: Page
):
    """Focusing a card, Space picks it up, ArrowUp twice and Space again put it first; the
    page announces each step in its aria-live region and keeps the card focused after the
    redraw; Escape puts a picked-up card back unmoved (nothing posted); the agent pulls in
    the new order."""
    async with Client(stdio_server(tmp_path)) as agent:
        name, (a, b, c) = await new_session(agent, "A", "B", "C")
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        announce = page.locator("[data-testid=announce]")
        assert await page.locator("[data-testid=board-hint]").is_visible()
        await page.locator(f"[data-testid=queue] > [data-plan-id='{c}']").focus()
        await page.keyboard.press("Space")
        assert "Picked up C, place 3 of 3" in await announce.inner_text()
        await page.keyboard.press("ArrowUp")
        await page.keyboard.press("ArrowUp")
        assert await announce.inner_text() == "C: place 1 of 3."
        await page.keyboard.press("Space")
        await settled(page, agent, [c, a, b])
        assert await announce.inner_text() == "Moved C to place 1."
        assert await page.evaluate("document.activeElement.dataset.planId") == c
        await page.locator(f"[data-testid=queue] > [data-plan-id='{a}']").focus()
        await page.keyboard.press("Enter")
        await page.keyboard.press("End")
        assert await queue_ids(page) == [c, b, a]
        await page.keyboard.press("Escape")
        assert await queue_ids(page) == [c, a, b]
        assert "back where it was" in await announce.inner_text()
        assert await pulls(agent, 3) == [c, a, b]
    assert moves(tmp_path, name) == [(c, a, "person")]


async def test_a_refused_move_before_field_keeps_the_text_and_says_why(
    tmp_path: Path, ui: str, page: Page
):
    """With JavaScript on, the "move before" field posts in the background: an id that is not
    queued leaves the queue as it was, the typed id in the field and the reason beside it
    (announced too); a queued id moves the card there, redrawn live without a reload."""
    async with Client(stdio_server(tmp_path)) as agent:
        name, (a, b, c) = await new_session(agent, "A", "B", "C")
        await page.goto(f"{ui}/sessions/{name}")
        await live(page)
        await page.evaluate("window.notReloaded = true")
        card = page.locator(f"[data-testid=queue] > [data-plan-id='{c}']")
        await card.get_by_label("Move before").fill("zzzzz")
        await card.locator("[data-action=before]").click()
        reason = card.locator("[data-testid=field-error][data-field=before]")
        await reason.wait_for(timeout=WAIT_MS)
        assert "zzzzz" in await reason.inner_text()
        assert "Not moved" in await page.locator("[data-testid=announce]").inner_text()
        assert await card.get_by_label("Move before").input_value() == "zzzzz"
        assert await queue_ids(page) == [a, b, c]
        await card.get_by_label("Move before").fill(b)
        await card.locator("[data-action=before]").click()
        await settled(page, agent, [a, c, b])
        assert await page.evaluate("window.notReloaded") is True
        assert await pulls(agent, 3) == [a, c, b]
    assert moves(tmp_path, name) == [(c, b, "person")]
