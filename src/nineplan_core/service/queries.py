"""The reads: a session's state, the session list, history, single plans and their files,
validation, the board, and the active-plan reminder (the journal: `following`).

A read checks its input, opens the session and reads; it never reconciles or writes.
"""

import datetime as dt
import logging
from collections.abc import Iterable

import attrs

from nineplan_core.callers import AGENT, Caller, check_caller
from nineplan_core.errors import (
    NinePlanError,
    PlanDiscardedError,
    PlanNotFoundError,
)
from nineplan_core.follow_ups import verdict_issues
from nineplan_core.invariants import check, damaged_files, healed_here
from nineplan_core.journal import (
    Event,
    EventKind,
    EventQuery,
    last_pull,
    pulled_at,
    reminder_line,
)
from nineplan_core.lifecycle import LIVE, PlanStatus
from nineplan_core.model import (
    Plan,
    PlanId,
    SessionName,
    check_plan_id,
    check_session_name,
)
from nineplan_core.plan_file import PlanText, decode, read_back, render
from nineplan_core.ports import SessionReader
from nineplan_core.pulls import held_by
from nineplan_core.replay import replay_issues
from nineplan_core.results import (
    Board,
    HistoryMatch,
    PlanCopy,
    SessionState,
    SessionSummary,
    ValidationReport,
)
from nineplan_core.service.checks import check_search
from nineplan_core.service.envelope import Envelope
from nineplan_core.workers import MAIN

log = logging.getLogger("nineplan.service")


