"""A worker's hold on its active plan: the lease rules, in one value (docs/agents.md)."""

import datetime as dt

from nineplan_core.workers import MAIN, Hold, Worker

AT = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
LEASE = dt.timedelta(minutes=30)


def test_a_hold_lapses_one_lease_after_its_worker_was_last_heard_from() -> None:
    """`lapses_at` is `last_seen` plus the lease."""
    assert Hold(worker=MAIN, last_seen=AT).lapses_at(LEASE) == AT + LEASE


def test_a_hold_is_live_up_to_its_lapse_and_stale_just_after() -> None:
    """The edge is exact: stale only once more than the lease has passed."""
    hold = Hold(worker=Worker("tests"), pulled_at=AT, last_seen=AT)
    assert not hold.stale(AT + LEASE, LEASE)
    assert hold.stale(AT + LEASE + dt.timedelta(milliseconds=1), LEASE)


def test_a_hold_never_heard_from_never_lapses() -> None:
    """A plan pulled before leases were kept (no `last_seen`) is never stale, and idle for nothing."""
    hold = Hold(worker=MAIN)
    assert hold.lapses_at(LEASE) is None
    assert not hold.stale(AT + 100 * LEASE, LEASE)
    assert hold.idle(AT) == dt.timedelta(0)


def test_idle_is_the_time_since_the_worker_was_last_heard_from() -> None:
    """`idle` counts from `last_seen` (the take-over's `idle_minutes`)."""
    assert Hold(worker=MAIN, last_seen=AT).idle(AT + LEASE) == LEASE
