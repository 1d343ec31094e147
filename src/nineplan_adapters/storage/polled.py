"""A session list watched by looking again and again: the names whose signature changed."""

from collections.abc import Awaitable, Callable, Mapping

import anyio
import attrs


@attrs.define
class PolledNames:
    """An async iterator of the session names whose signature (anything comparable: a commit
    count, the stat of a database file) moved, appeared or went since the last look; one
    look every `interval`, and nothing is yielded while nothing changed."""

    look: Callable[[], Awaitable[Mapping[str, object]]]
    seen: Mapping[str, object]
    interval: float

    def __aiter__(self) -> "PolledNames":
        return self

    async def __anext__(self) -> frozenset[str]:
        while True:
            await anyio.sleep(self.interval)
            now = await self.look()
            changed = frozenset(
                name
                for name in now.keys() | self.seen.keys()
                if now.get(name) != self.seen.get(name)
            )
            self.seen = now
            if changed:
                return changed
