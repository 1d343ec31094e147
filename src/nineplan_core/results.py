"""What the use cases return: the state of a session, a placed or finished plan, a search
match, a validation report and a repair. Every result type lives here."""

import datetime as dt
from collections.abc import Mapping, Sequence

import attrs

from nineplan_core.journal import Event, EventKind, UnreadableEvent
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import (
    STUCK_DEFERS,
    Plan,
    PlanId,
    QueueEntry,
    Session,
    Tally,
    file_name,
    is_stuck,
)
from nineplan_core.workers import MAIN, Hold, Worker, stored_worker

__all__ = [
    "SNIPPET_MARKS",
    "AddedPlans",
    "BatchedPlan",
    "Board",
    "Completion",
    "Discarded",
    "Finished",
    "HistoryMatch",
    "PlacedPlan",
    "PlanCopy",
    "Prerequisite",
    "Repair",
    "SessionListing",
    "SessionState",
    "SessionSummary",
    "UnreadableSession",
    "ValidationReport",
]


@attrs.frozen(kw_only=True)
class Prerequisite:
    """A plan the pulled plan waited for, as the pull hands it over: its outcome (None for a
    discarded one, whose `reason` says why) or, for one not settled (a person's release of a
    plan is the one way), its status."""

    id: PlanId
    goal: str
    status: PlanStatus
    outcome: str | None = None
    reason: str | None = None


@attrs.frozen(kw_only=True)
class PlacedPlan:
    """A plan just added, pulled or deferred: where its file is and, when queued, its rank."""

    plan: Plan
    path: str
    rank: int | None = None
    #: The plan as its file reads (for a pull): what the agent works from.
    text: str | None = None
    #: One line saying what had to be salvaged from the agent's file, if anything (a defer).
    salvage: str | None = None
    #: How often the plan had been deferred (set by a pull), and whether that makes it stuck.
    defer_count: int = 0
    stuck: bool = False
    #: The worker whose stale plan this pull took over (None for a pull from the queue).
    taken_from: str | None = None
    #: The other workers' active plans whose leases had lapsed at the pull (docs/architecture.md, "Workers and leases").
    stale_beside: tuple[Plan, ...] = ()
    #: The plans a pulled plan waited for, in the order named, with what they produced.
    prerequisites: tuple[Prerequisite, ...] = ()
    #: What an added plan waits for: the plans it names that are not settled yet.
    waiting_for: tuple[PlanId, ...] = ()


@attrs.frozen(kw_only=True)
class BatchedPlan:
    """A plan the call added: its id, its key, where its file is and its rank."""

    plan: Plan
    key: str | None
    path: str
    rank: int
    #: The plans it waits for that are not settled yet (items of the call among them).
    waiting_for: tuple[PlanId, ...] = ()


@attrs.frozen(kw_only=True)
class AddedPlans:
    """What `add_plans` did: the plans in the order given, and the queue's length after."""

    plans: tuple[BatchedPlan, ...]
    queue_length: int


@attrs.frozen(kw_only=True)
class ActivePlan:
    """An active plan of the session, whoever holds it: where its file is, when it was pulled."""

    plan: Plan
    path: str
    pulled_at: dt.datetime | None = None
    #: Its worker's lease has lapsed (`Hold.stale`, judged when the state was read).
    stale: bool = False

    @property
    def worker(self) -> str:
        return stored_worker(self.plan.worker)

    @property
    def hold(self) -> Hold:
        """Its worker's hold on it, `pulled_at` included."""
        return Hold(
            worker=stored_worker(self.plan.worker),
            pulled_at=self.pulled_at,
            last_seen=self.plan.last_seen,
        )


