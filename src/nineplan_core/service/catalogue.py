"""The session catalogue a person keeps: the session list (unreadable sessions included),
archiving a session a person is done with, deleting an archived one, and a session's history
of completed plans."""

import logging

import attrs

from nineplan_core.errors import (
    DatabaseError,
    InvalidInputError,
    NinePlanError,
    SessionHasActivePlanError,
    SessionNotArchivedError,
    SessionNotFoundError,
)
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, SessionName, check_session_name
from nineplan_core.results import SessionListing, SessionSummary, UnreadableSession
from nineplan_core.service.envelope import Envelope

log = logging.getLogger("nineplan.service")


class Catalogue(Envelope):
    """The use cases that list, file away and remove whole sessions."""

    __slots__ = ()

    async def catalogue(
        self, names: list[str] | None = None, *, archived: bool = False
    ) -> SessionListing:
        """Every session (or those of `names`), in name order: a line for each that can be
        read, its reason for each that cannot. Archived sessions only with `archived` (the
        listing counts those it leaves out). Reads only: nothing is reconciled.

        Raises:
            InvalidInputError: a name in `names` is not a session name.
            StorageError: nothing could be read at all.
        """
        checked = (
            await self.catalog.names()
            if names is None
            else [check_session_name(name) for name in names]
        )
        filed = await self.catalog.archived()
        shown = checked if archived else [name for name in checked if name not in filed]
        lines: list[SessionSummary | UnreadableSession] = []
        for name, summary in zip(shown, await self.catalog.summaries(shown), strict=True):
            if isinstance(summary, SessionNotFoundError):
                continue  # gone between the two reads
            if isinstance(summary, NinePlanError):
                log.info("session unreadable", extra={"session": name, "error": summary.message})
                reason = " ".join(summary.message.split())
                lines.append(UnreadableSession(name=name, error=reason, archived=name in filed))
            else:
                lines.append(
                    attrs.evolve(summary, stuck_defers=self.stuck_defers, archived=name in filed)
                )
        return SessionListing(sessions=lines, archived_left_out=len(checked) - len(shown))

    async def archive_session(self, name: str) -> None:
        """File a session away: it stays whole, and every call on it still works, but the
        session lists leave it out unless asked. Archiving an archived session is no change.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        await self.catalog.set_archived(check_session_name(name), archived=True)
        log.info("session archived", extra={"session": name})

    async def unarchive_session(self, name: str) -> None:
        """Bring an archived session back into the session lists.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        await self.catalog.set_archived(check_session_name(name), archived=False)
        log.info("session unarchived", extra={"session": name})

    async def delete_session(self, name: str) -> None:
        """Remove an archived session without an active plan for good.

        Raises:
            SessionNotArchivedError: it is not archived (archive it first).
            SessionHasActivePlanError: an agent holds its active plan.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_session_name(name)
        for _ in range(2):  # the second look says why the catalog kept it
            store = await self.catalog.open(checked)
            if checked not in await self.catalog.archived():
                raise SessionNotArchivedError(checked)
            async with store.reading() as reader:
                held = await reader.active_plans()  # any worker's
                active = held[0] if held else None
            if active is not None:
                raise SessionHasActivePlanError(checked, active.id)
            if await self.catalog.delete(checked):
                self._forget(checked)
                log.info("session deleted", extra={"session": checked})
                return
        raise DatabaseError(
            f"Session {checked} changed while it was being deleted; nothing was removed.",
            suggestion=DatabaseError.RETRY,
        )

    def _forget(self, name: SessionName) -> None:
        self._reconciled.discard(name)

    async def completed_plans(self, name: str, limit: int | None = None) -> list[Plan]:
        """The session's completed plans, the most recently completed first (at most `limit`).

        Raises:
            InvalidInputError: `limit` below 1.
            SessionNotFoundError, StorageError.
        """
        if limit is not None and limit < 1:
            raise InvalidInputError("limit", f"must be at least 1, not {limit}")
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            finished = await reader.finished()
        completed = [plan for plan in reversed(finished) if plan.status is PlanStatus.COMPLETED]
        return completed if limit is None else completed[:limit]
