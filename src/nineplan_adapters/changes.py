"""The seam through which the MCP server learns that a session changed, in any process."""

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import attrs


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
        change after that (commits close together may come as one). It never raises for a
        session that is missing or unreadable: it waits for one to appear."""
        ...
