"""The web view's pages over the real use cases, in process (HTTP through the ASGI app)."""

import datetime as dt
import html.parser
import re
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import attrs
import httpx2
import pytest

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.web import web_app
from nineplan_adapters.entrypoints.web.live import LAPSE_MARGIN, until_a_lease_lapses
from nineplan_adapters.entrypoints.web.pages import Pages, SessionView
from nineplan_adapters.entrypoints.web.reads import JOURNAL_LIMIT, PAGE_SIZE, JournalPage, QueuePage
from nineplan_adapters.entrypoints.web.rendering import ago, duration, first_line, held_for, marked
from nineplan_adapters.entrypoints.web.security import WebSecurity, allowed
from nineplan_core.callers import Caller
from nineplan_core.journal import Actor, Event, EventKind
from nineplan_core.results import SNIPPET_MARKS
from tests.fakes import PLAN, Backend

ORIGIN = "http://127.0.0.1:8765"


@attrs.frozen(kw_only=True)
class Unreadable:
    """The shape of a stored journal row that is not a valid event: its seq and what is wrong."""

    seq: int
    problem: str


@pytest.fixture
async def client(backend: Backend) -> AsyncIterator[httpx2.AsyncClient]:
    app = web_app(backend.service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        yield http


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


async def test_pages_escape_what_agents_wrote(backend: Backend, client: httpx2.AsyncClient):
    """Every page shows agent text as text: no tag an agent wrote survives into the HTML."""
    name = await backend.session("<b>task</b>")
    placed = await backend.service.add_plan(name, **{**PLAN, "goal": "<script>alert(1)</script>"})
    for path in ("/", f"/sessions/{name}", f"/sessions/{name}/plans/{placed.plan.id}"):
        page = await client.get(path)
        assert page.status_code == 200
        assert "<script>alert" not in page.text
        assert "<b>task" not in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
    session_page = (await client.get(f"/sessions/{name}")).text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in session_page
    assert 'data-testid="journal"' in session_page  # the add's event, escaped like the rest


async def test_the_queue_is_paginated_past_200(backend: Backend, client: httpx2.AsyncClient):
    """A queue of 201 plans shows 200 on page 1 and the 201st on page 2, ranks continuing."""
    name = await backend.session()
    for number in range(PAGE_SIZE + 1):
        await backend.service.add_plan(name, **{**PLAN, "goal": f"plan number {number}"})
    first = (await client.get(f"/sessions/{name}")).text
    assert first.count("data-plan-id=") == PAGE_SIZE
    assert "Page 1 of 2" in first
    second = (await client.get(f"/sessions/{name}?page=2")).text
    assert second.count("data-plan-id=") == 1
    assert 'start="201"' in second
    assert "plan number 200" in second
    assert (await client.get(f"/sessions/{name}?page=99")).text.count("data-plan-id=") == 1


async def test_a_completed_plan_and_the_search(backend: Backend, client: httpx2.AsyncClient):
    """A completed plan's page shows its outcome; the search box finds it, matches marked."""
    name = await backend.session()
    placed = await backend.service.add_plan(name, **PLAN)
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "created the users table <em>")
    plan_page = (await client.get(f"/sessions/{name}/plans/{placed.plan.id}")).text
    assert "created the users table &lt;em&gt;" in plan_page
    assert "completed" in plan_page
    found = (await client.get(f"/sessions/{name}", params={"q": "users"})).text
    assert f'data-plan-id="{placed.plan.id}"' in found
    assert "<mark>" in found
    refused = (await client.get(f"/sessions/{name}", params={"q": "!!"})).text
    assert "no searchable word" in refused


