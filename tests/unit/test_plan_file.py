"""The plan-file format: render for the agent, parse the agent's edits back."""

import pytest

from nineplan_core.errors import PlanFileFormatError
from nineplan_core.model import PlanContent
from nineplan_core.plan_file import (
    MAX_FILE_BYTES,
    MAX_NOTES_CHARS,
    PlanText,
    ReadBack,
    parse,
    read_back,
    render,
    salvage_line,
    unreadable,
)

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
        (render(CONTENT, "").replace("\ngoal\n", "\n  \n"), "section # Goal must not be blank"),
        (
            render(CONTENT, "").replace("# Notes", "# Risks\nthe cache\n\n# Notes"),
            "text under '# Risks' is not a plan section; rename the heading to one of # Context,",
        ),
        (
            "hello\n" + render(CONTENT, ""),
            "text before the first heading ('hello'); move it under a section",
        ),
    ],
)
def test_the_strict_reading_refuses_mangled_files_with_the_reason(text, problem):
    """parse(), the strict reading, raises PlanFileFormatError naming what is not clean and
    what to change, never saying it kept text that it refused."""
    with pytest.raises(PlanFileFormatError) as caught:
        parse(text)
    assert problem in caught.value.message
    assert "was kept" not in caught.value.message
    assert caught.value.category == "FILE_SYSTEM_ERROR"


def test_headings_a_level_too_deep_get_a_hint():
    """A file with `## Goal` headings is refused as missing sections, with the hint that plan
    sections are level-1 headings and the `##` heading it found; a file without them has no
    such hint."""
    deep = render(CONTENT, "").replace("# ", "## ")
    with pytest.raises(PlanFileFormatError) as caught:
        parse(deep)
    assert "missing sections: Context, Goal" in caught.value.message
    assert "level-1 headings ('# Goal'), and the file has '## Context'" in caught.value.message
    with pytest.raises(PlanFileFormatError) as caught:
        parse(render(CONTENT, "").replace("# Approach\n", ""))
    assert "level-1" not in caught.value.message


STORED = PlanText(CONTENT, "- 2026-01-02T03:04:05Z Deferred: blocked")
RENDERED = render(CONTENT, STORED.notes)


def _read(text: str | bytes | None) -> ReadBack:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return read_back(data, STORED, max_section_chars=100_000)


def test_a_clean_file_reads_back_with_nothing_salvaged():
    """The rendered file, and agent lines under # Notes, read back cleanly."""
    got = _read(RENDERED + "- root cause is the cache TTL\n")
    assert got.text == PlanText(CONTENT, STORED.notes + "\n- root cause is the cache TTL")
    assert got.salvaged == ()
    assert not got.keep_original


def test_heading_lines_after_notes_are_notes():
    """`# Notes` is the last section: a `# Outputs` line after it is notes, not a section."""
    got = _read(RENDERED + "- root cause is the cache TTL\n# Outputs\n- cache.py (new)\n")
    assert got.text.content.outputs == CONTENT.outputs
    assert got.text.notes.endswith("- root cause is the cache TTL\n# Outputs\n- cache.py (new)")
    assert got.salvaged == ()


@pytest.mark.parametrize(
    "mangle",
    [
        lambda text: "\ufeff" + text,
        lambda text: text.replace("\n", "\r\n"),
        lambda text: text.replace("\n", "\r"),
        lambda text: "\ufeff" + text.replace("\n", "\r\n"),
        lambda text: text.replace("# Notes", "# Notes  ").replace("# Goal", "# Goal "),
    ],
    ids=["bom", "crlf", "cr", "bom-crlf", "trailing-spaces"],
)
def test_bom_line_ends_and_trailing_spaces_are_read_as_written(mangle):
    """A BOM is dropped, CRLF and CR read as LF, headings ignore trailing spaces: the goal
    does not come back as 'goal\\r\\n\\r'."""
    got = _read(mangle(RENDERED + "- a note\n"))
    assert got.text == PlanText(CONTENT, STORED.notes + "\n- a note")
    assert got.salvaged == ()


def test_headings_match_in_any_case_and_say_so():
    """`# notes` and `# GOAL` are the Notes and Goal sections; the result mentions it."""
    got = _read(RENDERED.replace("# Notes", "# notes").replace("# Goal", "# GOAL") + "- n\n")
    assert got.text == PlanText(CONTENT, STORED.notes + "\n- n")
    assert any("'# notes' read as # Notes" in line for line in got.salvaged)


def test_text_before_the_first_heading_is_kept_in_notes():
    """What stands above `# Context` is notes, verbatim, first."""
    got = _read("Status: half done\n\n" + RENDERED)
    assert got.text.content == CONTENT
    assert got.text.notes == "Status: half done\n" + STORED.notes
    assert got.salvaged == ("text before the first heading was kept in Notes",)


def test_text_under_an_unknown_heading_is_kept_in_notes():
    """An unknown heading ends the section above it; it and its text go to the notes."""
    got = _read(RENDERED.replace("# Approach", "# TODO\nfix the index\n\n# Approach"))
    assert got.text.content == CONTENT
    assert got.text.notes == "# TODO\nfix the index\n" + STORED.notes
    assert "text under '# TODO' was kept in Notes" in got.salvaged


