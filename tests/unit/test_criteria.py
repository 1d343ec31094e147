"""A plan's success criteria read from its section, the verdicts that answer them, the plan's
derived verdict and the follow-up that unmet criteria become."""

import pytest

from nineplan_core.criteria import (
    MAX_EVIDENCE_CHARS,
    Criterion,
    Parsed,
    PlanVerdict,
    Verdict,
    VerdictStatus,
    as_list,
    check_verdicts,
    criteria,
    follow_up_content,
    numbered,
    parsed,
    plan_verdict,
    without_verdict,
)
from nineplan_core.errors import InvalidInputError
from nineplan_core.model import PlanContent


def texts(section: str) -> list[str]:
    return [item.text for item in criteria(section)]


THREE = criteria("- Tests pass\n- The docs say so\n- The changelog has a line")


def verdict(
    n: object, status: str = "met", evidence: str = "make test: 412 passed"
) -> dict[str, object]:
    return {"criterion": n, "status": status, "evidence": evidence}


def refusal(raw: object, items: tuple[Criterion, ...] = THREE) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as caught:
        check_verdicts(raw, items)
    return caught.value


# Criteria


@pytest.mark.parametrize("marker", ["- ", "* ", "+ "])
def test_each_bullet_begins_an_item_and_is_not_part_of_its_text(marker):
    """`- `, `* ` and `+ ` each begin an item; the text is what follows the marker."""
    section = f"{marker}Tests pass\n{marker}The docs say so"
    assert criteria(section) == (Criterion(1, "Tests pass"), Criterion(2, "The docs say so"))


def test_numbers_followed_by_a_dot_or_a_parenthesis_begin_items():
    """`1. ` and `2) ` begin items (any number of up to nine digits), numbered in order."""
    assert texts("1. Tests pass\n2) The docs say so\n10. A line in the changelog") == [
        "Tests pass",
        "The docs say so",
        "A line in the changelog",
    ]


def test_checkboxes_begin_items_ticked_or_not_in_either_case():
    """`[ ] `, `[x] `, `- [ ] `, `- [x] ` and `[X] ` begin items; the box is part of the marker."""
    section = "[ ] one\n[x] two\n- [ ] three\n- [x] four\n[X] five\n* [X] six"
    assert texts(section) == ["one", "two", "three", "four", "five", "six"]


def test_a_section_of_one_paragraph_is_one_criterion_its_whole_text():
    """A section with no item line is one criterion: its whole text, stripped."""
    section = "\nThe export runs in under a second\non the 10,000-plan session.\n\n"
    assert criteria(section) == (
        Criterion(1, "The export runs in under a second\non the 10,000-plan session."),
    )


def test_text_before_the_first_item_belongs_to_no_criterion():
    """A lead-in before the first item is the preamble, not a criterion."""
    section = "All of these hold:\n\n- Tests pass\n- Lint is clean"
    assert parsed(section) == Parsed("All of these hold:", ("Tests pass", "Lint is clean"))
    assert texts(section) == ["Tests pass", "Lint is clean"]


def test_the_lines_after_an_item_belong_to_it_without_their_common_indent():
    """Continuation lines join the item's text with newlines, dedented, trailing spaces gone."""
    section = "- Tests pass  \n  including the slow ones\n    under load\n- Lint is clean"
    assert texts(section) == [
        "Tests pass\nincluding the slow ones\n  under load",
        "Lint is clean",
    ]


def test_a_marker_indented_by_four_spaces_or_a_tab_is_part_of_the_item_above():
    """Deeper-indented markers do not begin items; up to three spaces still do."""
    section = "- Parent\n    - child a\n    - child b\n   - sibling"
    assert texts(section) == ["Parent\n- child a\n- child b", "sibling"]
    assert texts("1. Parent\n\t1. child\n2. sibling") == ["Parent\n1. child", "sibling"]


def test_blank_lines_inside_an_item_are_kept_and_those_at_its_end_dropped():
    """A blank line inside an item stays; blank lines before the next item do not."""
    section = "- First paragraph\n\n  second paragraph\n\n\n- Next"
    assert texts(section) == ["First paragraph\n\nsecond paragraph", "Next"]


