"""The plan-file text format: render a plan for the agent, read the agent's copy back.

A file is seven sections, each a `# Title` line followed by its text and a blank line. In the
first six sections a line of text that starts with `# ` (or with backslashes and `# `) gains a
leading backslash, so that no text of a section can read as a heading. `# Notes` is the last
section: everything after its heading is notes, so there only lines that read as one of the
seven headings are escaped (as version 0.1.0 did).

Reading back is tolerant (`read_back`), because agents and editors write messy files: it
never raises, and whatever it cannot place in a section is kept verbatim in the notes. It says
what it had to salvage, and when the original must be copied aside (bytes that are not UTF-8,
NUL characters, a section or a file beyond a limit).
"""

import re

import attrs

from nineplan_core.errors import InvalidInputError, PlanFileFormatError
from nineplan_core.model import PlanContent

SECTIONS: tuple[tuple[str, str], ...] = (
    ("context", "Context"),
    ("goal", "Goal"),
    ("inputs", "Inputs"),
    ("outputs", "Outputs"),
    ("approach", "Approach"),
    ("success_criteria", "Success Criteria"),
    ("notes", "Notes"),
)
REQUIRED = ("context", "goal", "approach", "success_criteria")
#: A file larger than this is read only this far (and copied to recovered/ whole).
MAX_FILE_BYTES = 8 * 1024 * 1024
#: Notes grow while a plan runs; they have a limit of their own.
MAX_NOTES_CHARS = 1_000_000

_HEADINGS = {f"# {title}".lower(): field for field, title in SECTIONS}
_HEADING_LIKE = re.compile(r"\\*# ")  # a line that an agent or an editor may read as a heading
_KNOWN_HEADING = re.compile(
    r"\\*(# (?:Context|Goal|Inputs|Outputs|Approach|Success Criteria|Notes))", re.IGNORECASE
)
_BOM = "\ufeff"


@attrs.frozen
class PlanText:
    """The agent-editable part of a plan: its content and its notes."""

    content: PlanContent
    notes: str


@attrs.frozen
class ReadBack:
    """A plan file read back: what it holds, and what had to be salvaged to get it.

    `salvaged` lists, in words, everything that kept the file from reading as a clean plan
    (empty when it did). `keep_original` says the original bytes must be copied to
    recovered/ before the result is stored, because the text read is not all of them.
    """

    text: PlanText
    salvaged: tuple[str, ...] = ()
    keep_original: bool = False


def _escape_section(text: str) -> str:
    return "\n".join(
        "\\" + line if _HEADING_LIKE.match(line) else line for line in text.split("\n")
    )


def _unescape_section(line: str) -> str:
    return line[1:] if line.startswith("\\") and _HEADING_LIKE.match(line) else line


def _escape_notes(text: str) -> str:
    return "\n".join(
        "\\" + line if _KNOWN_HEADING.fullmatch(line.rstrip()) else line
        for line in text.split("\n")
    )


def _unescape_notes(line: str) -> str:
    return line[1:] if line.startswith("\\") and _KNOWN_HEADING.fullmatch(line.rstrip()) else line


def render(content: PlanContent, notes: str) -> str:
    """The file text for a plan."""
    values = attrs.asdict(content)
    sections = [f"# {title}\n{_escape_section(values[field])}\n" for field, title in SECTIONS[:-1]]
    return "\n".join([*sections, f"# Notes\n{_escape_notes(notes)}\n"])


def parse(text: str) -> PlanText:
    """Read a clean plan file back into its sections (the strict reading, for round trips).

    Raises:
        PlanFileFormatError: the text is not a clean plan file; the message says why.
    """
    sections, _, problems = _split(text)
    missing = [title for field, title in SECTIONS if field not in sections]
    if missing:
        raise PlanFileFormatError(f"missing sections: {', '.join(missing)}{_level_hint(text)}")
    if problems:
        raise PlanFileFormatError(_refusal(*problems[0]))
    values = {field: _section_text(lines) for field, lines in sections.items()}
    notes = values.pop("notes")
    try:
        return PlanText(PlanContent(**values), notes)
    except InvalidInputError as exc:
        title = dict(SECTIONS).get(exc.field, exc.field)
        raise PlanFileFormatError(f"section # {title} {exc.problem}") from exc


