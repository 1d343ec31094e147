"""The seam through which the MCP server learns that a session changed, in any process."""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol

import attrs

from nineplan_core.ports import SessionWatch, WatchedCatalog
from nineplan_core.service import NinePlan


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
        change after that (commits close together may come as one). Entering may raise
        NinePlanError (no such session, or it cannot be watched)."""
        ...


@attrs.define
class WatchedChanges:
    """SessionChanges from the catalog's watch port (SQLite: `PRAGMA data_version` on a
    connection of its own, so commits by any process; memory: this process's commits). A tick
    says only that the session changed, so the live plans are read (without any repair) to
    tell whether plans came or went."""

    service: NinePlan
    watch: SessionWatch

    @asynccontextmanager
    async def follow(self, name: str) -> AsyncIterator[AsyncIterator[Change]]:
        async with self.watch.changes(name) as ticks:
            yield self._changes(name, ticks, await self._live(name))

    async def _changes(
        self, name: str, ticks: AsyncIterator[None], live: frozenset[str]
    ) -> AsyncIterator[Change]:
        async for _ in ticks:
            now = await self._live(name)
            yield Change(name, plans_came_or_went=now != live)
            live = now

    async def _live(self, name: str) -> frozenset[str]:
        state = await self.service.session_state(name)
        active = [state.active_plan.id] if state.active_plan else []
        return frozenset([entry.id for entry in state.queue] + active)


def changes_of(service: NinePlan) -> SessionChanges | None:
    """The change source for `service`'s storage, or None where it has no watch yet."""
    catalog = getattr(service, "catalog", None)  # an embedder's stand-in service may have none
    return WatchedChanges(service, catalog.watch()) if isinstance(catalog, WatchedCatalog) else None
