"""The domain values: sessions, plans and their content, the checked names and ids, the limits."""

import datetime as dt
import enum
import re
from typing import NewType, Self, TypeVar

import attrs

from nineplan_core.errors import InvalidInputError, InvalidTransitionError
from nineplan_core.lifecycle import STUCK_DEFERS, PlanStatus, check_transition, is_stuck
from nineplan_core.verdicts import Verdict
from nineplan_core.workers import LEASE_MINUTES, Hold, Worker, stored_worker

__all__ = [
    "LEASE_MINUTES",
    "STUCK_DEFERS",
    "Limits",
    "Plan",
    "PlanContent",
    "PlanId",
    "PlanRow",
    "PlanStatus",
    "Position",
    "QueueEntry",
    "Session",
    "SessionName",
    "Tally",
    "is_stuck",
]

T = TypeVar("T")

SESSION_NAME = re.compile(r"[a-z]+-[a-z]+-[a-z]+")
PLAN_ID = re.compile(r"[0-9a-z]{5}")
PLAN_FILE_SUFFIX = ".txt"

#: A session name that has the three-word shape: only `check_session_name` (or a store reading
#: back a name it wrote) makes one, so a port that takes it needs no second check.
SessionName = NewType("SessionName", str)
#: A plan id of five characters of [0-9a-z]: made by `check_plan_id` (or read back from storage).
PlanId = NewType("PlanId", str)


class Position(enum.StrEnum):
    """Where a plan enters the queue: `front` is pulled next, `back` is pulled last."""

    FRONT = "front"
    BACK = "back"


@attrs.frozen
class Limits:
    """Bounds on what callers may send; the defaults suit agents and keep storage fast."""

    max_text_chars: int = 100_000
    max_results: int = 100
    max_task_chars: int = 10_000
    max_queue: int = 10_000
    #: How many recent request ids each session (and the session catalog) remembers.
    remembered_requests: int = 1000


DEFAULT_LIMITS = Limits()


def check_type(field: str, value: object, kind: type[T]) -> T:
    """Return `value` if it is a `kind` (never a bool posing as an int).

    Raises:
        InvalidInputError: a value of another type; the message names the type expected.
    """
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        expected = {str: "text", int: "a whole number"}.get(kind, kind.__name__)
        raise InvalidInputError(field, f"must be {expected}, not {type(value).__name__}")
    return value


def check_text(field: str, value: str, *, max_chars: int, required: bool = True) -> str:
    """Return `value` if it is acceptable text for `field`.

    Raises:
        InvalidInputError: not a string, blank when required, containing NUL, or longer than
            `max_chars`.
    """
    check_type(field, value, str)
    if required and not value.strip():
        raise InvalidInputError(field, "must not be blank")
    if "\x00" in value:
        raise InvalidInputError(field, "must not contain NUL characters")
    if len(value) > max_chars:
        raise InvalidInputError(field, f"is {len(value)} characters; the limit is {max_chars}")
    if not value.isascii():
        try:  # a lone surrogate: bytes that were not UTF-8 (a terminal's argv, a file)
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInputError(field, "is not valid UTF-8 text") from None
    return value


def check_session_name(name: str, field: str = "session_name") -> SessionName:
    """Return `name` if it has the three-word shape; only such names ever reach a path.

    Raises:
        InvalidInputError: the name is not three lowercase words joined by '-'.
    """
    if not SESSION_NAME.fullmatch(check_type(field, name, str)):
        raise InvalidInputError(
            field, "must be three lowercase words joined by '-', like brave-quiet-otter"
        )
    return SessionName(name)


#: What a plan id must be, in words (every way in says it so, never with the pattern).
PLAN_ID_RULE = "must be a plan id: 5 characters of lowercase letters and digits"


def check_plan_id(plan_id: str, field: str = "plan_id") -> PlanId:
    """Return `plan_id` if it is five characters of [0-9a-z].

    Raises:
        InvalidInputError: any other shape.
    """
    if not PLAN_ID.fullmatch(check_type(field, plan_id, str)):
        raise InvalidInputError(field, PLAN_ID_RULE)
    return PlanId(plan_id)


def file_name(plan_id: PlanId) -> str:
    """The name of a plan's file in the session's `plans/` folder."""
    return f"{plan_id}{PLAN_FILE_SUFFIX}"


def plan_id_of(name: str) -> PlanId | None:
    """The plan id a file in `plans/` is named for, or None for any other name."""
    plan_id = name.removesuffix(PLAN_FILE_SUFFIX)
    valid = name.endswith(PLAN_FILE_SUFFIX) and PLAN_ID.fullmatch(plan_id)
    return PlanId(plan_id) if valid else None