@attrs.frozen(kw_only=True)
class SessionState:
    """Everything an agent needs to pick a session back up."""

    session: Session
    path: str
    queue: list[QueueEntry]
    completed_count: int
    plan_files: list[str]
    #: The last few journal events, oldest first.
    recent: list[Event | UnreadableEvent] = attrs.field(factory=list)
    #: How often each queued or active plan was deferred (absent: never).
    defer_counts: dict[str, int] = attrs.field(factory=dict)
    #: A plan deferred this many times or more is stuck.
    stuck_defers: int = STUCK_DEFERS
    #: Every active plan of the session, whoever holds it, the one pulled longest ago first:
    #: the one list of holds; `active_plan` and its kin are the view of worker `mine`.
    active_plans: list[ActivePlan] = attrs.field(factory=list)
    #: Whose state this is: the worker of the call that read it (`main` for a lone agent).
    mine: Worker = MAIN
    #: One line per plan file that opening moved to recovered/ because it held lines the
    #: database lacks (a plan finished on another machine, say).
    #: It tells of the call, not of the state: two states that differ only here are equal.
    kept: list[str] = attrs.field(factory=list, eq=False)
    #: What opening the session did to the active plan's file, one line each (a resume).
    notices: list[str] = attrs.field(factory=list)
    #: A worker other than `main` takes part (docs/architecture.md, "Workers and leases"): the texts mark stale plans; a
    #: lone agent's texts stay as they are.
    many_workers: bool = attrs.field(default=False, eq=False)

    @property
    def my_hold(self) -> ActivePlan | None:
        """The active plan `mine` holds, if any."""
        return next((hold for hold in self.active_plans if hold.worker == self.mine), None)

    @property
    def active_plan(self) -> Plan | None:
        """The caller's active plan (worker `mine`'s), if it holds one."""
        return None if (hold := self.my_hold) is None else hold.plan

    @property
    def active_plan_path(self) -> str | None:
        """Where the caller's active plan's file is."""
        return None if (hold := self.my_hold) is None else hold.path

    @property
    def pulled_at(self) -> dt.datetime | None:
        """When the caller's active plan was pulled (its current activation)."""
        return None if (hold := self.my_hold) is None else hold.pulled_at

    @property
    def stale_plans(self) -> list[ActivePlan]:
        """The active plans whose lease has lapsed, when the texts are to mark them."""
        return [hold for hold in self.active_plans if hold.stale] if self.many_workers else []

    def defer_count(self, plan_id: str) -> int:
        return self.defer_counts.get(plan_id, 0)

    def stuck(self, plan_id: str) -> bool:
        return is_stuck(self.defer_count(plan_id), self.stuck_defers)

    @property
    def file_db_match(self) -> bool:
        expected = {file_name(entry.id) for entry in self.queue}
        expected |= {file_name(hold.plan.id) for hold in self.active_plans}
        return expected == set(self.plan_files)


@attrs.frozen(kw_only=True)
class SessionSummary:
    """One line of the session list, from the stored state and the journal (no reconcile)."""

    session: Session
    queue_length: int
    completed_count: int
    #: The active plan's id and goal, and when it was pulled (its current activation).
    active_plan_id: PlanId | None = None
    active_goal: str | None = None
    pulled_at: dt.datetime | None = None
    #: How often each queued or active plan was deferred (absent: never).
    defer_counts: dict[str, int] = attrs.field(factory=dict)
    #: When the newest journal event happened: the session's last activity.
    last_activity: dt.datetime | None = None
    #: A plan deferred this many times or more is stuck.
    stuck_defers: int = 3
    #: How many plans are active (one per worker holding one).
    active_count: int = 0
    #: Filed away by a person (`archive_session`): left out of the session lists unless asked.
    archived: bool = False

    @property
    def name(self) -> str:
        return self.session.name

    @property
    def has_active_plan(self) -> bool:
        return self.active_plan_id is not None

    @property
    def stuck_plans(self) -> list[str]:
        """The ids of the queued or active plans deferred `stuck_defers` times or more."""
        return sorted(id_ for id_, count in self.defer_counts.items() if count >= self.stuck_defers)


@attrs.frozen(kw_only=True)
class UnreadableSession:
    """A session the list could not read (a corrupt database, say): listed with its reason,
    never left out."""

    name: str
    #: The one-line reason it cannot be read.
    error: str
    archived: bool = False


@attrs.frozen(kw_only=True)
class SessionListing:
    """The session list: each session shown, by name, and how many archived ones it leaves out."""

    sessions: list[SessionSummary | UnreadableSession]
    #: The archived sessions left out (0 when they were asked for).
    archived_left_out: int = 0


@attrs.frozen(kw_only=True)
class Finished:
    """A plan that just left the active slot, with the session's tally after it."""

    plan: Plan
    tally: Tally
    #: One line saying what had to be salvaged from the agent's plan file, if anything.
    salvage: str | None = None
    #: The plans still active after it, `(plan id, worker)`, oldest id first: while there are
    #: any, an empty queue does not mean the task is complete.
    held: tuple[tuple[str, str], ...] = ()

    @property
    def queue_length(self) -> int:
        return self.tally.queued

    @property
    def next_goal(self) -> str | None:
        return self.tally.next_goal