def test_crlf_and_cr_line_ends_read_as_lf():
    """A section written with CRLF (or CR) line ends has the criteria of its LF twin."""
    section = "Lead\n- Tests pass\n  really\n- Lint is clean\n"
    assert criteria(section.replace("\n", "\r\n")) == criteria(section)
    assert criteria(section.replace("\n", "\r")) == criteria(section)


def test_a_marker_may_end_its_line_or_be_followed_by_a_tab():
    """A marker at the end of its line takes the lines after it; a tab may follow a marker."""
    assert texts("-\n  Tests pass\n1.\tLint is clean\n- [x]\n  Docs") == [
        "Tests pass",
        "Lint is clean",
        "Docs",
    ]


def test_an_item_with_nothing_after_its_marker_is_no_criterion():
    """An empty item is left out, and the items after it are numbered on."""
    assert criteria("- Tests pass\n- \n- [ ]\n2.\n- Lint is clean") == (
        Criterion(1, "Tests pass"),
        Criterion(2, "Lint is clean"),
    )


def test_lines_that_only_look_like_markers_are_text():
    """A marker must be followed by a space, a tab or the line's end: these are not items."""
    section = "-not a bullet\n1.5 million rows load\n**bold** claim\n[ ]x\n1234567890. too long"
    assert criteria(section) == (Criterion(1, section),)


def test_a_blank_section_has_no_criteria_and_one_of_empty_markers_is_its_text():
    """Whitespace gives no criterion; a section of empty items is one criterion, its text."""
    assert criteria("") == ()
    assert criteria(" \n\t\r\n") == ()
    assert criteria("- \n- [ ]") == (Criterion(1, "-\n- [ ]"),)


def test_unicode_text_is_kept_as_written():
    """Non-ASCII text, and non-ASCII digits that are no item numbers, read as written."""
    assert texts("- Größe ≤ 2 MiB ✅\n٣. Arabic-Indic digits are text\n- 日本語") == [
        "Größe ≤ 2 MiB ✅\n٣. Arabic-Indic digits are text",
        "日本語",
    ]


def test_the_numbers_follow_the_section_as_the_agent_edited_it():
    """After an agent's edit (one criterion added first, one deleted) the numbers and texts
    are those of the edited section, and a verdict stores the text it judged."""
    at_pull = criteria("- Tests pass\n- The docs say so\n- The changelog has a line")
    edited = criteria("- The migration runs\n- Tests pass\n- The changelog has a line")
    assert [item.text for item in at_pull] != [item.text for item in edited]
    (answer,) = check_verdicts([verdict(1, evidence="alembic upgrade head: ok")], edited)
    assert (answer.n, answer.text) == (1, "The migration runs")
    assert without_verdict(edited, [answer]) == (2, 3)


def test_numbered_lists_the_criteria_under_a_header_with_later_lines_indented():
    """Pull's text: the header, then `N. text`, an item's later lines under its first."""
    items = criteria("- Tests pass\n  with the slow ones\n\n  and the browser ones\n- Lint")
    assert numbered(items) == (
        "Success criteria to answer at completion:\n"
        "1. Tests pass\n"
        "   with the slow ones\n"
        "\n"
        "   and the browser ones\n"
        "2. Lint"
    )


def test_numbered_indents_under_a_two_digit_number_by_its_width():
    """Item 10's later lines are indented four spaces, the width of `10. `."""
    items = criteria("\n".join(f"- c{n}" for n in range(1, 10)) + "\n- c10\n  more")
    assert numbered(items).endswith("\n10. c10\n    more")


def test_numbered_is_empty_without_criteria():
    """No criteria, no text (no header alone)."""
    assert numbered(()) == ""


def test_as_list_reads_back_as_the_same_texts():
    """Listing texts and reading them back gives them again, including a text that starts
    with a checkbox or a marker of its own and one with nested markers."""
    original = [
        "[x] ticked in the text",
        "[ ]\n- box alone",
        "- a dash",
        "Parent\n- child\n\n  deeper",
        "1) one",
    ]
    listed = as_list(original)
    assert listed.startswith("- [ ] [x] ticked in the text\n- [ ] [ ]\n    - box alone\n- - a")
    assert texts(listed) == original


