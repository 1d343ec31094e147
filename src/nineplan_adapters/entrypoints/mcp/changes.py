"""The seam through which the MCP server learns that a session changed, in any process."""

from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

import attrs

from nineplan_core.journal import Event, EventKind, EventQuery, UnreadableEvent
from nineplan_core.service import NinePlan

#: The events after which the session's plans in resources/list differ: a plan came, or it
#: left the queue and the active slot for good.
LIST_CHANGING = frozenset(
    {EventKind.PLAN_ADDED, EventKind.PLAN_COMPLETED, EventKind.PLAN_DISCARDED}
)


@attrs.frozen
class Change:
    """Session `session` changed; `plans_came_or_went` when a plan was added or left the
    queue and the active slot (completed, discarded), so the resource list changed too."""

    session: str
    plans_came_or_went: bool


class SessionChanges(Protocol):
    """Follows sessions as any process changes them."""

    def follow(self, name: str) -> AbstractAsyncContextManager[AsyncIterator[Change]]:
        """Entering takes session `name` as it is now; the iterator then yields one Change per
        change after that. Entering or iterating may raise NinePlanError (no such session, or
        it cannot be watched)."""
        ...


@attrs.frozen
class JournalChanges:
    """SessionChanges from the journal's change feed, `NinePlan.follow`: every change appends
    its events in its own transaction, and the feed yields them as they commit, by any process
    (SQLite: `PRAGMA data_version`; PostgreSQL: LISTEN/NOTIFY, so on any machine). An event's
    kind tells whether plans came or went."""

    service: NinePlan

    @asynccontextmanager
    async def follow(self, name: str) -> AsyncIterator[AsyncIterator[Change]]:
        last = await self.service.journal(name, EventQuery(last=1))  # raises for no session
        feed = self.service.follow(name, after_seq=last[-1].seq if last else 0)
        try:
            yield _changes(name, feed)
        finally:
            if isinstance(feed, AsyncGenerator):  # stop watching now, not when collected
                await feed.aclose()


async def _changes(
    name: str, feed: AsyncIterator[Event | UnreadableEvent]
) -> AsyncIterator[Change]:
    async for event in feed:
        # An unreadable event could have been anything: the list may have changed too.
        listed = isinstance(event, UnreadableEvent) or event.kind in LIST_CHANGING
        yield Change(name, plans_came_or_went=listed)
