"""The plan-file text format: render a plan for the agent, parse the agent's copy back.

A file is seven sections, each a `# Title` line followed by its text and a blank line.
A line of text that would read as one of those header lines is escaped with a leading
backslash (and an already escaped one gains another), so any text survives the round trip
while everything else an agent writes, other `#` lines included, is left as written.
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
_HEADERS = {f"# {title}": field for field, title in SECTIONS}
_ESCAPED_HEADER = re.compile(
    r"\\*(# (?:Context|Goal|Inputs|Outputs|Approach|Success Criteria|Notes))"
)


@attrs.frozen
class PlanText:
    """The agent-editable part of a plan: its content and its notes."""

    content: PlanContent
    notes: str


def _escape(text: str) -> str:
    return "\n".join(
        "\\" + line if _ESCAPED_HEADER.fullmatch(line.rstrip()) else line
        for line in text.split("\n")
    )


def _unescape(line: str) -> str:
    return line[1:] if line.startswith("\\") and _ESCAPED_HEADER.fullmatch(line.rstrip()) else line


def render(content: PlanContent, notes: str) -> str:
    """The file text for a plan."""
    values = attrs.asdict(content) | {"notes": notes}
    return "\n".join(f"# {title}\n{_escape(values[field])}\n" for field, title in SECTIONS)


def parse(text: str) -> PlanText:
    """Read a plan file back into its sections.

    Raises:
        PlanFileFormatError: a section header is missing, repeated or out of order, text
            stands before the first header, or a required section is blank.
    """
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.split("\n"):
        field = _HEADERS.get(line.rstrip())
        if field is not None:
            if field in found:
                raise PlanFileFormatError(f"section {line.strip()!r} appears twice")
            current = found[field] = []
        elif current is not None:
            current.append(_unescape(line))
        elif line.strip():
            raise PlanFileFormatError("text stands before the first section header")
    order = [field for field, _ in SECTIONS]
    if list(found) != order:
        missing = [title for field, title in SECTIONS if field not in found]
        raise PlanFileFormatError(
            f"missing sections: {', '.join(missing)}" if missing else "sections are out of order"
        )
    # render() ends each section's text with a newline of its own; an agent may drop it.
    values = {field: "\n".join(lines).removesuffix("\n") for field, lines in found.items()}
    notes = values.pop("notes")
    try:
        return PlanText(PlanContent(**values), notes)
    except InvalidInputError as exc:
        raise PlanFileFormatError(f"section {exc.field} {exc.problem}") from exc
