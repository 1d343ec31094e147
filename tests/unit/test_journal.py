"""The journal's pure rules: replay, damage, derived facts and the reminder line."""

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from nineplan_core.journal import (
    Actor,
    Event,
    EventKind,
    NewEvent,
    UnreadableEvent,
    defer_counts,
    reminder_line,
    started,
)
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanId, PlanRow
from nineplan_core.replay import journal_issues, replay_issues

AT = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)


_Spec = tuple[EventKind, str | None, dict[str, object]]


def _events(*specs: _Spec) -> list[Event]:
    return [
        Event(seq=seq, kind=kind, at=AT, actor=Actor.AGENT, plan_id=plan_id, detail=detail)
        for seq, (kind, plan_id, detail) in enumerate(specs, start=1)
    ]


def _rows(queue: list[str], active: str | None = None, **others: PlanStatus) -> list[PlanRow]:
    rows = [
        PlanRow(PlanId(plan_id), PlanStatus.QUEUED, rank) for rank, plan_id in enumerate(queue, 1)
    ]
    if active:
        rows.append(PlanRow(PlanId(active), PlanStatus.ACTIVE, None))
    rows += [PlanRow(PlanId(plan_id), status, None) for plan_id, status in others.items()]
    return rows


def test_a_workflow_replays_to_its_queue_and_statuses():
    """Adds at front and back, a pull, a defer to the front and a completion replay exactly."""
    events = _events(
        (EventKind.SESSION_CREATED, None, {}),
        (EventKind.PLAN_ADDED, "aaaaa", {"position": "back", "rank": 1}),
        (EventKind.PLAN_ADDED, "bbbbb", {"position": "back", "rank": 2}),
        (EventKind.PLAN_ADDED, "ccccc", {"position": "front", "rank": 1}),
        (EventKind.PLAN_PULLED, "ccccc", {}),
        (EventKind.PLAN_DEFERRED, "ccccc", {"position": "back", "rank": 3, "reason": "r"}),
        (EventKind.PLAN_PULLED, "aaaaa", {}),
        (EventKind.PLAN_COMPLETED, "aaaaa", {"outcome": "done"}),
        (EventKind.PLAN_PULLED, "bbbbb", {}),
    )
    rows = _rows(["ccccc"], active="bbbbb", aaaaa=PlanStatus.COMPLETED)
    assert journal_issues(events, rows) == []


def test_a_person_moving_and_dropping_queued_plans_replays():
    """plan_moved reorders the queue and a plan_discarded of a queued plan removes it."""
    events = _events(
        (EventKind.PLAN_ADDED, "aaaaa", {"position": "back"}),
        (EventKind.PLAN_ADDED, "bbbbb", {"position": "back"}),
        (EventKind.PLAN_ADDED, "ccccc", {"position": "back"}),
        (EventKind.PLAN_MOVED, "ccccc", {"position": "front"}),
        (EventKind.PLAN_DISCARDED, "aaaaa", {"reason": "not needed"}),
    )
    assert journal_issues(events, _rows(["ccccc", "bbbbb"], aaaaa=PlanStatus.DISCARDED)) == []


def test_a_started_journal_replays_from_the_state_it_recorded():
    """journal_started sets the queue and the active plan an older session had."""
    first = started(AT, ["bbbbb", "ccccc"], "aaaaa")
    events = [
        Event.appended(first, 1),
        Event(seq=2, kind=EventKind.PLAN_COMPLETED, at=AT, actor=Actor.AGENT, plan_id="aaaaa"),
        Event(seq=3, kind=EventKind.PLAN_PULLED, at=AT, actor=Actor.AGENT, plan_id="bbbbb"),
    ]
    assert first.actor is Actor.SYSTEM
    # A plan completed before the journal started is not in it, and that is no issue.
    rows = _rows(["ccccc"], active="bbbbb", aaaaa=PlanStatus.COMPLETED, zzzzz=PlanStatus.COMPLETED)
    assert journal_issues(events, rows) == []


def test_a_journal_that_disagrees_with_the_state_is_reported():
    """A queue order, a status, a gap and a damaged row each give an issue line."""
    events: list[Event | UnreadableEvent] = [
        *_events(
            (EventKind.PLAN_ADDED, "aaaaa", {"position": "back"}),
            (EventKind.PLAN_ADDED, "bbbbb", {"position": "back"}),
        ),
        UnreadableEvent(4, "kind 'plan_exploded' is not an event kind"),
    ]
    issues = journal_issues(events, _rows(["bbbbb", "aaaaa"]))
    assert any("skips from event 2 to 4" in issue for issue in issues)
    assert any("event 4 cannot be read" in issue for issue in issues)
    assert any("replays the queue as [aaaaa, bbbbb], it is [bbbbb, aaaaa]" in i for i in issues)
    status = journal_issues(events[:2], _rows(["aaaaa"], active="bbbbb"))
    assert any("plan bbbbb as queued, it is active" in issue for issue in status)
    unknown = journal_issues([], _rows(["aaaaa"]))
    assert any("plan aaaaa is queued but not in the journal" in issue for issue in unknown)


