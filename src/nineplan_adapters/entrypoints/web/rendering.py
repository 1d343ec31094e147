"""The page templates and the filters they use: times for people, a card's first line, a
search snippet's marks.

Templates autoescape: whatever an agent wrote is text.
"""

import datetime as dt
from collections.abc import Iterator

import jinja2
import markupsafe

from nineplan_adapters.entrypoints.text import stale_line
from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES
from nineplan_adapters.entrypoints.web.marks import marks
from nineplan_core.journal import minutes_since
from nineplan_core.model import format_timestamp
from nineplan_core.results import SNIPPET_MARKS
from nineplan_core.service.deciding import MAX_NOTE_CHARS


def templates() -> jinja2.Environment:
    """The page templates, shipped as package data; every value is escaped unless marked safe."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("nineplan_adapters.entrypoints.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["stamp"] = format_timestamp
    environment.filters["iso"] = lambda at: at.astimezone(dt.UTC).isoformat()
    environment.filters["duration"] = duration
    environment.filters["ago"] = ago
    environment.filters["held_for"] = held_for
    environment.filters["first_line"] = first_line
    environment.filters["marked"] = marked
    environment.globals["stale_line"] = board_stale_line
    environment.globals["marks"] = marks
    environment.globals["max_note_chars"] = MAX_NOTE_CHARS
    environment.globals["tools"] = DEFAULT_NAMES.fields  # web_app sets the configured names
    return environment


def board_stale_line(
    plan_id: str, worker: str, last_seen: dt.datetime | None, now: dt.datetime
) -> str:
    """A stale plan's line on the board: who holds it, since when, and what a person can do
    (a person does not take plans over; Release gives the plan to the next pull)."""
    then = "Release puts it back at the front of the queue for another agent"
    return stale_line(plan_id, worker, last_seen, now, then=then)


def duration(then: dt.datetime, now: dt.datetime) -> str:
    """How long from `then` to `now`, for people: `4 min`, `2 h 5 min`, `3 d 4 h` (live.js
    writes the same as time passes)."""
    hour, two_days = 60, 48
    minutes = minutes_since(then, now)
    if minutes < 1:
        return "under a minute"
    if minutes < hour:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, hour)
    if hours < two_days:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


#: A `<time>` element: the UTC time in `datetime` and `title` (shown on hover), the text for
#: people; live.js counts `data-ago` ("4 min ago") and `data-since` ("4 min") on as the page
#: stays open.
_TIMES = {
    "ago": markupsafe.Markup('<time datetime="{0}" title="{0}" data-ago>{1}</time>'),
    "since": markupsafe.Markup('<time datetime="{0}" title="{0}" data-since>{1}</time>'),
}


def _time(at: dt.datetime, text: str, kind: str) -> markupsafe.Markup:
    """`text` about `at` in a `<time>` of `kind` (`ago` or `since`), every value escaped."""
    return _TIMES[kind].format(format_timestamp(at), text)


def ago(at: dt.datetime, now: dt.datetime) -> markupsafe.Markup:
    """`at` relative to `now` for people, `4 min ago`, as a `<time>` carrying the UTC time."""
    return _time(at, f"{duration(at, now)} ago", "ago")


def held_for(at: dt.datetime, now: dt.datetime) -> markupsafe.Markup:
    """How long since `at`, `4 min` (how long a plan has been held), as a `<time>`."""
    return _time(at, duration(at, now), "since")


def first_line(text: str | None) -> str:
    """The first line of a text that is not blank ("" for none): an outcome on a card."""
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")


def marked(snippet: str) -> Iterator[tuple[str, bool]]:
    """Split a search snippet into (text, matched) parts, so the template can escape each."""
    start, end = SNIPPET_MARKS
    for index, part in enumerate(snippet.replace(end, start).split(start)):
        if part:
            yield part, index % 2 == 1
