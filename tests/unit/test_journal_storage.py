"""The journal on every backend: one event per change, in order, with its facts derived."""

import datetime as dt
import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from nineplan_adapters.entrypoints.web.chart import hourly, hours
from nineplan_adapters.storage.clock import FixedClock
from nineplan_adapters.storage.memory.catalog import MemorySessionCatalog
from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
from nineplan_core.callers import Caller
from nineplan_core.errors import InvalidInputError, SessionNotFoundError
from nineplan_core.journal import Actor, Event, EventKind, EventQuery, NewEvent, UnreadableEvent
from nineplan_core.model import Session, SessionName
from tests.fakes import PLAN, Backend, make_service, open_backend, postgres_schema

K = EventKind


async def kinds(backend: Backend, name: str) -> list[EventKind]:
    events = await backend.service.journal(name)
    assert all(isinstance(event, Event) for event in events), events
    return [event.kind for event in events if isinstance(event, Event)]


async def workflow(backend: Backend) -> tuple[str, str, str]:
    """create, add a, add b (front), pull b, defer b, pull a, complete a, pull b, discard b."""
    service = backend.service
    name = await backend.session()
    a = (await service.add_plan(name, **PLAN)).plan.id
    b = (await service.add_plan(name, **{**PLAN, "goal": "b"}, position="front")).plan.id
    await service.pull_plan(name)
    await service.defer_plan(name, "blocked on a", "back")
    await service.pull_plan(name)
    await service.complete_plan(name, "x" * 300)
    await service.pull_plan(name)
    await service.discard_plan(name, "not needed")
    return name, a, b


async def test_every_change_appends_one_event_in_order(backend: Backend):
    """A whole workflow gives exactly its kinds, seq 1, 2, 3 ... with no gap, each with the
    detail §7 names (position and rank, reason, the first 200 characters of the outcome)."""
    name, a, b = await workflow(backend)
    events = await backend.service.journal(name)
    assert [event.seq for event in events] == list(range(1, 10))
    readable = [event for event in events if isinstance(event, Event)]
    assert [(e.kind, e.plan_id) for e in readable] == [
        (K.SESSION_CREATED, None),
        (K.PLAN_ADDED, a),
        (K.PLAN_ADDED, b),
        (K.PLAN_PULLED, b),
        (K.PLAN_DEFERRED, b),
        (K.PLAN_PULLED, a),
        (K.PLAN_COMPLETED, a),
        (K.PLAN_PULLED, b),
        (K.PLAN_DISCARDED, b),
    ]
    assert {e.actor for e in readable} == {Actor.AGENT}
    assert readable[1].detail == {"position": "back", "rank": 1}
    assert readable[2].detail == {"position": "front", "rank": 1}
    assert readable[4].detail == {"position": "back", "rank": 2, "reason": "blocked on a"}
    assert readable[6].detail == {
        "outcome": "x" * 200,
        "verdicts": {"met": 0, "unmet": 0, "needs_person": 0, "none": 1},
    }
    assert readable[8].detail == {"reason": "not needed"}
    assert readable[0].at == backend.clock()
    assert (await backend.service.validate_session(name)).journal_matches_state


async def test_a_replayed_request_appends_nothing(backend: Backend):
    """Repeating a call by its request_id returns the first result and adds no event."""
    service = backend.service
    name = await backend.session()
    await service.add_plan(name, **PLAN, caller=Caller.of(request_id="r1"))
    await service.pull_plan(name, caller=Caller.of(request_id="r2"))
    before = await kinds(backend, name)
    await service.add_plan(name, **PLAN, caller=Caller.of(request_id="r1"))
    await service.pull_plan(name, caller=Caller.of(request_id="r2"))
    assert await kinds(backend, name) == before == [K.SESSION_CREATED, K.PLAN_ADDED, K.PLAN_PULLED]


async def test_a_refused_change_appends_nothing(backend: Backend):
    """A call that fails (nothing to pull, no active plan) leaves the journal as it was."""
    service = backend.service
    name = await backend.session()
    with pytest.raises(Exception, match="queue"):
        await service.pull_plan(name)
    with pytest.raises(Exception, match="active"):
        await service.complete_plan(name, "done")
    assert await kinds(backend, name) == [K.SESSION_CREATED]


