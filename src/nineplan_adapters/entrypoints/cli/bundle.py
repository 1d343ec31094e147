"""The import/export text of many plans: plan files separated by lines `---`.

Each plan is in the plan-file format (`nineplan_core.plan_file`); its optional sections
(`# Inputs`, `# Outputs`, `# Notes`) may be left out. A line `---` inside a plan's text is
written `\\---` (and a line `\\---` gains one more backslash), so that only a separator reads
as one; the line END_OF_QUEUE inside a plan's text is escaped the same way. Headings are read
as plan files are read back: `# success criteria ` is `# Success Criteria`. `nineplan export --format md` writes the queue this way; the rest of the session
follows the line END_OF_QUEUE, where import stops.
"""

import re

from nineplan_core.errors import PlanFileFormatError
from nineplan_core.plan_file import SECTIONS, PlanText, parse, render

SEPARATOR = "---"
#: `nineplan import` reads up to this line; what follows is for people (active plan, history).
END_OF_QUEUE = "<!-- nineplan: end of the queue; import stops here -->"
_ESCAPED = re.compile(rf"\\*(?:---|{re.escape(END_OF_QUEUE)})")
_HEADING = re.compile(
    rf"#[ \t]*({'|'.join(re.escape(title) for _, title in SECTIONS)})[ \t]*", re.IGNORECASE
)
_TITLES = {title.lower(): title for _, title in SECTIONS}


def join_plans(plans: list[PlanText]) -> str:
    """The text of `plans`, in order, each a plan file, separated by lines `---`."""
    blocks = [
        "\n".join(
            "\\" + line if _ESCAPED.fullmatch(line.rstrip()) else line for line in text.split("\n")
        )
        for text in (render(plan.content, plan.notes) for plan in plans)
    ]
    return f"\n{SEPARATOR}\n\n".join(block.rstrip("\n") + "\n" for block in blocks)


def split_plans(text: str) -> list[PlanText]:
    """The plans in `text`, in order (see the module docstring for the format).

    Raises:
        PlanFileFormatError: a block is not a plan; the message says which one and why.
    """
    blocks: list[list[str]] = [[]]
    in_notes = False  # everything after a plan's `# Notes` heading is its notes, verbatim
    for line in text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n"):
        if line.rstrip() == END_OF_QUEUE:
            break
        if line.rstrip() == SEPARATOR:
            blocks.append([])
            in_notes = False
        elif _ESCAPED.fullmatch(line.rstrip()):
            blocks[-1].append(line[1:])
        elif not in_notes and (heading := _HEADING.fullmatch(line)):
            title = _TITLES[heading[1].lower()]
            in_notes = title == "Notes"
            blocks[-1].append(f"# {title}")
        else:
            blocks[-1].append(line)
    texts = ["\n".join(lines).strip("\n") for lines in blocks]
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
