"""The session page's chart: plans completed and deferred per hour over the last 24 hours.

`hours` lays the journal's counts per UTC hour (counted by the store) out as the chart's 24
hours, `hourly` counts events into them (pure functions); `Chart` lays the counts out
as the bars of an inline SVG that templates/chart.html draws (classes only: the colours are in
style.css, so nothing in the SVG needs a `style`).
"""

import collections
import datetime as dt
from collections.abc import Iterable, Mapping, Sequence

import attrs

from nineplan_core.journal import Event, EventKind, UnreadableEvent

#: The hours the chart shows, the current one last.
HOURS = 24
#: What the chart counts.
COUNTED = (EventKind.PLAN_COMPLETED, EventKind.PLAN_DEFERRED)
#: The drawing's size in SVG units (it scales to the page's width).
WIDTH, HEIGHT = 480, 120
#: Room below the bars for the hour labels, and above them for the tallest bar's count.
AXIS, HEADROOM = 18, 4
#: A label under every this many hours.
LABEL_EVERY = 6


def _hour(at: dt.datetime) -> dt.datetime:
    return at.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)


def window_start(now: dt.datetime) -> dt.datetime:
    """The start of the chart's first hour: 23 whole hours before the current one (UTC)."""
    return _hour(now) - dt.timedelta(hours=HOURS - 1)


@attrs.frozen
class Hour:
    """One hour of the chart: when it starts (UTC) and how many plans were completed and
    deferred in it."""

    start: dt.datetime
    completed: int = 0
    deferred: int = 0

    def count(self, kind: EventKind) -> int:
        return self.completed if kind is EventKind.PLAN_COMPLETED else self.deferred


#: Counts by the UTC hour's start and the kind, as the journal's hourly counts give them.
Counts = Mapping[tuple[dt.datetime, EventKind], int]


def hours(counts: Counts, now: dt.datetime) -> list[Hour]:
    """The 24 hours up to `now` (the current hour last), each with its completions and
    deferrals among `counts`; counts of other hours and other kinds are left out."""
    first = window_start(now)
    window = [first + dt.timedelta(hours=n) for n in range(HOURS)]
    return [Hour(start, *(counts.get((start, kind), 0) for kind in COUNTED)) for start in window]


def hourly(events: Iterable[Event | UnreadableEvent], now: dt.datetime) -> list[Hour]:
    """The 24 hours up to `now` (the current hour last), each with the completions and
    deferrals among `events` that happened in it; other kinds, unreadable events and events
    outside those hours are not counted."""
    counts = collections.Counter(
        (_hour(event.at), event.kind)
        for event in events
        if isinstance(event, Event) and event.kind in COUNTED
    )
    return hours(counts, now)


@attrs.frozen
class Bar:
    """One bar as drawn: its hour and kind (for the data attributes), count and box."""

    hour: dt.datetime
    kind: str
    count: int
    x: float
    y: float
    width: float
    height: float

    @property
    def label(self) -> str:
        """What the bar says to a person hovering it or reading the page aloud."""
        return f"{self.hour:%H}:00 UTC: {self.count} {self.kind}"


@attrs.frozen
class Label:
    """An hour label under the bars, starting where its hour starts."""

    x: float
    text: str


@attrs.frozen
class Chart:
    """The drawing: the hours it counts, their bars and the labels under them."""

    hours: Sequence[Hour]
    width: int = WIDTH
    height: int = HEIGHT

    @classmethod
    def of(cls, events: Iterable[Event | UnreadableEvent], now: dt.datetime) -> "Chart":
        return cls(hourly(events, now))

    @property
    def completed(self) -> int:
        return sum(hour.completed for hour in self.hours)

    @property
    def deferred(self) -> int:
        return sum(hour.deferred for hour in self.hours)

    @property
    def tallest(self) -> int:
        return max([1, *(max(hour.completed, hour.deferred) for hour in self.hours)])

    @property
    def base(self) -> float:
        """The y of the bars' foot (the axis line)."""
        return float(self.height - AXIS)

    @property
    def bars(self) -> list[Bar]:
        """Two bars per hour side by side, completed then deferred, scaled to the tallest."""
        slot = self.width / len(self.hours)
        room = self.base - HEADROOM
        bars = []
        for index, hour in enumerate(self.hours):
            for side, kind in enumerate(COUNTED):
                count = hour.count(kind)
                height = round(room * count / self.tallest, 2)
                x = round(index * slot + slot * (0.1 + 0.4 * side), 2)
                name = kind.value.removeprefix("plan_")
                bars.append(Bar(hour.start, name, count, x, self.base - height, slot * 0.4, height))
        return bars

    @property
    def labels(self) -> list[Label]:
        slot = self.width / len(self.hours)
        return [
            Label(round(index * slot + 1, 2), f"{hour.start:%H}:00")
            for index, hour in enumerate(self.hours)
            if index % LABEL_EVERY == 0
        ]


__all__ = [
    "COUNTED",
    "HOURS",
    "Bar",
    "Chart",
    "Counts",
    "Hour",
    "Label",
    "hourly",
    "hours",
    "window_start",
]