class Queries(Envelope):
    """The use cases that only read."""

    __slots__ = ()

    async def session_state(self, name: str, *, caller: Caller = AGENT) -> SessionState:
        """The queue, the caller's active plan, every active plan and the counts of a session;
        never repairs (a worker named is heard from: its plan's `last_seen`).

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        session, who = check_session_name(name), caller.holder
        store = await self.catalog.open(session)
        if caller.named:
            await self._heard_from(store, who, naming=False)  # read-only: never names
        return await self._state(store, who)

    async def session_board(
        self,
        name: str,
        *,
        journal: EventQuery,
        finished: int,
        counted: frozenset[EventKind],
        since: dt.datetime,
        waiting: int = 0,
    ) -> Board:
        """A session's board, every part read in one snapshot: its state (as `session_state`
        without a worker), each active plan's working copy (as `plan_file_text`), the
        `finished` latest completions and as many discards with their plans, the `counted`
        events per UTC hour from `since` (as `hourly_counts`), the journal's events
        `journal` asks for and the first `waiting` completed plans with a criterion waiting
        for a person. A read only: nothing is reconciled or written.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            state = await self._state_in(store, reader)
            files = {
                hold.plan.id: _working_copy(hold.plan, await reader.files.read(hold.plan.id))
                for hold in state.active_plans
            }
            completed = await _finishes(reader, EventKind.PLAN_COMPLETED, finished)
            discarded = await _finishes(reader, EventKind.PLAN_DISCARDED, finished)
            counts = await reader.hourly_counts(counted, since)
            events = await reader.events(journal)
            for_person = await reader.waiting_for_person(waiting) if waiting else []
        return Board(
            state=self._for_worker(state, MAIN),
            files=files,
            completed=completed,
            discarded=discarded,
            counts=counts,
            journal=events,
            waiting_for_person=for_person,
        )

    async def names(self) -> list[SessionName]:
        """The name of every session, sorted; cheap, as no session is opened."""
        return await self.catalog.names()

    async def list_sessions(self, names: list[str] | None = None) -> list[SessionSummary]:
        """Every session (or those of `names`) that can be read, archived ones included; one
        that cannot is logged and left out (`catalogue` lists it). Reads only: nothing is
        reconciled.

        Raises:
            InvalidInputError: a name in `names` is not a session name.
            StorageError: nothing could be read at all.
        """
        checked = (
            await self.catalog.names()
            if names is None
            else [check_session_name(name) for name in names]
        )
        summaries = []
        filed = await self.catalog.archived()
        for name, summary in zip(checked, await self.catalog.summaries(checked), strict=True):
            if isinstance(summary, NinePlanError):
                log.warning(
                    "session unreadable, left out of the list",
                    extra={"session": name, "error": summary.message},
                )
            else:
                summaries.append(
                    attrs.evolve(summary, stuck_defers=self.stuck_defers, archived=name in filed)
                )
        return summaries

    async def search_history(
        self, name: str, query: str, max_results: int = 10, *, snippets: bool = False
    ) -> list[HistoryMatch]:
        """Completed plans matching the words of `query`, best first.

        Raises:
            InvalidInputError: no searchable word, or max_results out of range.
            SessionNotFoundError, StorageError.
        """
        terms = check_search(query, max_results, self.limits)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            return await reader.search(terms, max_results, snippets=snippets)

    async def get_history(self, name: str, plan_id: str) -> Plan:
        """A completed plan, whole; or an active one as last stored (its worker's edits up to
        the last renewal of its lease, read from the database: another machine sees them).

        Raises:
            PlanNotFoundError: no completed or active plan with that id (PlanDiscardedError:
                it was discarded, and says by whom and why).
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            plan = await reader.plan(checked)
        if plan is not None and plan.status is PlanStatus.DISCARDED:
            raise PlanDiscardedError(plan_id, by=plan.discarded_by, reason=plan.discard_reason)
        if plan is None or plan.status not in (PlanStatus.COMPLETED, PlanStatus.ACTIVE):
            raise PlanNotFoundError(plan_id)
        return plan

    async def needed_by(self, name: str, plan_id: str) -> list[PlanId]:
        """The plans that name `plan_id` in `after`, whatever their status, by id.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            return await reader.needed_by(checked)

    async def finished_plans(self, name: str) -> list[Plan]:
        """Every completed and discarded plan of a session, in the order they finished.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            return await reader.finished()

    async def get_plan(self, name: str, plan_id: str) -> Plan:
        """Any plan of the session by id, whatever its status, as stored; repairs nothing.

        Raises:
            PlanNotFoundError: no plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            plan = await reader.plan(checked)
        if plan is None:
            raise PlanNotFoundError(plan_id, kind="")
        return plan

    async def get_plans(self, name: str, plan_ids: list[str]) -> dict[str, Plan]:
        """The plans of the session with these ids, whatever their status, in one read view
        (an id with no plan is left out): a board's Done column, say.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = [check_plan_id(plan_id) for plan_id in plan_ids]
        store = await self.catalog.open(check_session_name(name))
        found: dict[str, Plan] = {}
        async with store.reading() as reader:
            for plan_id in checked:
                if (plan := await reader.plan(plan_id)) is not None:
                    found[plan_id] = plan
        return found

    async def plan_file_path(self, name: str, plan_id: str) -> str:
        """Where a plan's file is (or would be) on this machine: what a person opens in an
        editor.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        return store.plan_path(checked)

    async def plan_file_text(self, name: str, plan_id: str) -> str:
        """The working copy of a queued or active plan: its file, or the stored copy rendered.

        Raises:
            PlanNotFoundError: no queued or active plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            plan = await reader.plan(checked)
            if plan is None or plan.status not in LIVE:
                raise PlanNotFoundError(plan_id, kind="queued or active")
            data = await reader.files.read(checked)
        return _working_copy(plan, data)

    async def plan_in_full(self, name: str, plan_id: str) -> PlanCopy:
        """Any plan of the session by id as stored and, when queued or active, its working
        copy (as `plan_file_text`) and the plan as that copy holds it (as `plan_as_written`),
        with the plans it waits for and those that wait for it (as `get_plans` of its `after`
        and of `needed_by`), all in one read view; repairs nothing.

        Raises:
            PlanNotFoundError: no plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        checked = check_plan_id(plan_id)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            plan = await reader.plan(checked)
            live = plan is not None and plan.status in LIVE
            data = await reader.files.read(checked) if live else None
            if plan is None:
                raise PlanNotFoundError(plan_id, kind="")
            waits_for = await _stored(reader, plan.after)
            needed_by = await _stored(reader, await reader.needed_by(checked))
        if not live:
            return PlanCopy(plan=plan, waits_for=waits_for, needed_by=needed_by)
        text = _working_copy(plan, data)
        read = read_back(
            text.encode("utf-8"),
            PlanText(plan.content, plan.notes),
            max_section_chars=self.limits.max_text_chars,
        )
        written = plan.with_edits(read.text.content, read.text.notes)
        return PlanCopy(
            plan=plan, text=text, written=written, waits_for=waits_for, needed_by=needed_by
        )

    async def plan_as_written(self, name: str, plan_id: str) -> Plan:
        """A queued or active plan as its file holds it now (the agent's notes, a person's
        edits), read back tolerantly as defer or drop would read it, without writing
        anything; `plan_revision` of its content is what an edit of it is checked against.

        Raises:
            PlanNotFoundError: no queued or active plan with that id.
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        copy = await self.plan_in_full(name, plan_id)
        if copy.written is None:
            raise PlanNotFoundError(plan_id, kind="queued or active")
        return copy.written

    async def validate_session(self, name: str) -> ValidationReport:
        """Check the seven invariants; only reports, never repairs (not even by opening).

        A damaged journal row makes `journal_matches_state` false with an issue line.

        A live plan's file that cannot be read as a plan (not a regular file, not UTF-8, no
        plan heading) counts against files_match_database. On a machine's copy of a shared
        database, what this machine holds is judged: a file it never wrote, or the file of a
        plan finished on another machine, is named in the report's notes instead.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        store = await self.catalog.open(check_session_name(name))
        async with store.reading() as reader:
            rows = await reader.plan_rows()
            names = await reader.files.names()
            damaged = await damaged_files(reader, rows, set(names))
            journal, waits = replay_issues(await reader.events(EventQuery()), rows)
            judged = await reader.finished() + await reader.active_plans()
            unrendered, finished = await healed_here(store, reader, rows, set(names))
            return check(
                rows,
                names,
                damaged,
                journal=journal,
                waits=waits,
                verdicts=verdict_issues(judged),
                unrendered=unrendered,
                finished_elsewhere=finished,
            )

    async def reminder(self, name: str, *, caller: Caller) -> str | None:
        """`Active plan: {id} {goal} (pulled N min ago)` while the caller's worker holds
        a plan, else None; never about another worker's plan (docs/agents.md, "The
        reminders"). A read: the worker's lease is not renewed.

        Raises:
            InvalidInputError, SessionNotFoundError, StorageError.
        """
        caller = check_caller(caller)
        store = await self.catalog.open(check_session_name(name))
        async with store.reading(snapshot=False) as reader:
            if (active := await held_by(reader, caller.holder)) is None:
                return None
            pulled = pulled_at(await reader.events(last_pull(active.id)), active.id)
        return reminder_line(active.id, active.goal, pulled, self.clock())


def _working_copy(plan: Plan, data: bytes | None) -> str:
    """A live plan's working copy: its file's text, or the stored copy rendered when the file
    is missing or blank."""
    if data is None or not data.strip():
        return render(plan.content, plan.notes)
    return decode(data)[0]


async def _finishes(reader: SessionReader, kind: EventKind, last: int) -> list[tuple[Plan, Event]]:
    """The `last` latest events of `kind` (a completion or a discard), newest first, each with
    the plan it finished (an event whose plan cannot be read is left out)."""
    events = await reader.events(EventQuery(last=last, kinds=frozenset({kind})))
    found = []
    for event in reversed(events):
        if not isinstance(event, Event) or event.plan_id is None:
            continue
        # An id read back from storage is trusted as written (docs/architecture.md).
        if (plan := await reader.plan(PlanId(event.plan_id))) is not None:
            found.append((plan, event))
    return found


async def _stored(reader: SessionReader, plan_ids: Iterable[PlanId]) -> tuple[Plan, ...]:
    """The plans of `plan_ids` as stored, in that order (an id with no plan is left out)."""
    found = [await reader.plan(plan_id) for plan_id in plan_ids]
    return tuple(plan for plan in found if plan is not None)