async def test_the_actor_is_recorded_and_checked(backend: Backend):
    """A person's change says `person`; an unknown actor is refused before storage."""
    service = backend.service
    name = await backend.session()
    placed = await service.add_plan(name, **PLAN, caller=Caller.of(actor="person"))
    events = await service.journal(name, EventQuery(plan_id=placed.plan.id))
    assert [event.actor for event in events if isinstance(event, Event)] == [Actor.PERSON]
    with pytest.raises(InvalidInputError, match="actor"):
        await service.add_plan(name, **PLAN, caller=Caller.of(actor="robot"))
    assert len((await service.session_state(name)).queue) == 1


async def test_queries_filter_and_take_the_newest(backend: Backend):
    """after_seq, kinds, plan_id and last narrow the events; the result is oldest first."""
    name, a, b = await workflow(backend)
    journal = backend.service.journal
    assert [e.seq for e in await journal(name, EventQuery(last=3))] == [7, 8, 9]
    assert [e.seq for e in await journal(name, EventQuery(after_seq=7))] == [8, 9]
    assert [e.seq for e in await journal(name, EventQuery(last=50))] == list(range(1, 10))
    pulls = await journal(name, EventQuery(kinds=frozenset({K.PLAN_PULLED})))
    assert [e.seq for e in pulls] == [4, 6, 8]
    of_b = await journal(name, EventQuery(plan_id=b, last=2))
    assert [e.seq for e in of_b] == [8, 9]
    both = frozenset({K.PLAN_PULLED, K.PLAN_DEFERRED})
    assert [e.seq for e in await journal(name, EventQuery(kinds=both, plan_id=b))] == [4, 5, 8]
    assert await journal(name, EventQuery(plan_id=a, after_seq=7)) == []
    of_both = await journal(name, EventQuery(plan_ids=frozenset({a, b}), kinds=both))
    assert [e.seq for e in of_both] == [4, 5, 6, 8]
    assert await journal(name, EventQuery(plan_ids=frozenset())) == []


async def test_state_derives_defer_counts_pulled_at_and_recent(backend: Backend):
    """defer_count per live plan, when the active plan was pulled (this activation), the last
    five events oldest first, and `stuck` from three deferrals on."""
    service = backend.service
    name = await backend.session()
    placed = await service.add_plan(name, **PLAN)
    await service.add_plan(name, **{**PLAN, "goal": "other"})
    for _ in range(3):
        await service.pull_plan(name)
        await service.defer_plan(name, "blocked", "front")
    backend.clock.advance(600)
    pulled = await service.pull_plan(name)
    assert (pulled.defer_count, pulled.stuck) == (3, True)
    backend.clock.advance(120)
    state = await service.session_state(name)
    assert state.pulled_at == backend.clock() - dt.timedelta(seconds=120)
    assert state.defer_count(placed.plan.id) == 3
    assert state.stuck(placed.plan.id)
    other = state.queue[0].id
    assert (state.defer_count(other), state.stuck(other)) == (0, False)
    assert [e.seq for e in state.recent] == [6, 7, 8, 9, 10]
    assert isinstance(state.recent[-1], Event)
    assert state.recent[-1].kind is K.PLAN_PULLED
    assert (
        await service.reminder(name, caller=Caller.of(None))
        == f"Active plan: {placed.plan.id} {PLAN['goal']} (pulled 2 min ago)"
    )


async def test_no_reminder_without_an_active_plan(backend: Backend):
    """The reminder line is there only while a plan is active."""
    name = await backend.session()
    await backend.service.add_plan(name, **PLAN)
    assert await backend.service.reminder(name, caller=Caller.of(None)) is None


