"""How each way in words a stale plan: the shared stem, then the reader's own action."""

import datetime as dt

from nineplan_adapters.entrypoints.text import stale_line, take_over_hint
from nineplan_adapters.entrypoints.web.rendering import board_stale_line
from nineplan_core.journal import heard_ago

NOW = dt.datetime(2026, 12, 4, 12, 0, tzinfo=dt.UTC)


def test_heard_ago_is_in_seconds_under_a_minute_then_in_minutes():
    """A sub-minute lease is stale after seconds, so "0 min ago" would say nothing."""
    assert heard_ago(NOW - dt.timedelta(seconds=7.9), NOW) == "7 s ago"
    assert heard_ago(NOW - dt.timedelta(seconds=59), NOW) == "59 s ago"
    assert heard_ago(NOW - dt.timedelta(seconds=60), NOW) == "1 min ago"
    assert heard_ago(NOW - dt.timedelta(minutes=47, seconds=30), NOW) == "47 min ago"
    assert heard_ago(NOW + dt.timedelta(seconds=3), NOW) == "0 s ago"  # another clock ahead
    assert heard_ago(None, NOW) == "at an unknown time"


def test_the_agent_is_told_take_over_and_a_person_release():
    """The MCP words name the `take_over` argument; the board's offer Release and never
    name an argument a person has no way to pass."""
    seen = NOW - dt.timedelta(minutes=3)
    agent = stale_line("k3v9x", "tests", seen, NOW, then=take_over_hint("k3v9x"))
    assert agent == (
        'Plan k3v9x is stale: worker tests last heard 3 min ago; take it over with take_over="k3v9x"'
    )
    person = board_stale_line("k3v9x", "tests", seen, NOW)
    assert person.startswith("Plan k3v9x is stale: worker tests last heard 3 min ago; Release")
    assert "take_over" not in person
