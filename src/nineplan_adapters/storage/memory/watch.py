"""The memory backend's watch: a session's commits as in-process ticks; the list by commit counts."""

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

import attrs

from nineplan_adapters.storage.memory.store import MemorySessionStore
from nineplan_adapters.storage.polled import PolledNames
from nineplan_core.model import SessionName


@attrs.define
class MemorySessionWatch:
    """Ticks when a memory session commits: an in-process signal for a session; the list
    compares the commit counts."""

    #: The catalog's `open` (raises SessionNotFoundError) and its sessions' commit counts.
    open_session: Callable[[SessionName], Awaitable[MemorySessionStore]]
    versions: Callable[[], Mapping[str, int]]

    @asynccontextmanager
    async def changes(self, name: SessionName) -> AsyncIterator[AsyncIterator[None]]:
        store = await self.open_session(name)
        yield _CommitTicks(store, store.version)

    @asynccontextmanager
    async def sessions(self) -> AsyncIterator[AsyncIterator[frozenset[str]]]:
        """The sessions whose commit count moved: a look at a dict every 50 ms (nothing is
        read but the counters)."""

        async def versions() -> Mapping[str, int]:
            return self.versions()

        yield PolledNames(versions, self.versions(), interval=0.05)


@attrs.define
class _CommitTicks:
    store: MemorySessionStore
    seen: int

    def __aiter__(self) -> "_CommitTicks":
        return self

    async def __anext__(self) -> None:
        while self.store.version == self.seen:
            await self.store.next_change.wait()
        self.seen = self.store.version
