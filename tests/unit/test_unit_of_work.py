"""The unit of work every store shares, driven through the memory store's database half."""

import datetime as dt
import sqlite3
from pathlib import Path

import attrs
import pytest

from nineplan_adapters.storage.memory.store import (
    MemoryPlanFiles,
    MemorySessionStore,
    MemorySessionTx,
)
from nineplan_adapters.storage.sqlite.store import SqliteSessionStore
from nineplan_core.errors import DatabaseError
from nineplan_core.model import PlanId, Session, SessionName
from tests.fakes import FailingPlanFiles, open_backend

SESSION = Session(
    name=SessionName("brave-quiet-otter"),
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
    files = MemoryPlanFiles(SESSION.name, texts={"abcde.txt": b"before"})
    store = RollbackFailsStore(SESSION, files)

    async def write_then_fail() -> None:
        async with store.transaction() as tx:
            await tx.files.write(PlanId("abcde"), "after")
            await tx.files.write(PlanId("fghij"), "new")
            raise ValueError("the use case failed")

    with pytest.raises(ValueError, match="the use case failed"):
        await write_then_fail()
    assert files.texts == {"abcde.txt": b"before"}


async def test_a_removal_that_fails_after_the_commit_is_retried_by_the_next_transaction():
    """The commit stands; the file goes at the start of the store's next transaction."""
    memory = MemoryPlanFiles(SESSION.name, texts={"abcde.txt": b"done"})
    failing = FailingPlanFiles(memory, failing={"remove"})
    store = MemorySessionStore(SESSION, memory)
    store.files = failing  # type: ignore[assignment] # the fault-injecting wrapper honours the port
    async with store.transaction() as tx:
        tx.files.remove_after_commit(PlanId("abcde"))
    assert memory.texts == {"abcde.txt": b"done"}
    assert len(store.cleanups.pending) == 1
    failing.failing.clear()
    async with store.transaction():
        pass
    assert memory.texts == {}
    assert store.cleanups.pending == []


@attrs.define
class CommitFailsStore(MemorySessionStore):
    """A store whose database refuses the commit, with a driver error of its own."""

    async def _commit(self, tx: MemorySessionTx) -> None:
        raise OSError("the disk went away")

    def _database_error(self, exc: Exception) -> DatabaseError | None:
        return DatabaseError(f"Could not commit: {exc}.") if isinstance(exc, OSError) else None


async def test_a_failed_commit_undoes_the_files_and_raises_a_database_error():
    """The driver's error reaches the caller as a DatabaseError; nothing the call did stays."""
    files = MemoryPlanFiles(SESSION.name, texts={"abcde.txt": b"before"})
    store = CommitFailsStore(SESSION, files)

    async def write() -> None:
        async with store.transaction() as tx:
            await tx.files.write(PlanId("abcde"), "after")
            tx.files.remove_after_commit(PlanId("abcde"))

    with pytest.raises(DatabaseError, match="the disk went away") as caught:
        await write()
    assert isinstance(caught.value.__cause__, OSError)
    assert files.texts == {"abcde.txt": b"before"}
    assert store.plans == {}


async def test_a_driver_error_in_a_sqlite_transaction_is_a_database_error(tmp_path: Path):
    """A failing statement inside the transaction reaches the caller as DatabaseError."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        store = await backend.catalog.open(SessionName(name))
        assert isinstance(store, SqliteSessionStore)

        async def bad_statement() -> None:
            async with store.transaction() as tx:
                await tx.db.run("SELECT * FROM no_such_table")

        with pytest.raises(DatabaseError, match="no_such_table") as caught:
            await bad_statement()
        assert isinstance(caught.value.__cause__, sqlite3.Error)
        assert (await backend.service.validate_session(name)).valid