async def test_a_dropped_plan_shows_why(backend: Backend, client: httpx2.AsyncClient):
    """A plan a person dropped has its own page: discarded, with the reason in its notes."""
    name = await backend.session()
    placed = await backend.service.add_plan(name, **PLAN)
    queued_page = (await client.get(f"/sessions/{name}/plans/{placed.plan.id}")).text
    assert "will find it" in queued_page
    await backend.service.drop_plan(name, placed.plan.id, "superseded by the new schema")
    page = (await client.get(f"/sessions/{name}/plans/{placed.plan.id}")).text
    assert 'data-testid="status">discarded<' in page
    assert "Dropped by a person: superseded by the new schema" in page
    assert "Discarded</dt>" in page


async def test_unknown_sessions_and_plans_are_404(backend: Backend, client: httpx2.AsyncClient):
    """A missing session or plan is a 404 page naming the category; a bad name is a 400."""
    name = await backend.session()
    assert (await client.get("/sessions/no-such-session")).status_code == 404
    assert (await client.get(f"/sessions/{name}/plans/zzzzz")).status_code == 404
    assert (await client.get("/sessions/Not_A_Name")).status_code == 400
    assert (await client.get("/sessions/no-such-session/live")).status_code == 404


async def test_forms_steer_and_refuse(backend: Backend, client: httpx2.AsyncClient):
    """Add, move and drop through the forms; the active plan and a missing token are refused."""
    name = await backend.session()
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    headers = {"origin": ORIGIN}
    added = await client.post(
        f"/sessions/{name}/plans",
        data={**PLAN, "goal": "from the form", "position": "front", "csrf": csrf},
        headers=headers,
    )
    assert (added.status_code, added.headers["location"]) == (303, f"/sessions/{name}")
    state = await backend.service.session_state(name)
    [entry] = state.queue
    assert entry.goal == "from the form"
    await backend.service.pull_plan(name)
    moved = await client.post(
        f"/sessions/{name}/plans/{entry.id}/move",
        data={"position": "back", "csrf": csrf},
        headers=headers,
    )
    assert moved.status_code == 409
    assert "the agent is working on it" in moved.text
    dropped = await client.post(
        f"/sessions/{name}/plans/{entry.id}/drop", data={"reason": "x"}, headers=headers
    )
    assert dropped.status_code == 403
    invalid = await client.post(
        f"/sessions/{name}/plans", data={"goal": "", "csrf": csrf}, headers=headers
    )
    assert invalid.status_code == 400
    assert (await backend.service.session_state(name)).active_plan is not None


