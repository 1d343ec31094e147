"""Reading the agent's edits back: what a live plan's file holds, taken into the plan before
the plan changes state, and the working copy an agent is handed when it pulls a plan.

Nothing written in a plan file is dropped: what fits no section goes to the notes, and a file
that cannot be read whole is first copied to recovered/ (docs/storage.md).
"""

import logging

from nineplan_core.errors import NoActivePlanError
from nineplan_core.journal import Actor, EventKind, excerpt, plan_event
from nineplan_core.model import Plan
from nineplan_core.plan_file import (
    PlanText,
    ReadBack,
    decode,
    read_absent,
    read_back,
    render,
    salvage_line,
)
from nineplan_core.ports import Clock, SessionTx

log = logging.getLogger("nineplan.service")


async def active_with_edits(
    tx: SessionTx,
    session: str,
    notes: str | None,
    actor: Actor,
    *,
    clock: Clock,
    max_section_chars: int,
) -> tuple[Plan, str | None]:
    """The active plan with what the agent wrote in its file, then `notes`, and one line
    saying what had to be salvaged (None when the file read as a clean plan).

    The journal gets `edits_salvaged` (when the file was messy) and then `notes_added` (when
    notes came), before the caller's own event.

    Raises:
        NoActivePlanError: no plan is active.
        StorageError: the file or the journal cannot be read or written.
    """
    if (active := await tx.active_plan()) is None:
        raise NoActivePlanError
    return await with_edits(
        tx, session, active, notes, actor, clock=clock, max_section_chars=max_section_chars
    )


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
    got, copy, moved = await _read_file(tx, live, max_section_chars)
    plan = live.with_edits(got.text.content, joined_notes(got.text.notes, notes))
    line = await _journal_salvage(tx, session, plan, got, copy, moved, actor, clock)
    if notes and notes.strip():
        await tx.append(
            plan_event(clock(), actor, EventKind.NOTES_ADDED, plan, notes=excerpt(notes))
        )
    return plan, line


async def _read_file(
    tx: SessionTx, live: Plan, max_section_chars: int
) -> tuple[ReadBack, str | None, str | None]:
    """The plan's file read back; the recovered/ copy made of it (when not all of it could
    be read), and where a directory standing in its place was moved.

    Raises:
        StorageError: the file cannot be read, copied or moved.
    """
    stored = PlanText(live.content, live.notes)
    data = await tx.files.read(live.id)
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


async def working_copy(tx: SessionTx, plan: Plan) -> str:
    """The text of a plan just pulled: its file as the agent left it, or rendered afresh when
    it is missing or empty (the agent's own copy stays as it is; defer or complete reads it
    back).

    Raises:
        StorageError: the file cannot be read or written.
    """
    data = await tx.files.read(plan.id)
    if data is not None and data.strip():
        return decode(data)[0]
    text = render(plan.content, plan.notes)
    await tx.files.write(plan.id, text)
    return text


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