@attrs.frozen(kw_only=True)
class Completion(Finished):
    """The result of completing a plan: the plan (with its verdicts) and what is left to do:
    the follow-up its unmet criteria became, the criteria it left without a verdict, those
    deleted since its pull (numbered as listed then), and whether the chain's limit turned
    unmet criteria over to a person."""

    follow_up: Plan | None = None
    without: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()
    capped: bool = False

    @property
    def completed_count(self) -> int:
        return self.tally.completed


@attrs.frozen(kw_only=True)
class Discarded(Finished):
    """The result of discarding a plan: the plan and what is left in the queue."""


@attrs.frozen
class HistoryMatch:
    """A completed plan found by a history search; `rank` 1 is the best match."""

    id: PlanId
    goal: str
    outcome: str | None
    rank: int
    #: Where the words matched, each match wrapped in SNIPPET_MARKS.
    snippet: str = ""


#: The marks around a matched word in a snippet; a terminal can render them as it likes.
SNIPPET_MARKS = ("\x02", "\x03")


@attrs.frozen(kw_only=True)
class ValidationReport:
    """The seven invariants of a session and the violations found."""

    single_active_plan: bool
    queue_order_preserved: bool
    files_match_database: bool
    no_orphaned_files: bool
    journal_matches_state: bool = True
    #: No plan was pulled before its prerequisites were settled, each exists, none in a cycle.
    prerequisites_respected: bool = True
    #: Every verdict names a criterion of its plan; unmet criteria have their follow-up.
    verdicts_consistent: bool = True
    issues: list[str]
    #: What is not a violation but worth knowing: on a machine's copy of a shared database,
    #: what the next open renders or moves here.
    notes: list[str] = attrs.field(factory=list)
    #: What to do about a violation that a repair does not fix, one line each.
    advice: list[str] = attrs.field(factory=list)

    @property
    def valid(self) -> bool:
        return (
            self.single_active_plan
            and self.queue_order_preserved
            and self.files_match_database
            and self.no_orphaned_files
            and self.journal_matches_state
            and self.prerequisites_respected
            and self.verdicts_consistent
        )


@attrs.frozen
class Repair:
    """One change reconcile made to bring files back in line with the database."""

    #: "rendered", "removed", "recovered" (a stray file moved aside) or "kept" (a file with
    #: lines the database lacks moved to recovered/ instead of being removed).
    action: str
    file_name: str
    #: Why: a live plan's file rendered because it was "missing" or "empty"; a kept file,
    #: why it was kept ("" for the other actions).
    why: str = ""

    def describe(self) -> str:
        """One line for people and for the journal's `files_repaired` event."""
        if self.action == "recovered":
            return f"moved {self.file_name} to recovered/"
        if self.action == "kept":
            return (
                f"moved {self.file_name} to recovered/: it holds lines the database lacks "
                f"({self.why})"
            )
        return f"{self.action} {self.file_name}"


@attrs.frozen(kw_only=True)
class Board:
    """Everything a session's board shows, read in one snapshot, so no part of it disagrees
    with another (`session_board`)."""

    state: SessionState
    #: Each active plan's working copy (its file, or the stored copy rendered), by plan id.
    files: Mapping[PlanId, str]
    #: The latest completions, newest first: each plan with the event that completed it.
    completed: Sequence[tuple[Plan, Event]]
    #: The latest discards (drops among them), newest first: each plan with its event.
    discarded: Sequence[tuple[Plan, Event]]
    #: The journal's events of the counted kinds per UTC hour, as `hourly_counts` counts them.
    counts: Mapping[tuple[dt.datetime, EventKind], int]
    #: The journal's events the board asked for, oldest first.
    journal: Sequence[Event | UnreadableEvent]
    #: The completed plans with a criterion waiting for a person, the earliest first.
    waiting_for_person: Sequence[Plan] = ()


@attrs.frozen(kw_only=True)
class PlanCopy:
    """A plan as stored and, when it is queued or active, its working copy: the file's text
    (or the stored copy rendered) and the plan as that text holds it; and its neighbours in
    the graph of prerequisites (`plan_in_full`)."""

    plan: Plan
    text: str | None = None
    #: The plan with its file's sections and notes (`plan_revision` of its content is what a
    #: person's edit is checked against).
    written: Plan | None = None
    #: The plans it waits for (its `after`, in the order named) and the plans that name it in
    #: theirs, whatever their status, as stored in the same read view.
    waits_for: tuple[Plan, ...] = ()
    needed_by: tuple[Plan, ...] = ()
