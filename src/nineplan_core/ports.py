"""The ports: what the use cases need from storage, files, ids and time, as Protocols.

Adapters do not inherit from these; mypy checks that they fit where a port is passed.
Names and ids come in as `SessionName` and `PlanId`: checked once, by the use case, so an
adapter builds paths and queries from them without checking again.
"""

import datetime as dt
from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Protocol, TypeVar

from nineplan_core.errors import NinePlanError
from nineplan_core.journal import Event, EventKind, EventQuery, NewEvent, UnreadableEvent
from nineplan_core.model import (
    Plan,
    PlanId,
    PlanRow,
    QueueEntry,
    Session,
    SessionName,
    Tally,
)
from nineplan_core.results import HistoryMatch, SessionSummary

T = TypeVar("T")


class PlanFileView(Protocol):
    """The plan files of one session as a read view sees them."""

    async def read(self, plan_id: PlanId) -> bytes | None:
        """The bytes of a plan's file (at most MAX_FILE_BYTES + 1 of them); None when it is
        missing or not a regular file (a symlink, a directory). Raises FileSystemError for a
        file that is there but cannot be read."""
        ...

    async def names(self) -> list[str]:
        """Every entry in the session's plan folder. Raises FileSystemError."""
        ...

    async def written(self, plan_id: PlanId) -> str | None:
        """The hash (`copies.digest`) of what this machine last wrote into the plan's file;
        None when it never wrote it, or when the store keeps no such record (its files are
        the session's own). Raises FileSystemError."""
        ...


class PlanFileChanges(PlanFileView, Protocol):
    """The file half of a unit of work: writes undone on rollback, the rest after commit."""

    async def write(self, plan_id: PlanId, text: str) -> None:
        """Write a plan's file now (atomically); undone if the transaction fails.

        Raises FileSystemError (the transaction then fails).
        """
        ...

    async def keep_recovered(self, plan_id: PlanId, data: bytes) -> str:
        """Copy a plan's file into recovered/ now (it stays on a rollback); its path.

        The copy is the file itself, whole, whatever its size (`data`, what was read of it,
        can stop at the read limit); `data` is kept only when the file went away since.
        Raises FileSystemError.
        """
        ...

    async def set_aside(self, plan_id: PlanId) -> tuple[str, str | None]:
        """What stands where a plan's file belongs when `read` found no regular file there:
        "missing", "link" (never followed), "directory" or "other" (a FIFO, a socket), or
        "file" when one appeared since. A directory is moved to recovered/ now (it stays
        there on a rollback); the second value is where it went.

        Raises FileSystemError.
        """
        ...

    def remove_after_commit(self, plan_id: PlanId) -> None:
        """Delete a plan's file once the transaction has committed."""
        ...

    def recover_after_commit(self, file_name: str) -> None:
        """Move a stray file out of the plan folder (never delete it) after the commit."""
        ...


class RequestLog(Protocol):
    """The requests applied with a client-chosen `request_id`, newest kept, oldest forgotten."""

    async def recall(
        self, worker: str, request_id: str, kind: type[T]
    ) -> tuple[str, T | None] | None:
        """The fingerprint and result recorded for `worker`'s `request_id`, or None if it was
        never applied (each worker's ids are its own; a session's creation is everyone's,
        recorded as `main`'s).

        The result is None when the record cannot be read back as `kind`. Raises StorageError.
        """
        ...

    async def remember(
        self, worker: str, request_id: str, fingerprint: str, result: object
    ) -> None:
        """Record a request `worker` applied; the oldest beyond the bound are dropped. Raises
        StorageError."""
        ...