def check_position(value: str, field: str = "position") -> Position:
    """Parse `front` or `back`.

    Raises:
        InvalidInputError: anything else.
    """
    try:
        return Position(check_type(field, value, str))
    except ValueError:
        raise InvalidInputError(field, "must be 'front' or 'back'") from None


def _required(_: object, attribute: "attrs.Attribute[str]", value: str) -> None:
    if not value.strip():
        raise InvalidInputError(attribute.name, "must not be blank")


def _no_nul(_: object, attribute: "attrs.Attribute[str]", value: str) -> None:
    if "\x00" in value:
        raise InvalidInputError(attribute.name, "must not contain NUL characters")


@attrs.frozen(kw_only=True)
class PlanContent:
    """What makes a plan self-contained: enough for an agent to execute it cold."""

    context: str = attrs.field(validator=[_required, _no_nul])
    goal: str = attrs.field(validator=[_required, _no_nul])
    approach: str = attrs.field(validator=[_required, _no_nul])
    success_criteria: str = attrs.field(validator=[_required, _no_nul])
    inputs: str = attrs.field(default="", validator=_no_nul)
    outputs: str = attrs.field(default="", validator=_no_nul)


#: The sections of a plan's content, in the order of its file (and of its revision).
SECTION_FIELDS = ("context", "goal", "inputs", "outputs", "approach", "success_criteria")


@attrs.frozen(kw_only=True)
class Plan:
    """One unit of work in a session. Immutable: every change returns a new Plan."""

    id: PlanId
    content: PlanContent
    status: PlanStatus = PlanStatus.QUEUED
    position: int | None = None
    notes: str = ""
    outcome: str | None = None
    created_at: dt.datetime
    completed_at: dt.datetime | None = None
    #: Who holds the plan while it is active (None otherwise), and when it last heard of them.
    worker: str | None = None
    last_seen: dt.datetime | None = None
    #: The plans that must be settled (completed or discarded) before this one can be pulled,
    #: in the order named (docs/architecture.md, "Prerequisites").
    after: tuple[PlanId, ...] = ()
    #: The answers to its success criteria given at completion (docs/architecture.md,
    #: "Criteria and verdicts"), each with the criterion's text as judged.
    verdicts: tuple[Verdict, ...] = ()
    #: The plan whose unmet criteria this one was added to meet, and the plans added to meet
    #: this one's: the two ends of one link, each stored with its plan.
    follow_up_of: PlanId | None = None
    follow_ups: tuple[PlanId, ...] = ()

    @property
    def goal(self) -> str:
        return self.content.goal

    @property
    def hold(self) -> Hold | None:
        """Its worker's hold on the plan while it is active (None otherwise); the row keeps
        no `pulled_at` (the journal does: `ActivePlan.hold` has it)."""
        if self.status is not PlanStatus.ACTIVE:
            return None
        return Hold(worker=stored_worker(self.worker), last_seen=self.last_seen)

    @property
    def discard_reason(self) -> str | None:
        """Why a discarded plan was abandoned: the reason of its last note that discarded it
        (the agent's "Discarded:", or a person's "Dropped by a person:")."""
        found = self._discard_note()
        return found[1] if found else None

    @property
    def discarded_by(self) -> str | None:
        """Who discarded the plan: "agent" or "person" (None unless discarded)."""
        found = self._discard_note()
        return found[0] if found else None

    def _discard_note(self) -> tuple[str, str] | None:
        if self.status is not PlanStatus.DISCARDED:
            return None
        at, who, mark = max((self.notes.rfind(mark), who, mark) for who, mark in _DISCARD_NOTES)
        return (who, self.notes[at + len(mark) :].strip()) if at >= 0 else None

    def pull(self, *, worker: Worker, at: dt.datetime) -> Self:
        """Leave the queue and become `worker`'s active plan, seen at `at`."""
        check_transition(self.id, self.status, PlanStatus.ACTIVE)
        return attrs.evolve(
            self, status=PlanStatus.ACTIVE, position=None, worker=worker, last_seen=at
        )

    def seen(self, at: dt.datetime) -> Self:
        """The active plan, its worker heard from at `at`."""
        return attrs.evolve(self, last_seen=at)

    def taken_over(self, *, worker: Worker, at: dt.datetime) -> Self:
        """The active plan, now `worker`'s (its lease had lapsed), seen at `at`."""
        if self.status is not PlanStatus.ACTIVE:
            raise InvalidTransitionError(self.id, self.status.value, "taken over")
        return attrs.evolve(self, worker=worker, last_seen=at)

    def release(self, *, position: int) -> Self:
        """A person puts the active plan back in the queue at `position` (its notes as they are)."""
        check_transition(self.id, self.status, PlanStatus.QUEUED)
        return attrs.evolve(
            self, status=PlanStatus.QUEUED, position=position, worker=None, last_seen=None
        )

    def defer(self, *, reason: str, position: int, at: dt.datetime) -> Self:
        """Go back into the queue at `position`, with a timestamped note saying why."""
        check_transition(self.id, self.status, PlanStatus.QUEUED)
        return attrs.evolve(
            self,
            status=PlanStatus.QUEUED,
            position=position,
            notes=_append_note(self.notes, at, f"Deferred: {reason}"),
            worker=None,
            last_seen=None,
        )

    def complete(
        self, *, outcome: str, at: dt.datetime, verdicts: tuple[Verdict, ...] = ()
    ) -> Self:
        """Finish: the outcome (and the verdicts on its criteria) go with the plan into
        searchable history."""
        check_transition(self.id, self.status, PlanStatus.COMPLETED)
        return attrs.evolve(
            self,
            status=PlanStatus.COMPLETED,
            position=None,
            outcome=outcome,
            completed_at=at,
            worker=None,
            last_seen=None,
            verdicts=verdicts,
        )

    def discard(self, *, reason: str, at: dt.datetime) -> Self:
        """Abandon: kept in storage, never searchable."""
        check_transition(self.id, self.status, PlanStatus.DISCARDED)
        return attrs.evolve(
            self,
            status=PlanStatus.DISCARDED,
            position=None,
            notes=_append_note(self.notes, at, f"Discarded: {reason}"),
            completed_at=at,
            worker=None,
            last_seen=None,
        )

    def move(self, *, position: int) -> Self:
        """A person puts a queued plan elsewhere in the queue."""
        if self.status is not PlanStatus.QUEUED:
            raise InvalidTransitionError(self.id, self.status.value, "moved in the queue")
        return attrs.evolve(self, position=position)

    def drop(self, *, reason: str, at: dt.datetime) -> Self:
        """A person discards a plan still queued: kept in storage, never searchable."""
        if self.status is not PlanStatus.QUEUED:  # the active plan is the agent's to discard
            raise InvalidTransitionError(self.id, self.status.value, "dropped by a person")
        check_transition(self.id, self.status, PlanStatus.DISCARDED, by_person=True)
        return attrs.evolve(
            self,
            status=PlanStatus.DISCARDED,
            position=None,
            notes=_append_note(self.notes, at, f"Dropped by a person: {reason}"),
            completed_at=at,
        )

    def waiting_on(self, after: tuple[PlanId, ...]) -> Self:
        """A person changed what the plan waits for."""
        return attrs.evolve(self, after=after)

    def with_edits(self, content: PlanContent, notes: str) -> Self:
        """Take the agent's edits from the plan file."""
        return attrs.evolve(self, content=content, notes=notes)


