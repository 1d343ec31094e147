"""Browser tests: Debian's Chromium driven by Playwright against a real `nineplan ui` process.

Nothing is downloaded: Playwright's own browsers are never used. Without /usr/bin/chromium the
tests skip with a visible reason, except under CI=true, where a missing Chromium fails them
(.ci/run installs it).
"""

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.integration.servers import spawned_ui

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


@pytest.fixture
async def ui(tmp_path: Path) -> AsyncIterator[str]:
    """A `nineplan ui` on a fresh sessions folder (`tmp_path`)."""
    async with spawned_ui(tmp_path) as url:
        yield url