def decode(data: bytes) -> tuple[str, list[str], bool]:
    """Bytes of a plan file as text: BOM dropped, line ends made LF, bad bytes replaced.

    Returns the text, what had to be salvaged, and whether the original must be kept.
    """
    salvaged: list[str] = []
    keep = False
    if len(data) > MAX_FILE_BYTES:
        data = data[:MAX_FILE_BYTES]
        salvaged.append(f"the file is over {MAX_FILE_BYTES // (1024 * 1024)} MiB; read its start")
        keep = True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        salvaged.append("bytes that are not UTF-8 were replaced by \ufffd")
        keep = True
    text = text.removeprefix(_BOM).replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
        salvaged.append("NUL characters were replaced by \ufffd")
        keep = True
    return text, salvaged, keep


def read_back(data: bytes | None, stored: PlanText, *, max_section_chars: int) -> ReadBack:
    """Read an agent's plan file back, tolerantly; `stored` fills whatever the file lacks.

    `data` is None when there is no regular file to read (missing, a symlink, a directory).
    Never raises: a section the file lacks or left blank keeps its stored text, text outside
    the known sections goes to the notes verbatim, and a section beyond its limit is cut
    there (the original then has to be kept).
    """
    if data is None:
        return ReadBack(
            stored, ("the plan file was missing or not a regular file; kept the stored copy",)
        )
    text, salvaged, keep = decode(data)
    if not text.strip():
        return ReadBack(stored, (*salvaged, "the plan file was empty; kept the stored copy"), keep)
    sections, outside, problems = _split(text)
    salvaged += [_salvaged(*problem) for problem in problems]
    if not sections:
        salvaged.append("the file has no plan headings; its whole text was kept in Notes")
    values = attrs.asdict(stored.content)
    for field, lines in sections.items():
        if field == "notes":
            continue
        value = _section_text(lines)
        if value.strip("\n") == values[field].strip("\n"):
            continue  # as stored, but for the blank lines a cut file leaves at its end
        if field in REQUIRED and not value.strip():
            salvaged.append(f"section {field} was blank; kept the stored text")
            continue
        values[field] = value
    missing = [title for field, title in SECTIONS[:-1] if field not in sections]
    if sections and missing:
        salvaged.append(
            f"sections missing from the file kept their stored text: {', '.join(missing)}"
        )
    if sections and "notes" not in sections:
        salvaged.append("no # Notes heading; the text after the last section is in Notes")
        _split_off_notes(sections, values, stored, outside)
    notes = _notes(sections, outside, stored.notes, salvaged)
    for field, value in [*values.items(), ("notes", notes)]:
        limit = MAX_NOTES_CHARS if field == "notes" else max_section_chars
        if len(value) > limit:
            values[field] = value[:limit]
            if field in REQUIRED and not values[field].strip():  # its text starts past the limit
                values[field] = attrs.asdict(stored.content)[field]
            salvaged.append(f"section {field} is over {limit:,} characters; read its start")
            keep = True
    notes = values.pop("notes", notes)
    return ReadBack(PlanText(PlanContent(**values), notes), tuple(salvaged), keep)


def read_absent(kind: str, moved: str | None, stored: PlanText) -> ReadBack:
    """The read-back of a plan whose file is no regular file: the stored copy, and what
    stood in its place (`kind`, as `PlanFileChanges.set_aside` names it) in words."""
    what = {
        "missing": "the plan file was deleted",
        "link": "the plan file was a symbolic link; it was not followed and its target was"
        " left alone",
        "directory": f"a directory stood in the plan file's place; it was moved to {moved}",
    }.get(kind, "the plan file was not a regular file")
    return ReadBack(stored, (f"{what}; kept the stored copy",))


def _split(text: str) -> tuple[dict[str, list[str]], list[list[str]], list[tuple[str, str]]]:
    """The sections of a file, the blocks of text outside them (in order), and the problems
    (each a kind and the line, worded by `_salvaged` or `_refusal`)."""
    sections: dict[str, list[str]] = {}
    outside: list[list[str]] = []
    problems: list[tuple[str, str]] = []
    current: list[str] | None = None
    in_section = False
    for line in text.split("\n"):
        if current is not None and "notes" in sections and current is sections["notes"]:
            current.append(_unescape_notes(line))
            continue
        field = _HEADINGS.get(line.rstrip().lower())
        if field is not None and field not in sections:
            if line.rstrip() != f"# {dict(SECTIONS)[field]}":
                problems.append(("case", line.strip()))
            current = sections[field] = []
            in_section = True
            continue
        if field is not None or (line.startswith("# ") and in_section) or current is None:
            if field is not None:
                problems.append(("twice", line.strip()))
            elif current is None and line.strip():
                problems.append(("before", line.strip()))
            elif line.startswith("# "):
                problems.append(("unknown", line.strip()))
            if current is None and not line.strip():
                continue  # blank lines before the first heading are layout
            current = []
            outside.append(current)
            in_section = False
            current.append(line)
            continue
        current.append(_unescape_section(line) if in_section else line)
    return sections, [block for block in outside if any(x.strip() for x in block)], problems


