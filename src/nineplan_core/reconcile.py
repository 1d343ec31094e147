"""Reconcile: bring a session's plan files back in line with its live plans, and read the
state on the way (the same reads serve both)."""

import datetime as dt
import logging

import attrs

from nineplan_core.copies import finished_file_repair
from nineplan_core.errors import FileSystemError
from nineplan_core.journal import (
    RECENT_EVENTS,
    Actor,
    EventKind,
    EventQuery,
    NewEvent,
    defer_counts,
    deferrals,
    last_pull,
    pulled_at,
)
from nineplan_core.model import Plan, PlanId, QueueEntry, SessionName, file_name, plan_id_of
from nineplan_core.plan_file import render
from nineplan_core.ports import Clock, SessionReader, SessionStore, SessionTx
from nineplan_core.pulls import hear_from
from nineplan_core.results import ActivePlan, Repair, SessionState
from nineplan_core.workers import Worker

log = logging.getLogger("nineplan.service")


async def reconcile(
    store: SessionStore,
    *,
    clock: Clock,
    stuck_defers: int,
    level: int = logging.WARNING,
    thorough: bool = False,
    spare_active: bool = False,
    heard: Worker | None = None,
) -> tuple[list[Repair], SessionState]:
    """Make the plan files match the live plans; return the repairs and the state read.

    The state comes from the same reads (one pass over the queue and the folder), as it
    will be once the removals that wait for the commit are done. With `thorough`, every
    live plan's empty file is re-rendered too, not only the active plan's. With
    `spare_active`, the active plan's file is left as it is, missing or empty: the call
    about to run (a defer, a complete, a discard) reads it back and says what it found.
    With `heard`, that worker's call is heard from in the same transaction (`hear_from`).
    """
    async with store.transaction() as tx:
        if heard is not None:
            await hear_from(tx, heard, clock(), naming=True)
        mended = await _mend(store, tx, clock, thorough=thorough, spare_active=spare_active)
        state = await state_of(
            store,
            tx,
            queue=mended.queue,
            plan_files=mended.files,
            stuck=stuck_defers,
            held=mended.held,
        )
    log_repairs(store, mended.repairs, level)
    return mended.repairs, state


async def refresh_mirror(store: SessionStore, tx: SessionTx, *, clock: Clock) -> list[Repair]:
    """Reconcile's file half inside a change's own transaction `tx`: a machine's copy of a
    shared session brought up to the database (the files of plans added elsewhere rendered,
    those of plans finished elsewhere removed or kept); the repairs, for the caller to log
    once the transaction has committed (`log_repairs`)."""
    return (await _mend(store, tx, clock, thorough=False, spare_active=False)).repairs


def log_repairs(store: SessionStore, repairs: list[Repair], level: int) -> None:
    """One log line for each repair a reconcile made."""
    for repair in repairs:
        log.log(
            level,
            "reconcile: %s %s",
            repair.action,
            repair.file_name,
            extra={"session": store.name},
        )


@attrs.frozen
class _Mended:
    """What reconciling the files did, and the reads it did it with."""

    repairs: list[Repair]
    queue: list[QueueEntry]
    held: list[Plan]
    #: The plan folder's entries as they will be once the removals after the commit are done.
    files: set[str]


async def _mend(
    store: SessionStore, tx: SessionTx, clock: Clock, *, thorough: bool, spare_active: bool
) -> _Mended:
    """Render the live plans' missing files, deal with the strays, journal what is news."""
    names = set(await tx.files.names())
    queue = await tx.queue()
    held = await tx.active_plans()
    live = {file_name(entry.id): entry.id for entry in queue}
    held_files = {file_name(plan.id): plan.id for plan in held}
    rendered_for = live if spare_active else live | held_files
    repairs = await _render_missing(tx, rendered_for, names, held, thorough=thorough)
    live |= held_files
    # Only files that belong to no live plan need a look at the database.
    strays = sorted(names - live.keys())
    repairs += [await _stray_file_repair(tx, entry) for entry in strays]
    rendered = {repair.file_name for repair in repairs if repair.action == "rendered"}
    # A mirror's files are this machine's copy, not the session: filling it is no change,
    # but a file kept for lines the database lacks is news on every backend.
    if journalled := _journalled(repairs, mirror=store.files_mirror):
        await tx.append(_repaired(journalled, clock))
    return _Mended(repairs, queue, held, (names | rendered) - set(strays))


#: The newest event of a session's journal.
_LAST_EVENT = EventQuery(last=1)


async def last_seq(reader: SessionReader) -> int:
    """The seq of the newest event of the session's journal (0 when it has none)."""
    newest = await reader.events(_LAST_EVENT)
    return newest[-1].seq if newest else 0


def newest_seq(state: SessionState) -> int:
    """The seq of the newest event a state read saw (its recent events end with it)."""
    return state.recent[-1].seq if state.recent else 0


