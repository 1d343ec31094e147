"""Reading the agent's edits back: what a live plan's file holds, taken into the plan before
the plan changes state, and the working copy an agent is handed when it pulls a plan.

Nothing written in a plan file is dropped: what fits no section goes to the notes, and a file
that cannot be read whole is first copied to recovered/ (docs/storage.md).
"""

import logging

from nineplan_core.errors import NinePlanError, NoActivePlanError, PlanNotFoundError
from nineplan_core.journal import HOLDS, Actor, EventKind, excerpt, lost_plan, plan_event
from nineplan_core.model import Plan, PlanId, format_timestamp
from nineplan_core.plan_file import (
    PlanText,
    ReadBack,
    decode,
    is_heading,
    read_absent,
    read_back,
    render,
    salvage_line,
    unreadable,
)
from nineplan_core.ports import Clock, SessionReader, SessionTx
from nineplan_core.pulls import held_by
from nineplan_core.workers import Worker, stored_worker

log = logging.getLogger("nineplan.service")


async def active_with_edits(
    tx: SessionTx,
    session: str,
    notes: str | None,
    actor: Actor,
    *,
    clock: Clock,
    max_section_chars: int,
    worker: Worker,
    plan_id: PlanId | None = None,
) -> tuple[Plan, str | None]:
    """`worker`'s active plan (which must be `plan_id`, when given) with what the agent wrote
    in its file, then `notes`, and one line saying what had to be salvaged (None when the
    file read as a clean plan).

    The journal gets `edits_salvaged` (when the file was messy) and then `notes_added` (when
    notes came), before the caller's own event.

    Raises:
        NoActivePlanError: `worker` holds no plan, or holds another than `plan_id`.
        PlanNotFoundError: `plan_id` is no plan of the session.
        StorageError: the file or the journal cannot be read or written.
    """
    active = await held_by(tx, worker)
    if plan_id is not None and (active is None or active.id != plan_id):
        raise await not_held(tx, worker, plan_id)
    if active is None:
        raise await no_active_plan(tx, worker)
    return await with_edits(
        tx, session, active, notes, actor, clock=clock, max_section_chars=max_section_chars
    )


async def not_held(tx: SessionReader, worker: str, plan_id: PlanId) -> NinePlanError:
    """The call named `plan_id`, which `worker` does not hold: the error says what it is."""
    plan = await tx.plan(plan_id)
    if plan is None:
        return PlanNotFoundError(plan_id, kind="")
    hold = plan.hold
    instead = f"it is {plan.status.value}" if hold is None else f"worker {hold.worker} holds it"
    return NoActivePlanError(worker, named=(plan_id, instead))


async def no_active_plan(tx: SessionReader, worker: str) -> NoActivePlanError:
    """`worker` holds no plan: the error, saying who took its last plan and when, if so."""
    lost = lost_plan(await tx.events(HOLDS), worker)
    others = [(plan.id, stored_worker(plan.worker)) for plan in await tx.active_plans()]
    if lost is None:
        return NoActivePlanError(worker, others=others)
    when = format_timestamp(lost.at)
    if lost.kind is EventKind.PLAN_RELEASED:
        said = f"plan {lost.plan_id} was released back to the queue by a person at {when}"
    else:
        said = f"plan {lost.plan_id} was taken over by worker {lost.detail.get('to')} at {when}"
    return NoActivePlanError(worker, lost=said, others=others)


async def with_edits(
    tx: SessionTx,
    session: str,
    live: Plan,
    notes: str | None,
    actor: Actor,
    *,
    clock: Clock,
    max_section_chars: int,
) -> tuple[Plan, str | None]:
    """`live` (a queued or active plan) with what was written in its file, then `notes`,
    and one line saying what had to be salvaged (None when the file read as a clean plan).

    Raises:
        StorageError: the file or the journal cannot be read or written.
    """
    data = await tx.files.read(live.id)
    return await _with_read_edits(
        tx, session, live, data, notes, actor, clock=clock, max_section_chars=max_section_chars
    )


