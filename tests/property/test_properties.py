"""Properties of the pure parts: the plan-file round trip, query words, queue positions."""

import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from nineplan_core.history import excerpt, search_terms
from nineplan_core.model import PlanContent, Position, Tally
from nineplan_core.plan_file import parse, render
from nineplan_core.queue import insert_position, insert_rank, ranks
from nineplan_core.results import SNIPPET_MARKS
from nineplan_core.strategies import free_text, plan_contents


@given(plan_contents(), free_text)
def test_render_then_parse_is_the_identity(content: dict[str, str], notes: str):
    """Any content and notes, header-like lines included, survive a file round trip."""
    plan = PlanContent(**content)
    parsed = parse(render(plan, notes))
    assert parsed.content == plan
    assert parsed.notes == notes


@given(st.text())
def test_query_words_never_raise_in_fts5(query: str):
    """Whatever an agent types, the sanitised words are a valid FTS5 query."""
    terms = search_terms(query)
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
        db.execute("INSERT INTO t VALUES ('some text to find')")
        if terms:
            match = " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
            db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t)", (match,)).fetchall()
    assert all(term == term.lower() and term for term in terms)


@given(st.text(), st.text())
def test_an_excerpt_never_raises_and_marks_what_it_found(text: str, query: str):
    """For any text and query the excerpt of a substring match is built without error; when a
    query word occurs in the text the excerpt marks it, and an excerpt is never unmarked."""
    terms = search_terms(query)
    shown = excerpt(text, terms)
    if any(term in text for term in terms):
        assert SNIPPET_MARKS[0] in shown
    assert not shown or SNIPPET_MARKS[0] in shown


@given(st.lists(st.sampled_from([Position.FRONT, Position.BACK]), max_size=60))
def test_positions_stay_distinct_and_ranks_contiguous(moves: list[Position]):
    """Any sequence of front/back inserts keeps positions distinct and ranks 1..n."""
    positions: list[int] = []
    order: list[int] = []
    for index, where in enumerate(moves):
        shape = Tally(
            queued=len(positions),
            low=min(positions, default=None),
            high=max(positions, default=None),
        )
        position = insert_position(shape, where)
        assert ranks([*positions, position])[position] == insert_rank(shape, where)
        positions.append(position)
        order.insert(0 if where is Position.FRONT else len(order), index)
    assert len(set(positions)) == len(positions)
    rank_of = ranks(positions)
    assert sorted(rank_of.values()) == list(range(1, len(positions) + 1))
    assert [
        index for _, index in sorted(zip(positions, range(len(positions)), strict=True))
    ] == order