@attrs.define
class MirrorMarks:
    """How far this process knows each shared session's file mirror (a machine's copy,
    `SessionStore.files_mirror`) to be current: the journal's seq when a reconcile or a
    refresh of the copy last committed, carried on by this process's own changes that
    followed it with nothing in between. A change that bears on the files (a plan added,
    moved, edited, pulled, finished) appends to the journal, so a session changed since (on
    another machine, or by another process here) has a newer seq, and its next pull
    refreshes the copy; an uncertain mark only costs a refresh."""

    _seqs: dict[SessionName, int] = attrs.field(factory=dict)

    def current(self, name: SessionName, seq: int) -> bool:
        """Whether the copy is known to be current when the journal's newest seq is `seq`."""
        return self._seqs.get(name) == seq

    def committed(self, name: SessionName, seen: int | None, appended: list[int]) -> None:
        """A change committed: made in a transaction that found the newest seq `seen` and
        left the copy current (None: it did not look), appending the events `appended`."""
        if seen is not None:
            self._seqs[name] = max([seen, *appended])
        elif appended and self._seqs.get(name) == appended[0] - 1:
            self._seqs[name] = appended[-1]


def reconcile_level(store: SessionStore) -> int:
    """Refreshing a mirror routinely writes files: that is news, not a warning."""
    return logging.INFO if store.files_mirror else logging.WARNING


async def state_of(
    store: SessionStore,
    reader: SessionReader,
    *,
    queue: list[QueueEntry],
    plan_files: set[str],
    stuck: int,
    held: list[Plan] | None = None,
) -> SessionState:
    """The state (as `main` sees it) from the queue, every active plan (`held`, when read)
    and files already read, plus the counts and what the journal adds (recent
    events, defer counts, when each active plan was pulled)."""
    held = held if held is not None else await reader.active_plans()
    live = {entry.id for entry in queue} | {plan.id for plan in held}
    counts = defer_counts(await reader.events(deferrals(live))) if live else {}
    pulls = {plan.id: pulled_at(await reader.events(last_pull(plan.id)), plan.id) for plan in held}
    holds = [
        ActivePlan(plan=plan, path=store.plan_path(plan.id), pulled_at=pulls[plan.id])
        for plan in held
    ]
    holds.sort(
        key=lambda hold: (hold.pulled_at or dt.datetime.max.replace(tzinfo=dt.UTC), hold.plan.id)
    )
    return SessionState(
        active_plans=holds,
        session=await reader.session(),
        path=store.path,
        queue=queue,
        completed_count=(await reader.tally()).completed,
        plan_files=sorted(plan_files),
        recent=await reader.events(RECENT_EVENTS),
        defer_counts=dict(counts),
        stuck_defers=stuck,
    )


async def _render_missing(
    tx: SessionTx,
    live: dict[str, PlanId],
    names: set[str],
    held: list[Plan],
    *,
    thorough: bool,
) -> list[Repair]:
    """Re-render the file of each live plan that has none (or an emptied one)."""
    repairs = []
    for name, plan_id in live.items():
        # An empty file (what a power loss can leave of an unsynced write) is re-rendered
        # here for the active plan, and for a queued plan when it is pulled (or by a
        # thorough repair): no read of every file on open. A non-empty file stays as it
        # is, however damaged: the next defer, complete or discard salvages it.
        emptied = thorough or any(plan_id == plan.id for plan in held)
        why = "missing" if name not in names else ""
        if not why and emptied and await _reads_empty(tx, plan_id):
            why = "empty"
        if why and (plan := await tx.plan(plan_id)) is not None:
            await tx.files.write(plan.id, render(plan.content, plan.notes))
            repairs.append(Repair("rendered", name, why))
    return repairs


def _journalled(repairs: list[Repair], *, mirror: bool) -> list[Repair]:
    """The repairs the journal records: all of them, or a mirror's kept files only."""
    return [repair for repair in repairs if not mirror or repair.action == "kept"]


def active_file_notices(repairs: list[Repair], active: Plan | None) -> list[str]:
    """One line for each repair of the active plan's file: what the agent finds on resume."""
    if active is None:
        return []
    said = {"missing": "deleted", "empty": "emptied"}
    return [
        f"Plan file {repair.file_name} of the active plan was {said[repair.why]}; rendered"
        " again from the stored plan."
        for repair in repairs
        if repair.file_name == file_name(active.id) and repair.why in said
    ]


def _repaired(repairs: list[Repair], clock: Clock) -> NewEvent:
    """The journal's `files_repaired` event for what reconcile changed."""
    return NewEvent(
        kind=EventKind.FILES_REPAIRED,
        at=clock(),
        actor=Actor.SYSTEM,
        detail={"repairs": [repair.describe() for repair in repairs]},
    )


async def _reads_empty(tx: SessionTx, plan_id: PlanId) -> bool:
    """Whether the plan's file reads as empty. One that cannot be read is left as it is
    (and opening the session goes on): the next pull, defer or finish reports it."""
    try:
        return _is_empty(await tx.files.read(plan_id))
    except FileSystemError as exc:
        log.warning("plan file %s cannot be read; left as it is: %s", plan_id, exc.message)
        return False


def _is_empty(data: bytes | None) -> bool:
    """A regular file with nothing but white space in it (what a power loss can leave)."""
    return data is not None and not data.strip()


async def _stray_file_repair(tx: SessionTx, entry: str) -> Repair:
    """A file of a finished plan is removed (or kept, `finished_file_repair`); anything else
    is moved to recovered/."""
    plan = await tx.plan(plan_id) if (plan_id := plan_id_of(entry)) is not None else None
    if plan is not None:
        return await finished_file_repair(tx, plan, entry)
    tx.files.recover_after_commit(entry)
    return Repair("recovered", entry)