async def edits_so_far(
    tx: SessionTx,
    session: str,
    active: Plan,
    actor: Actor,
    *,
    clock: Clock,
    max_section_chars: int,
) -> tuple[Plan, str | None]:
    """`active` with what its worker has written in its file so far, read back as complete
    reads it, and the salvage line (None when none); `active` itself while the file is
    still the plan's own render (nothing written yet), and while it is missing or empty (an
    editor between truncating and writing, or replacing it: complete reads what is there
    then, and says so).

    Raises:
        StorageError: the file or the journal cannot be read or written.
    """
    data = await tx.files.read(active.id)
    if not (data or b"").strip() or data == render(active.content, active.notes).encode("utf-8"):
        return active, None
    return await _with_read_edits(
        tx, session, active, data, None, actor, clock=clock, max_section_chars=max_section_chars
    )


async def _with_read_edits(
    tx: SessionTx,
    session: str,
    live: Plan,
    data: bytes | None,
    notes: str | None,
    actor: Actor,
    *,
    clock: Clock,
    max_section_chars: int,
) -> tuple[Plan, str | None]:
    """`with_edits` over `data`, the file's bytes as this transaction read them (None: no
    regular file there)."""
    got, copy, moved = await _read_file(tx, live, data, max_section_chars)
    plan = live.with_edits(got.text.content, joined_notes(got.text.notes, notes))
    line = await _journal_salvage(tx, session, plan, got, copy, moved, actor, clock)
    if notes and notes.strip():
        await tx.append(
            plan_event(clock(), actor, EventKind.NOTES_ADDED, plan, notes=excerpt(notes))
        )
    return plan, line


async def _read_file(
    tx: SessionTx, live: Plan, data: bytes | None, max_section_chars: int
) -> tuple[ReadBack, str | None, str | None]:
    """The plan's file, `data` as read, read back; the recovered/ copy made of it (when not
    all of it could be read), and where a directory standing in its place was moved.

    Raises:
        StorageError: the file cannot be copied or moved.
    """
    stored = PlanText(live.content, live.notes)
    if data is None:  # no regular file: say what stood there; a directory goes aside
        kind, moved = await tx.files.set_aside(live.id)
        return read_absent(kind, moved, stored), None, moved
    got = read_back(data, stored, max_section_chars=max_section_chars)
    copy = await tx.files.keep_recovered(live.id, data) if got.keep_original and data else None
    return got, copy, None


def joined_notes(edited: str, notes: str | None) -> str:
    """The notes as the file holds them, then `notes`.

    An agent appending under "# Notes" leaves blank lines around its text; they are dropped.
    """
    parts = [edited.strip("\n"), (notes or "").strip("\n")]
    return "\n".join(part for part in parts if part.strip())


async def queued_with_edits(
    tx: SessionTx,
    session: str,
    queued: Plan,
    data: bytes | None,
    actor: Actor,
    *,
    clock: Clock,
    max_section_chars: int,
    stale: bool,
) -> tuple[Plan, str, str | None]:
    """The queued plan about to be pulled, with what a person or an agent wrote in its file
    (`_take_file`; `data`, the file as the pull read it, None when no regular file is there);
    its file's text, now the plan's render (what pull hands the agent); and one line saying
    what had to be salvaged (None when nothing).

    Raises:
        StorageError: the file or the journal cannot be read or written.
    """
    plan, line, current = await _take_file(
        tx,
        session,
        queued,
        data,
        actor,
        clock=clock,
        max_section_chars=max_section_chars,
        stale=stale,
    )
    text = render(plan.content, plan.notes)
    if not current:
        await tx.files.write(plan.id, text)
    return plan, text, line


