"""The graph view: plans laid out by layer with arrows from prerequisites, and its SVG."""

import random
import re
import time
from collections.abc import Sequence
from html.parser import HTMLParser

import attrs
import pytest

from nineplan_adapters.entrypoints.web.graph import (
    BOX_HEIGHT,
    BOX_WIDTH,
    Arrow,
    Box,
    Graph,
    Node,
    cut,
    lay_out,
)
from nineplan_adapters.entrypoints.web.rendering import templates


def node(
    plan_id: str,
    *after: str,
    goal: str | None = None,
    status: str = "queued",
    worker: str | None = None,
    stale: bool = False,
    waiting: bool = False,
) -> Node:
    """A plan `plan_id` waiting for `after`, its goal (unless given) and link made from its id."""
    return Node(
        id=plan_id,
        goal=f"Goal of {plan_id}" if goal is None else goal,
        status=status,
        after=after,
        worker=worker,
        stale=stale,
        waiting=waiting,
        href=f"/s/demo/plans/{plan_id}",
    )


def layers(graph: Graph) -> dict[str, int]:
    return {box.node.id: box.layer for box in graph.boxes}


def ends(arrow: Arrow) -> tuple[tuple[int, int], tuple[int, int]]:
    """Where an arrow's path starts and ends."""
    numbers = [int(n) for n in re.findall(r"-?\d+", arrow.d)]
    return (numbers[0], numbers[1]), (numbers[-2], numbers[-1])


def overlap(a: Box, b: Box) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


@attrs.define
class Element:
    tag: str
    attributes: dict[str, str | None]
    text: str = ""


class Elements(HTMLParser):
    """Every element of a rendered fragment in document order, with the text directly in it."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[Element] = []
        self.open: list[Element] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attributes: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attributes))
        self.found.append(element)
        self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self.open and self.open.pop().tag != tag:
            pass

    def handle_data(self, data: str) -> None:
        if self.open:
            self.open[-1].text += data

    def all(self, tag: str, **attributes: str) -> list[Element]:
        return [
            element
            for element in self.found
            if element.tag == tag
            and all(element.attributes.get(key) == value for key, value in attributes.items())
        ]


def drawn(nodes: Sequence[Node], name: str = "demo") -> str:
    """The graph of `nodes` as the page renders it: through the project's templates."""
    module = templates().get_template("graph.html").module
    return str(module.graph(lay_out(nodes), name))  # type: ignore[attr-defined]


def test_a_chain_takes_one_layer_per_link_left_to_right():
    """A <- B <- C (C waits for B, B for A) gives three layers, A in the first column and
    each next one further right, whatever order they come in."""
    graph = lay_out([node("ccccc", "bbbbb"), node("bbbbb", "aaaaa"), node("aaaaa")])
    assert graph.layers == 3
    assert layers(graph) == {"aaaaa": 0, "bbbbb": 1, "ccccc": 2}
    x = {box.node.id: box.x for box in graph.boxes}
    assert x["aaaaa"] < x["bbbbb"] < x["ccccc"]
    assert [box.node.id for box in graph.boxes] == ["ccccc", "bbbbb", "aaaaa"]


def test_independent_plans_share_the_first_column_in_input_order():
    """Plans that wait for nothing are all in layer 0, one column, top to bottom in the order
    given (the queue's order)."""
    graph = lay_out([node("kkkkk"), node("aaaaa"), node("zzzzz")])
    assert graph.layers == 1
    assert {box.x for box in graph.boxes} == {graph.boxes[0].x}
    assert [box.node.id for box in sorted(graph.boxes, key=lambda box: box.y)] == [
        "kkkkk",
        "aaaaa",
        "zzzzz",
    ]
    assert graph.arrows == ()


