"""The journal's reads and its change feed: a session's events (all, or those a query asks
for), their hourly counts, and the events as they are committed, by any process.

A read opens the session and reads; it never reconciles or writes.
"""

import datetime as dt
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, aclosing

from nineplan_core.errors import StorageError
from nineplan_core.journal import Event, EventKind, EventQuery, UnreadableEvent
from nineplan_core.model import SessionName, check_session_name
from nineplan_core.ports import SessionStore, SessionWatch
from nineplan_core.service.envelope import Envelope


class Following(Envelope):
    """The use cases that read the journal or follow it."""

    __slots__ = ()

    async def journal(
        self, name: str, query: EventQuery | None = None
    ) -> list[Event | UnreadableEvent]:
        """The session's journal events, oldest first (every one unless `query` narrows them).

        A read only: the session is not reconciled, so nothing is written.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            return await reader.events(query or EventQuery())

    async def hourly_counts(
        self, name: str, kinds: frozenset[EventKind], since: dt.datetime
    ) -> dict[tuple[dt.datetime, EventKind], int]:
        """How many events of `kinds` the session's journal has in each UTC hour from `since`
        on, by the hour's start and kind (hours without one left out), counted by the store:
        the cost does not grow with the events read. A read only, like `journal`.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            return await reader.hourly_counts(kinds, since)

    def follow(self, name: str, after_seq: int = 0) -> AsyncIterator[Event | UnreadableEvent]:
        """The session's events after `after_seq`, then each new one as it is committed, by
        any process (on PostgreSQL, on any machine); it ends only when the caller stops.

        Raises:
            InvalidInputError: `name` is not a session name (at once, not when iterated).

        Raises (when iterated):
            SessionNotFoundError, StorageError: the session cannot be read or watched.
        """
        return self._follow(check_session_name(name), after_seq)

    def watch(self) -> SessionWatch:
        """Change ticks for the sessions, from commits made by any process: what a live view
        of a session or of the session list waits on."""
        return self.catalog.watch()

    async def _follow(
        self, name: SessionName, after_seq: int
    ) -> AsyncIterator[Event | UnreadableEvent]:
        # Opened before it is watched: opening an older session starts its journal.
        store = await self.catalog.open(name)
        feed = follow_events(store, self.catalog.watch().changes(name), after_seq)
        async with aclosing(feed):
            async for event in feed:
                yield event


#: A session's change ticks: one soon after each commit, for as long as the context is open.
Ticks = AbstractAsyncContextManager[AsyncIterator[None]]


async def follow_events(
    store: SessionStore, ticks: Ticks, after_seq: int
) -> AsyncGenerator[Event | UnreadableEvent, None]:
    """Every event of `store` after `after_seq`, then the new ones each time `ticks` says the
    session changed. Watching starts before the first read, so no commit falls between the
    two; a tick that brings nothing new (changes close together share reads) yields nothing.

    Raises:
        StorageError: the events cannot be read, or the session cannot be watched.
    """
    seen, failed = after_seq, False
    async with ticks as changes:
        while True:
            try:
                async with store.reading(snapshot=False) as reader:
                    new = await reader.events(EventQuery(after_seq=seen))
            except StorageError:
                # A session deleted under the read fails it first; the watch's next tick then
                # says the session is gone. A second failure in a row is the answer itself.
                if failed:
                    raise
                failed = True
                await anext(changes)
                continue
            failed = False
            for event in new:
                seen = event.seq
                yield event
            await anext(changes)
