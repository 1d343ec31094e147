"""The file half of a unit of work: writes undone on rollback, deletions done after commit."""

from collections.abc import Awaitable, Callable

import attrs

from nineplan_core.ports import PlanFiles


@attrs.define
class FileJournal:
    """Stages one transaction's file changes against a PlanFiles.

    Writes happen at once (before the commit, so a failed write aborts the transaction)
    and remember what they replaced; `undo` puts that back. Removals and recoveries wait
    for `after_commit`, so a rolled-back transaction never loses a file.
    """

    files: PlanFiles
    _undo: list[tuple[str, str | None]] = attrs.field(factory=list, init=False)
    _after: list[Callable[[], Awaitable[None]]] = attrs.field(factory=list, init=False)

    async def read(self, plan_id: str) -> str | None:
        return await self.files.read(plan_id)

    async def write(self, plan_id: str, text: str) -> None:
        previous = await self.files.read(plan_id)
        self._undo.append((plan_id, previous))
        await self.files.write(plan_id, text)

    def remove_after_commit(self, plan_id: str) -> None:
        self._after.append(lambda: self.files.remove(plan_id))

    def recover_after_commit(self, file_name: str) -> None:
        self._after.append(lambda: self.files.recover(file_name))

    async def after_commit(self) -> None:
        """Run the deferred removals; the commit stands even if one fails (reconcile heals it)."""
        for action in self._after:
            await action()

    async def undo(self) -> None:
        """Restore every file this transaction wrote, newest first."""
        for plan_id, previous in reversed(self._undo):
            if previous is None:
                await self.files.remove(plan_id)
            else:
                await self.files.write(plan_id, previous)
