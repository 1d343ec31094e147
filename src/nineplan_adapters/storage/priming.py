"""What every backend's primer reads alike: the active plan's notes as the use cases would read
them back from its file, and which live plans the journal shows stuck.

A primer is a backend's read for `nineplan prime`, which a client's session-start hook waits
for: it reads without the container, the MCP SDK or aiosqlite (nineplan_adapters.backends).
"""

import datetime as dt
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from nineplan_adapters.config import Settings
from nineplan_adapters.storage.journal_rows import row_event
from nineplan_core.criteria import criteria
from nineplan_core.errors import NinePlanError
from nineplan_core.journal import Event, UnreadableEvent, stuck_plans
from nineplan_core.model import DEFAULT_LIMITS, PlanContent, PlanId
from nineplan_core.plan_file import MAX_FILE_BYTES, PlanText, read_back
from nineplan_core.primed import (
    OtherSession,
    PrimedHold,
    PrimedPlan,
    PrimedSession,
    StuckPlan,
)
from nineplan_core.workers import MAIN

NEXT_GOALS = 3  # the queue's first goals a primer shows
OTHERS = 3  # the folder's other sessions a primer names
NOTES_LINES = 5  # the last lines of the active plan's notes
#: The stored columns a plan's content is made of.
CONTENT_COLUMNS = ("context", "goal", "approach", "success_criteria", "inputs", "outputs")


class Primer(Protocol):
    """A backend's read for `nineplan prime`."""

    def find(self, folder: str) -> PrimedSession | None:
        """The session bound to `folder` (or a folder above it) that `choose` picks among
        those with work, naming the others; None when there is none, or it cannot be read.
        Never raises for a damaged session: one damaged session must not hide the others."""
        ...


#: A backend's `primer.primer`: the primer for the settings; the open catalog given is read by a
#: backend that keeps nothing on disk (memory), the others read what it wrote.
PrimerFactory = Callable[[Settings, object], Primer]


@attrs.frozen
class Candidate:
    """A session bound to the folder that has work: what choosing among them reads."""

    name: str
    task_description: str | None
    queued: int
    active: int
    last_active: dt.datetime


def choose(candidates: Iterable[Candidate]) -> tuple[Candidate, list[OtherSession]] | None:
    """The session an agent most likely holds, and the others to name (docs/clients.md, "Finding the way back after compaction"): the most
    recently active one that has an active plan, else the most recently active one (a person's
    `nineplan add` into another session must not send a compacted agent away from the plan it
    holds); the others most recently active first, at most OTHERS. None without candidates."""
    ordered = sorted(candidates, key=lambda c: (c.last_active, c.name), reverse=True)
    if not ordered:
        return None
    chosen = next((c for c in ordered if c.active), ordered[0])
    others = [
        OtherSession(c.name, c.task_description, c.queued, c.active)
        for c in ordered
        if c is not chosen
    ]
    return chosen, others[:OTHERS]


def covers(workspace: str, folder: str) -> bool:
    """Whether `folder` is `workspace` or lies inside it (both absolute, `folder` resolved)."""
    base = workspace.rstrip(os.sep) or os.sep
    return folder == base or folder.startswith(base if base.endswith(os.sep) else base + os.sep)


def primed_plan(row: Mapping[str, Any], path: Path | str, data: bytes | None) -> PrimedPlan:
    """The active plan of a stored row (its id, notes and content columns; the others are not
    read, so a damaged time or status hides nothing) with the last lines of its notes, read
    back from the file's `data` as the use cases would read them (the agent writes there as it
    works); the stored notes without a file."""
    notes, goal = str(row["notes"]), str(row["goal"])
    items: list[str] = []
    try:
        content = PlanContent(**{name: str(row[name]) for name in CONTENT_COLUMNS})
    except NinePlanError:  # a row edited by hand past the rules: its stored notes, as they are
        pass
    else:
        stored = PlanText(content, notes)
        text = read_back(data, stored, max_section_chars=DEFAULT_LIMITS.max_text_chars).text
        notes = text.notes
        items = [item.text for item in criteria(text.content.success_criteria)]
    tail = [line for line in notes.splitlines() if line.strip()][-NOTES_LINES:]
    return PrimedPlan(
        id=str(row["id"]), goal=goal, file_path=str(path), notes_tail=tail, criteria=items
    )


def read_file(path: Path, limit: int = MAX_FILE_BYTES + 1) -> bytes | None:
    """A file's first `limit` bytes; None when it is missing, a symlink or not a regular file
    (a directory, or a FIFO that would block the hook), or cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            return handle.read(limit)
    except OSError:
        return None


def stuck_from_rows(
    goals: Mapping[str, str], rows: Iterable[Mapping[str, Any]], stuck_defers: int
) -> list[StuckPlan]:
    """The live plans (id -> goal) that the journal rows of their deferrals show stuck."""
    return stuck_from_events(goals, (row_event(row) for row in rows), stuck_defers)


def stuck_from_events(
    goals: Mapping[str, str], events: Iterable[Event | UnreadableEvent], stuck_defers: int
) -> list[StuckPlan]:
    """The live plans (id -> goal) that `events` show stuck, by the core's rule
    (nineplan_core.journal), in id order."""
    stuck = stuck_plans(events, stuck_defers)
    return [
        StuckPlan(plan_id, goals[plan_id], stuck[plan_id])
        for plan_id in sorted(stuck)
        if plan_id in goals
    ]


def primed_holds(
    rows: Iterable[Mapping[str, Any]],
    file_of: Callable[[PlanId], tuple[Path | str, bytes | None]],
) -> list[PrimedHold]:
    """Every active plan of `rows` (stored plan rows, with `worker` and `last_seen`) as prime
    shows it, by id; `file_of` gives a plan id's file path and content. A row whose time
    cannot be read has none."""
    holds = []
    for row in sorted(rows, key=lambda row: str(row["id"])):
        path, data = file_of(PlanId(str(row["id"])))
        holds.append(
            PrimedHold(
                worker=str(row["worker"] or MAIN),
                last_seen=None if row["last_seen"] is None else _seen(row["last_seen"]),
                plan=primed_plan(row, path, data),
            )
        )
    return holds


def _seen(value: object) -> dt.datetime | None:
    """A stored `last_seen` (a time, or its ISO text), in UTC; None when it is not one."""
    try:
        at = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    except (TypeError, ValueError):
        return None
    return at.astimezone(dt.UTC) if at.tzinfo else at.replace(tzinfo=dt.UTC)