async def damage(backend: Backend, name: str, seq: int, column: str, value: Any) -> None:
    """Play a person editing one journal row by hand."""
    if backend.kind == "memory":
        catalog = backend.catalog
        assert isinstance(catalog, MemorySessionCatalog)
        catalog.stores[SessionName(name)].event_rows[seq - 1][column] = value
    elif backend.kind == "postgres":
        store = await backend.catalog.open(SessionName(name))
        await store.pool.execute(  # type: ignore[attr-defined]
            f"UPDATE nineplan_journal SET {column} = $1 WHERE session_name = $2 AND seq = $3",  # noqa: S608 - a test's own column names
            value,
            name,
            seq,
        )
    else:
        with sqlite3.connect(backend.root / name / "session.db") as db:
            db.execute(f"UPDATE journal SET {column} = ? WHERE seq = ?", (value, seq))  # noqa: S608
        db.close()


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [("detail", "{not json", "JSONDecodeError"), ("kind", "plan_exploded", "plan_exploded")],
)
async def test_a_damaged_row_fails_the_invariant_not_the_tools(
    backend: Backend, column: str, value: str, problem: str
):
    """A hand-edited row makes journal_matches_state false with an issue line naming it;
    resume, state, the log and every later change still work."""
    service = backend.service
    name = await backend.session()
    await service.add_plan(name, **PLAN)
    await service.pull_plan(name)
    await damage(backend, name, 3, column, value)
    report = await service.validate_session(name)
    assert not report.journal_matches_state
    assert not report.valid
    assert any(issue.startswith("journal event 3 cannot be read") for issue in report.issues)
    assert any(problem in issue for issue in report.issues), report.issues
    events = await service.journal(name)
    assert isinstance(events[2], UnreadableEvent)
    state = await service.session_state(name)
    assert state.active_plan is not None
    assert [e.seq for e in state.recent] == [1, 2, 3]  # like the log: the damaged one says so
    assert isinstance(state.recent[2], UnreadableEvent)
    await service.complete_plan(name, "done anyway")
    assert [e.seq for e in await service.journal(name)] == [1, 2, 3, 4]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])  # PostgreSQL keeps a timestamptz
async def test_a_time_past_the_calendar_fails_the_invariant_not_the_tools(
    kind: str, tmp_path: Path
):
    """A hand-edited time that has no UTC value (9999-12-31T23:00 at -05:00) makes its row
    unreadable: validate reports it, and state, resume, the log and the hourly counts (which
    leave it out) still answer."""
    async with open_backend(kind, tmp_path) as backend:
        service = backend.service
        name = await backend.session()
        await service.add_plan(name, **PLAN)
        await damage(backend, name, 2, "at", "9999-12-31T23:00:00.000-05:00")
        report = await service.validate_session(name)
        assert not report.journal_matches_state
        assert any(issue.startswith("journal event 2 cannot be read") for issue in report.issues)
        state = await service.session_state(name)
        assert isinstance(state.recent[1], UnreadableEvent)
        await service.resume_session(name)
        assert isinstance((await service.journal(name))[1], UnreadableEvent)
        since = backend.clock() - dt.timedelta(days=1)
        assert await service.hourly_counts(name, frozenset({K.PLAN_ADDED}), since) == {}


async def test_a_journal_that_disagrees_with_the_state_is_reported(backend: Backend):
    """An event rewritten to another plan no longer replays to the stored queue."""
    service = backend.service
    name = await backend.session()
    await service.add_plan(name, **PLAN)
    await damage(backend, name, 2, "plan_id", "zzzzz")
    report = await service.validate_session(name)
    assert not report.journal_matches_state
    assert report.single_active_plan
    assert report.files_match_database
    assert any("not in the journal" in issue for issue in report.issues), report.issues


async def test_repairs_are_journalled_by_the_system(backend: Backend):
    """Reconcile re-rendering a missing file appends files_repaired with actor system
    (on PostgreSQL the files are this machine's mirror: filling it is no change)."""
    service = backend.service
    name = await backend.session()
    placed = await service.add_plan(name, **PLAN)
    await backend.delete_plan_file(name, placed.plan.id)
    await service.repair_session(name)
    events = [e for e in await service.journal(name) if isinstance(e, Event)]
    if backend.kind == "postgres":
        assert [e.kind for e in events] == [K.SESSION_CREATED, K.PLAN_ADDED]
        return
    assert [e.kind for e in events] == [K.SESSION_CREATED, K.PLAN_ADDED, K.FILES_REPAIRED]
    assert events[-1].actor is Actor.SYSTEM
    assert events[-1].detail == {"repairs": [f"rendered {placed.plan.id}.txt"]}
    assert (await service.validate_session(name)).valid


async def test_inspection_writes_nothing(backend: Backend):
    """The log and the inspected state repair nothing: a deleted file stays deleted."""
    service = backend.service
    name = await backend.session()
    placed = await service.add_plan(name, **PLAN)
    await backend.delete_plan_file(name, placed.plan.id)
    before = await service.journal(name)
    state = await service.session_state(name)
    assert f"{placed.plan.id}.txt" not in state.plan_files
    assert await service.journal(name) == before
    assert await backend.plan_text(name, placed.plan.id) is None


