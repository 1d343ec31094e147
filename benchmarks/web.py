"""Rows 12, 13 and 20: the web view's session page at size, and an agent's change reaching it.

Run on its own (`python -m benchmarks.web`), it measures the crowded window: such a session
with its completions spread over one day, whose first page render is the one that reads most.

Row 12 renders `/sessions/{name}` in process (the ASGI app over the library, no network) for a
session of `queued` + `completed` plans whose journal holds the events that made them, the
completions spread over HISTORY_DAYS days (so the page's chart counts a day's worth of them).
Row 20 has a plain SSE client (no browser) read the live stream of a real `nineplan ui` process
for such a session and times each of an agent's adds (another process: a stdio server) from the
call to the `fragments` event that carries it. Row 13 opens the page of a real `nineplan ui` process in
Debian's Chromium and times, in the browser, each of 50 agent calls (a real stdio server) from
the moment before the call to the moment the page's queue changes; without /usr/bin/chromium it
is left out.
"""

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
from anyio.streams.memory import MemoryObjectSendStream
from mcp import Client

from benchmarks.data import seed_session
from nineplan_adapters import open_nineplan
from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.cli.demo import free_port, server_command
from nineplan_adapters.entrypoints.web import web_app

CHROMIUM = Path("/usr/bin/chromium")
#: Over how many days the seeded session completed its plans (100,000 plans: 1,000 a day).
HISTORY_DAYS = 100
PLAN = {"context": "bench", "goal": "a unit of work", "approach": "steps", "success_criteria": "ok"}
# Records when the queue fragment changes, on the page's own clock (the same system clock).
OBSERVE = """() => {
  window.changes = [];
  new MutationObserver(() => window.changes.push(Date.now()))
    .observe(document.querySelector('[data-fragment="queue"]'), {childList: true, subtree: true});
}"""
# Resolves with the time of change number `seen` once the observer has recorded it (the page's
# CSP forbids the string evaluation that Playwright's wait_for_function would need).
NEXT_CHANGE = """(seen) => new Promise((resolve) => {
  const check = () => window.changes.length > seen ? resolve(window.changes[seen]) : setTimeout(check, 5);
  check();
})"""


async def big_session(folder: Path, size: dict[str, int]) -> tuple[Path, str]:
    """The sessions folder and name of the big session rows 12 and 20 measure: `queued` plans
    with their files and `completed` in history, with the journal that made them (bulk inserts
    through sqlite3, as benchmarks.data does)."""
    root = folder / "web-big"
    name = "web-bench-session"
    started = time.perf_counter()
    await seed_session(
        root, name, completed=size["completed"], queued=size["queued"], history_days=HISTORY_DAYS
    )
    print(f"rows 12 and 20: seeded in {time.perf_counter() - started:.1f} s")
    return root, name


async def page_renders(root: Path, name: str, size: dict[str, int]) -> list[float]:
    """Seconds per render of the big session's page (the first, cold one left out)."""
    return (await renders(root, name, size["page_renders"] + 1))[1:]


async def renders(root: Path, name: str, count: int) -> list[float]:
    """Seconds per render of a session's page, `count` renders in one process, the first
    (cold: nothing of the session read yet) first."""
    samples = []
    async with open_nineplan(root) as nineplan:
        app = web_app(nineplan, Settings(sessions_path=root))
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            for _ in range(count):
                start = time.perf_counter()
                page = await http.get(f"/sessions/{name}")
                samples.append(time.perf_counter() - start)
                assert page.status_code == 200, page.text[:200]
    return samples


async def live_delays(
    folder: Path, changes: int = 50, seed: dict[str, int] | None = None
) -> list[float] | None:
    """Seconds from each of `changes` MCP calls to the change on the open page; None without
    Chromium. With `seed` (`queued`, `completed`), the session starts that big."""
    from playwright.async_api import async_playwright  # a dev dependency: imported when used

    if not CHROMIUM.exists():
        print(f"row 13 left out: {CHROMIUM} is missing (apt-get install chromium)")
        return None
    root = folder / "web-live"
    delays: list[float] = []
    async with ui_process(root) as port, Client(server_command(root)) as agent:
        if seed is None:
            created = await agent.call_tool("9plan_session_create", {})
            name = (created.structured_content or {})["session_name"]
        else:
            name = "web-live-session"
            await seed_session(root, name, completed=seed["completed"], queued=seed["queued"])
            await agent.call_tool("9plan_session_resume", {"session_name": name})
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=str(CHROMIUM))
            page = await browser.new_page()
            await page.goto(f"http://127.0.0.1:{port}/sessions/{name}")
            await page.wait_for_selector("[data-testid=live-status][data-state=open]")
            await page.evaluate(OBSERVE)
            for index in range(changes):
                seen = await page.evaluate("window.changes.length")
                before = time.time() * 1000
                added = await agent.call_tool(
                    "9plan_queue_add", {**PLAN, "goal": f"change {index}", "position": "front"}
                )
                assert not added.is_error, added.content
                with anyio.fail_after(10):
                    changed = await page.evaluate(NEXT_CHANGE, seen)
                delays.append((changed - before) / 1000)
                await anyio.sleep(0.05)  # let the observer's records of this change settle
            await browser.close()
    return delays