def test_a_join_comes_after_the_longest_chain_behind_it():
    """In a diamond (B and C wait for A, D for both) D is in layer 2; a plan waiting for A and
    for D goes after D (the longest chain), not next to B."""
    graph = lay_out(
        [
            node("ddddd", "bbbbb", "ccccc"),
            node("eeeee", "aaaaa", "ddddd"),
            node("bbbbb", "aaaaa"),
            node("ccccc", "aaaaa"),
            node("aaaaa"),
        ]
    )
    assert layers(graph) == {"aaaaa": 0, "bbbbb": 1, "ccccc": 1, "ddddd": 2, "eeeee": 3}
    column = [box.node.id for box in graph.boxes if box.layer == 1]
    assert column == ["bbbbb", "ccccc"]
    assert len(graph.arrows) == 6


def test_each_arrow_runs_from_a_prerequisites_right_edge_to_its_dependents_left_edge():
    """One arrow per prerequisite named, in the order named per plan: from the middle of the
    prerequisite's right edge to the middle of the waiting plan's left edge."""
    graph = lay_out([node("ccccc", "bbbbb", "aaaaa"), node("aaaaa"), node("bbbbb")])
    boxes = {box.node.id: box for box in graph.boxes}
    assert [(arrow.from_id, arrow.to_id) for arrow in graph.arrows] == [
        ("bbbbb", "ccccc"),
        ("aaaaa", "ccccc"),
    ]
    for arrow in graph.arrows:
        before, plan = boxes[arrow.from_id], boxes[arrow.to_id]
        assert ends(arrow) == (
            (before.x + before.w, before.y + before.h // 2),
            (plan.x, plan.y + plan.h // 2),
        )
        assert re.fullmatch(r"M\d+ \d+ C\d+ \d+ \d+ \d+ \d+ \d+", arrow.d)


def test_an_arrow_from_a_settled_plan_says_so():
    """An arrow from a completed or discarded prerequisite is marked settled; one from a
    queued or active plan is not."""
    graph = lay_out(
        [
            node("ddddd", "aaaaa", "bbbbb", "ccccc"),
            node("aaaaa", status="active", worker="api"),
            node("bbbbb", status="completed"),
            node("ccccc", status="discarded"),
        ]
    )
    assert {arrow.from_id: arrow.settled for arrow in graph.arrows} == {
        "aaaaa": False,
        "bbbbb": True,
        "ccccc": True,
    }
    assert graph.settled == 2


def test_a_cycle_is_broken_where_it_closes_and_every_arrow_points_right():
    """A cycle (which storage refuses, but the drawing does not trust) ends: the edge that
    would close it is left out, so the first plan of the cycle in input order comes after
    the others; a plan naming itself draws no arrow; every arrow ends further right than it
    starts."""
    graph = lay_out(
        [
            node("aaaaa", "ccccc"),
            node("bbbbb", "aaaaa"),
            node("ccccc", "bbbbb"),
            node("selff", "selff"),
        ]
    )
    assert layers(graph) == {"bbbbb": 0, "ccccc": 1, "aaaaa": 2, "selff": 0}
    assert [(arrow.from_id, arrow.to_id) for arrow in graph.arrows] == [
        ("ccccc", "aaaaa"),
        ("bbbbb", "ccccc"),
    ]
    assert all(start[0] < end[0] for start, end in map(ends, graph.arrows))


def test_unknown_and_repeated_prerequisites_draw_no_arrow():
    """A prerequisite that is not among the plans drawn is left out, and one named twice
    gets one arrow."""
    graph = lay_out([node("bbbbb", "zzzzz", "aaaaa", "aaaaa", "<bad>"), node("aaaaa")])
    assert [(arrow.from_id, arrow.to_id) for arrow in graph.arrows] == [("aaaaa", "bbbbb")]
    assert layers(graph) == {"bbbbb": 1, "aaaaa": 0}


def test_of_two_plans_with_one_id_the_first_is_drawn():
    """A repeated id is drawn once, as the first plan given with it, in that one's place."""
    graph = lay_out([node("aaaaa", goal="first"), node("bbbbb"), node("aaaaa", goal="second")])
    assert [(box.node.id, box.node.goal) for box in graph.boxes] == [
        ("aaaaa", "first"),
        ("bbbbb", "Goal of bbbbb"),
    ]


def test_nothing_to_draw_gives_an_empty_graph_the_page_says_so():
    """No plans: no boxes, no arrows, no layers, no size; the figure says there is nothing
    to draw and holds no SVG."""
    graph = lay_out([])
    assert graph == Graph(width=0, height=0, boxes=(), arrows=(), layers=0)
    page = Elements(drawn([]))
    assert page.all("svg") == []
    assert page.all("p", **{"class": "empty"})[0].text == "No plans to draw."


def test_a_chain_of_five_thousand_lays_out_without_recursion():
    """A chain far longer than Python's recursion limit is laid out, one layer per plan."""
    chain = [node(f"p{n:04d}", *([f"p{n - 1:04d}"] if n else [])) for n in range(5000)]
    graph = lay_out(list(reversed(chain)))
    assert graph.layers == 5000
    assert len(graph.arrows) == 4999


def test_two_hundred_plans_lay_out_quickly_inside_the_drawing_without_overlap():
    """200 plans waiting for up to three earlier ones, in layers 5 to 40 wide, lay out in
    under half a second; every box is inside the drawing and no two boxes overlap."""
    rng = random.Random(200)
    ids = [f"{n:05d}" for n in range(200)]
    nodes = [
        node(plan_id, *rng.sample(ids[max(0, n - 40) : n], k=min(n, rng.randint(0, 3))))
        for n, plan_id in enumerate(ids)
    ]
    started = time.perf_counter()
    graph = lay_out(rng.sample(nodes, k=len(nodes)))
    assert time.perf_counter() - started < 0.5
    assert len(graph.boxes) == 200
    for box in graph.boxes:
        assert 0 <= box.x <= box.x + box.w <= graph.width
        assert 0 <= box.y <= box.y + box.h <= graph.height
    pairs = [(a, b) for i, a in enumerate(graph.boxes) for b in graph.boxes[i + 1 :]]
    assert not any(overlap(a, b) for a, b in pairs)
    assert all(box.w == BOX_WIDTH and box.h == BOX_HEIGHT for box in graph.boxes)


def test_a_long_goal_is_cut_with_an_ellipsis_and_kept_whole_in_the_title():
    """A long goal's label is the id and the goal's start, ending with an ellipsis; its
    title holds the whole goal and the plan's state; a short goal is not cut."""
    goal = "Migrate the billing database to the new schema without downtime " * 3
    long, short = lay_out([node("aaaaa", goal=goal), node("bbbbb", goal="Fix it")]).boxes
    assert long.label.startswith("aaaaa Migrate the")
    assert long.label.endswith("…")
    assert len(long.label) < 40
    assert long.title == f"aaaaa: {goal} (queued)"
    assert short.label == "bbbbb Fix it"


def test_cut_leaves_less_room_for_wide_characters_and_none_for_combining_marks():
    """A line of wide East Asian characters is cut sooner than one of lowercase letters, a
    combining mark takes no room, and text that fits is left whole."""
    assert cut("abc", 10) == "abc"
    latin, wide = cut("a" * 100, 10), cut("日" * 100, 10)
    assert (latin[-1], wide[-1]) == ("…", "…")
    assert len(wide) < len(latin)
    assert cut("e\u0301" * 10, 7) == "e\u0301" * 10


def test_a_goal_on_several_lines_is_one_line_on_its_box():
    """Line breaks and runs of spaces in a goal are one space on the box, and control
    characters (which XML does not allow) are dropped from label and title alike."""
    (box,) = lay_out([node("aaaaa", goal="Two\n  lines\x00\x1b")]).boxes
    assert box.label == "aaaaa Two lines"
    assert box.title == "aaaaa: Two\n  lines (queued)"


def test_the_second_line_names_an_active_plans_worker_else_the_state():
    """An active box shows its worker (and stale when its lease lapsed), a waiting one
    `waiting`, the others their state; the title says the same in words."""
    graph = lay_out(
        [
            node("aaaaa", status="active", worker="api"),
            node("bbbbb", status="active", worker="tests", stale=True),
            node("ccccc", "aaaaa", waiting=True),
            node("ddddd"),
            node("eeeee", status="completed"),
            node("fffff", status="discarded"),
        ]
    )
    assert [box.detail for box in graph.boxes] == [
        "▶ api",
        "▶ tests · stale",
        "waiting",
        "queued",
        "✓ completed",
        "✗ discarded",
    ]
    assert graph.boxes[1].title.endswith("(active, worker tests, stale)")
    assert graph.boxes[2].title.endswith("(queued, waiting)")


def test_a_node_in_an_unknown_state_is_refused():
    """A status outside queued, active, completed and discarded is a programming error."""
    with pytest.raises(ValueError, match="status"):
        node("aaaaa", status="paused")


def test_the_drawing_escapes_whatever_an_agent_wrote():
    """A goal, a worker name and a session name carrying markup are text in the drawing:
    no element comes from them, and the goal reads as written in the box's title."""
    hostile = "<script>alert(1)</script> & \"quoted\" 'single'"
    page = drawn(
        [node("aaaaa", goal=hostile, status="active", worker='"><img src=x onerror=alert(1)>')],
        name="<b>bold</b>",
    )
    elements = Elements(page)
    assert elements.all("script") == elements.all("img") == elements.all("b") == []
    (link,) = elements.all("a")
    assert link.attributes["data-worker"] == '"><img src=x onerror=alert(1)>'
    (title,) = [element for element in elements.all("title") if element.attributes == {}]
    assert title.text.startswith(f"aaaaa: {hostile}")
    assert "&lt;script&gt;" in page
    assert not re.search(r"<style|\sstyle=", page)


def test_each_box_is_a_link_carrying_its_plans_state():
    """Each box is a link to its plan with its id, status, settled, waiting and worker as
    data attributes and its title first; each arrow a path from and to plan ids ending in
    the one arrowhead defined; the scroll container is a labelled, focusable region."""
    page = Elements(
        drawn(
            [
                node("aaaaa", status="active", worker="api", stale=True),
                node("bbbbb", "aaaaa", "ccccc", waiting=True),
                node("ccccc", status="completed"),
            ]
        )
    )
    links = {link.attributes["data-plan-id"]: link.attributes for link in page.all("a")}
    assert links["aaaaa"]["href"] == "/s/demo/plans/aaaaa"
    assert links["aaaaa"]["class"] == "node active stale"
    assert (links["aaaaa"]["data-worker"], links["aaaaa"]["data-stale"]) == ("api", "true")
    assert [links[p * 5]["data-settled"] for p in "abc"] == ["false", "false", "true"]
    assert [links[p * 5]["data-waiting"] for p in "abc"] == ["false", "true", "false"]
    assert "data-worker" not in links["bbbbb"]
    (marker,) = page.all("marker")
    edges = page.all("path", **{"marker-end": f"url(#{marker.attributes['id']})"})
    assert {(edge.attributes["data-from"], edge.attributes["data-to"]) for edge in edges} == {
        ("aaaaa", "bbbbb"),
        ("ccccc", "bbbbb"),
    }
    (region,) = page.all("div", **{"class": "graph-scroll"})
    assert (region.attributes["tabindex"], region.attributes["role"]) == ("0", "region")
    assert region.attributes["aria-label"]
    first = [page.found[page.found.index(page.all("a")[n]) + 1].tag for n in range(3)]
    assert first == ["title", "title", "title"]
    (figure,) = page.all("figure", **{"data-testid": "graph"})
    assert (figure.attributes["data-plans"], figure.attributes["data-arrows"]) == ("3", "2")
