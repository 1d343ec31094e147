"""Any Success Criteria section reads as criteria without losing a word of it, criteria
listed again read back as themselves, and a plan's derived verdict follows its verdicts.

The sections are built the way people and agents write them (bullets, numbers, checkboxes,
nested and lazy lines, paragraphs, blank lines, CRLF, tabs, unicode) or are arbitrary text.
Which characters are markers is decided here by a reading of its own, written from the rule
(a marker after at most three spaces, followed by a space, a tab or the line's end), so the
parser is checked against the rule, not against itself.
"""

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from nineplan_core.criteria import (
    Criterion,
    Parsed,
    as_list,
    criteria,
    numbered,
    parsed,
    plan_verdict,
)
from nineplan_core.verdicts import PlanVerdict, Verdict, VerdictStatus

#: Parsing is pure and quick: more examples than the default, as the other property tests run.
EXAMPLES = (
    2000 if os.environ.get("NINEPLAN_SOAK") else 100 if os.environ.get("NINEPLAN_FAST") else 500
)
_BOXES = ("[ ]", "[x]", "[X]")
#: Longest first: a bullet with a box before the bullet alone.
_HEADS = (*(f"{bullet} {box}" for bullet in "-*+" for box in _BOXES), *_BOXES, "-", "*", "+")
_DIGITS = "0123456789"


def marker_end(line: str) -> int:
    """Where the marker of `line` ends (0 when the line begins no item)."""
    indent = len(line) - len(line.lstrip(" "))
    rest = line[indent:]
    digits = len(rest) - len(rest.lstrip(_DIGITS))
    numbers = (
        (rest[: digits + 1],)
        if 1 <= digits <= 9 and rest[digits : digits + 1] in (".", ")")
        else ()
    )
    for head in (*_HEADS, *numbers):
        if (
            indent <= 3
            and rest.startswith(head)
            and rest[len(head) : len(head) + 1] in ("", " ", "\t")
        ):
            return indent + len(head)
    return 0


def lines_of(section: str) -> list[str]:
    return section.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def visible(text: str) -> str:
    """The characters that are not whitespace, in order."""
    return "".join(char for char in text if not char.isspace())


_phrase = st.sampled_from(
    [
        "Tests pass",
        "`make lint` is clean",
        "docs/tools.md lists 9plan_plan_complete",
        "p95 < 200 ms on 10,000 plans",
        "Größe ≤ 2 MiB ✅",
        "日本語のテストが通る",
        "**bold** claim",
        "[ ] a box in the text",
        "1.5 million rows",
        "- a dash in the text",
        "#1958 fixed",
    ]
)
_free = st.text(
    alphabet=st.characters(exclude_characters="\r\n"),
    max_size=40,
)
_text = _phrase | _free
_marker = st.sampled_from(
    ["- ", "* ", "+ ", "[ ] ", "[x] ", "[X] ", "- [ ] ", "- [x] ", "1. ", "2) ", "10. ", "-\t", "-"]
)
_shallow = st.sampled_from(["", " ", "  ", "   "])
_deep = st.sampled_from(["    ", "      ", "\t", "  \t", "        "])
_line = st.one_of(
    st.builds(lambda pad, mark, text: pad + mark + text, _shallow, _marker, _text),  # an item
    st.builds(lambda pad, mark, text: pad + mark + text, _deep, _marker, _text),  # nested
    st.builds(lambda pad, text: pad + text, _shallow | _deep, _text),  # continuation, paragraph
    st.sampled_from(["", "  ", "\t"]),  # blank
)
realistic = st.builds(
    lambda lines, end, tail: end.join(lines) + tail,
    st.lists(_line, max_size=12),
    st.sampled_from(["\n", "\r\n"]),
    st.sampled_from(["", "\n", "\r\n", "\n\n"]),
)
sections = realistic | st.text(max_size=300)


@settings(max_examples=EXAMPLES)
@given(sections)
def test_no_text_of_a_section_is_lost(section):
    """Every non-whitespace character outside the markers is in the preamble or an item's
    text, in order; a section without items is one criterion holding all its characters."""
    result = parsed(section)
    unmarked = "".join(line[marker_end(line) :] for line in lines_of(section))
    assert visible(result.preamble + "".join(result.items)) == visible(unmarked)
    found = criteria(section)
    assert [item.n for item in found] == list(range(1, len(found) + 1))
    if result.items:
        assert tuple(item.text for item in found) == result.items
    else:
        assert visible("".join(item.text for item in found)) == visible(section)
    assert bool(found) == bool(section.strip())


@settings(max_examples=EXAMPLES)
@given(sections)
def test_criteria_listed_again_read_back_as_themselves(section):
    """`as_list` of a section's criteria reads back as the same texts, with no preamble."""
    texts = tuple(item.text for item in criteria(section))
    assert tuple(item.text for item in criteria(as_list(texts))) == texts
    assert parsed(as_list(texts)) == Parsed("", texts)


@settings(max_examples=EXAMPLES)
@given(sections)
def test_texts_are_normalised_so_they_read_the_same_everywhere(section):
    """A criterion's text has no whitespace at its ends and no trailing whitespace on a line,
    and pull's numbered list shows every character of it."""
    found = criteria(section)
    for item in found:
        assert item.text == item.text.strip()
        assert all(line == line.rstrip() for line in item.text.split("\n"))
    shown = numbered(found)
    header, _, listed = shown.partition("\n")
    assert header == ("Success criteria to answer at completion:" if found else "")
    assert visible(listed) == visible("".join(f"{item.n}.{item.text}" for item in found))


_statuses = st.sampled_from([None, *VerdictStatus])


@settings(max_examples=EXAMPLES)
@given(st.lists(_statuses, min_size=1, max_size=8))
def test_the_plans_verdict_follows_its_verdicts(statuses):
    """For any criteria and any verdicts on some of them, the derived verdict is the first
    that applies: partial when one is unmet, unchecked when one has none, needs_person when
    one waits for a person, else met; and it never depends on the verdicts' order."""
    items = tuple(Criterion(n=n, text=f"criterion {n}") for n in range(1, len(statuses) + 1))
    verdicts = [
        Verdict(n=item.n, text=item.text, status=status, evidence="e")
        for item, status in zip(items, statuses, strict=True)
        if status is not None
    ]
    expected = (
        PlanVerdict.PARTIAL
        if VerdictStatus.UNMET in statuses
        else PlanVerdict.UNCHECKED
        if None in statuses
        else PlanVerdict.NEEDS_PERSON
        if VerdictStatus.NEEDS_PERSON in statuses
        else PlanVerdict.MET
    )
    assert plan_verdict(items, verdicts) is expected
    assert plan_verdict(items, list(reversed(verdicts))) is expected