async def test_a_foreign_origin_or_host_is_refused(backend: Backend, client: httpx2.AsyncClient):
    """A POST from another Origin is 403 and a foreign Host 421, before anything is read."""
    name = await backend.session()
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    foreign = await client.post(
        f"/sessions/{name}/plans",
        data={**PLAN, "csrf": csrf},
        headers={"origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    assert (await client.get("/", headers={"host": "evil.example"})).status_code == 421
    assert (await backend.service.session_state(name)).queue == []


def test_the_journal_section_renders_newest_first_and_escaped():
    """The journal fragment lists the events given, each with its seq, detail escaped."""
    pages = Pages(service=None, security=WebSecurity([], []))  # type: ignore[arg-type]
    at = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
    events = [
        Event(seq=2, kind=EventKind.PLAN_MOVED, at=at, actor=Actor.PERSON, plan_id="abcde",
              detail={"position": "front", "rank": 1}),
        Event(seq=1, kind=EventKind.SESSION_CREATED, at=at, actor=Actor.AGENT,
              detail={"reason": "<img src=x>"}),
    ]  # fmt: skip
    journal = JournalPage([*events, Unreadable(seq=0, problem="edited by hand")])  # type: ignore[list-item]
    html = pages.fragment("journal", journal, SessionView())
    assert html.index('data-seq="2"') < html.index('data-seq="1"') < html.index('data-seq="0"')
    assert "event 0 cannot be read: edited by hand" in html
    assert 'data-testid="journal"' in html
    assert "&lt;img src=x&gt;" in html
    assert "person" in html


def test_helpers():
    """Pages clamp, snippets split on their marks, origins match with any port, durations
    read as people say them."""
    assert QueuePage.of([], 5).number == 1
    now = dt.datetime(2026, 1, 5, tzinfo=dt.UTC)
    ago = [dt.timedelta(seconds=30), dt.timedelta(minutes=4), dt.timedelta(hours=2),
           dt.timedelta(hours=2, minutes=5), dt.timedelta(days=3), dt.timedelta(days=3, hours=4)]  # fmt: skip
    assert [duration(now - delta, now) for delta in ago] == [
        "under a minute", "4 min", "2 h", "2 h 5 min", "3 d", "3 d 4 h"
    ]  # fmt: skip
    assert SessionView(2, 40).query() == "?page=2&before=40"
    assert SessionView().query() == "?"
    start, end = SNIPPET_MARKS
    assert list(marked(f"a {start}b{end} c")) == [("a ", False), ("b", True), (" c", False)]
    assert allowed("http://127.0.0.1:9", ["http://127.0.0.1:*"])
    assert not allowed("http://127.0.0.1.evil:9", ["http://127.0.0.1:*"])
    assert not allowed("http://evil.example", ["http://127.0.0.1:*"])
    assert allowed("127.0.0.1", ["127.0.0.1:*"])


@pytest.mark.parametrize("backend_kind", ["memory"], indirect=True)
async def test_the_token_guard_in_process(tmp_path: Path, backend: Backend):
    """With a token: pages redirect to /login, POSTs are 401, a bearer header or the cookie passes."""
    app = web_app(backend.service, Settings(sessions_path=tmp_path, http_token="t0ken"))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        page = await http.get("/sessions/some-session-name")
        assert (page.status_code, page.headers["location"]) == (
            303,
            "/login?next=/sessions/some-session-name",
        )
        assert (
            await http.post("/sessions/a-b-c/plans", headers={"origin": ORIGIN})
        ).status_code == 401
        assert (await http.get("/", headers={"authorization": "Bearer t0ken"})).status_code == 200
        login = await http.get("/login?next=//evil.example")
        csrf = csrf_of(login.text)
        assert 'name="next" value="/"' in login.text
        signed = await http.post(
            "/login", data={"token": "t0ken", "csrf": csrf, "next": "/"}, headers={"origin": ORIGIN}
        )
        assert signed.status_code == 303
        assert "httponly" in signed.headers["set-cookie"].lower()
        assert "samesite=strict" in signed.headers["set-cookie"].lower()
        assert (await http.get("/")).status_code == 200  # the cookie is kept by the client
    open_app = web_app(backend.service, Settings(sessions_path=tmp_path))
    async with httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=open_app), base_url=ORIGIN
    ) as http:
        assert (await http.get("/login")).status_code == 303  # no token: nothing to sign in to


async def test_every_backends_session_page_is_live(backend: Backend, client: httpx2.AsyncClient):
    """The session page and the list carry the live marker on every backend, PostgreSQL
    too (the browser tests watch the streams themselves)."""
    name = await backend.session()
    page = (await client.get(f"/sessions/{name}?page=1&before=7")).text
    assert f'data-live="/sessions/{name}/live?before=7"' in page
    assert 'data-live="/live"' in (await client.get("/")).text


