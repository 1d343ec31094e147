"""A worker's file change renews its lease and stores its edits (`renew_lease`, what the
server that pulled the plan calls), on every backend: notes reach the database while the
agent works, the journal hears of it at most once a minute, never for a bare renewal, and a
file that is not UTF-8 is kept in recovered/ while the lease is renewed all the same."""

from nineplan_core.callers import Caller
from nineplan_core.journal import Actor, Event, EventKind
from nineplan_core.model import PlanRow, SessionName
from nineplan_core.replay import journal_issues
from tests.fakes import PLAN, Backend

WORKER = Caller.of("tests")


async def _pulled(backend: Backend) -> tuple[str, str, str]:
    """A session whose one plan worker `tests` holds: its name, the plan id and file text."""
    name = await backend.session()
    await backend.service.add_plan(name, **PLAN)
    placed = await backend.service.pull_plan(name, caller=WORKER)
    text = await backend.plan_text(name, placed.plan.id)
    assert text is not None
    return name, placed.plan.id, text


async def _edits(backend: Backend, name: str) -> list[Event]:
    events = await backend.service.journal(name)
    return [e for e in events if isinstance(e, Event) and e.kind is EventKind.PLAN_EDITED]


async def test_notes_are_stored_with_the_renewal_and_journaled_once_a_minute(backend: Backend):
    """Notes written into the file are in the stored plan after a renewal, with `last_seen`
    its time; the first store is a `plan_edited` by the agent (sections `notes`, the worker);
    a second within the minute is stored without an event, one a minute later gets one; the
    journal still replays to the state."""
    name, plan_id, text = await _pulled(backend)
    backend.clock.advance(5)
    await backend.write_plan_text(name, plan_id, text + "\nfirst finding\n")
    renewal = await backend.service.renew_lease(name, "tests", plan_id)
    assert (renewal.held, renewal.salvage) == (True, None)
    stored = await backend.service.get_plan(name, plan_id)
    assert "first finding" in stored.notes
    assert stored.last_seen == backend.clock()
    (first,) = await _edits(backend, name)
    assert (first.actor, first.plan_id) == (Actor.AGENT, plan_id)
    assert dict(first.detail) == {"sections": ["notes"], "worker": "tests"}
    backend.clock.advance(30)
    await backend.write_plan_text(name, plan_id, text + "\nfirst finding\nsecond\n")
    await backend.service.renew_lease(name, "tests", plan_id)
    assert "second" in (await backend.service.get_plan(name, plan_id)).notes
    assert len(await _edits(backend, name)) == 1
    backend.clock.advance(31)
    await backend.write_plan_text(name, plan_id, text + "\nfirst finding\nsecond\nthird\n")
    await backend.service.renew_lease(name, "tests", plan_id)
    assert len(await _edits(backend, name)) == 2
    assert journal_issues(await backend.service.journal(name), await _rows(backend, name)) == []


async def test_a_bare_renewal_stores_nothing_and_journals_nothing(backend: Backend):
    """A renewal while the file is still the plan's render, or empty mid-write, only moves
    `last_seen`: the plan's content and notes are as they were, no event is added."""
    name, plan_id, text = await _pulled(backend)
    before = await backend.service.get_plan(name, plan_id)
    count = len(await backend.service.journal(name))
    for written in (text, ""):
        backend.clock.advance(10)
        await backend.write_plan_text(name, plan_id, written)
        renewal = await backend.service.renew_lease(name, "tests", plan_id)
        assert (renewal.held, renewal.salvage) == (True, None)
        after = await backend.service.get_plan(name, plan_id)
        assert (after.content, after.notes) == (before.content, before.notes)
        assert after.last_seen == backend.clock()
    assert len(await backend.service.journal(name)) == count


async def test_a_file_that_is_not_utf8_is_kept_and_the_lease_renewed(backend: Backend):
    """A file that is not UTF-8 is read tolerantly, as complete reads it: the notes are
    stored with the bad bytes replaced, the original is copied whole to recovered/ (one
    copy), the lease is renewed, and the salvage line for the worker's next call names the
    copy; the journal has `edits_salvaged`, then `plan_edited`."""
    name, plan_id, text = await _pulled(backend)
    damaged = text.encode() + b"\n\xff\xfe not utf-8\n"
    await backend.write_plan_text(name, plan_id, damaged)
    backend.clock.advance(10)
    renewal = await backend.service.renew_lease(name, "tests", plan_id)
    assert renewal.held
    assert renewal.salvage is not None
    assert "not UTF-8" in renewal.salvage
    assert "recovered" in renewal.salvage
    after = await backend.service.get_plan(name, plan_id)
    assert "\ufffd\ufffd not utf-8" in after.notes
    assert after.last_seen == backend.clock()
    assert list((await backend.recovered(name)).values()) == [damaged]
    kinds = [e.kind for e in await backend.service.journal(name) if isinstance(e, Event)]
    assert kinds[-2:] == [EventKind.EDITS_SALVAGED, EventKind.PLAN_EDITED]


async def _rows(backend: Backend, name: str) -> list[PlanRow]:
    """The session's stored plans, as validate reads them."""
    store = await backend.catalog.open(SessionName(name))
    async with store.reading() as reader:
        return await reader.plan_rows()
