"""The session list in a real browser: a session that cannot be read, and archived sessions."""

from pathlib import Path

import anyio
from mcp import Client
from playwright.async_api import Page

from tests.integration.servers import run_nineplan, spawned_ui, stdio_server
from tests.mcp_helpers import ok

WAIT_MS = 5000  # every wait_for: the page must catch up within this, or the test fails


async def test_the_list_marks_an_unreadable_session_and_files_archived_ones_away(
    tmp_path: Path, page: Page
):
    """A session whose database is garbage is a row marked with the reason; archiving a
    session while the list is open takes its row away live, and the list's link to the
    archived sessions shows it marked; the unreadable session's page says what is wrong."""
    async with Client(stdio_server(tmp_path)) as agent:
        names = [
            str((await ok(agent, "9plan_session_create", task_description=task))["session_name"])
            for task in ("kept", "filed", "broken")
        ]
    kept, filed, broken = names
    (tmp_path / broken / "session.db").write_bytes(b"not a database at all " * 100)
    async with spawned_ui(tmp_path) as ui:
        await page.goto(ui)
        await page.wait_for_selector("[data-testid=live-status][data-state=open]", timeout=WAIT_MS)
        marked = page.locator(f"[data-session='{broken}'] [data-testid=unreadable]")
        assert "file is not a database" in await marked.inner_text()
        await anyio.to_thread.run_sync(lambda: run_nineplan(tmp_path, "archive", filed, check=True))
        await page.wait_for_selector(f"[data-session='{filed}']", state="detached", timeout=WAIT_MS)
        assert await page.locator(f"[data-session='{kept}']").count() == 1
        await page.reload()
        await page.locator("[data-testid=archived-link] a").click()
        archived = page.locator(f"[data-session='{filed}'] [data-testid=archived]")
        await archived.wait_for(timeout=WAIT_MS)
        assert page.url.endswith("/?archived=1")
        response = await page.goto(f"{ui}/sessions/{broken}")
        assert response is not None
        assert response.status == 503
        assert "file is not a database" in await page.locator("[data-testid=error]").inner_text()
