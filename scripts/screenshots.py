"""Take the screenshots in docs/img/ (`make screenshots`): a demo sessions folder, `nineplan ui`
on it, and Chromium at desktop width, phone width and dark.

The sessions folder is made in a temporary directory and named by a relative path (`sessions`,
the server running from that directory), so the pages show nothing of the machine. Its plans
are in every state: queued (one deferred often enough to be stuck), active (two workers, one
with notes in its file), completed over the last hours (the chart), discarded by the agent and
dropped by a person. Needs Debian's Chromium at /usr/bin/chromium (as the browser tests do).

    python scripts/screenshots.py [--out docs/img]
"""

import argparse
import asyncio
import datetime as dt
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from playwright.async_api import Browser, async_playwright

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, repeatable, running
from nineplan_adapters.entrypoints.cli.demo import free_port
from nineplan_adapters.storage.clock import FixedClock, utc_now
from nineplan_core.callers import Caller
from nineplan_core.service import NinePlan

CHROMIUM = "/usr/bin/chromium"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
SESSIONS = Path("sessions")


def plan(goal: str, context: str = "The shop's checkout is being rebuilt.") -> dict[str, Any]:
    return {
        "goal": goal,
        "context": context,
        "approach": "Small steps, each with its test.",
        "success_criteria": "The tests pass and the change is documented.",
    }


QUEUED = [
    "Add the payment provider's webhook handler",
    "Retry failed webhooks with backoff",
    "Show the order status page",
    "Email a receipt after payment",
    "Write the runbook for refunds",
]
DONE = [
    "Design the orders table",
    "Write the migration for orders",
    "Add the cart API",
    "Validate cart items against stock",
    "Price the cart with taxes",
    "Add the checkout form",
]


async def fill(service: NinePlan, clock: FixedClock) -> str:
    """The demo session: completions over the last hours, then the queue and active plans as
    they are now. Returns its name."""
    name = (await service.create_session("Rebuild the checkout", workspace="shop")).session.name
    for goal in [*DONE, "Support gift cards", "Migrate the legacy coupons"]:
        await service.add_plan(name, **plan(goal))
    for goal in DONE:
        clock.advance(37 * 60)
        await service.pull_plan(name)
        clock.advance(11 * 60)
        await service.complete_plan(name, f"Done: {goal.lower()}; tests added.")
    await service.pull_plan(name)
    await service.discard_plan(name, "Gift cards are out of scope for this release.")
    for goal in QUEUED:
        await service.add_plan(name, **plan(goal))
    for position in ("front", "front", "back"):  # the legacy coupons keep slipping: stuck
        clock.advance(20 * 60)
        await service.pull_plan(name)
        await service.defer_plan(name, "The coupon export is still missing.", position)
    runbook = (await service.session_state(name)).queue[-2]
    await service.drop_plan(name, runbook.id, "The runbook waits for the refund design.")
    await service.pull_plan(name, caller=Caller.of("reviewer"))
    clock.advance(6 * 60)
    held = await service.pull_plan(name)
    Path(held.path).write_text(
        Path(held.path).read_text() + "\nNotes:\n- handler skeleton in place\n- signature check\n"
    )
    return name


async def others(service: NinePlan, clock: FixedClock) -> None:
    """Two more sessions for the list: one quiet, one with a queue."""
    clock.advance(-3 * 3600)
    quiet = (await service.create_session("Tidy the docs site")).session.name
    await service.add_plan(quiet, **plan("Fix the broken links", "The docs site moved."))
    clock.advance(2 * 3600)
    busy = (await service.create_session("Speed up the search")).session.name
    for goal in ("Profile the search query", "Add the trigram index"):
        await service.add_plan(busy, **plan(goal, "Search takes 2 s."))


async def seed() -> str:
    """Fill the sessions folder (relative to the working directory); the main session's name."""
    clock = FixedClock(utc_now() - dt.timedelta(hours=7))
    app = repeatable(build_container(Settings(sessions_path=SESSIONS)), clock, seed=7)
    async with running(app) as service:
        await others(service, clock)
        clock.now = utc_now() - dt.timedelta(hours=6)
        return await fill(service, clock)


def start_ui(port: int) -> subprocess.Popen[bytes]:
    """`nineplan ui` on the relative sessions folder, from the working directory."""
    env = {**os.environ, "NINEPLAN_SESSIONS_PATH": str(SESSIONS), "NINEPLAN_LOG_LEVEL": "warn"}
    command = [sys.executable, "-m", "nineplan_adapters", "ui", "--port", str(port)]
    server = subprocess.Popen(command, env=env)  # noqa: S603 - this interpreter, fixed arguments
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1):
                return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("nineplan ui did not start within 30 s")


async def shoot(browser: Browser, url: str, out: Path, shot: str, **options: object) -> None:
    """One screenshot of `url` into `out/shot.png`, in a fresh context made with `options`."""
    context = await browser.new_context(**options)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(url)
    await page.wait_for_selector("[data-testid=live-status][data-state=open]", timeout=5000)
    await page.screenshot(path=str(out / f"{shot}.png"))
    await context.close()
    print(f"wrote {out / shot}.png")


async def take(base: str, name: str, out: Path) -> None:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        board = f"{base}/sessions/{name}"
        await shoot(browser, f"{base}/", out, "sessions", viewport=DESKTOP)
        await shoot(browser, board, out, "board", viewport=DESKTOP)
        await shoot(browser, board, out, "board-phone", viewport=PHONE, device_scale_factor=2)
        await shoot(browser, board, out, "board-dark", viewport=DESKTOP, color_scheme="dark")
        await shoot(
            browser, f"{base}/", out, "sessions-phone", viewport=PHONE, device_scale_factor=2
        )
        await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    out = parser.parse_args().out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="nineplan-demo-") as scratch:
        os.chdir(scratch)
        name = asyncio.run(seed())
        port = free_port()
        server = start_ui(port)
        try:
            asyncio.run(take(f"http://127.0.0.1:{port}", name, out))
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
