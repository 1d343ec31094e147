"""The plan-file format: render for the agent, parse the agent's edits back."""

import pytest

from nineplan_core.errors import PlanFileFormatError
from nineplan_core.model import PlanContent
from nineplan_core.plan_file import parse, render

CONTENT = PlanContent(
    context="ctx", goal="goal", approach="steps", success_criteria="done", inputs="in", outputs=""
)


def test_render_has_the_seven_sections_in_reference_order():
    """A rendered file shows every section header, in the reference's order."""
    text = render(CONTENT, "note")
    headers = [line for line in text.split("\n") if line.startswith("# ")]
    assert headers == [
        "# Context",
        "# Goal",
        "# Inputs",
        "# Outputs",
        "# Approach",
        "# Success Criteria",
        "# Notes",
    ]
    assert text.startswith("# Context\nctx\n\n# Goal\ngoal\n")


def test_parse_reads_back_what_render_wrote():
    """Parsing a rendered file gives back the content and notes."""
    parsed = parse(render(CONTENT, "a note"))
    assert parsed.content == CONTENT
    assert parsed.notes == "a note"


def test_text_with_header_lines_survives_the_round_trip():
    """A field whose lines look like section headers is escaped and restored."""
    tricky = PlanContent(
        context="# Goal\n\\# Notes\n\\\\# Approach ",
        goal="g",
        approach="a",
        success_criteria="s",
        inputs="# Other",
    )
    assert parse(render(tricky, "# Notes")).content == tricky


def test_agent_edits_to_notes_are_read():
    """Lines an agent appends under # Notes come back as the notes."""
    text = render(CONTENT, "") + "- tried X, it failed\n# not a header\n"
    assert parse(text).notes == "\n- tried X, it failed\n# not a header"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "missing sections"),
        ("hello\n" + render(CONTENT, ""), "before the first"),
        (render(CONTENT, "").replace("# Approach\n", ""), "missing sections: Approach"),
        (render(CONTENT, "").replace("# Approach", "# Goal\nagain\n\n# Approach"), "appears twice"),
        (render(CONTENT, "").replace("\ngoal\n", "\n  \n"), "goal must not be blank"),
    ],
)
def test_the_strict_reading_refuses_mangled_files_with_the_reason(text, problem):
    """parse(), the strict reading, raises PlanFileFormatError naming what is not clean."""
    with pytest.raises(PlanFileFormatError) as caught:
        parse(text)
    assert problem in caught.value.message
    assert caught.value.category == "FILE_SYSTEM_ERROR"