def format_timestamp(at: dt.datetime) -> str:
    """UTC ISO-8601 with a `Z`, to the second: how notes and views show time."""
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: Who discarded a plan, by the note that did: the agent's discard, a person's drop.
_DISCARD_NOTES = (("agent", " Discarded: "), ("person", " Dropped by a person: "))


def _append_note(notes: str, at: dt.datetime, text: str) -> str:
    line = f"- {format_timestamp(at)} {text}"
    # rstrip("\n"), not rstrip(): trailing spaces on the agent's last line are its text.
    return notes.rstrip("\n") + "\n" + line if notes.strip() else line


@attrs.frozen(kw_only=True)
class Session:
    """A named queue of plans that an agent creates once and resumes across conversations."""

    name: SessionName
    task_description: str | None
    created_at: dt.datetime
    #: The folder the session was created in (its project), or None when there was none to
    #: record (an HTTP server, a server started in `/` or the home folder, older sessions).
    workspace: str | None = None
    #: A worker other than `main` has been named in the session (docs/architecture.md, "Workers and leases"): from then on
    #: the texts mark stale plans, even when only `main` holds one. Set once, never cleared.
    workers_named: bool = False


@attrs.frozen(kw_only=True)
class Tally:
    """A session's counts in one read: the queue's size and ends, and the history's size."""

    queued: int = 0
    completed: int = 0
    #: The lowest and highest stored queue positions (None when nothing is queued).
    low: int | None = None
    high: int | None = None
    #: The goal of the plan at the front of the queue.
    next_goal: str | None = None


@attrs.frozen
class QueueEntry:
    """A queued plan as callers see it: `rank` 1 is nearest the front; a plan is pulled when
    nothing it waits for is unsettled (`waiting_for` empty)."""

    id: PlanId
    goal: str
    rank: int
    #: Its prerequisites not yet settled (queued or active), in the order named.
    waiting_for: tuple[PlanId, ...] = ()


@attrs.frozen
class PlanRow:
    """The part of a stored plan the invariants and the journal's replay look at."""

    id: PlanId
    status: PlanStatus
    position: int | None
    #: The worker an active plan belongs to.
    worker: str | None = None