async def test_follow_sees_events_then_new_ones(backend: Backend):
    """follow() yields the events after after_seq, then each new commit's events."""
    service = backend.service
    name = await backend.session()
    await service.add_plan(name, **PLAN)
    seen: list[Event | UnreadableEvent] = []
    got_two = anyio.Event()
    got_four = anyio.Event()

    async def watch() -> None:
        async for event in service.follow(name, after_seq=0):
            seen.append(event)
            if len(seen) == 2:
                got_two.set()
            if len(seen) == 4:
                got_four.set()
                return

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await got_two.wait()
            await service.add_plan(name, **{**PLAN, "goal": "later"})
            await service.pull_plan(name)
            await got_four.wait()
    assert [event.seq for event in seen] == [1, 2, 3, 4]
    assert isinstance(seen[2], Event)
    assert seen[2].kind is K.PLAN_ADDED


async def older_session(service: Any) -> tuple[str, list[str], str]:
    """A session with two queued plans and an active one: what an older version leaves."""
    name = (await service.create_session("from before")).session.name
    ids = [(await service.add_plan(name, **{**PLAN, "goal": g})).plan.id for g in "abc"]
    await service.pull_plan(name)
    return name, ids[1:], ids[0]


def check_started(events: list[Event | UnreadableEvent], queue: list[str], active: str) -> None:
    assert len(events) == 1
    [started] = events
    assert isinstance(started, Event)
    assert (started.seq, started.kind, started.actor) == (1, K.JOURNAL_STARTED, Actor.SYSTEM)
    assert started.detail == {"queue": queue, "active_plan": active}


async def test_an_older_sqlite_session_starts_its_journal_on_open(tmp_path: Path):
    """A database from before the journal (schema 3) migrates with one journal_started event
    holding its queue in pull order and its active plan, validates, and journals on from 2."""
    catalog = SqliteSessionCatalog(tmp_path)
    name, queue, active = await older_session(make_service(catalog, FixedClock()))
    await catalog.aclose()
    with sqlite3.connect(tmp_path / name / "session.db") as db:
        db.execute("DROP TABLE journal")
        db.execute("PRAGMA user_version = 3")
    db.close()
    catalog = SqliteSessionCatalog(tmp_path)
    service = make_service(catalog, FixedClock())
    try:
        events = await service.journal(name)
        check_started(events, queue, active)
        assert (await service.validate_session(name)).valid
        await service.complete_plan(name, "done")
        assert [e.seq for e in await service.journal(name)] == [1, 2]
        assert (await service.validate_session(name)).valid
    finally:
        await catalog.aclose()


@pytest.mark.postgres
async def test_an_older_postgres_database_starts_each_sessions_journal(tmp_path: Path):
    """A database at schema 1 migrates with one journal_started event per session."""
    from nineplan_adapters.storage.postgres.catalog import PostgresSessionCatalog, connect_pool

    async with postgres_schema() as url:
        catalog = PostgresSessionCatalog(await connect_pool(url), tmp_path)
        name, queue, active = await older_session(make_service(catalog, FixedClock()))
        await catalog.pool.execute("DROP TABLE nineplan_journal")
        await catalog.pool.execute("DELETE FROM nineplan_schema WHERE version > 1")
        await catalog.aclose()
        catalog = PostgresSessionCatalog(await connect_pool(url), tmp_path)
        service = make_service(catalog, FixedClock())
        try:
            check_started(await service.journal(name), queue, active)
            assert (await service.validate_session(name)).valid
        finally:
            await catalog.aclose()


async def test_salvage_and_notes_come_before_the_change(backend: Backend):
    """A defer of a messy, non-UTF-8 file with notes gives edits_salvaged (with the recovered/
    copy), then notes_added, then plan_deferred, in that order, and the journal still replays."""
    service = backend.service
    name = await backend.session()
    placed = await service.add_plan(name, **PLAN)
    await service.pull_plan(name)
    await backend.write_plan_text(name, placed.plan.id, b"stray \xff bytes, no headings")
    await service.defer_plan(name, "blocked", notes="- tried the cache first")
    events = [e for e in await service.journal(name) if isinstance(e, Event)]
    assert [e.kind for e in events[-3:]] == [K.EDITS_SALVAGED, K.NOTES_ADDED, K.PLAN_DEFERRED]
    salvaged, noted, _ = events[-3:]
    assert str(salvaged.detail["salvaged"]).startswith("Plan file read tolerantly")
    assert "recovered" in str(salvaged.detail["recovered"])
    assert noted.detail == {"notes": "- tried the cache first"}
    assert {e.plan_id for e in events[-3:]} == {placed.plan.id}
    assert (await service.validate_session(name)).journal_matches_state


