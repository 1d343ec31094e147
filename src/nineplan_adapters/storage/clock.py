"""Clocks: the real UTC clock and a fixed one for tests."""

import datetime as dt

import attrs


def utc_now() -> dt.datetime:
    """Now, in UTC, to the millisecond (what storage keeps)."""
    now = dt.datetime.now(dt.UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


@attrs.define
class FixedClock:
    """A clock that says what it is told; `advance` moves it."""

    now: dt.datetime = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)