async def test_the_session_list_shows_activity(backend: Backend, client: httpx2.AsyncClient):
    """Each row has the active plan and for how long, the stuck plans and the last activity."""
    backend.clock.now = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.UTC)
    name = await backend.session("<i>task</i>")
    stuck = await backend.service.add_plan(name, **{**PLAN, "goal": "keeps slipping"})
    for _ in range(3):
        await backend.service.pull_plan(name)
        await backend.service.defer_plan(name, "blocked")
    other = await backend.service.add_plan(name, **{**PLAN, "goal": "the one <b>held</b>"})
    await backend.service.move_plan(name, other.plan.id, "front")
    backend.clock.now = dt.datetime(2026, 1, 2, 3, 10, tzinfo=dt.UTC)
    await backend.service.pull_plan(name)
    idle = await backend.session("idle")
    backend.clock.now = dt.datetime(2026, 1, 2, 5, 15, tzinfo=dt.UTC)
    [busy, quiet] = await backend.service.list_sessions([name, idle])
    assert (busy.active_plan_id, busy.active_goal) == (other.plan.id, "the one <b>held</b>")
    assert busy.stuck_plans == [stuck.plan.id]
    assert busy.pulled_at == busy.last_activity == dt.datetime(2026, 1, 2, 3, 10, tzinfo=dt.UTC)
    assert (quiet.active_plan_id, quiet.stuck_plans, quiet.pulled_at) == (None, [], None)
    html = (await client.get("/")).text
    row = html[html.index(f'data-session="{name}"') :].split("</tr>")[0]
    assert f'data-plan-id="{other.plan.id}"' in row
    assert "the one &lt;b&gt;held&lt;/b&gt;" in row
    assert ">2 h 5 min</time>" in row  # active for that long, and the last change as long ago
    assert (
        f'<a href="/sessions/{name}/plans/{stuck.plan.id}" data-plan-id="{stuck.plan.id}">' in row
    )
    assert "&lt;i&gt;task" in row


async def test_the_journal_is_paginated(backend: Backend, client: httpx2.AsyncClient):
    """The journal shows the newest JOURNAL_LIMIT events; `before` pages back to event 1; the
    links lead to the session page, also from a refused form shown at the form's address."""
    name = await backend.session()
    for number in range(JOURNAL_LIMIT + 20):
        await backend.service.add_plan(name, **{**PLAN, "goal": f"plan {number}"})
    newest = JOURNAL_LIMIT + 21  # session_created, then one plan_added each

    def seqs(html: str) -> list[int]:
        journal = html[html.index('data-testid="journal"') :]
        return [int(seq) for seq in re.findall(r'<li data-seq="(\d+)"', journal)]

    first = (await client.get(f"/sessions/{name}")).text
    assert seqs(first) == list(range(newest, newest - JOURNAL_LIMIT, -1))
    older = newest - JOURNAL_LIMIT + 1
    assert f'href="/sessions/{name}?before={older}"' in first
    second = (await client.get(f"/sessions/{name}?before={older}")).text
    assert seqs(second) == list(range(older - 1, 0, -1))
    assert 'data-action="older"' not in second
    assert f'href="/sessions/{name}?"' in second  # back to the newest
    refused = await client.post(  # shown at the form's address, its links lead to the session
        f"/sessions/{name}/plans",
        data={**PLAN, "goal": " ", "csrf": csrf_of(first)},
        headers={"origin": ORIGIN},
    )
    assert refused.status_code == 400
    assert f'href="/sessions/{name}?before={older}"' in refused.text
    assert seqs((await client.get(f"/sessions/{name}?page=1&before=1")).text) == []
    assert seqs((await client.get(f"/sessions/{name}?before=x")).text) == seqs(first)


@pytest.mark.parametrize(
    "query",
    ["before=99999999999999999999999", "before=9223372036854775808", "before=%C2%B2",
     "page=%C2%B2", "page=" + "9" * 5000, "before=-5", "page=-1", "before=abc"],
)  # fmt: skip
async def test_hostile_page_and_seq_parameters_show_the_default_view(
    backend: Backend, client: httpx2.AsyncClient, query: str
):
    """Numbers too big for a database, digits that are not ASCII and negative or missing ones
    never fail the page: it shows the first queue page and the newest journal page."""
    name = await backend.session()
    await backend.service.add_plan(name, **PLAN)
    page = await client.get(f"/sessions/{name}?{query}")
    assert page.status_code == 200
    assert 'data-seq="2"' in page.text