_TITLES = {f"# {title}".lower(): f"# {title}" for _, title in SECTIONS}
_PLAN_SECTIONS = ", ".join(f"# {title}" for _, title in SECTIONS[:-1])
_DEEPER_HEADING = re.compile(
    rf"#{{2,6}}[ \t]*(?:{'|'.join(title for _, title in SECTIONS)})[ \t]*", re.IGNORECASE
)


def _salvaged(kind: str, line: str) -> str:
    """A problem `_split` found, as a tolerant reading says what it did about it."""
    return {
        "case": f"heading {line!r} read as {_TITLES.get(line.lower())}",
        "twice": f"heading {line!r} appears twice; kept in Notes",
        "before": "text before the first heading was kept in Notes",
        "unknown": f"text under {line!r} was kept in Notes",
    }[kind]


def _refusal(kind: str, line: str) -> str:
    """A problem `_split` found, as the strict reading refuses it: what is wrong, what to do."""
    return {
        "case": f"heading {line!r} must be written {_TITLES.get(line.lower())}",
        "twice": (
            f"heading {line!r} appears twice; a plan has each section once: merge the two, "
            "or start another plan after a line ---"
        ),
        "before": (
            f"text before the first heading ({line!r}); move it under a section, "
            "such as # Context or # Notes, or remove it"
        ),
        "unknown": (
            f"text under {line!r} is not a plan section; rename the heading to one of "
            f"{_PLAN_SECTIONS}, or move the text under # Notes (the last section)"
        ),
    }[kind]


def _level_hint(text: str) -> str:
    """A hint for a file whose plan headings are one level too deep (`## Goal`), or ''."""
    deeper = [line.strip() for line in text.split("\n") if _DEEPER_HEADING.fullmatch(line)]
    if not deeper:
        return ""
    return (
        f"; plan sections are level-1 headings ('# Goal'), and the file has {deeper[0]!r}: "
        "write each section heading with a single #"
    )


def _split_off_notes(
    sections: dict[str, list[str]],
    values: dict[str, str],
    stored: PlanText,
    outside: list[list[str]],
) -> None:
    """With the Notes heading gone, the text after the last section's stored text is notes."""
    last = list(sections)[-1]
    before = attrs.asdict(stored.content)[last]
    value = values[last]
    if before.strip() and value.startswith(before + "\n") and value[len(before) :].strip():
        values[last] = before
        outside.append(value[len(before) :].strip("\n").split("\n"))


def _section_text(lines: list[str]) -> str:
    # render() ends each section's text with a newline of its own; an agent may drop it.
    return "\n".join(lines).removesuffix("\n")


def _notes(
    sections: dict[str, list[str]], outside: list[list[str]], stored: str, salvaged: list[str]
) -> str:
    """The notes: the Notes section with every block from outside the sections, in file order."""
    extra = ["\n".join(block).strip("\n") for block in outside]
    if "notes" in sections:
        own = _section_text(sections["notes"]).strip("\n")
        # Blocks before the Notes heading come first, as in the file.
        return "\n".join(part for part in [*extra, own] if part)
    kept = []
    if stored.strip() and not any(stored.strip() in block for block in extra):
        kept = [stored.strip("\n")]
        salvaged.append("the stored notes were kept")
    return "\n".join(part for part in [*kept, *extra] if part)


def is_heading(line: str) -> bool:
    """Whether `line` reads as one of the seven plan headings (any case, trailing spaces)."""
    return line.rstrip().lower() in _HEADINGS


def unreadable(data: bytes | None) -> str | None:
    """Why a plan's file cannot be read as a plan, or None when it can (validate's check)."""
    if data is None:
        return "missing or not a regular file"
    if len(data) > MAX_FILE_BYTES:
        return f"over {MAX_FILE_BYTES // (1024 * 1024)} MiB"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    text = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix(_BOM)
    if not any(line.rstrip().lower() in _HEADINGS for line in text.split("\n")):
        return "no plan heading"
    return None


def salvage_line(salvaged: tuple[str, ...], copy: str | None) -> str:
    """The one line a result carries when a plan file had to be salvaged."""
    where = f" The original file is kept in {copy}." if copy else ""
    return f"Plan file read tolerantly: {'; '.join(salvaged)}.{where}"
