"""The session catalogue's use cases on every backend: the listing, archive and unarchive,
delete, and the history of completed plans."""

import pytest

from nineplan_core.errors import (
    InvalidInputError,
    SessionHasActivePlanError,
    SessionNotArchivedError,
    SessionNotFoundError,
)
from nineplan_core.results import SessionSummary
from tests.fakes import PLAN, Backend


async def test_an_archived_session_is_left_out_unless_asked(backend: Backend):
    """`catalogue()` leaves an archived session out and counts it; with `archived=True` it
    lists it marked; unarchiving brings it back; `list_sessions` marks it either way."""
    kept, filed = await backend.session("kept"), await backend.session("filed")
    await backend.service.archive_session(filed)
    await backend.service.archive_session(filed)  # no change the second time
    listing = await backend.service.catalogue()
    assert [entry.name for entry in listing.sessions] == [kept]
    assert listing.archived_left_out == 1
    everything = await backend.service.catalogue(archived=True)
    assert {entry.name: entry.archived for entry in everything.sessions} == {
        kept: False,
        filed: True,
    }
    assert everything.archived_left_out == 0
    marked = {s.session.name: s.archived for s in await backend.service.list_sessions()}
    assert marked == {kept: False, filed: True}
    await backend.service.unarchive_session(filed)
    assert len((await backend.service.catalogue()).sessions) == 2


async def test_an_archived_session_still_takes_every_call(backend: Backend):
    """Adding, pulling and completing work on an archived session as on any other."""
    name = await backend.session()
    await backend.service.archive_session(name)
    await backend.service.add_plan(name, **PLAN)
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "finished while archived")
    [listed] = (await backend.service.catalogue(archived=True)).sessions
    assert isinstance(listed, SessionSummary)
    assert (listed.completed_count, listed.archived) == (1, True)


async def test_delete_removes_only_an_archived_session_without_an_active_plan(backend: Backend):
    """delete refuses a session that is not archived and one with an active plan; an
    archived one without goes for good, and a later archive of its name finds nothing."""
    name = await backend.session()
    await backend.service.add_plan(name, **PLAN)
    await backend.service.pull_plan(name)
    with pytest.raises(SessionNotArchivedError):
        await backend.service.delete_session(name)
    await backend.service.archive_session(name)
    with pytest.raises(SessionHasActivePlanError):
        await backend.service.delete_session(name)
    await backend.service.complete_plan(name, "done")
    await backend.service.delete_session(name)
    assert (await backend.service.catalogue(archived=True)).sessions == []
    with pytest.raises(SessionNotFoundError):
        await backend.service.session_state(name)
    with pytest.raises(SessionNotFoundError):
        await backend.service.archive_session(name)
    with pytest.raises(SessionNotFoundError):
        await backend.service.delete_session(name)


async def test_completed_plans_come_newest_first(backend: Backend):
    """`completed_plans` gives the completed plans only (not the discarded), the most
    recently completed first, at most `limit`; a limit below 1 is refused."""
    name = await backend.session()
    for goal in ("one", "two", "three"):
        await backend.service.add_plan(name, **{**PLAN, "goal": goal})
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "first")
    await backend.service.pull_plan(name)
    await backend.service.discard_plan(name, "not needed")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "third")
    assert [plan.goal for plan in await backend.service.completed_plans(name)] == ["three", "one"]
    assert [plan.goal for plan in await backend.service.completed_plans(name, 1)] == ["three"]
    with pytest.raises(InvalidInputError, match="limit"):
        await backend.service.completed_plans(name, 0)
