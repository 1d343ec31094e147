"""How journal events look in `nineplan log`, its JSON lines and the MCP views."""

import datetime as dt

from nineplan_adapters.entrypoints.journal_views import event_line, event_view, journal_entry
from nineplan_core.journal import Actor, Event, EventKind, UnreadableEvent

AT = dt.datetime(2026, 12, 1, 9, 30, 5, 123000, tzinfo=dt.UTC)


def test_an_event_is_one_line_with_its_detail():
    """seq, time to the second, actor, kind, plan and the detail as key=value, long text cut."""
    event = Event(
        seq=7,
        kind=EventKind.PLAN_DEFERRED,
        at=AT,
        actor=Actor.PERSON,
        plan_id="a3x9k",
        detail={"reason": "waiting\non review " + "x" * 100, "rank": 2},
    )
    line = event_line(event)
    assert line.startswith("    7  2026-12-01T09:30:05Z  person  plan_deferred    a3x9k  reason=")
    assert "waiting on review" in line
    assert "rank=2" in line
    assert "…" in line
    assert "\n" not in line


def test_a_session_event_shows_no_plan_and_lists_as_json():
    """A session event has a dash for its plan; list details are JSON in the line."""
    event = Event(
        seq=1,
        kind=EventKind.FILES_REPAIRED,
        at=AT,
        actor=Actor.SYSTEM,
        detail={"repairs": ["rendered a3x9k.txt"]},
    )
    assert 'repairs=["rendered a3x9k.txt"]' in event_line(event)
    assert " - " in event_line(event)
    assert event_view(event) == {
        "seq": 1,
        "at": "2026-12-01T09:30:05Z",
        "kind": "files_repaired",
        "plan_id": None,
        "actor": "system",
        "detail": {"repairs": ["rendered a3x9k.txt"]},
    }


def test_a_damaged_row_says_so_instead_of_failing():
    """An unreadable row prints its seq and the problem, as text and as JSON."""
    damaged = UnreadableEvent(3, "unknown kind 'x'")
    assert event_line(damaged) == "    3  (this journal row cannot be read: unknown kind 'x')"
    assert journal_entry(damaged) == {"seq": 3, "unreadable": "unknown kind 'x'"}
