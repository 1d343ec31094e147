"""The session's graph view: its plans as boxes by layer, an arrow from each prerequisite.

`lay_out` places the plans it is given (queue order: active first, then queued by rank, then the
settled plans they name) in columns by layer, left to right: a plan's layer is one more than the
longest chain of prerequisites behind it. Inside a column the plans keep the order they came in.
The result is numbers and strings only, which templates/graph.html draws as an inline SVG
(classes only: the colours are in style.css, so nothing in the SVG needs a `style`). Pure: no
I/O, no clock; hostile input (a cycle, an unknown or repeated id, any text in a goal) still
gives a drawing, in time linear in the plans and their prerequisites.
"""

import unicodedata
from collections.abc import Iterable, Mapping, Sequence

import attrs

#: The states a plan is drawn in.
STATUSES = ("queued", "active", "completed", "discarded")
#: The states in which a plan no longer holds back the plans after it.
SETTLED = frozenset({"completed", "discarded"})
#: A box's size, the gaps between columns (where the arrows run) and rows, and the drawing's
#: margin, in SVG units (the SVG keeps its natural size: one unit is one CSS pixel).
BOX_WIDTH, BOX_HEIGHT = 200, 44
COLUMN_GAP, ROW_GAP, MARGIN = 56, 12, 8
#: The text's left inset in a box, and the baselines of its two lines (from the box's top).
INSET, FIRST_LINE, SECOND_LINE = 8, 18, 35
#: The room for a line of text, in ems of the 12px font style.css gives the boxes' text.
LINE_EMS = (BOX_WIDTH - 2 * INSET) / 12
#: What a cut text ends with.
ELLIPSIS = "…"


@attrs.frozen(kw_only=True)
class Node:
    """One plan to draw.

    Attributes:
        id: The plan's id.
        goal: The plan's goal, as the agent wrote it.
        status: One of `STATUSES`.
        after: The ids of the plans it waits for, in the order named; ids that are not among
            the nodes drawn are left out.
        worker: The worker holding it, for an active plan.
        stale: Whether that worker's lease has lapsed.
        waiting: Whether it is queued with a prerequisite not yet settled.
        href: Where its box links to (its plan's page).
    """

    id: str
    goal: str
    status: str = attrs.field(validator=attrs.validators.in_(STATUSES))
    after: tuple[str, ...] = ()
    worker: str | None = None
    stale: bool = False
    waiting: bool = False
    href: str

    @property
    def settled(self) -> bool:
        """Whether it is completed or discarded."""
        return self.status in SETTLED


@attrs.frozen(kw_only=True)
class Box:
    """One plan's box as drawn: where it is (its top left corner, in the drawing), its size,
    and the texts it shows.

    Attributes:
        node: The plan drawn.
        layer: Its column, 0 for a plan that waits for none of the others.
        x: The box's left edge.
        y: The box's top edge.
        w: Its width.
        h: Its height.
        label: Its first line: the id and the goal, cut to fit with an ellipsis.
        detail: Its second line: the worker of an active plan (marked when stale), else its
            state in a word.
        title: What a person hovering it or reading the page aloud is told: the id, the whole
            goal and its state.
    """

    node: Node
    layer: int
    x: int
    y: int
    w: int = BOX_WIDTH
    h: int = BOX_HEIGHT
    label: str
    detail: str
    title: str

    @property
    def status(self) -> str:
        return self.node.status

    @property
    def worker(self) -> str | None:
        return self.node.worker

    @property
    def settled(self) -> bool:
        return self.node.settled

    @property
    def text_x(self) -> int:
        """Where both lines of text start, from the box's left edge."""
        return INSET

    @property
    def label_y(self) -> int:
        """The first line's baseline, from the box's top edge."""
        return FIRST_LINE

    @property
    def detail_y(self) -> int:
        """The second line's baseline, from the box's top edge."""
        return SECOND_LINE


