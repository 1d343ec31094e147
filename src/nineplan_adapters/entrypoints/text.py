"""Plain-text helpers shared by the tool results and the CLI."""

import datetime as dt
import re

from nineplan_core.journal import heard_ago

#: What a terminal would act on rather than show: C0 but newline and tab, DEL, C1, and the bidi
#: controls (embeddings, overrides and isolates) that reorder what a person reads.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def one_line(text: str | None) -> str:
    """`text` with its line breaks and runs of spaces folded into single spaces, for lists."""
    return " ".join((text or "").split())


def indented(key: str, value: object) -> str:
    """`key: value`, the lines after the first indented under the key."""
    first, *rest = str(value).split("\n")
    return "\n".join([f"{key}: {first}", *(f"  {line}" for line in rest)])


def terminal_safe(text: str) -> str:
    """`text` with the characters a terminal would act on shown escaped (`\\x1b`, `\\u202e`), so
    stored text cannot recolour the terminal, erase lines, set its title or reorder a line."""
    return _CONTROLS.sub(_escaped, text)


def _escaped(match: "re.Match[str]") -> str:
    return ascii(match.group())[1:-1]  # '\x1b', '\u202e': Python's own escapes


def stale_line(
    plan_id: str, worker: str, last_seen: dt.datetime | None, now: dt.datetime, *, then: str
) -> str:
    """The line that marks a plan whose worker's lease has lapsed, ending in what the reader
    can do about it (`then`: each way in words its own, docs/agents.md "Workers and leases")."""
    return (
        f"Plan {plan_id} is stale: worker {worker} last heard {heard_ago(last_seen, now)}; {then}"
    )


def take_over_hint(plan_id: str) -> str:
    """What an agent does with another worker's stale plan."""
    return f'take it over with take_over="{plan_id}"'


#: How a criterion's verdict is marked, on every way in: met, unmet, waiting for a person, none.
MARKS: dict[str | None, str] = {"met": "✔", "unmet": "✘", "needs_person": "?", None: "—"}
