"""The unit of work every store shares: the file half of a transaction, the after-commit
cleanups and the begin / commit / rollback-and-undo skeleton. A store adds its database half."""

import abc
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Generic, TypeVar

import anyio
import attrs

from nineplan_adapters.storage.plan_files import PlanFiles
from nineplan_adapters.storage.written import NO_RECORD, WriteRecord
from nineplan_core.copies import digest
from nineplan_core.errors import DatabaseError, NinePlanError
from nineplan_core.model import PlanId, file_name, plan_id_of

log = logging.getLogger("nineplan.storage")

Action = Callable[[], Awaitable[None]]
Db = TypeVar("Db")
Tx = TypeVar("Tx")


@attrs.define
class FileChanges:
    """One transaction's changes to a PlanFiles (the PlanFileChanges port).

    Writes happen at once (before the commit, so a failed write aborts the transaction)
    and remember what they replaced; `undo` puts that back. Removals and recoveries wait
    in `later` for the commit, so a rolled-back transaction never loses a file. A file read
    in the transaction is not read again to be undone: its write remembers the bytes read
    (`_seen`), what the transaction's decisions were made on. `record`
    (what this machine last wrote into each file) changes only after the commit: a process
    killed between a write and the commit leaves no undo, and a record naming those bytes
    would pass off a file the database never took (edits read back into it) as a render.
    """

    files: PlanFiles
    record: WriteRecord = NO_RECORD
    later: list[Action] = attrs.field(factory=list, init=False)
    _undo: list[tuple[PlanId, bytes | None]] = attrs.field(factory=list, init=False)
    #: What each file held when this transaction last read or wrote it.
    _seen: dict[PlanId, bytes | None] = attrs.field(factory=dict, init=False)
    #: The record as this transaction leaves it, applied after the commit.
    _recorded: dict[PlanId, str | None] = attrs.field(factory=dict, init=False)

    async def read(self, plan_id: PlanId) -> bytes | None:
        data = self._seen[plan_id] = await self.files.read(plan_id)
        return data

    async def names(self) -> list[str]:
        return await self.files.names()

    async def written(self, plan_id: PlanId) -> str | None:
        if plan_id in self._recorded:
            return self._recorded[plan_id]
        return self.record.get(plan_id)

    def _record_after_commit(self, plan_id: PlanId, recorded: str | None) -> None:
        if self.record is NO_RECORD:
            return  # the files are the session's own: nothing is recorded
        self._recorded[plan_id] = recorded

        async def put() -> None:
            self.record.put(plan_id, recorded)

        self.later.append(put)

    async def write(self, plan_id: PlanId, text: str) -> None:
        if plan_id in self._seen:
            previous = self._seen[plan_id]
        else:
            previous = await self.files.read(plan_id)
        self._undo.append((plan_id, previous))
        data = text.encode("utf-8")
        await self.files.write(plan_id, data)
        self._seen[plan_id] = data
        self._record_after_commit(plan_id, digest(data))

    async def keep_recovered(self, plan_id: PlanId, data: bytes) -> str:
        # The file itself, whole: `data` is only what was read (a read stops past the limit).
        # It is used only when the file went away since it was read.
        kept = await self.files.keep_file(plan_id)
        return kept if kept is not None else await self.files.keep(file_name(plan_id), data)

    async def set_aside(self, plan_id: PlanId) -> tuple[str, str | None]:
        kind, moved = await self.files.set_aside(plan_id)
        if kind in ("missing", "directory"):
            self._seen[plan_id] = None  # nothing stands there now
        else:
            self._seen.pop(plan_id, None)  # a link, or a file that appeared since: look again
        return kind, moved

    def remove_after_commit(self, plan_id: PlanId) -> None:
        async def remove() -> None:
            await self.files.remove(plan_id)
            self.record.put(plan_id, None)

        self.later.append(remove)

    def recover_after_commit(self, file_name: str) -> None:
        async def recover() -> None:
            await self.files.recover(file_name)
            if (plan_id := plan_id_of(file_name)) is not None:
                self.record.put(plan_id, None)

        self.later.append(recover)

    async def undo(self) -> None:
        """Restore every file this transaction wrote, newest first (the record was not
        changed: that waits for the commit)."""
        self._recorded.clear()
        self._seen.clear()
        for plan_id, previous in reversed(self._undo):
            if previous is None:
                await self.files.remove(plan_id)
            else:
                await self.files.write(plan_id, previous)