class SessionReader(Protocol):
    """A consistent read view of one session's plans and plan files.

    Every method may raise StorageError (DatabaseError or FileSystemError).
    """

    @property
    def files(self) -> PlanFileView: ...
    async def session(self) -> Session: ...
    async def active_plans(self) -> list[Plan]:
        """Every active plan of the session, whoever holds it, by id."""
        ...

    async def front_of_queue(self) -> Plan | None:
        """The first ready queued plan (nothing it waits for unsettled), in queue order."""
        ...

    async def queue(self, limit: int | None = None) -> list[QueueEntry]:
        """Every queued plan (the first `limit`), rank 1 first, each with what it waits for."""
        ...

    async def tally(self) -> Tally:
        """The session's counts, the ends of its queue and the next goal, in one read."""
        ...

    async def plan(self, plan_id: PlanId) -> Plan | None:
        """Any plan of this session by id, whatever its status."""
        ...

    async def finished(self) -> list[Plan]:
        """The completed and discarded plans, in the order they finished (for an export)."""
        ...

    async def waiting_for_person(self, limit: int) -> list[Plan]:
        """The completed plans with a verdict waiting for a person (`needs_person`), the
        earliest completed first, at most `limit`: found in the database, so a board reads
        only these however long the history."""
        ...

    async def search(
        self, terms: list[str], limit: int, *, snippets: bool = False
    ) -> list[HistoryMatch]:
        """Completed plans matching any of `terms` (plain words), best first.

        Goal, context, inputs, outputs and outcome are searched, outputs and outcome
        weighted up; words match their stems. With `snippets`, each match says where.
        """
        ...

    async def ahead_of(self, position: int, leaving: PlanId) -> tuple[int | None, int]:
        """The stored position of the queued plan just ahead of `position` (None when none
        is) and how many queued plans are ahead of it, the plan `leaving` not counted: where a
        plan moved before the plan at `position` lands, without reading the whole queue."""
        ...

    async def needed_by(self, plan_id: PlanId) -> list[PlanId]:
        """The plans that name `plan_id` in `after`, whatever their status, by id."""
        ...

    async def plan_rows(self) -> list[PlanRow]:
        """Every queued or active plan and every plan that holds a queue position."""
        ...

    async def events(self, query: EventQuery) -> list[Event | UnreadableEvent]:
        """The session's journal events that `query` asks for, oldest first; a stored row
        that is not a valid event comes back as an UnreadableEvent, never as an error."""
        ...

    async def hourly_counts(
        self, kinds: frozenset[EventKind], since: dt.datetime
    ) -> dict[tuple[dt.datetime, EventKind], int]:
        """How many journal events of `kinds` happened in each UTC hour from `since` (to the
        millisecond) on, by the hour's start (UTC) and kind; hours without one are left out.
        Counted in the database: only the counts are read. A row counts by its kind and time
        alone (a damaged detail does not hide it); a row whose time cannot be read is not
        counted."""
        ...


class SessionTx(SessionReader, Protocol):
    """A unit of work on one session: rows and files change together or not at all.

    Leaving the transaction with an exception rolls the rows back and undoes file writes;
    leaving it normally commits, then removes or recovers the files named for that.
    """

    @property
    def files(self) -> PlanFileChanges: ...
    @property
    def requests(self) -> RequestLog:
        """The session's applied requests, recorded in this transaction."""
        ...

    async def add(self, plan: Plan) -> bool:
        """Insert a new plan; False (and nothing stored) when its id is taken. Raises StorageError."""
        ...

    async def save(self, plan: Plan) -> None:
        """Replace a stored plan (or insert it). Raises StorageError."""
        ...

    async def renumber(self, positions: Mapping[PlanId, int]) -> None:
        """Give these queued plans these stored positions, in one go (a person's move found
        no free integer between two plans). Every new position lies above every position held
        now, so the store may write them in any order. Raises StorageError."""
        ...

    async def append(self, event: NewEvent) -> Event:
        """Add an event to the journal in this transaction, with the next `seq` (no gaps).

        Raises StorageError.
        """
        ...

    async def name_workers(self, *, named: bool) -> None:
        """Remember that a worker other than `main` was named in this session
        (`Session.workers_named`), or with `named` False forget it (a person's `nineplan
        workers NAME --forget`); nothing changes when it is so already.

        Raises StorageError.
        """
        ...