def test_impossible_transitions_in_the_journal_are_reported():
    """Completing a queued plan or pulling a plan that is not the first ready one is named."""
    events = _events(
        (EventKind.PLAN_ADDED, "aaaaa", {"position": "back"}),
        (EventKind.PLAN_ADDED, "bbbbb", {"position": "back"}),
        (EventKind.PLAN_PULLED, "bbbbb", {}),
        (EventKind.PLAN_COMPLETED, "aaaaa", {}),
    )
    issues = journal_issues(events, _rows(["aaaaa"], active="bbbbb"))
    assert any("pulls bbbbb, not the first ready plan" in issue for issue in issues)
    assert any("event 4 (plan_completed) finds plan aaaaa queued" in issue for issue in issues)


def test_defer_counts_and_the_reminder_line():
    """Deferrals are counted per plan; the reminder gives whole minutes and a one-line goal."""
    events = _events(
        (EventKind.PLAN_DEFERRED, "aaaaa", {}),
        (EventKind.PLAN_DEFERRED, "aaaaa", {}),
        (EventKind.PLAN_DEFERRED, "bbbbb", {}),
        (EventKind.PLAN_PULLED, "aaaaa", {}),
    )
    assert defer_counts(events) == {"aaaaa": 2, "bbbbb": 1}
    now = AT + dt.timedelta(minutes=12, seconds=59)
    assert reminder_line("aaaaa", "fix\nthe cache", AT, now) == (
        "Active plan: aaaaa fix the cache (pulled 12 min ago)"
    )
    assert reminder_line("aaaaa", "g", None, now) == "Active plan: aaaaa g"


_OPS = st.lists(
    st.tuples(st.sampled_from(["add", "pull", "defer", "complete", "discard", "move", "drop"]),
              st.sampled_from(["front", "back"]), st.integers(0, 50)),
    max_size=60,
)  # fmt: skip


@given(_OPS)
def test_any_legal_history_replays_to_the_state_it_made(ops):
    """Events appended alongside a simple queue model always replay to that model's state."""
    queue: list[str] = []
    active: str | None = None
    done: dict[str, PlanStatus] = {}
    news: list[NewEvent] = []
    count = 0

    def note(kind: EventKind, plan_id: str, **detail: object) -> None:
        news.append(NewEvent(kind=kind, at=AT, actor=Actor.AGENT, plan_id=plan_id, detail=detail))

    for op, where, pick in ops:
        if op == "add":
            count += 1
            plan_id = f"p{count:04d}"
            queue.insert(0, plan_id) if where == "front" else queue.append(plan_id)
            note(EventKind.PLAN_ADDED, plan_id, position=where)
        elif op == "pull" and queue and active is None:
            active = queue.pop(0)
            note(EventKind.PLAN_PULLED, active)
        elif op == "defer" and active is not None:
            queue.insert(0, active) if where == "front" else queue.append(active)
            note(EventKind.PLAN_DEFERRED, active, position=where)
            active = None
        elif op in {"complete", "discard"} and active is not None:
            status = PlanStatus.COMPLETED if op == "complete" else PlanStatus.DISCARDED
            done[active] = status
            kind = EventKind.PLAN_COMPLETED if op == "complete" else EventKind.PLAN_DISCARDED
            note(kind, active)
            active = None
        elif op in {"move", "drop"} and queue:
            plan_id = queue.pop(pick % len(queue))
            if op == "move":
                queue.insert(0, plan_id) if where == "front" else queue.append(plan_id)
                note(EventKind.PLAN_MOVED, plan_id, position=where)
            else:
                done[plan_id] = PlanStatus.DISCARDED
                note(EventKind.PLAN_DISCARDED, plan_id)
    events = [Event.appended(new, seq) for seq, new in enumerate(news, start=1)]
    assert journal_issues(events, _rows(queue, active, **done)) == []


def test_a_prerequisite_finished_before_the_journal_began_counts_as_settled():
    """A session upgraded from before the journal starts with `journal_started`: a plan that
    waits for one completed back then is neither unknown nor pulled early; a journal that
    began with the session still names a prerequisite it never saw."""
    waits: _Spec = (EventKind.PLAN_ADDED, "bbbbb", {"position": "back", "after": ["old00"]})
    pulled: _Spec = (EventKind.PLAN_PULLED, "bbbbb", {})
    upgraded = _events((EventKind.JOURNAL_STARTED, None, {"queue": []}), waits, pulled)
    assert replay_issues(upgraded, _rows([], active="bbbbb")) == ([], [])
    fresh = _events((EventKind.SESSION_CREATED, None, {}), waits, pulled)
    _, issues = replay_issues(fresh, _rows([], active="bbbbb"))
    assert issues[0] == (
        "journal event 2 has plan bbbbb wait for old00, which is not another plan of the session"
    )
