"""The import/export text of many plans: plan files separated by lines `---`.

Each plan is in the plan-file format (`nineplan_core.plan_file`); its optional sections
(`# Inputs`, `# Outputs`, `# Notes`) may be left out. A line `---` inside a plan's text is
written `\\---` (and a line `\\---` gains one more backslash), so that only a separator reads
as one; the line END_OF_QUEUE inside a plan's text is escaped the same way. Headings are read
as plan files are read back: `# success criteria ` is `# Success Criteria`. `nineplan export --format md` writes the queue this way; the rest of the session
follows the line END_OF_QUEUE, where import stops.

Fenced code blocks (```` ``` ```` or `~~~`, as Markdown has them) are text: a `---` or a
`# Heading` line inside one neither separates plans nor starts a section. A fence left open
is refused (it would swallow the plans after it). So that every export reads back, a section
whose fences do not close writes its fence lines `\\```` (a line `\\```` gains one more
backslash), and reading takes one backslash off.
"""

import re

import attrs

from nineplan_core.errors import PlanFileFormatError
from nineplan_core.model import PlanContent
from nineplan_core.plan_file import SECTIONS, PlanText, parse, render

SEPARATOR = "---"
#: `nineplan import` reads up to this line; what follows is for people (active plan, history).
END_OF_QUEUE = "<!-- nineplan: end of the queue; import stops here -->"
_ESCAPED = re.compile(rf"\\*(?:---|{re.escape(END_OF_QUEUE)})")
_HEADING = re.compile(
    rf"#[ \t]*({'|'.join(re.escape(title) for _, title in SECTIONS)})[ \t]*", re.IGNORECASE
)
_TITLES = {title.lower(): title for _, title in SECTIONS}
#: A fence line as CommonMark has it: up to three spaces, then ``` or ~~~ or longer.
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_ESCAPED_FENCE = re.compile(r"\\+ {0,3}(?:`{3,}|~{3,}).*")
_HEADING_LIKE = re.compile(r"\\*# ")  # what the plan format reads as a heading, escaped or not


def join_plans(plans: list[PlanText]) -> str:
    """The text of `plans`, in order, each a plan file, separated by lines `---`."""
    blocks = [
        "\n".join(
            "\\" + line if _ESCAPED.fullmatch(line.rstrip()) else line for line in text.split("\n")
        )
        for text in (_render_fenced(plan) for plan in plans)
    ]
    return f"\n{SEPARATOR}\n\n".join(block.rstrip("\n") + "\n" for block in blocks)


def split_plans(text: str) -> list[PlanText]:
    """The plans in `text`, in order (see the module docstring for the format).

    Raises:
        PlanFileFormatError: a block is not a plan; the message says which one and why.
    """
    texts = _blocks(text)
    if texts and not texts[-1].strip():
        texts.pop()  # a file may end with a separator
    plans = []
    for index, block in enumerate(texts, start=1):
        try:
            plans.append(parse(_with_optional_sections(block)))
        except PlanFileFormatError as exc:
            problem = exc.message.removeprefix("The plan file is not in the plan format: ")
            raise PlanFileFormatError(
                f"plan {index} of {len(texts)}, {problem.rstrip('.')}"
            ) from exc
    return plans


def _blocks(text: str) -> list[str]:
    """The text of each plan in `text`, separators and escapes read, fences respected.

    Raises:
        PlanFileFormatError: a code fence is left open.
    """
    blocks: list[list[str]] = [[]]
    in_notes = False  # everything after a plan's `# Notes` heading is its notes, verbatim
    fence: tuple[str, int] | None = None  # the open fence's marker and line number
    lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    for number, line in enumerate(lines, start=1):
        marker = fence[0] if fence else None
        if fence is None and line.rstrip() == END_OF_QUEUE:
            break
        if fence is None and line.rstrip() == SEPARATOR:
            blocks.append([])
            in_notes = False
        elif line.startswith("\\") and _ESCAPED.fullmatch(line.rstrip()):
            blocks[-1].append(line[1:])
        elif _ESCAPED_FENCE.fullmatch(line):
            blocks[-1].append(line[1:])  # an escaped fence line is text
        elif (after := _fence_after(marker, line)) != marker:  # a fence opens or closes
            fence = None if after is None else (after, number)
            blocks[-1].append(line)
        elif fence is not None:
            # Inside a fence a line the plan format reads as a heading is text: escape it.
            blocks[-1].append("\\" + line if not in_notes and line.startswith("# ") else line)
        elif not in_notes and (heading := _HEADING.fullmatch(line)):
            title = _TITLES[heading[1].lower()]
            in_notes = title == "Notes"
            blocks[-1].append(f"# {title}")
        else:
            blocks[-1].append(line)
    if fence is not None:
        raise PlanFileFormatError(
            f"the code fence {fence[0]!r} opened on line {fence[1]} is not closed; "
            f"end the code with a line {fence[0]!r}"
        )
    return ["\n".join(lines).strip("\n") for lines in blocks]


def _fence_after(marker: str | None, line: str) -> str | None:
    """The fence open after `line` (its marker) when `marker` was open before it."""
    found = _FENCE.fullmatch(line)
    if found is None:
        return marker
    opened, rest = found[1], found[2]
    if marker is None:  # a backtick fence's info string holds no backtick
        return None if opened[0] == "`" and "`" in rest else opened
    closes = opened[0] == marker[0] and len(opened) >= len(marker) and not rest.strip()
    return None if closes else marker


def _render_fenced(plan: PlanText) -> str:
    """`plan` rendered with fence lines escaped where a split would misread them: a line that
    reads as an escaped fence always, every fence line of a text whose fences do not close."""

    def escaped(text: str) -> str:
        marker: str | None = None
        for line in text.split("\n"):
            marker = _fence_after(marker, line)
        return "\n".join(
            "\\" + line
            if _ESCAPED_FENCE.fullmatch(line) or (marker and _FENCE.fullmatch(line))
            else line
            for line in text.split("\n")
        )

    values = {field: escaped(value) for field, value in attrs.asdict(plan.content).items()}
    return render(PlanContent(**values), escaped(plan.notes))


def _with_optional_sections(block: str) -> str:
    """`block` with empty `# Inputs`, `# Outputs` and `# Notes` sections where they are left
    out (before `# Notes`, which holds everything after it)."""
    notes = re.search(r"^# Notes[ \t]*$", block, re.MULTILINE | re.IGNORECASE)
    head, tail = (block[: notes.start()], block[notes.start() :]) if notes else (block, "# Notes\n")
    missing = [
        f"# {title}\n\n"
        for title in ("Inputs", "Outputs")
        if not re.search(rf"^# {title}[ \t]*$", head, re.MULTILINE | re.IGNORECASE)
    ]
    return f"{head.rstrip(chr(10))}\n\n{''.join(missing)}{tail.rstrip(chr(10))}\n"
