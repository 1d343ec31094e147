"""Which session is current for which client: per process on stdio, per Mcp-Session-Id on HTTP."""

from collections import OrderedDict
from collections.abc import Mapping

import attrs

#: The key of the one client a stdio server process has (and of in-memory test clients).
PROCESS = "process"


def client_key(headers: Mapping[str, str] | None) -> str | None:
    """The stable identity of the calling client, or None when the transport has none.

    stdio carries no headers: one client per process. Legacy HTTP sends an Mcp-Session-Id
    with every call. The sessionless HTTP protocol has no identity at all, so its calls
    must name their session.
    """
    if headers is None:
        return PROCESS
    return headers.get("mcp-session-id") or None


@attrs.define
class CurrentSessions:
    """The current session of each client, bounded: the least recently used client is
    forgotten first, so clients that vanish without closing cannot grow it forever."""

    capacity: int = 10_000
    _names: "OrderedDict[str, str]" = attrs.field(factory=OrderedDict, init=False)

    def current(self, client: str) -> str | None:
        name = self._names.get(client)
        if name is not None:
            self._names.move_to_end(client)
        return name

    def select(self, client: str, name: str) -> None:
        self._names[client] = name
        self._names.move_to_end(client)
        while len(self._names) > self.capacity:
            self._names.popitem(last=False)

    def in_use(self) -> set[str]:
        """Every session that is some client's current one."""
        return set(self._names.values())

    def __len__(self) -> int:
        return len(self._names)