@asynccontextmanager
async def ui_process(root: Path) -> AsyncIterator[int]:
    """A real `nineplan ui` on `root`; yields its port once it accepts connections."""
    port = free_port()
    params = server_command(root)
    ui = await anyio.open_process(
        [params.command, "-m", "nineplan_adapters", "ui", "--port", str(port)], env=params.env
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    await anyio.sleep(0.05)
        yield port
    finally:
        ui.terminate()
        await ui.wait()


async def _read_events(
    http: httpx2.AsyncClient, url: str, arrived: MemoryObjectSendStream[tuple[float, str]]
) -> None:
    """Each `data:` line of the stream at `url`, with when it arrived (perf_counter)."""
    async with http.stream("GET", url) as response, arrived:
        async for line in response.aiter_lines():
            if line.startswith("data:"):
                await arrived.send((time.perf_counter(), line))


async def sse_delays(root: Path, name: str, changes: int) -> list[float]:
    """Seconds from each of `changes` adds by an agent (a stdio server process) to the
    `fragments` event carrying it on a plain SSE client of a `nineplan ui` process. The agent
    may queue more than the default 10,000 (NINEPLAN_MAX_QUEUE): the session starts full."""
    agent_params = server_command(root)
    agent_params.env = {**(agent_params.env or {}), "NINEPLAN_MAX_QUEUE": "100000"}
    delays: list[float] = []
    arrived, events = anyio.create_memory_object_stream[tuple[float, str]](100)
    async with (
        arrived,
        events,
        ui_process(root) as port,
        Client(agent_params) as agent,
        httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=None) as http,
        anyio.create_task_group() as tasks,
    ):
        await agent.call_tool("9plan_session_resume", {"session_name": name})
        tasks.start_soon(_read_events, http, f"/sessions/{name}/live", arrived)
        with anyio.fail_after(30):
            await events.receive()  # the first event: the whole page, in step
        for index in range(changes):
            goal = f"sse change number {index}"
            before = time.perf_counter()
            added = await agent.call_tool(
                "9plan_queue_add", {**PLAN, "goal": goal, "position": "front"}
            )
            assert not added.is_error, added.content
            with anyio.fail_after(10):
                while goal not in (event := await events.receive())[1]:
                    pass
            delays.append(event[0] - before)
        tasks.cancel_scope.cancel()
    return delays


async def crowded(folder: Path) -> None:
    """The crowded window: row 12's session (100,000 completed, 10,000 queued) with its
    completions spread over one day, so the chart counts most of them; prints the first
    render of the page and the median of the next ten. Seeds `folder` unless it holds the
    session already (seeding takes a minute or two)."""
    name = "web-crowded-session"
    if not (folder / name).exists():
        started = time.perf_counter()
        await seed_session(folder, name, completed=100_000, queued=10_000, history_days=1)
        print(f"seeded in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    first, *later = await renders(folder, name, 11)
    print(
        f"first render {first * 1000:.1f} ms, next ten median {statistics.median(later) * 1000:.1f} ms"
    )


def main() -> None:
    """python -m benchmarks.web [--sessions FOLDER]: the crowded window's renders."""
    parser = argparse.ArgumentParser(description=crowded.__doc__)
    parser.add_argument(
        "--sessions", type=Path, help="seed here and keep it (default: a temporary folder)"
    )
    options = parser.parse_args()
    if options.sessions is not None:
        anyio.run(crowded, options.sessions)
        return
    with tempfile.TemporaryDirectory(prefix="nineplan-bench-") as temporary:
        anyio.run(crowded, Path(temporary))


if __name__ == "__main__":
    main()
