"""The PostgreSQL backend's watch: `LISTEN` on a session's channel and on the sessions channel."""

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import asyncpg
import attrs

from nineplan_adapters.storage.postgres.store import (
    SESSIONS_CHANNEL,
    changes_channel,
    database_errors,
)
from nineplan_core.model import SessionName


@attrs.define
class PostgresSessionWatch:
    """Ticks from `LISTEN`: every journal append notifies its session's channel, and
    PostgreSQL delivers the notification when (and only if) the transaction commits."""

    #: The catalog's `open`: raises SessionNotFoundError for a session that does not exist.
    open_session: Callable[[SessionName], Awaitable[object]]
    pool: asyncpg.Pool

    @asynccontextmanager
    async def changes(self, name: SessionName) -> AsyncIterator[AsyncIterator[None]]:
        await self.open_session(name)
        ticks = _NotifiedTicks()
        async with self._listening(changes_channel(name), ticks.notified, "watch the session"):
            yield ticks

    @asynccontextmanager
    async def sessions(self) -> AsyncIterator[AsyncIterator[frozenset[str]]]:
        names = _NotifiedNames()
        async with self._listening(SESSIONS_CHANNEL, names.notified, "watch the sessions"):
            yield names

    @asynccontextmanager
    async def _listening(
        self, channel: str, callback: Callable[..., None], action: str
    ) -> AsyncIterator[None]:
        """`callback` hears `channel`'s notifications on a pooled connection of its own (one
        listener per follower) for as long as the block runs."""
        with database_errors(action):
            async with self.pool.acquire() as connection:
                await connection.add_listener(channel, callback)
                try:
                    yield
                finally:
                    with anyio.CancelScope(shield=True):
                        await connection.remove_listener(channel, callback)


@attrs.define
class _NotifiedNames:
    """Yields the session names notified since the last step (every append sends one)."""

    _names: set[str] = attrs.field(factory=set)
    _pending: anyio.Event = attrs.field(factory=anyio.Event)

    def notified(self, _connection: object, _pid: int, _channel: str, payload: str) -> None:
        self._names.add(payload)
        self._pending.set()

    def __aiter__(self) -> "_NotifiedNames":
        return self

    async def __anext__(self) -> frozenset[str]:
        await self._pending.wait()
        self._pending = anyio.Event()
        names, self._names = frozenset(self._names), set()
        return names


@attrs.define
class _NotifiedTicks:
    """Yields once after each notification (several before a read share one tick)."""

    _pending: anyio.Event = attrs.field(factory=anyio.Event)

    def notified(self, *_: Any) -> None:
        self._pending.set()

    def __aiter__(self) -> "_NotifiedTicks":
        return self

    async def __anext__(self) -> None:
        await self._pending.wait()
        self._pending = anyio.Event()
