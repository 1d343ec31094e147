"""What every backend's primer reads alike: the active plan's notes as the use cases would read
them back from its file, and which live plans the journal shows stuck.

A primer is a backend's read for `nineplan prime`, which a client's session-start hook waits
for: it reads without the container, the MCP SDK or aiosqlite (nineplan_adapters.backends).
"""

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from nineplan_adapters.storage.journal_rows import row_event
from nineplan_core.journal import Event, UnreadableEvent, stuck_plans
from nineplan_core.model import DEFAULT_LIMITS, Plan
from nineplan_core.plan_file import MAX_FILE_BYTES, PlanText, read_back
from nineplan_core.results import PrimedPlan, PrimedSession, StuckPlan

NEXT_GOALS = 3  # the queue's first goals a primer shows
NOTES_LINES = 5  # the last lines of the active plan's notes


class Primer(Protocol):
    """A backend's read for `nineplan prime`."""

    def find(self, folder: str) -> PrimedSession | None:
        """The most recently active session bound to `folder` (or a folder above it) that still
        has work; None when there is none, or it cannot be read. Never raises for a damaged
        session: one damaged session must not hide the others."""
        ...


def covers(workspace: str, folder: str) -> bool:
    """Whether `folder` is `workspace` or lies inside it (both absolute, `folder` resolved)."""
    base = workspace.rstrip(os.sep) or os.sep
    return folder == base or folder.startswith(base if base.endswith(os.sep) else base + os.sep)


def primed_plan(plan: Plan, path: Path | str, data: bytes | None) -> PrimedPlan:
    """The active plan with the last lines of its notes, read back from the file's `data` as
    the use cases would read them (the agent writes there as it works); the stored notes
    without a file."""
    read = read_back(
        data, PlanText(plan.content, plan.notes), max_section_chars=DEFAULT_LIMITS.max_text_chars
    )
    tail = [line for line in read.text.notes.splitlines() if line.strip()][-NOTES_LINES:]
    return PrimedPlan(id=plan.id, goal=plan.goal, file_path=str(path), notes_tail=tail)


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
