"""The web view at a glance: the chart's counts, the session list's order and filter, the favicon."""

import datetime as dt
import re
from collections.abc import AsyncIterator

import httpx2
import pytest

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.web import web_app
from nineplan_adapters.entrypoints.web.chart import HOURS, Chart, hourly, window_start
from nineplan_adapters.entrypoints.web.pages import listed
from nineplan_core.journal import Actor, Event, EventKind, UnreadableEvent
from nineplan_core.model import Session, SessionName
from nineplan_core.results import SessionSummary, UnreadableSession
from tests.fakes import PLAN, Backend

ORIGIN = "http://127.0.0.1:8765"
NOW = dt.datetime(2026, 3, 4, 10, 30, tzinfo=dt.UTC)


def event(seq: int, kind: EventKind, at: dt.datetime) -> Event:
    return Event(seq=seq, kind=kind, at=at, actor=Actor.AGENT, plan_id="abcde")


@pytest.fixture
async def client(backend: Backend) -> AsyncIterator[httpx2.AsyncClient]:
    app = web_app(backend.service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        yield http


def bars(html: str) -> dict[tuple[str, str], int]:
    """The chart's bars in a page: (hour, kind) -> count, from their data attributes."""
    found = re.findall(r'data-hour="([^"]+)" data-kind="(\w+)" data-count="(\d+)"', html)
    return {(hour, kind): int(count) for hour, kind, count in found}


def test_hourly_counts_completions_and_deferrals_per_utc_hour():
    """Each of the 24 hours up to now counts the completions and deferrals in it; other kinds,
    unreadable events, events before the window and in a later hour are left out; hours are
    UTC whatever zone an event's time was given in."""
    plus_two = dt.timezone(dt.timedelta(hours=2))
    events = [
        event(1, EventKind.PLAN_COMPLETED, NOW - dt.timedelta(hours=24)),  # before the window
        event(2, EventKind.PLAN_COMPLETED, dt.datetime(2026, 3, 3, 11, 0, tzinfo=dt.UTC)),
        event(3, EventKind.PLAN_DEFERRED, dt.datetime(2026, 3, 4, 9, 59, tzinfo=dt.UTC)),
        event(4, EventKind.PLAN_DEFERRED, dt.datetime(2026, 3, 4, 11, 5, tzinfo=plus_two)),
        event(5, EventKind.PLAN_COMPLETED, dt.datetime(2026, 3, 4, 10, 1, tzinfo=dt.UTC)),
        event(6, EventKind.PLAN_PULLED, dt.datetime(2026, 3, 4, 10, 2, tzinfo=dt.UTC)),
        event(7, EventKind.PLAN_COMPLETED, NOW + dt.timedelta(hours=1)),  # a later hour
    ]
    hours = hourly([*events, UnreadableEvent(seq=8, problem="edited by hand")], NOW)
    assert len(hours) == HOURS
    assert hours[0].start == window_start(NOW) == dt.datetime(2026, 3, 3, 11, tzinfo=dt.UTC)
    assert hours[-1].start == dt.datetime(2026, 3, 4, 10, tzinfo=dt.UTC)
    counted = {
        hour.start.hour: (hour.completed, hour.deferred)
        for hour in hours
        if hour.completed or hour.deferred
    }
    assert counted == {11: (1, 0), 9: (0, 2), 10: (1, 0)}


def test_the_chart_scales_its_bars_to_the_tallest_and_labels_every_sixth_hour():
    """The tallest count fills the bar room, half of it is half as tall, a zero is flat; each
    bar's label names its UTC hour and count; labels sit under hours 0, 6, 12 and 18 of the
    window."""
    at = dt.datetime(2026, 3, 4, 8, 10, tzinfo=dt.UTC)
    events = [event(n, EventKind.PLAN_COMPLETED, at) for n in range(1, 5)]
    events += [event(9 + n, EventKind.PLAN_DEFERRED, at) for n in range(2)]
    chart = Chart.of(events, NOW)
    drawn = {(bar.hour, bar.kind): bar for bar in chart.bars}
    completed = drawn[(at.replace(minute=0), "completed")]
    deferred = drawn[(at.replace(minute=0), "deferred")]
    assert completed.height == pytest.approx(2 * deferred.height)
    assert completed.y + completed.height == chart.base
    assert sum(1 for bar in chart.bars if bar.height == 0) == 2 * HOURS - 2
    assert completed.label == "08:00 UTC: 4 completed"
    assert [label.text for label in chart.labels] == ["11:00", "17:00", "23:00", "05:00"]
    assert (chart.completed, chart.deferred) == (4, 2)


async def test_the_session_page_draws_the_journals_counts(
    backend: Backend, client: httpx2.AsyncClient
):
    """The session page's chart has one completed and one deferred bar per hour, and those of
    the hours the (fixed) clock was in when plans were completed and deferred carry the counts,
    also for the events after an earlier render; the chart's text is escaped and has no style
    of its own."""
    name = await backend.session("<img src=x onerror=alert(1)>")
    for _ in range(3):
        await backend.service.add_plan(name, **PLAN)
    start = backend.clock.now
    await backend.service.pull_plan(name)
    await backend.service.defer_plan(name, "blocked", "back")
    before = bars((await client.get(f"/sessions/{name}")).text)
    assert sum(before.values()) == 1  # the deferral; the page keeps a tally from here
    backend.clock.advance(3600)
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "done")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "done too")
    html = (await client.get(f"/sessions/{name}")).text
    chart = html[html.index('data-testid="chart"') : html.index("</figure>")]
    counts = bars(chart)
    assert len(counts) == 2 * HOURS
    first, second = (
        (start + dt.timedelta(hours=n)).replace(minute=0, second=0, microsecond=0).isoformat()
        for n in (0, 1)
    )
    assert {key: n for key, n in counts.items() if n} == {
        (first, "deferred"): 1,
        (second, "completed"): 2,
    }
    assert "<img src=x" not in chart
    assert "&lt;img src=x onerror=alert(1)&gt;" in chart
    assert "style" not in chart