class SessionStore(Protocol):
    """One session's storage. Writers are serialised, across processes too."""

    #: True when the plan files are only this machine's copy of a shared database: resume
    #: refreshes them first, a pull in its own transaction when the session changed since.
    files_mirror: bool
    #: This machine's id when the files are a mirror (a pull records it), else None.
    machine: str | None

    @property
    def name(self) -> SessionName: ...
    @property
    def path(self) -> str:
        """Where the session lives, for people and agents (a folder or a URL)."""
        ...

    def plan_path(self, plan_id: PlanId) -> str:
        """Where the agent finds the plan's file."""
        ...

    def reading(self, *, snapshot: bool = True) -> AbstractAsyncContextManager[SessionReader]:
        """A read view; with `snapshot`, every read in it sees one consistent state (a caller
        that makes a single read may skip that). Raises StorageError."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[SessionTx]:
        """Serialise against every other writer of this session. Raises StorageError."""
        ...


class SessionCatalog(Protocol):
    """All sessions of one installation."""

    async def create(self, session: Session, first: NewEvent) -> SessionStore:
        """Create an empty session whose journal starts with `first`, in one transaction.

        Raises:
            SessionExistsError: the name is taken.
            StorageError: it could not be created (nothing is left behind).
        """
        ...

    async def open(self, name: SessionName) -> SessionStore:
        """Open an existing session; the same store is returned while the catalog is open.

        Raises:
            SessionNotFoundError: no session of that name.
            StorageError: it exists but cannot be opened (a corrupt database, say).
        """
        ...

    async def names(self) -> list[SessionName]:
        """The names of every session, sorted."""
        ...

    async def summaries(self, names: list[SessionName]) -> list[SessionSummary | NinePlanError]:
        """Counts for the session list, one per name and in order; a session that cannot be
        read gives its error (SessionNotFoundError, StorageError) in its place.

        Raises:
            StorageError: nothing could be read at all.
        """
        ...

    async def archived(self) -> frozenset[SessionName]:
        """The names of the archived sessions (a person filed them away).

        Raises:
            StorageError: the marks could not be read.
        """
        ...

    async def set_archived(self, name: SessionName, *, archived: bool) -> None:
        """Mark a session archived, or not; durable once this returns. The session itself is
        left whole, and a session that cannot be read can be marked too.

        Raises:
            SessionNotFoundError: no session of that name.
            StorageError: the mark could not be stored.
        """
        ...

    async def delete(self, name: SessionName) -> bool:
        """Remove an archived session for good: its plans, journal and local files. False (and
        nothing removed) when by then it is not archived or holds an active plan.

        Raises:
            SessionNotFoundError: no session of that name.
            StorageError: it could not be removed.
        """
        ...

    @property
    def creations(self) -> RequestLog:
        """The session creates applied with a `request_id`; each result is the session name."""
        ...

    def watch(self) -> "SessionWatch":
        """Change ticks for these sessions, from commits made by any process (SQLite's
        PRAGMA data_version, PostgreSQL's LISTEN/NOTIFY, memory's in-process signal)."""
        ...


class PlanIds(Protocol):
    """Makes a new plan id: 5 characters of [0-9a-z]."""

    def __call__(self) -> str: ...


class SessionNames(Protocol):
    """Makes a new session name: three lowercase words joined by '-'."""

    def __call__(self) -> str: ...


class Clock(Protocol):
    """The current time, timezone-aware UTC."""

    def __call__(self) -> dt.datetime: ...


class SessionWatch(Protocol):
    """Tells a reader (the web view) when a session changed, whichever process changed it."""

    def changes(self, name: SessionName) -> AbstractAsyncContextManager[AsyncIterator[None]]:
        """Ticks for session `name`: one soon after each committed change (changes close
        together may share one tick). Watching stops when the context is left.

        Raises:
            SessionNotFoundError: no session of that name.
            StorageError: the session cannot be watched.
        """
        ...

    def sessions(self) -> AbstractAsyncContextManager[AsyncIterator[frozenset[str]]]:
        """For the session list: the names of the sessions that changed (created, changed
        or gone) since the last step, soon after each change, whichever process made it.

        Raises:
            StorageError: the sessions cannot be watched.
        """
        ...
