"""The unit of work every store shares, driven through the memory store's database half."""

import datetime as dt

import attrs
import pytest

from nineplan_adapters.memory import MemoryPlanFiles, MemorySessionStore, MemorySessionTx
from nineplan_core.model import Session
from tests.fakes import FailingPlanFiles

SESSION = Session(
    name="brave-quiet-otter",
    task_description=None,
    created_at=dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
)


@attrs.define
class RollbackFailsStore(MemorySessionStore):
    """A store whose database cannot roll back."""

    async def _roll_back(self, tx: MemorySessionTx) -> None:
        raise RuntimeError("the rollback failed too")


async def test_a_failed_rollback_neither_hides_the_error_nor_keeps_the_files():
    """The caller sees the error that ended the transaction; written files are put back."""
    files = MemoryPlanFiles(SESSION.name, texts={"abcde.txt": "before"})
    store = RollbackFailsStore(SESSION, files)

    async def write_then_fail() -> None:
        async with store.transaction() as tx:
            await tx.files.write("abcde", "after")
            await tx.files.write("fghij", "new")
            raise ValueError("the use case failed")

    with pytest.raises(ValueError, match="the use case failed"):
        await write_then_fail()
    assert files.texts == {"abcde.txt": "before"}


async def test_a_removal_that_fails_after_the_commit_is_retried_by_the_next_transaction():
    """The commit stands; the file goes at the start of the store's next transaction."""
    memory = MemoryPlanFiles(SESSION.name, texts={"abcde.txt": "done"})
    failing = FailingPlanFiles(memory, failing={"remove"})
    store = MemorySessionStore(SESSION, memory)
    store.files = failing  # type: ignore[assignment] # the fault-injecting wrapper honours the port
    async with store.transaction() as tx:
        tx.files.remove_after_commit("abcde")
    assert memory.texts == {"abcde.txt": "done"}
    assert len(store.cleanups.pending) == 1
    failing.failing.clear()
    async with store.transaction():
        pass
    assert memory.texts == {}
    assert store.cleanups.pending == []