def summary(name: str, task: str, at: dt.datetime | None) -> SessionSummary:
    session = Session(name=SessionName(name), created_at=NOW, task_description=task)
    return SessionSummary(session=session, queue_length=0, completed_count=0, last_activity=at)


def test_the_list_is_newest_activity_first_and_filters_by_name_or_task():
    """Sessions come newest activity first, then those without (unreadable ones among them)
    by name; a filter keeps those whose name or task holds it, ignoring case."""
    lines: list[SessionSummary | UnreadableSession] = [
        summary("old-quiet-fox", "Write the docs", NOW - dt.timedelta(days=2)),
        summary("new-busy-owl", "Build the API", NOW),
        UnreadableSession(name="bad-broken-elk", error="not a database"),
        summary("mid-calm-cat", "Fix the API tests", NOW - dt.timedelta(hours=1)),
        summary("aaa-never-ant", "nothing yet", None),
    ]
    assert [line.name for line in listed(lines)] == [
        "new-busy-owl", "mid-calm-cat", "old-quiet-fox", "aaa-never-ant", "bad-broken-elk"
    ]  # fmt: skip
    assert [line.name for line in listed(lines, " api ")] == ["new-busy-owl", "mid-calm-cat"]
    assert [line.name for line in listed(lines, "ELK")] == ["bad-broken-elk"]
    assert listed(lines, "no such words") == []


async def test_the_list_page_orders_filters_and_escapes(
    backend: Backend, client: httpx2.AsyncClient
):
    """`/` lists the session with the newest event first and `?q=` keeps the matching ones,
    the box showing the filter escaped and the live stream following the same filter; the
    last activity is a `<time>` with the UTC time in `datetime` and `title`."""
    first = await backend.session("first task")
    backend.clock.advance(60)
    second = await backend.session("second task")
    backend.clock.advance(60)
    await backend.service.add_plan(first, **PLAN)  # first is now the newest
    page = (await client.get("/")).text
    assert page.index(f'data-session="{first}"') < page.index(f'data-session="{second}"')
    stamp = f"{backend.clock.now:%Y-%m-%dT%H:%M:%SZ}"
    assert f'<time datetime="{stamp}" title="{stamp}" data-ago>' in page
    filtered = (await client.get("/", params={"q": 'SECOND "><b>'})).text
    assert f'data-session="{second}"' not in filtered
    assert "No session's name or task holds “SECOND &#34;&gt;&lt;b&gt;”" in filtered
    assert 'value="SECOND &#34;&gt;&lt;b&gt;"' in filtered
    kept = (await client.get("/", params={"q": "SECOND"})).text
    assert f'data-session="{second}"' in kept
    assert f'data-session="{first}"' not in kept
    assert 'data-live="/live?q=SECOND"' in kept


async def test_the_favicon_is_served_and_linked(client: httpx2.AsyncClient):
    """Every page links the SVG favicon, and /favicon.ico (asked for unprompted) serves it."""
    assert 'rel="icon" href="/static/favicon.svg"' in (await client.get("/")).text
    for path in ("/favicon.ico", "/static/favicon.svg"):
        icon = await client.get(path)
        assert icon.status_code == 200
        assert icon.headers["content-type"].startswith("image/svg+xml")
        assert icon.text.startswith("<svg")
