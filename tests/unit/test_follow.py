"""The journal's change feed, composed once in the core, and the service's watch."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

from nineplan_core.errors import InvalidInputError, SessionNotFoundError
from nineplan_core.journal import Event, EventKind
from nineplan_core.model import SessionName
from nineplan_core.service.following import follow_events
from tests.fakes import PLAN, Backend


class HandTicks:
    """Change ticks a test gives by hand; it knows whether anyone is watching."""

    def __init__(self) -> None:
        self.send, self.receive = anyio.create_memory_object_stream[None](10)
        self.watching = False

    @asynccontextmanager
    async def changes(self) -> AsyncIterator[AsyncIterator[None]]:
        self.watching = True
        try:
            yield self.receive
        finally:
            self.watching = False
            self.send.close()
            self.receive.close()


async def test_the_feed_reads_again_on_a_tick_and_stops_watching_when_closed(
    backend: Backend,
):
    """The core feed yields the events after `after_seq`, reads again when a tick comes, and
    closing it leaves the watch."""
    name = await backend.session()
    await backend.service.add_plan(name, **PLAN)
    ticks = HandTicks()
    store = await backend.catalog.open(SessionName(name))
    feed = follow_events(store, ticks.changes(), after_seq=1)
    with anyio.fail_after(5):
        first = await anext(feed)
        assert ticks.watching
        await backend.service.pull_plan(name)
        await ticks.send.send(None)
        second = await anext(feed)
    await feed.aclose()
    assert [(event.seq, event.kind) for event in (first, second) if isinstance(event, Event)] == [
        (2, EventKind.PLAN_ADDED),
        (3, EventKind.PLAN_PULLED),
    ]
    assert not ticks.watching


async def test_follow_refuses_a_bad_name_at_once_and_an_unknown_session_when_iterated(
    backend: Backend,
):
    """NinePlan.follow checks the name when called, and opens the session when iterated."""
    with pytest.raises(InvalidInputError):
        backend.service.follow("Not A Name")
    feed = backend.service.follow("no-such-session")
    with pytest.raises(SessionNotFoundError), anyio.fail_after(5):
        await anext(feed)


async def test_the_service_watch_ticks_after_a_change(backend: Backend):
    """NinePlan.watch is the catalog's watch: a change made through the service ticks it."""
    name = await backend.session()
    async with backend.service.watch().changes(SessionName(name)) as ticks:
        await backend.service.add_plan(name, **PLAN)
        with anyio.fail_after(5):
            await anext(ticks)