def test_a_deleted_notes_heading_keeps_the_notes_and_the_agents_lines():
    """With `# Notes` deleted, the text after the last section's stored text is notes."""
    got = _read(RENDERED.replace("# Notes\n", "") + "- root cause is the cache TTL\n")
    assert got.text.content == CONTENT
    assert got.text.notes == STORED.notes + "\n- root cause is the cache TTL"


def test_a_renamed_notes_heading_keeps_everything_in_notes():
    """`# My notes` is an unknown heading: it and the lines under it are the notes."""
    got = _read(RENDERED.replace("# Notes", "# My notes") + "- n\n")
    assert got.text.content == CONTENT
    assert got.text.notes == f"# My notes\n{STORED.notes}\n- n"


def test_a_repeated_heading_and_its_text_go_to_notes():
    """A second `# Goal` before Notes does not replace the first: it is kept in the notes."""
    got = _read(RENDERED.replace("# Approach", "# Goal\nanother goal\n\n# Approach"))
    assert got.text.content.goal == "goal"
    assert "# Goal\nanother goal" in got.text.notes
    assert "heading '# Goal' appears twice; kept in Notes" in got.salvaged


def test_sections_the_file_lacks_or_blanked_keep_their_stored_text():
    """A truncated file, or a required section left blank, keeps the stored text."""
    cut = RENDERED[: RENDERED.index("# Approach")]
    got = _read(cut.replace("\ngoal\n", "\n  \n"))
    assert got.text.content == CONTENT
    assert got.text.notes == STORED.notes
    assert "section goal was blank; kept the stored text" in got.salvaged
    assert any("Approach, Success Criteria" in line for line in got.salvaged)


def test_bytes_that_are_not_utf8_are_replaced_and_the_original_kept():
    """Invalid UTF-8 is read with replacement characters and asks for the original's copy."""
    got = _read(RENDERED.encode() + b"- caf\xe9 \xff\n")
    assert got.text.notes.endswith("- caf\ufffd \ufffd")
    assert got.keep_original
    assert any("not UTF-8" in line for line in got.salvaged)


def test_nul_characters_are_replaced_and_the_original_kept():
    """NUL cannot be stored: it becomes U+FFFD and the original file is kept."""
    got = _read(RENDERED + "a\x00b\n")
    assert got.text.notes.endswith("a\ufffdb")
    assert got.keep_original


def test_limits_cut_a_section_and_keep_the_original():
    """Notes beyond 1,000,000 characters, a section beyond the text limit and a file beyond
    8 MiB are read as far as the limits allow, and the original is kept."""
    got = _read(RENDERED + "n" * (MAX_NOTES_CHARS + 10))
    assert len(got.text.notes) == MAX_NOTES_CHARS
    assert got.keep_original
    got = _read(RENDERED.replace("# Inputs\n", "# Inputs\n" + "i" * 100_005))
    assert got.text.content.inputs == "i" * 100_000
    assert got.keep_original
    got = _read(RENDERED.replace("# Goal\ngoal", "# Goal\n" + " " * 100_001 + "late goal"))
    assert got.text.content.goal == "goal"  # what fits the limit is blank: the stored goal
    assert got.keep_original
    big = RENDERED.encode() + b"x" * (MAX_FILE_BYTES + 1)
    got = read_back(big, STORED, max_section_chars=10 * MAX_FILE_BYTES)
    assert got.keep_original
    assert any("over 8 MiB" in line for line in got.salvaged)


@pytest.mark.parametrize("data", [None, b"", b"  \n\r\n"], ids=["missing", "empty", "blank"])
def test_a_missing_or_emptied_file_uses_the_stored_copy(data):
    """No file, or nothing in it: the stored plan serves, and the result says so."""
    got = _read(data)
    assert got.text == STORED
    assert len(got.salvaged) == 1
    assert "stored copy" in got.salvaged[0]


def test_prose_without_headings_becomes_the_notes():
    """A file overwritten with prose keeps the stored sections and the prose as notes."""
    got = _read("I rewrote the whole thing\n# not a heading we know\n")
    assert got.text.content == CONTENT
    assert "I rewrote the whole thing\n# not a heading we know" in got.text.notes


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (None, "missing or not a regular file"),
        (b"\xff\xfe", "not UTF-8"),
        (b"just prose", "no plan heading"),
        (b"", "no plan heading"),
        (b"x" * (MAX_FILE_BYTES + 1), "over 8 MiB"),
        (("\ufeff" + RENDERED.replace("\n", "\r\n")).encode(), None),
    ],
)
def test_unreadable_says_why_a_file_is_not_a_plan(data, problem):
    """validate's check: a file is a plan when it is UTF-8 text with a plan heading."""
    assert unreadable(data) == problem


def test_the_salvage_line_is_one_line_naming_the_copy():
    """The result line lists what was salvaged and where the original went."""
    line = salvage_line(("a", "b"), "/s/recovered/x.txt")
    assert "\n" not in line
    assert (
        line == "Plan file read tolerantly: a; b. The original file is kept in /s/recovered/x.txt."
    )