# Verdicts


def test_valid_verdicts_carry_their_criterion_text_in_criterion_order():
    """Each verdict gets its criterion's text, `by` agent and no note, sorted by number."""
    answers = check_verdicts([verdict(3, "unmet", "CHANGELOG.md has no entry"), verdict(1)], THREE)
    assert answers == (
        Verdict(n=1, text="Tests pass", status=VerdictStatus.MET, evidence="make test: 412 passed"),
        Verdict(
            n=3,
            text="The changelog has a line",
            status=VerdictStatus.UNMET,
            evidence="CHANGELOG.md has no entry",
            by="agent",
            note=None,
        ),
    )


def test_no_verdicts_is_none_given():
    """`verdicts` absent (None) or empty gives no verdicts."""
    assert check_verdicts(None, THREE) == ()
    assert check_verdicts([], THREE) == ()


def test_verdicts_that_are_not_a_list_are_refused_naming_verdicts():
    """A lone object, or text, is a VALIDATION_ERROR on `verdicts`."""
    error = refusal(verdict(1))
    assert (error.category, error.field) == ("VALIDATION_ERROR", "verdicts")
    assert "must be a list" in error.problem


@pytest.mark.parametrize(
    ("item", "said"),
    [
        ("met", "must be an object, not str"),
        ({**verdict(1), "note": "x"}, "'note' is not a key of a verdict"),
        ({"criterion": 1, "status": "met"}, "evidence is required"),
        (verdict("1"), "criterion must be a whole number, not str"),
        (verdict(True), "criterion must be a whole number, not bool"),
        (verdict(0), "criterion 0 is not a criterion of this plan (its criteria: 1 to 3)"),
        (verdict(4), "criterion 4 is not a criterion of this plan"),
        (verdict(1, "done"), "status must be one of 'met', 'unmet', 'needs_person'"),
        (verdict(1, "MET"), "status must be one of"),
        ({**verdict(1), "status": ["met"]}, "status must be one of"),
        (verdict(1, evidence=""), "evidence must not be blank"),
        (verdict(1, evidence=" \n\t"), "evidence must not be blank"),
        (verdict(1, evidence="x" * (MAX_EVIDENCE_CHARS + 1)), "evidence is 2001 characters"),
        ({**verdict(1), "evidence": None}, "evidence must be text, not null"),
        (verdict(1, evidence="bad \x00 byte"), "evidence must not contain NUL"),
        (verdict(2, evidence="  the DOCS\nsay so "), "evidence repeats criterion 2's text"),
    ],
)
def test_a_bad_verdict_is_refused_naming_its_index(item, said):
    """Each broken rule is a VALIDATION_ERROR on `verdicts[i]` (0-based) saying what is wrong."""
    error = refusal([verdict(3), item])
    assert error.field == "verdicts[1]"
    assert said in error.problem
    assert str(error).startswith("verdicts[1]: ")


def test_a_second_verdict_for_a_criterion_is_refused_naming_the_later_one():
    """A duplicate names the later item and the earlier one it repeats."""
    error = refusal([verdict(2), verdict(1), verdict(2, "unmet", "docs/x.md is missing")])
    assert error.field == "verdicts[2]"
    assert "criterion 2 already has a verdict (verdicts[0])" in error.problem


def test_a_verdict_for_a_plan_without_criteria_is_refused():
    """With no criteria every number is unknown, and the error says there are none."""
    error = refusal([verdict(1)], ())
    assert error.field == "verdicts[0]"
    assert "the plan has no criteria" in error.problem


def test_evidence_of_one_character_and_of_the_limit_is_accepted():
    """The bounds are 1 and 2,000 characters, both inclusive."""
    short, full = verdict(1, evidence="y"), verdict(2, evidence="z" * MAX_EVIDENCE_CHARS)
    assert [answer.evidence for answer in check_verdicts([short, full], THREE)] == [
        "y",
        "z" * MAX_EVIDENCE_CHARS,
    ]


