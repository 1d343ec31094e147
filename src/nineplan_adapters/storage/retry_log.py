"""The one retry log: what a `request_id` was applied to and its result, kept the same way
by every backend (the result as cattrs JSON), each backend storing only the raw records."""

from collections import OrderedDict
from typing import Protocol, TypeVar

import attrs

from nineplan_adapters.storage.rows import dump_result, load_result

T = TypeVar("T")


class RequestRecords(Protocol):
    """Where a backend keeps the records: a table, a folder, a dict."""

    async def get(self, worker: str, request_id: str) -> tuple[str, str] | None:
        """The fingerprint and result JSON recorded for `worker`'s `request_id`, if any."""
        ...

    async def put(
        self, worker: str, request_id: str, fingerprint: str, result: str, keep: int
    ) -> None:
        """Record `worker`'s request, then forget all but the newest `keep`."""
        ...


@attrs.frozen
class RetryLog:
    """A RequestLog (the port) over a backend's records, remembering the newest `keep`."""

    records: RequestRecords
    keep: int

    async def recall(
        self, worker: str, request_id: str, kind: type[T]
    ) -> tuple[str, T | None] | None:
        if (record := await self.records.get(worker, request_id)) is None:
            return None
        return record[0], load_result(record[1], kind)

    async def remember(
        self, worker: str, request_id: str, fingerprint: str, result: object
    ) -> None:
        await self.records.put(worker, request_id, fingerprint, dump_result(result), self.keep)


@attrs.define
class MemoryRequestRecords:
    """Records in insertion order, in memory."""

    entries: "OrderedDict[tuple[str, str], tuple[str, str]]" = attrs.field(factory=OrderedDict)

    async def get(self, worker: str, request_id: str) -> tuple[str, str] | None:
        return self.entries.get((worker, request_id))

    async def put(
        self, worker: str, request_id: str, fingerprint: str, result: str, keep: int
    ) -> None:
        self.entries[worker, request_id] = (fingerprint, result)
        while len(self.entries) > keep:
            self.entries.popitem(last=False)

    def copy(self) -> "MemoryRequestRecords":
        return MemoryRequestRecords(OrderedDict(self.entries))
