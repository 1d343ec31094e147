"""A copy before every loss (docs/reliability.md, "Guarantees"): a plan file's lines that the database lacks are never
dropped without a copy in recovered/, a journal event and a line in the call's result.

A file whose bytes hash to what this machine last wrote into it (`PlanFileView.written`) is
just a render and may go or be re-rendered freely; any other file is judged by its lines.
The two moves that need this: the file of a plan finished elsewhere, at reconcile; and a
pulled plan's file that this machine wrote before the database changed (a person's change,
another machine's defer), at pull.
"""

import hashlib
import logging

from nineplan_core.edits import joined_notes
from nineplan_core.errors import FileSystemError
from nineplan_core.journal import Actor, EventKind, plan_event
from nineplan_core.model import Plan, file_name
from nineplan_core.plan_file import MAX_FILE_BYTES, SECTIONS, decode, render
from nineplan_core.ports import Clock, SessionTx
from nineplan_core.pulls import held_by
from nineplan_core.results import Repair
from nineplan_core.workers import Worker

log = logging.getLogger("nineplan.service")

_HEADING_LINES = {f"# {title}".lower() for _, title in SECTIONS}


def digest(data: bytes) -> str:
    """The hash a machine records of what it wrote into a plan file."""
    return hashlib.sha256(data).hexdigest()


def unsaved_lines(data: bytes, plan: Plan) -> list[str]:
    """The lines of a plan file (read tolerantly: BOM, CRLF, headings in any case) that the
    stored plan lacks, in file order; blank lines and section headings never count."""
    stored = _lines(render(plan.content, plan.notes))
    for value in (*_sections(plan), plan.notes, plan.outcome or ""):
        stored |= _lines(value)
    found = (line.rstrip() for line in decode(data)[0].split("\n"))
    return [
        line
        for line in found
        if line.strip() and line not in stored and line.strip().lower() not in _HEADING_LINES
    ]


def _sections(plan: Plan) -> tuple[str, ...]:
    """The text of each of a plan's sections."""
    content = plan.content
    return (
        content.context,
        content.goal,
        content.inputs,
        content.outputs,
        content.approach,
        content.success_criteria,
    )


def _lines(text: str) -> set[str]:
    return {line.rstrip() for line in text.replace("\r\n", "\n").split("\n")}


async def finished_file_repair(tx: SessionTx, plan: Plan, entry: str) -> Repair:
    """The file of a finished plan (finished in another process or on another machine):
    removed when it holds nothing the database lacks, else moved whole to recovered/."""
    try:
        lost = await _holds_unsaved(tx, plan)
    except FileSystemError as exc:  # cannot be judged: moved aside, never deleted
        log.warning("plan file %s cannot be read; moved aside: %s", entry, exc.message)
        lost = True
    if not lost:
        tx.files.remove_after_commit(plan.id)
        return Repair("removed", entry)
    tx.files.recover_after_commit(entry)
    return Repair("kept", entry, why=f"its plan was {plan.status.value} elsewhere")


async def _holds_unsaved(tx: SessionTx, plan: Plan) -> bool:
    """Whether the plan's file holds a line its stored plan lacks (a file this machine wrote
    and nobody changed since holds none; a file beyond the read limit is never judged by its
    start alone)."""
    data = await tx.files.read(plan.id)
    if data is None:
        return False  # nothing there, or a directory or a link (removal moves or unlinks it)
    recorded = await tx.files.written(plan.id)
    if recorded is not None and digest(data) == recorded:
        return False
    return len(data) > MAX_FILE_BYTES or bool(unsaved_lines(data, plan))


def kept_lines(repairs: list[Repair]) -> list[str]:
    """The result lines for the repairs that kept lines the database lacks."""
    return [f"Plan file {repair.describe()}." for repair in repairs if repair.action == "kept"]


async def refreshed_copy(
    tx: SessionTx, plan: Plan, data: bytes | None, actor: Actor, clock: Clock
) -> tuple[Plan, bytes | None, str | None]:
    """A plan being pulled, with its file (`data`, as the pull read it) brought up to the
    database when this machine wrote the file and the database changed since: an unedited
    file is re-rendered; an edited one keeps the database's sections, its own other lines go
    to the notes and the original to recovered/, and the line returned says so (None when
    nothing had to be said). The bytes returned are what the file holds now.

    Raises:
        StorageError: the file, its record or the journal cannot be written.
    """
    if (recorded := await tx.files.written(plan.id)) is None:
        return plan, data, None  # never written here (or no record: the files are the session's)
    rendered = render(plan.content, plan.notes)
    if digest(rendered.encode("utf-8")) == recorded:
        return plan, data, None  # the database is as this machine wrote it
    if data is None or not data.strip():
        return plan, data, None  # the pull renders a missing or empty file itself
    lost = [] if digest(data) == recorded else unsaved_lines(data, plan)
    if not lost:
        await tx.files.write(plan.id, rendered)
        return plan, rendered.encode("utf-8"), None
    copy = await tx.files.keep_recovered(plan.id, data)
    merged = plan.with_edits(plan.content, joined_notes(plan.notes, "\n".join(lost)))
    text = render(merged.content, merged.notes)
    await tx.files.write(plan.id, text)
    line = (
        f"Plan file {file_name(plan.id)} was edited here while the plan changed elsewhere: "
        f"the database's sections are kept, {len(lost)} line(s) of the file were added to "
        f"Notes, and the original is in {copy}."
    )
    log.warning("plan file merged: %s", line, extra={"plan_id": plan.id})
    await tx.append(
        plan_event(clock(), actor, EventKind.EDITS_SALVAGED, merged, salvaged=line, recovered=copy)
    )
    return merged, text.encode("utf-8"), line


async def render_if_never_here(tx: SessionTx, worker: Worker) -> None:
    """On a machine's copy of a shared database: give `worker`'s active plan its file when this
    machine never wrote one (the plan was pulled elsewhere after this machine last opened the
    session), so reading it back finds the stored text, not a "missing" file the agent here
    never had. A file this machine wrote and that is gone stays missing (and is reported).

    Raises:
        StorageError: the file or its record cannot be read or written.
    """
    active = await held_by(tx, worker)
    if (
        active is not None
        and await tx.files.written(active.id) is None
        and await tx.files.read(active.id) is None
    ):
        await tx.files.write(active.id, render(active.content, active.notes))
