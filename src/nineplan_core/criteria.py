"""A plan's success criteria and the verdicts an agent gives them at completion.

The criteria are the items of a plan's `# Success Criteria` section. A line that starts (after
at most three spaces) with a marker begins an item: `- `, `* `, `+ `, `[ ] `, `[x] `, `- [ ] `,
`- [x] ` (a checkbox after `*` or `+` too, `[X]` as `[x]`), or a number of 1-9 digits followed
by `. ` or `) `. A tab may stand for the space after a marker, and a marker may end its line.
The marker is not part of the item's text; the lines after it, up to the next item, belong to
it (a marker indented by four spaces or a tab is deeper, so it is one of those lines). Text
before the first item belongs to no criterion. A section with no item is one criterion, its
whole text.

An item's text is normalised so that it reads the same wherever it is shown and survives being
listed again (`as_list`): line ends are LF, its first line is stripped, the lines after it lose
their common indentation and their trailing whitespace, and blank lines at either end are
dropped (blank lines inside are kept). An item with no text is no criterion.

A verdict answers one criterion: met, unmet or needs_person, with evidence. The plan's verdict
is derived from the verdicts, never stored beside them; unmet criteria become a follow-up plan.
"""

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence

import attrs

from nineplan_core.errors import InvalidInputError
from nineplan_core.model import PlanContent, check_text
from nineplan_core.verdicts import PlanVerdict, Verdict, VerdictStatus

__all__ = [
    "MAX_EVIDENCE_CHARS",
    "Criterion",
    "Parsed",
    "PlanVerdict",
    "Verdict",
    "VerdictStatus",
    "as_list",
    "check_verdicts",
    "criteria",
    "follow_up_content",
    "numbered",
    "parsed",
    "plan_verdict",
    "without_verdict",
]

#: The most characters a verdict's evidence may have.
MAX_EVIDENCE_CHARS = 2_000

_CHECKBOX = r"\[[ xX]\]"
_MARKER = re.compile(
    rf" {{0,3}}(?:[-*+] {_CHECKBOX}|{_CHECKBOX}|[-*+]|[0-9]{{1,9}}[.)])(?:[ \t]|$)"
)
# A text whose start a bullet's checkbox would swallow: `as_list` gives it a checkbox of its own.
_STARTS_WITH_CHECKBOX = re.compile(rf"{_CHECKBOX}(?:[ \t\n]|$)")
_HEADER = "Success criteria to answer at completion:"


@attrs.frozen
class Criterion:
    """One criterion of a plan: its number (1-based, in the section's order) and its text."""

    n: int
    text: str


@attrs.frozen
class Parsed:
    """A Success Criteria section read as a list: the text before the first item (stripped,
    '' when there is none) and the texts of the items, in order."""

    preamble: str
    items: tuple[str, ...]


def parsed(section: str) -> Parsed:
    """The section's text before its first item, and its items' texts (items without text
    left out); a section without items is all preamble."""
    preamble: list[str] = []
    items: list[list[str]] = []
    for line in _lines(section):
        if marker := _MARKER.match(line):
            items.append([line[marker.end() :]])
        elif items:
            items[-1].append(line)
        else:
            preamble.append(line)
    texts = (_item_text(lines) for lines in items)
    return Parsed("\n".join(preamble).strip(), tuple(text for text in texts if text))


def criteria(success_criteria: str) -> tuple[Criterion, ...]:
    """The criteria of a Success Criteria section, numbered 1...N.

    A section whose lines begin no item with text is one criterion, its whole text
    (normalised as an item's text is); a blank section has none.
    """
    items = parsed(success_criteria).items
    if not items:
        whole = _item_text(_lines(success_criteria))
        items = (whole,) if whole else ()
    return tuple(Criterion(n, text) for n, text in enumerate(items, start=1))


def numbered(items: Iterable[Criterion]) -> str:
    """The criteria as pull's text shows them: a header line, then `N. text` per criterion,
    the lines after an item's first indented under its text ('' when there are none)."""
    lines = [_hanging(f"{item.n}. ", item.text) for item in items]
    return "\n".join([_HEADER, *lines]) if lines else ""