async def test_a_token_or_cookie_that_is_not_ascii_is_refused_not_a_crash(
    tmp_path: Path, backend: Backend, client: httpx2.AsyncClient
):
    """A CSRF field or a cookie with non-ASCII text is refused (403, or the sign-in page),
    never a server error, and nothing changes."""
    name = await backend.session()
    posted = await client.post(
        f"/sessions/{name}/plans", data={**PLAN, "csrf": "é"}, headers={"origin": ORIGIN}
    )
    assert posted.status_code == 403
    assert (await backend.service.session_state(name)).queue == []
    app = web_app(backend.service, Settings(sessions_path=tmp_path, http_token="t0ken"))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url=ORIGIN) as http:
        page = await http.get("/", headers={b"cookie": "nineplan_token=\u00e9".encode()})
        assert page.status_code == 303


async def test_a_head_request_on_a_live_stream_answers_at_once(
    backend: Backend, client: httpx2.AsyncClient
):
    """HEAD on a session's or the list's live stream answers the stream's headers with an
    empty body at once, instead of opening a stream that never ends."""
    name = await backend.session()
    for path in (f"/sessions/{name}/live", "/live"):
        with anyio.fail_after(5):
            head = await client.head(path)
        assert head.status_code == 200
        assert head.headers["content-type"] == "text/event-stream; charset=utf-8"
        assert head.content == b""


@pytest.mark.parametrize("prefix", ["9plan_", "nineplan_"])
async def test_the_empty_session_list_names_the_create_tool_as_configured(
    backend: Backend, prefix: str
):
    """With no session yet, the list names the tool an agent creates one with, under the
    NINEPLAN_TOOL_PREFIX of the settings the view runs with."""
    app = web_app(backend.service, Settings(sessions_path=backend.root, tool_prefix=prefix))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        page = await http.get("/")
    assert page.status_code == 200
    assert f"<code>{prefix}session_create</code>" in page.text
    assert prefix == "9plan_" or "9plan_" not in page.text


async def test_the_done_column_holds_the_20_newest_completed_and_the_discarded_folded(
    backend: Backend, client: httpx2.AsyncClient
):
    """Of 23 completed plans the Done column's cards are the 20 most recent, newest first,
    each with its outcome's first line; discarded and dropped plans are not cards but the
    folded list, with reason and who; time on a card is relative, the UTC time in `datetime`
    and `title`."""
    backend.clock.now = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.UTC)
    name = await backend.session()
    ids = []
    for number in range(23):
        ids.append((await backend.service.add_plan(name, **{**PLAN, "goal": f"g{number}"})).plan.id)
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, f"outcome {number} <b>\nsecond line")
    gone = await backend.service.add_plan(name, **{**PLAN, "goal": "gone"})
    await backend.service.drop_plan(name, gone.plan.id, "no longer <i>wanted</i>")
    backend.clock.now = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)
    page = (await client.get(f"/sessions/{name}")).text
    done = page[page.index('data-testid="column-done"') : page.index('class="add"')]
    cards = re.findall(r'data-testid="card" class="card done-card" data-plan-id="(\w+)"', done)
    assert cards == ids[::-1][:20]
    assert "outcome 22 &lt;b&gt;</p>" in done
    assert "second line" not in done
    folded = done[done.index('data-testid="discarded"') :]
    assert f'data-discarded="{gone.plan.id}"' in folded
    assert "no longer &lt;i&gt;wanted&lt;/i&gt;" in folded
    assert "dropped by a person" in folded
    assert f'data-plan-id="{gone.plan.id}"' not in page
    assert (
        '<time datetime="2026-01-02T03:00:00Z" title="2026-01-02T03:00:00Z" data-ago>4 min ago'
        in done
    )


async def test_the_plan_page_shows_the_files_full_path_and_times(
    backend: Backend, client: httpx2.AsyncClient
):
    """A queued plan's page shows the full path of its file, where the agent will find it,
    and when it was created as a relative time with the UTC time on hover."""
    backend.clock.now = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.UTC)
    name = await backend.session()
    placed = await backend.service.add_plan(name, **PLAN)
    backend.clock.now = dt.datetime(2026, 1, 2, 5, 0, tzinfo=dt.UTC)
    page = (await client.get(f"/sessions/{name}/plans/{placed.plan.id}")).text
    assert (
        '<dt>Created</dt><dd><time datetime="2026-01-02T03:00:00Z" '
        'title="2026-01-02T03:00:00Z" data-ago>2 h ago</time></dd>'
    ) in page
    assert f'data-testid="file-path">File: <code>{placed.path}</code>' in page
    assert placed.path.endswith(f"{placed.plan.id}.txt")