def test_evidence_that_quotes_the_criterion_among_more_is_accepted():
    """Only a copy is refused: evidence that contains the criterion's text and more is fine."""
    (answer,) = check_verdicts([verdict(1, evidence="Tests pass: make test, 412 passed")], THREE)
    assert answer.evidence == "Tests pass: make test, 412 passed"


def test_without_verdict_names_the_criteria_no_verdict_answers():
    """The numbers left unanswered, in order; all of them when no verdict was given."""
    answers = check_verdicts([verdict(2)], THREE)
    assert without_verdict(THREE, answers) == (1, 3)
    assert without_verdict(THREE, ()) == (1, 2, 3)


def _answers(*statuses: str | None) -> tuple[Verdict, ...]:
    given = [verdict(n, status) for n, status in enumerate(statuses, 1) if status is not None]
    return check_verdicts(given, THREE)


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (("unmet", None, "needs_person"), PlanVerdict.PARTIAL),
        (("met", "unmet", "met"), PlanVerdict.PARTIAL),
        (("met", None, "needs_person"), PlanVerdict.UNCHECKED),
        ((None, None, None), PlanVerdict.UNCHECKED),
        (("met", "needs_person", "met"), PlanVerdict.NEEDS_PERSON),
        (("met", "met", "met"), PlanVerdict.MET),
    ],
)
def test_the_plan_verdict_is_the_first_that_applies(statuses, expected):
    """partial (some unmet) before unchecked (some unanswered) before needs_person before met."""
    assert plan_verdict(THREE, _answers(*statuses)) == expected


def test_the_plan_verdict_ignores_verdicts_of_criteria_it_no_longer_has():
    """A verdict whose criterion was deleted neither fills the gap nor makes the plan partial."""
    old = check_verdicts([verdict(1), verdict(2, "unmet", "no docs yet")], THREE)
    assert plan_verdict(THREE[:1], old) == PlanVerdict.MET
    assert plan_verdict(THREE[1:], old[:1]) == PlanVerdict.UNCHECKED


def test_a_plan_without_criteria_is_met():
    """Every criterion of none is met: the verdict rules read literally."""
    assert plan_verdict((), ()) == PlanVerdict.MET
    assert str(PlanVerdict.NEEDS_PERSON) == "needs_person"


# The follow-up


ORIGINAL = PlanContent(
    context="The export is slow.",
    goal="Make the export fast",
    approach="Profile it.",
    success_criteria="- Export under 1s\n- Docs updated\n- [x] Bench in CI\n  on every push",
)


def _completed(*statuses: str) -> tuple[Verdict, ...]:
    given = [verdict(n, status, f"evidence {n}") for n, status in enumerate(statuses, 1)]
    return check_verdicts(given, criteria(ORIGINAL.success_criteria))


def test_unmet_criteria_become_a_follow_up_plan():
    """Goal names the plan and its goal; context adds the outcome; approach is each unmet
    verdict's evidence; success criteria are the unmet criteria's texts, read back as such."""
    follow = follow_up_content(
        "ab12c", ORIGINAL, "Cut it to 3s.", _completed("unmet", "met", "unmet")
    )
    assert follow.goal == "Meet the unmet criteria of ab12c: Make the export fast"
    assert follow.context == "The export is slow.\n\nOutcome of ab12c:\nCut it to 3s."
    assert follow.approach == (
        "What ab12c found for each criterion it did not meet:\n"
        "- Criterion 1: evidence 1\n"
        "- Criterion 3: evidence 3"
    )
    assert texts(follow.success_criteria) == ["Export under 1s", "Bench in CI\non every push"]
    assert (follow.inputs, follow.outputs) == ("", "")


def test_a_follow_up_without_an_outcome_has_the_original_context_alone():
    """No outcome (or a blank one) adds nothing to the context."""
    for outcome in (None, "  \n"):
        follow = follow_up_content("ab12c", ORIGINAL, outcome, _completed("unmet"))
        assert follow.context == "The export is slow."


def test_a_follow_up_needs_an_unmet_verdict():
    """Verdicts with nothing unmet have nothing to follow up: a ValueError, not a plan."""
    with pytest.raises(ValueError, match="no unmet verdict"):
        follow_up_content("ab12c", ORIGINAL, "done", _completed("met", "needs_person"))