def as_list(texts: Iterable[str]) -> str:
    """Texts as a Success Criteria list, one `- ` item each (lines after the first indented
    by four spaces), which `parsed` reads back as the same texts when each is normalised as
    an item's text is."""
    return "\n".join(
        _hanging("- [ ] " if _STARTS_WITH_CHECKBOX.match(text) else "- ", text, indent="    ")
        for text in texts
    )


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _item_text(lines: list[str]) -> str:
    """An item's text from the rest of its marker's line and the lines after it."""
    lines = [line.rstrip() for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    if not lines:
        return ""
    rest = textwrap.dedent("\n".join(lines[1:])).split("\n") if len(lines) > 1 else []
    return "\n".join([lines[0].strip(), *rest]).rstrip()


def _hanging(lead: str, text: str, *, indent: str | None = None) -> str:
    """`text` after `lead`, its later lines indented (by `lead`'s width unless `indent`)."""
    pad = " " * len(lead) if indent is None else indent
    first, *rest = text.split("\n")
    return "\n".join([lead + first, *(pad + line if line else "" for line in rest)])


_VERDICT_KEYS = frozenset({"criterion", "status", "evidence"})
_STATUS_VALUES = frozenset(status.value for status in VerdictStatus)
_STATUSES = ", ".join(repr(status.value) for status in VerdictStatus)


def check_verdicts(raw: object, items: Sequence[Criterion]) -> tuple[Verdict, ...]:
    """The verdicts of a completion, checked against the plan's criteria, in criterion order.

    `raw` is the call's `verdicts`: None (none given) or a list of objects
    `{criterion: n, status, evidence}`, at most one per criterion.

    Raises:
        InvalidInputError: `verdicts` is not a list, or the first item that breaks a rule,
            named `verdicts[i]` (0-based): not an object, a key missing or unknown, an unknown
            criterion number, a criterion given a verdict before (the later item is named),
            an unknown status, or evidence that is not 1-2,000 characters of text, is blank or
            is a copy of the criterion's text.
    """
    if raw is None:
        return ()
    if not isinstance(raw, list | tuple):
        raise InvalidInputError(
            "verdicts", f"must be a list of {{criterion, status, evidence}}, not {_kind(raw)}"
        )
    by_number = {item.n: item for item in items}
    seen: dict[int, int] = {}
    verdicts: list[Verdict] = []
    for index, item in enumerate(raw):
        verdict = _verdict(f"verdicts[{index}]", item, by_number, seen)
        seen[verdict.n] = index
        verdicts.append(verdict)
    return tuple(sorted(verdicts, key=lambda verdict: verdict.n))


def _verdict(
    field: str, raw: object, by_number: Mapping[int, Criterion], seen: Mapping[int, int]
) -> Verdict:
    """One item of `verdicts`, checked against the criteria and the numbers answered before."""
    if not isinstance(raw, Mapping):
        raise InvalidInputError(field, f"must be an object, not {_kind(raw)}")
    if unknown := sorted(str(key) for key in raw if key not in _VERDICT_KEYS):
        raise InvalidInputError(
            field, f"{unknown[0]!r} is not a key of a verdict (criterion, status, evidence)"
        )
    if missing := sorted(_VERDICT_KEYS - set(raw)):
        raise InvalidInputError(field, f"{missing[0]} is required")
    criterion = _criterion(field, raw["criterion"], by_number)
    if criterion.n in seen:
        raise InvalidInputError(
            field,
            f"criterion {criterion.n} already has a verdict (verdicts[{seen[criterion.n]}]); "
            "give one verdict per criterion",
        )
    status = _status(field, raw["status"])
    evidence = _evidence(field, raw["evidence"], criterion)
    return Verdict(n=criterion.n, text=criterion.text, status=status, evidence=evidence)


def _criterion(field: str, number: object, by_number: Mapping[int, Criterion]) -> Criterion:
    if not isinstance(number, int) or isinstance(number, bool):
        raise InvalidInputError(field, f"criterion must be a whole number, not {_kind(number)}")
    if number not in by_number:
        known = f"1 to {len(by_number)}" if by_number else "none: the plan has no criteria"
        raise InvalidInputError(
            field, f"criterion {number} is not a criterion of this plan (its criteria: {known})"
        )
    return by_number[number]


def _status(field: str, status: object) -> VerdictStatus:
    if not isinstance(status, str) or status not in _STATUS_VALUES:
        raise InvalidInputError(field, f"status must be one of {_STATUSES}")
    return VerdictStatus(status)


def _evidence(field: str, evidence: object, criterion: Criterion) -> str:
    if not isinstance(evidence, str):
        raise InvalidInputError(field, f"evidence must be text, not {_kind(evidence)}")
    try:
        check_text(field, evidence, max_chars=MAX_EVIDENCE_CHARS)
    except InvalidInputError as exc:
        raise InvalidInputError(field, f"evidence {exc.problem}") from None
    if _normalised(evidence) == _normalised(criterion.text):
        raise InvalidInputError(
            field,
            f"evidence repeats criterion {criterion.n}'s text; say what shows it: a command "
            "and its result, a file, a link",
        )
    return evidence


def _normalised(text: str) -> str:
    return " ".join(text.split()).casefold()


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


def without_verdict(items: Iterable[Criterion], verdicts: Iterable[Verdict]) -> tuple[int, ...]:
    """The numbers of the criteria no verdict answers, in order."""
    answered = {verdict.n for verdict in verdicts}
    return tuple(item.n for item in items if item.n not in answered)


def plan_verdict(items: Sequence[Criterion], verdicts: Iterable[Verdict]) -> PlanVerdict:
    """The plan's verdict, the first that applies: `partial` (some criterion unmet),
    `unchecked` (some criterion without a verdict), `needs_person` (some criterion waiting
    for a person), `met` (every criterion met, so also when there are none).

    Verdicts that answer no criterion of `items` are not counted.
    """
    numbers = {item.n for item in items}
    answered = [verdict for verdict in verdicts if verdict.n in numbers]
    statuses = {verdict.status for verdict in answered}
    if VerdictStatus.UNMET in statuses:
        return PlanVerdict.PARTIAL
    if without_verdict(items, answered):
        return PlanVerdict.UNCHECKED
    if VerdictStatus.NEEDS_PERSON in statuses:
        return PlanVerdict.NEEDS_PERSON
    return PlanVerdict.MET


def follow_up_content(
    plan_id: str, content: PlanContent, outcome: str | None, verdicts: Iterable[Verdict]
) -> PlanContent:
    """The sections of the plan that follows up plan `plan_id`'s unmet criteria.

    Its goal is "Meet the unmet criteria of PLAN_ID: GOAL"; its context, the original's
    context and outcome; its approach, the evidence of each unmet verdict; its success
    criteria, the unmet criteria's texts as a list (which `criteria` reads back as them).

    Raises:
        ValueError: no verdict in `verdicts` is unmet (there is nothing to follow up).
    """
    unmet = [verdict for verdict in verdicts if verdict.status is VerdictStatus.UNMET]
    if not unmet:
        message = f"plan {plan_id} has no unmet verdict to follow up"
        raise ValueError(message)
    context = content.context.rstrip("\n")
    if outcome is not None and outcome.strip():
        context += f"\n\nOutcome of {plan_id}:\n{outcome.strip()}"
    approach = f"What {plan_id} found for each criterion it did not meet:\n" + as_list(
        f"Criterion {verdict.n}: {verdict.evidence.strip()}" for verdict in unmet
    )
    return PlanContent(
        goal=f"Meet the unmet criteria of {plan_id}: {content.goal}",
        context=context,
        approach=approach,
        success_criteria=as_list(verdict.text for verdict in unmet),
    )