@attrs.define
class Cleanups:
    """File actions due after a commit; one that fails is kept and retried before the next."""

    pending: list[Action] = attrs.field(factory=list)

    async def run(self, actions: list[Action]) -> None:
        """Run `actions`; keep the ones that fail (logged). The commit stands either way."""
        for action in actions:
            try:
                await action()
            except NinePlanError as exc:
                log.warning("a plan-file cleanup failed; it will be retried: %s", exc.message)
                self.pending.append(action)

    async def retry(self) -> None:
        """Run the actions that failed before (each is taken by one caller)."""
        if self.pending:
            pending, self.pending = self.pending, []
            await self.run(pending)


class UnitOfWork(abc.ABC, Generic[Db, Tx]):
    """`transaction()` for a store that supplies its database half.

    The store provides `_writer` (exclusive use of its database: a lock, a pooled
    connection), `_begin`, `_commit`, `_roll_back` and `_database_error` (its driver's
    errors as DatabaseError). This class owns everything else: the files of the
    transaction, the commit that cancellation cannot interrupt, the rollback and undo on
    any failure, and the cleanups after the commit (still inside `_writer`, so no other
    transaction of the store sees a file that is about to go). Its own cost is a few
    microseconds per call: the add -> pull -> complete cycle runs three of them.
    """

    files: PlanFiles
    cleanups: Cleanups
    #: What this machine last wrote into each plan file (kept by a store whose files are a
    #: machine's copy of a shared database).
    record: WriteRecord = NO_RECORD

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The session's name, for the log."""

    @abc.abstractmethod
    def _writer(self) -> AbstractAsyncContextManager[Db]:
        """This call's exclusive use of the database: a lock, a pooled connection."""

    @abc.abstractmethod
    async def _begin(self, db: Db, files: FileChanges) -> Tx:
        """Start a write transaction on `db`, serialised against every other writer of the
        session (on any machine), and return its SessionTx."""

    @abc.abstractmethod
    async def _commit(self, tx: Tx) -> None:
        """Make the transaction's rows durable."""

    @abc.abstractmethod
    async def _roll_back(self, tx: Tx) -> None:
        """Drop the transaction's rows (an error here is logged, never raised)."""

    @abc.abstractmethod
    def _database_error(self, exc: Exception) -> DatabaseError | None:
        """The DatabaseError for a driver error raised in a transaction; None for any other."""

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """Serialise against every other writer of this session. Raises StorageError."""
        try:
            async with self._writer() as db:
                await self.cleanups.retry()
                files = FileChanges(self.files, self.record)
                tx = await self._begin(db, files)
                try:
                    yield tx
                except BaseException:
                    with anyio.CancelScope(shield=True):
                        await self._undo(tx, files)
                    raise
                with anyio.CancelScope(shield=True):  # one scope: each costs microseconds
                    try:
                        await self._commit(tx)
                    except BaseException:
                        await self._undo(tx, files)
                        raise
                    await self.cleanups.run(files.later)
        except Exception as exc:
            if (error := self._database_error(exc)) is None:
                raise
            raise error from exc

    async def _undo(self, tx: Tx, files: FileChanges) -> None:
        """Roll the rows back and restore the files; the error that got here is the one raised."""
        try:
            await self._roll_back(tx)
        except Exception:
            log.exception("rollback failed", extra={"session": self.name})
        try:
            await files.undo()
        except NinePlanError:
            log.exception(
                "could not undo a plan-file write; reconcile will re-render it",
                extra={"session": self.name},
            )
