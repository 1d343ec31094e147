"""Browser tests: Debian's Chromium driven by Playwright against a real `nineplan ui` process.

Nothing is downloaded: Playwright's own browsers are never used. Without /usr/bin/chromium the
tests skip with a visible reason, except under CI=true, where a missing Chromium fails them
(.ci/run installs it).
"""

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from playwright.async_api import Browser, Page, async_playwright

from nineplan_adapters.demo import free_port
from tests.integration.servers import PROJECT, PYTHON, child_env

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    """One headless Chromium for the whole run."""
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing: apt-get install chromium (.ci/run does)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox"]
        )
        yield chromium
        await chromium.close()


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A fresh browser context (no cookies) and page, with JavaScript on."""
    context = await browser.new_context()
    yield await context.new_page()
    await context.close()


@asynccontextmanager
async def spawned_ui(
    sessions_path: Path, *command: str, env: dict[str, str] | None = None
) -> AsyncIterator[str]:
    """Spawn `nineplan ui` (or `command`) on a free loopback port; yield its base URL."""
    port = free_port()
    arguments = command or ("ui",)
    process = await anyio.open_process(
        [PYTHON, "-m", "nineplan_adapters", *arguments, "--port", str(port)],
        env=child_env(sessions_path, NINEPLAN_LOG_LEVEL="warn", **(env or {})),
        cwd=PROJECT,
        stdout=None,
        stderr=None,
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    if process.returncode is not None:
                        raise RuntimeError(f"nineplan {arguments[0]} exited at start") from None
                    await anyio.sleep(0.05)
                else:
                    await stream.aclose()
                    break
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        with anyio.move_on_after(15):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.fixture
async def ui(tmp_path: Path) -> AsyncIterator[str]:
    """A `nineplan ui` on a fresh sessions folder (`tmp_path`)."""
    async with spawned_ui(tmp_path) as url:
        yield url
