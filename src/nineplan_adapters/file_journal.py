"""The file half of a unit of work: writes undone on rollback, deletions done after commit."""

import logging
from collections.abc import Awaitable, Callable

import attrs

from nineplan_core.errors import NinePlanError
from nineplan_core.ports import PlanFiles

log = logging.getLogger("nineplan.files")

Action = Callable[[], Awaitable[None]]


async def run_actions(actions: list[Action]) -> list[Action]:
    """Run file actions; return the ones that failed (logged), to be retried later."""
    failed = []
    for action in actions:
        try:
            await action()
        except NinePlanError as exc:
            log.warning("a plan-file cleanup failed; it will be retried: %s", exc.message)
            failed.append(action)
    return failed


@attrs.define
class FileJournal:
    """Stages one transaction's file changes against a PlanFiles.

    Writes happen at once (before the commit, so a failed write aborts the transaction)
    and remember what they replaced; `undo` puts that back. Removals and recoveries wait
    for `after_commit`, so a rolled-back transaction never loses a file.
    """

    files: PlanFiles
    _undo: list[tuple[str, bytes | None]] = attrs.field(factory=list, init=False)
    _after: list[Action] = attrs.field(factory=list, init=False)

    async def read(self, plan_id: str) -> bytes | None:
        return await self.files.read(plan_id)

    async def write(self, plan_id: str, text: str) -> None:
        previous = await self.files.read(plan_id)
        self._undo.append((plan_id, previous))
        await self.files.write(plan_id, text.encode("utf-8"))

    def remove_after_commit(self, plan_id: str) -> None:
        self._after.append(lambda: self.files.remove(plan_id))

    def recover_after_commit(self, file_name: str) -> None:
        self._after.append(lambda: self.files.recover(file_name))

    async def after_commit(self) -> list[Action]:
        """Run the deferred removals; return those that failed. The commit stands either way."""
        return await run_actions(self._after)

    async def undo(self) -> None:
        """Restore every file this transaction wrote, newest first."""
        for plan_id, previous in reversed(self._undo):
            if previous is None:
                await self.files.remove(plan_id)
            else:
                await self.files.write(plan_id, previous)


class JournalledFiles:
    """The file half of a SessionTx, shared by every store's transaction class."""

    __slots__ = ()
    journal: FileJournal

    async def read_file(self, plan_id: str) -> bytes | None:
        return await self.journal.read(plan_id)

    async def keep_recovered(self, plan_id: str, data: bytes) -> str:
        return await self.journal.files.keep(f"{plan_id}.txt", data)

    async def file_sizes(self) -> dict[str, int]:
        return await self.journal.files.sizes()

    async def file_names(self) -> list[str]:
        return await self.journal.files.names()

    async def write_file(self, plan_id: str, text: str) -> None:
        await self.journal.write(plan_id, text)

    def remove_file_after_commit(self, plan_id: str) -> None:
        self.journal.remove_after_commit(plan_id)

    def recover_file_after_commit(self, file_name: str) -> None:
        self.journal.recover_after_commit(file_name)
