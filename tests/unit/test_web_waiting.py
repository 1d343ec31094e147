"""Plans that wait for others, in the web view, in process: waiting cards and their chips on
the board, a plan page's "Waits for" and "Needed by", and the graph page (DESIGN §11,
"People")."""

import html.parser
from collections.abc import AsyncIterator

import httpx2
import pytest

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.web import web_app
from nineplan_adapters.entrypoints.web.pages import Pages
from nineplan_adapters.entrypoints.web.reads import Reads
from nineplan_adapters.entrypoints.web.security import WebSecurity
from nineplan_core.callers import Caller
from tests.fakes import PLAN, Backend

ORIGIN = "http://127.0.0.1:8765"
SCRIPT = "<script>alert(1)</script>"


@pytest.fixture
async def client(backend: Backend) -> AsyncIterator[httpx2.AsyncClient]:
    app = web_app(backend.service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        yield http


class _Tags(html.parser.HTMLParser):
    """Every start tag of a page with its attributes, in document order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def having(self, key: str) -> list[dict[str, str | None]]:
        return [found for _, found in self.tags if key in found]


def tags_of(page: str) -> _Tags:
    tags = _Tags()
    tags.feed(page)
    return tags


async def _added(backend: Backend, name: str, goal: str, after: list[str] | None = None) -> str:
    placed = await backend.service.add_plan(name, **{**PLAN, "goal": goal}, after=after)
    return placed.plan.id


async def test_a_waiting_card_is_marked_and_chips_link_each_prerequisite(
    backend: Backend, client: httpx2.AsyncClient
):
    """With A, B and C queued and D after A and B, D's card has `data-waiting="true"` and one
    chip per prerequisite linking to its plan's page, in the order named; the others have
    `data-waiting="false"` and no chip; chips carry no `data-plan-id`, so the queue's hook
    still lists the cards alone."""
    name = await backend.session()
    a, b, c = [await _added(backend, name, goal) for goal in ("A", "B", "C")]
    d = await _added(backend, name, "D", after=[a, b])
    tags = tags_of((await client.get(f"/sessions/{name}")).text)
    cards = {t["data-plan-id"]: t for t in tags.having("data-waiting")}
    assert {plan: t["data-waiting"] for plan, t in cards.items()} == {
        a: "false",
        b: "false",
        c: "false",
        d: "true",
    }
    chips = tags.having("data-waits-for")
    assert [(t["data-waits-for"], t["href"]) for t in chips] == [
        (a, f"/sessions/{name}/plans/{a}"),
        (b, f"/sessions/{name}/plans/{b}"),
    ]
    assert all("data-plan-id" not in t for t in chips)
    assert [t["data-plan-id"] for t in tags.having("data-rank")] == [a, b, c, d]


async def test_a_card_is_ready_once_its_prerequisites_settle(
    backend: Backend, client: httpx2.AsyncClient
):
    """B after A: once A is completed B's card is ready (`data-waiting="false"`, no chip);
    a discarded prerequisite settles too."""
    name = await backend.session()
    a = await _added(backend, name, "A")
    b = await _added(backend, name, "B", after=[a])
    c = await _added(backend, name, "C")
    d = await _added(backend, name, "D", after=[c])
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "A is done")
    await backend.service.pull_plan(name)  # B, ready now, is the first ready plan
    tags = tags_of((await client.get(f"/sessions/{name}")).text)
    cards = {t["data-plan-id"]: t["data-waiting"] for t in tags.having("data-waiting")}
    assert b not in cards  # pulled: the first ready plan
    assert cards == {c: "false", d: "true"}
    await backend.service.drop_plan(name, c, "not needed")
    tags = tags_of((await client.get(f"/sessions/{name}")).text)
    assert {t["data-plan-id"]: t["data-waiting"] for t in tags.having("data-waiting")} == {
        d: "false"
    }
    assert tags.having("data-waits-for") == []


async def test_the_plan_page_lists_what_it_waits_for_and_what_needs_it(
    backend: Backend, client: httpx2.AsyncClient
):
    """B after A, C after B: B's page lists A under "Waits for" and C under "Needed by", each
    a link with its goal escaped; a plan that neither waits nor is waited for has neither."""
    name = await backend.session()
    a = await _added(backend, name, SCRIPT)
    b = await _added(backend, name, "B", after=[a])
    c = await _added(backend, name, "C", after=[b])
    lone = await _added(backend, name, "lone")
    page = (await client.get(f"/sessions/{name}/plans/{b}")).text
    assert "<h2>Waits for</h2>" in page
    assert "<h2>Needed by</h2>" in page
    assert SCRIPT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    tags = tags_of(page)
    assert [t["data-linked"] for t in tags.having("data-linked")] == [a, c]
    links = {t["href"] for tag, t in tags.tags if tag == "a"}
    assert {f"/sessions/{name}/plans/{a}", f"/sessions/{name}/plans/{c}"} <= links
    alone = (await client.get(f"/sessions/{name}/plans/{lone}")).text
    assert "Waits for" not in alone
    assert "Needed by" not in alone


async def test_the_graph_page_draws_active_queued_and_named_settled_plans(
    backend: Backend, client: httpx2.AsyncClient
):
    """The graph page draws the active plans first, then the queued ones by rank, then the
    settled plans they name (a settled plan nobody queued names is left out); each box links
    to its plan's page and carries its state; an arrow runs from each prerequisite; the
    session page links to it; agent text is escaped; the page is live and has a title, a
    heading and a skip link."""
    name = await backend.session(SCRIPT)
    done = await _added(backend, name, "done first")
    other = await _added(backend, name, "done, named by nobody")
    for _ in range(2):
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, "ok")
    held = await _added(backend, name, SCRIPT)
    await backend.service.pull_plan(name, caller=Caller.of("w1"))
    waits = await _added(backend, name, "waits", after=[held, done])
    free = await _added(backend, name, "free", after=[done])
    session_page = (await client.get(f"/sessions/{name}")).text
    assert f'href="/sessions/{name}/graph"' in session_page
    response = await client.get(f"/sessions/{name}/graph")
    assert response.status_code == 200
    page = response.text
    assert SCRIPT not in page
    assert f"<title>Graph · {name} · nineplan</title>" in page
    assert f'<h1 data-session="{name}">Graph of {name}</h1>' in page
    assert 'href="#main"' in page
    assert 'id="main"' in page
    assert f'data-live="/sessions/{name}/graph/live"' in page
    tags = tags_of(page)
    boxes = [t for tag, t in tags.tags if tag == "a" and "data-status" in t]
    assert [(t["data-plan-id"], t["data-status"]) for t in boxes] == [
        (held, "active"),
        (waits, "queued"),
        (free, "queued"),
        (done, "completed"),
    ]
    assert other not in {t["data-plan-id"] for t in boxes}
    assert [t["href"] for t in boxes] == [
        f"/sessions/{name}/plans/{b}" for b in (held, waits, free, done)
    ]
    assert [t["data-waiting"] for t in boxes] == ["false", "true", "false", "false"]
    assert [t["data-settled"] for t in boxes] == ["false", "false", "false", "true"]
    assert boxes[0]["data-worker"] == "w1"
    arrows = {(t["data-from"], t["data-to"]) for t in tags.having("data-from")}
    assert arrows == {(held, waits), (done, waits), (done, free)}


async def test_the_graph_draws_the_front_of_a_long_queue_and_what_it_names(backend: Backend):
    """With a limit of 2, a queue of A, B (after D), C and D draws A and B and then D, which
    B names though it is further back, as queued; C is counted as left out."""
    name = await backend.session()
    a = await _added(backend, name, "A")
    b = await _added(backend, name, "B")
    c = await _added(backend, name, "C")
    d = await _added(backend, name, "D")
    await backend.service.edit_plan_after(name, b, [d])
    drawn = await Reads(backend.service).graph(name, limit=2)
    assert [plan.id for plan in drawn.plans] == [a, b, d]
    assert c not in [plan.id for plan in drawn.plans]
    assert drawn.left_out == 1
    nodes = drawn.nodes(name)
    assert [(node.id, node.waiting) for node in nodes] == [(a, False), (b, True), (d, False)]
    pages = Pages(backend.service, WebSecurity([], []))
    parts, _ = await pages.graph_fragments(name)
    assert {"summary", "graph", "left-out"} == parts.keys()


async def test_the_graph_of_an_unknown_session_is_404(client: httpx2.AsyncClient):
    """An unknown session's graph page and its live stream are refused with 404."""
    for path in ("/sessions/no-such-session/graph", "/sessions/no-such-session/graph/live"):
        assert (await client.get(path)).status_code == 404, path