async def test_a_clean_file_and_no_notes_add_no_extra_events(backend: Backend):
    """Completing with a clean file and no notes journals the completion alone."""
    service = backend.service
    name = await backend.session()
    await service.add_plan(name, **PLAN)
    await service.pull_plan(name)
    await service.complete_plan(name, "done", notes="  ")
    assert (await kinds(backend, name))[-2:] == [K.PLAN_PULLED, K.PLAN_COMPLETED]


async def test_a_session_and_its_first_event_are_created_together(backend: Backend):
    """Creation writes the session and `session_created` in one transaction: when the event
    cannot be written, no session is left behind, and the name can be created afterwards."""
    at = backend.clock()
    session = Session(name=SessionName("calm-brisk-heron"), task_description="t", created_at=at)
    broken = NewEvent(kind=K.SESSION_CREATED, at=at, actor=Actor.AGENT, detail={"x": object()})
    with pytest.raises(Exception):  # noqa: B017, PT011 - whatever the backend's encoder raises
        await backend.catalog.create(session, broken)
    assert session.name not in await backend.catalog.names()
    with pytest.raises(SessionNotFoundError):
        await backend.catalog.open(session.name)
    good = NewEvent(kind=K.SESSION_CREATED, at=at, actor=Actor.AGENT)
    await backend.catalog.create(session, good)
    assert await kinds(backend, session.name) == [K.SESSION_CREATED]


async def test_hourly_counts_are_counted_per_utc_hour_from_the_start_on(backend: Backend):
    """The store counts the asked kinds per UTC hour from `since` on: an event exactly on
    `since` or on an hour's start counts in that hour, one a millisecond before `since` does
    not, a time written with another offset counts in its UTC hour, other kinds are left out;
    the chart's hours from these counts are those from the events themselves."""
    name = await backend.session()
    since = dt.datetime(2026, 3, 3, 11, tzinfo=dt.UTC)
    at = {
        K.PLAN_COMPLETED: [
            since - dt.timedelta(milliseconds=1),  # before the window
            since,
            dt.datetime(2026, 3, 4, 9, 59, 59, 999000, tzinfo=dt.UTC),
            dt.datetime(2026, 3, 4, 10, tzinfo=dt.UTC),
            dt.datetime(2026, 3, 4, 11, tzinfo=dt.UTC),  # after "now", still counted
        ],
        K.PLAN_DEFERRED: [
            dt.datetime(2026, 3, 4, 11, 5, tzinfo=dt.timezone(dt.timedelta(hours=2)))
        ],
        K.PLAN_PULLED: [dt.datetime(2026, 3, 4, 10, 1, tzinfo=dt.UTC)],
    }
    store = await backend.catalog.open(SessionName(name))
    async with store.transaction() as tx:
        for kind, times in at.items():
            for time in times:
                await tx.append(NewEvent(kind=kind, at=time, actor=Actor.AGENT, plan_id="abcde"))
    counted = frozenset({K.PLAN_COMPLETED, K.PLAN_DEFERRED})
    counts = await backend.service.hourly_counts(name, counted, since)
    hour = partial(dt.datetime, 2026, 3, tzinfo=dt.UTC)
    assert counts == {
        (hour(3, 11), K.PLAN_COMPLETED): 1,
        (hour(4, 9), K.PLAN_COMPLETED): 1,
        (hour(4, 9), K.PLAN_DEFERRED): 1,
        (hour(4, 10), K.PLAN_COMPLETED): 1,
        (hour(4, 11), K.PLAN_COMPLETED): 1,
    }
    deferred = await backend.service.hourly_counts(name, frozenset({K.PLAN_DEFERRED}), since)
    assert deferred == {(hour(4, 9), K.PLAN_DEFERRED): 1}
    assert await backend.service.hourly_counts(name, frozenset(), since) == {}
    now = dt.datetime(2026, 3, 4, 10, 30, tzinfo=dt.UTC)
    assert hours(counts, now) == hourly(await backend.service.journal(name), now)