async def _take_file(
    tx: SessionTx,
    session: str,
    queued: Plan,
    data: bytes | None,
    actor: Actor,
    *,
    clock: Clock,
    max_section_chars: int,
    stale: bool,
) -> tuple[Plan, str | None, bool]:
    """The queued plan with its file's edits, the salvage line, and whether the file is the
    plan's render already.

    An unedited file (the plan's own render), a missing or an empty one is just a render:
    nothing to take in. A file that cannot be read as a plan (bytes that are not UTF-8, NUL
    characters, over the size limit) never replaces the stored plan: it is copied whole to
    recovered/ first. An edited file is read back as defer and complete read it, unless the
    stored plan may have changed since the file was written (`stale`, a file mirror filled
    from a shared database): then the stored sections win, and the file's lines the stored
    plan lacks go to its Notes, the original to recovered/.

    Raises:
        StorageError: the file or the journal cannot be read or written.
    """
    stored = PlanText(queued.content, queued.notes)
    if data is None:
        kind, moved = await tx.files.set_aside(queued.id)
        got = read_absent(kind, moved, stored) if kind in ("link", "directory") else None
        return queued, await _said(tx, session, queued, got, None, moved, actor, clock), False
    text, _, damaged = decode(data)
    if data == render(queued.content, queued.notes).encode("utf-8"):
        return queued, None, True
    if not text.strip():
        return queued, None, False
    if damaged:
        copy = await tx.files.keep_recovered(queued.id, data)
        why = unreadable(data) or "NUL characters"
        said = (f"the file cannot be read as a plan ({why}); kept the stored plan",)
        line = await _said(tx, session, queued, ReadBack(stored, said), copy, None, actor, clock)
        return queued, line, False
    if stale:
        plan, line = await _stored_wins(tx, session, queued, data, text, actor, clock)
    else:
        plan, line = await _with_read_edits(
            tx,
            session,
            queued,
            data,
            None,
            actor,
            clock=clock,
            max_section_chars=max_section_chars,
        )
    return plan, line, False


async def _stored_wins(
    tx: SessionTx,
    session: str,
    queued: Plan,
    data: bytes,
    text: str,
    actor: Actor,
    clock: Clock,
) -> tuple[Plan, str | None]:
    """The stored plan, with the lines of `text` it lacks added to its Notes (the original
    copied to recovered/ first); the plan unchanged when the file holds nothing new."""
    known = set(render(queued.content, queued.notes).split("\n"))
    extra = [line for line in text.split("\n") if line.strip() and line not in known]
    extra = [line for line in extra if not is_heading(line)]
    if not extra:
        return queued, None
    copy = await tx.files.keep_recovered(queued.id, data)
    plan = queued.with_edits(queued.content, joined_notes(queued.notes, "\n".join(extra)))
    said = (
        "the stored plan may have changed since this file was written; its sections were"
        f" kept and the file's {len(extra)} other lines were added to Notes"
    )
    got = ReadBack(PlanText(plan.content, plan.notes), (said,))
    return plan, await _said(tx, session, plan, got, copy, None, actor, clock)


async def _said(
    tx: SessionTx,
    session: str,
    plan: Plan,
    got: ReadBack | None,
    copy: str | None,
    moved: str | None,
    actor: Actor,
    clock: Clock,
) -> str | None:
    """`_journal_salvage` for a read-back that may have found nothing to say (None)."""
    if got is None:
        return None
    return await _journal_salvage(tx, session, plan, got, copy, moved, actor, clock)


async def _journal_salvage(
    tx: SessionTx,
    session: str,
    plan: Plan,
    got: ReadBack,
    copy: str | None,
    moved: str | None,
    actor: Actor,
    clock: Clock,
) -> str | None:
    """Say what reading the file back had to salvage (the log and the journal), or None.

    `copy` is the copy of the file in recovered/, `moved` where a directory in its place
    went (its phrase in `got` names it already); the journal's event names either."""
    if not got.salvaged:
        return None
    line = salvage_line(got.salvaged, copy)
    log.warning("plan file salvaged: %s", line, extra={"session": session, "plan_id": plan.id})
    where = {"recovered": copy or moved} if copy or moved else {}
    await tx.append(
        plan_event(clock(), actor, EventKind.EDITS_SALVAGED, plan, salvaged=line, **where)
    )
    return line