@attrs.frozen(kw_only=True)
class Arrow:
    """An arrow from a prerequisite's box to the box of a plan that waits for it.

    Attributes:
        from_id: The prerequisite's id.
        to_id: The id of the plan that waits for it.
        d: The SVG path: a cubic Bézier from the middle of the prerequisite's right edge to the
            middle of the other's left edge, leaving and arriving horizontally.
        settled: Whether the prerequisite is settled (its arrow no longer holds anything back).
    """

    from_id: str
    to_id: str
    d: str
    settled: bool


@attrs.frozen(kw_only=True)
class Graph:
    """The drawing: its size, the boxes in input order, the arrows and the number of layers
    (0, with no boxes, when there is nothing to draw)."""

    width: int
    height: int
    boxes: tuple[Box, ...]
    arrows: tuple[Arrow, ...]
    layers: int

    @property
    def settled(self) -> int:
        """How many of the plans drawn are settled."""
        return sum(1 for box in self.boxes if box.settled)

    @property
    def box_width(self) -> int:
        """Every box's width (the template clips a box's text to it)."""
        return BOX_WIDTH

    @property
    def box_height(self) -> int:
        """Every box's height."""
        return BOX_HEIGHT


def lay_out(nodes: Sequence[Node]) -> Graph:
    """The graph of `nodes`: each in the column of its layer, in input order inside it, with
    an arrow from each of its prerequisites.

    Of two nodes with one id the first is drawn; a prerequisite that is not among the nodes,
    or that is named twice, is left out; a prerequisite that would close a cycle (there
    should be none) is left out too, so the first node of the cycle in input order keeps
    it: every arrow then points to a later column.
    """
    drawn: dict[str, Node] = {}
    for node in nodes:
        drawn.setdefault(node.id, node)
    prerequisites = {node.id: _known(node, drawn) for node in drawn.values()}
    layers, kept = _layers(prerequisites)
    boxes = _boxes(drawn.values(), layers)
    arrows = tuple(_arrow(boxes[before], boxes[plan]) for plan in kept for before in kept[plan])
    columns = max(layers.values(), default=-1) + 1
    return Graph(
        width=_extent(columns, BOX_WIDTH, COLUMN_GAP),
        height=_extent(_tallest(layers), BOX_HEIGHT, ROW_GAP),
        boxes=tuple(boxes.values()),
        arrows=arrows,
        layers=columns,
    )


def _known(node: Node, drawn: Mapping[str, Node]) -> tuple[str, ...]:
    """The node's prerequisites that are drawn, each once, in the order named."""
    return tuple(dict.fromkeys(before for before in node.after if before in drawn))


def _layers(
    prerequisites: Mapping[str, Sequence[str]],
) -> tuple[dict[str, int], dict[str, list[str]]]:
    """Each plan's layer (the longest chain of prerequisites behind it) and the prerequisites
    kept for it: a depth-first walk from each plan in order, without recursion (a chain may be
    as long as the plans), that drops an edge back to a plan still on its path."""
    layers: dict[str, int] = {}
    kept: dict[str, list[str]] = {plan: [] for plan in prerequisites}
    for root in prerequisites:
        if root in layers:
            continue
        path = [(root, iter(prerequisites[root]))]
        on_path = {root}
        while path:
            plan, pending = path[-1]
            before = next(pending, None)
            if before is None:
                path.pop()
                on_path.discard(plan)
                layers[plan] = 1 + max((layers[each] for each in kept[plan]), default=-1)
            elif before not in on_path:  # an edge back to the path would close a cycle
                kept[plan].append(before)
                if before not in layers:
                    path.append((before, iter(prerequisites[before])))
                    on_path.add(before)
    return layers, kept


def _boxes(nodes: Iterable[Node], layers: Mapping[str, int]) -> dict[str, Box]:
    """Each node's box, by id, in its layer's column, below the nodes before it in that layer."""
    rows: dict[int, int] = {}
    boxes = {}
    for node in nodes:
        layer = layers[node.id]
        row = rows[layer] = rows.get(layer, -1) + 1
        boxes[node.id] = Box(
            node=node,
            layer=layer,
            x=MARGIN + layer * (BOX_WIDTH + COLUMN_GAP),
            y=MARGIN + row * (BOX_HEIGHT + ROW_GAP),
            label=cut(f"{node.id} {_one_line(node.goal)}", LINE_EMS),
            detail=cut(_detail(node), LINE_EMS),
            title=f"{node.id}: {_printable(node.goal)} ({_state(node)})",
        )
    return boxes