def test_relative_times_carry_the_utc_time():
    """`ago` and `held_for` write a <time> with the UTC time in datetime and title and the
    relative text, escaping nothing away."""
    now = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)
    then = dt.datetime(2026, 1, 5, 13, 56, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert str(ago(then, now)) == (
        '<time datetime="2026-01-05T11:56:00Z" title="2026-01-05T11:56:00Z" data-ago>4 min ago</time>'
    )
    assert str(held_for(then, now)).endswith(" data-since>4 min</time>")
    assert first_line("\n  first  \nsecond") == "first"
    assert first_line(None) == ""


class _Controls(html.parser.HTMLParser):
    """Collects a page's `style` attributes and `<style>` elements, and its form controls
    with whether each has a label (inside a <label>, or aria-label; hidden inputs need none)."""

    def __init__(self) -> None:
        super().__init__()
        self.styles: list[str] = []
        self.unlabelled: list[str] = []
        self.labels = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if "style" in found or tag == "style":
            self.styles.append(tag)
        if tag == "label":
            self.labels += 1
        control = tag in {"input", "select", "textarea"} and found.get("type") != "hidden"
        if control and not self.labels and not found.get("aria-label"):
            self.unlabelled.append(f"{tag} {found.get('name')}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self.labels -= 1


async def test_the_board_has_no_inline_style_and_every_control_a_label(
    backend: Backend, client: httpx2.AsyncClient
):
    """A session page with cards in every column (queue, active, done, discarded) and a plan
    page carry no `style` attribute or `<style>` (the CSP allows neither), and every form
    control has a label."""
    name = await backend.session()
    for goal in ("one", "two", "three", "four"):
        await backend.service.add_plan(name, **{**PLAN, "goal": goal})
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "done")
    await backend.service.pull_plan(name)
    await backend.service.discard_plan(name, "not needed")
    placed = await backend.service.pull_plan(name)
    for path in (f"/sessions/{name}", f"/sessions/{name}/plans/{placed.plan.id}"):
        controls = _Controls()
        controls.feed((await client.get(path)).text)
        assert controls.styles == [], path
        assert controls.unlabelled == [], path


async def test_the_live_stream_wakes_when_the_earliest_live_lease_lapses(backend: Backend):
    """The session stream's wait ends LAPSE_MARGIN after the earliest live lease lapses: `w1`'s
    (pulled a minute before `w2`'s) first, then `w2`'s once `w1`'s is stale; with every lease
    lapsed, or no plan active, only a change wakes it."""
    name = await backend.session()
    nothing = await backend.service.session_state(name)
    for goal in ("one", "two"):
        await backend.service.add_plan(name, **{**PLAN, "goal": goal})
    await backend.service.pull_plan(name, caller=Caller.of("w1"))
    backend.clock.advance(60)
    await backend.service.pull_plan(name, caller=Caller.of("w2"))
    state = await backend.service.session_state(name)
    lease = backend.service.lease_minutes * 60
    now = backend.clock.now
    assert until_a_lease_lapses(state, now, lease / 60) == lease - 60 + LAPSE_MARGIN
    later = now + dt.timedelta(seconds=lease - 59)
    assert until_a_lease_lapses(state, later, lease / 60) == 59 + LAPSE_MARGIN
    gone = now + dt.timedelta(seconds=lease + 1)
    assert until_a_lease_lapses(state, gone, lease / 60) == float("inf")
    assert until_a_lease_lapses(nothing, now, lease / 60) == float("inf")