def _tallest(layers: Mapping[str, int]) -> int:
    """How many boxes the fullest column holds."""
    counts: dict[int, int] = {}
    for layer in layers.values():
        counts[layer] = counts.get(layer, 0) + 1
    return max(counts.values(), default=0)


def _extent(count: int, size: int, gap: int) -> int:
    """The length of `count` boxes of `size` with `gap` between them, inside the margins."""
    return 0 if count == 0 else 2 * MARGIN + count * size + (count - 1) * gap


def _arrow(before: Box, plan: Box) -> Arrow:
    """The arrow from `before`'s right edge to `plan`'s left edge, both at mid-height."""
    x1, y1 = before.x + before.w, before.y + before.h // 2
    x2, y2 = plan.x, plan.y + plan.h // 2
    bend = max((x2 - x1) // 2, COLUMN_GAP // 2)
    d = f"M{x1} {y1} C{x1 + bend} {y1} {x2 - bend} {y2} {x2} {y2}"
    return Arrow(from_id=before.node.id, to_id=plan.node.id, d=d, settled=before.settled)


def _detail(node: Node) -> str:
    """A box's second line: `▶ worker` (and `stale`) for an active plan, else its state."""
    if node.status == "active":
        who = _one_line(node.worker or "") or "active"
        return f"▶ {who} · stale" if node.stale else f"▶ {who}"
    if node.waiting and node.status == "queued":
        return "waiting"
    return {"completed": "✓ completed", "discarded": "✗ discarded"}.get(node.status, node.status)


def _state(node: Node) -> str:
    """A plan's state in words, for its box's title: `active, worker api, stale`."""
    words = [node.status]
    if node.status == "active" and node.worker:
        words.append(f"worker {_printable(node.worker)}")
    if node.status == "active" and node.stale:
        words.append("stale")
    if node.status == "queued" and node.waiting:
        words.append("waiting")
    return ", ".join(words)


def _printable(text: str) -> str:
    """`text` without control characters other than line breaks and tabs (an SVG title may
    hold several lines; the others are not characters XML allows)."""
    return "".join(c for c in text if c in "\n\t" or unicodedata.category(c) != "Cc")


def _one_line(text: str) -> str:
    """`text` on one line: every run of whitespace a single space, control characters gone."""
    return " ".join(_printable(text).split())


def cut(text: str, ems: float) -> str:
    """`text` cut to at most about `ems` wide in a proportional font, ending with an ellipsis
    when cut."""
    if sum(_width(c) for c in text) <= ems:
        return text
    room, kept = ems - _width(ELLIPSIS), []
    for c in text:
        room -= _width(c)
        if room < 0:
            break
        kept.append(c)
    return "".join(kept).rstrip() + ELLIPSIS


#: Characters about a third of an em wide, and about a whole em, in a proportional font.
_NARROW = frozenset(" '.,:;!|/\\()[]-`ijlIftr")
_BROAD = frozenset("mwMW@%")


def _width(c: str) -> float:
    """About how wide `c` is, in ems, measured on DejaVu Sans (a wide font, so a cut line fits
    its box in the narrower ones too): a combining mark takes no room, a wide East Asian
    character or a broad letter an em, a narrow one a third, a capital 0.75, the rest 0.64."""
    if unicodedata.combining(c):
        return 0.0
    if unicodedata.east_asian_width(c) in {"W", "F"} or c in _BROAD:
        return 1.0
    if c in _NARROW:
        return 0.35
    return 0.75 if c.isupper() else 0.64


__all__ = [
    "BOX_HEIGHT",
    "BOX_WIDTH",
    "SETTLED",
    "STATUSES",
    "Arrow",
    "Box",
    "Graph",
    "Node",
    "cut",
    "lay_out",
]
