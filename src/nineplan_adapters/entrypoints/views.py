"""The published result shapes (output schemas) and their builders from domain objects.

These TypedDicts are the contract with clients: they change only on purpose, never because
the domain did.
"""

from collections.abc import Mapping, Sequence
from typing import NotRequired

from typing_extensions import TypedDict

from nineplan_adapters.entrypoints.journal_views import (
    EventView,
    UnreadableEventView,
    journal_entry,
)
from nineplan_core.criteria import criteria, plan_verdict
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import Plan, format_timestamp
from nineplan_core.results import (
    AddedPlans,
    Completion,
    Discarded,
    HistoryMatch,
    PlacedPlan,
    SessionListing,
    SessionState,
    SessionSummary,
    UnreadableSession,
    ValidationReport,
)
from nineplan_core.workers import stored_worker


class Told(TypedDict):
    """What every session-scoped success result carries beside its own fields (docs/architecture.md,
    "What the model sees"): the session's name, and each line the text says beyond the fields,
    in the same words. Optional in the schemas (docs/tools.md): a client may meet a server from
    before them; this server's replays by `request_id` rebuild the view, so they carry both."""

    session_name: NotRequired[str]
    notices: NotRequired[list[str]]


class SessionCreated(TypedDict):
    session_name: str
    session_path: str
    #: The project folder the session belongs to (docs/clients.md), or null when none was found.
    workspace: NotRequired[str | None]
    notices: NotRequired[list[str]]


class QueueItem(TypedDict):
    id: str
    goal: str
    queue_position: int
    defer_count: int
    stuck: bool
    #: The plans it waits for that are not settled yet (empty: it is ready).
    waiting_for: NotRequired[list[str]]


class ActivePlan(TypedDict):
    id: str
    goal: str
    file_path: str
    pulled_at: str | None
    defer_count: int
    stuck: bool


class HeldPlan(TypedDict):
    """An active plan of the session, whoever holds it (docs/architecture.md, "Workers and leases")."""

    id: str
    goal: str
    file_path: str
    worker: str
    pulled_at: str | None
    last_seen: str | None
    stale: bool
    defer_count: int
    stuck: bool


class SessionStateView(TypedDict):
    session_name: str
    session_path: str
    task_description: str | None
    workspace: str | None
    queue: list[QueueItem]
    active_plan: ActivePlan | None
    completed_count: int
    recent: list[EventView | UnreadableEventView]
    #: Every active plan, oldest pull first (optional: a result from before workers lacks it).
    active_plans: NotRequired[list[HeldPlan]]
    notices: NotRequired[list[str]]


class AdminState(SessionStateView):
    plan_files: list[str]
    file_db_match: bool


class PlanAdded(Told):
    plan_id: str
    plan_path: str
    queue_position: int
    #: The plans named in `after` that are not settled yet.
    waiting_for: NotRequired[list[str]]


class BatchItem(TypedDict):
    plan_id: str
    key: str | None
    plan_path: str
    queue_position: int
    waiting_for: list[str]


class PlansAdded(Told):
    plans: list[BatchItem]
    queue_length: int


class PrerequisiteView(TypedDict):
    """A plan the pulled plan waited for: its outcome, or (discarded) why it was dropped."""

    id: str
    goal: str
    status: str
    outcome: str | None
    reason: NotRequired[str | None]


class CriterionView(TypedDict):
    n: int
    text: str


class VerdictView(TypedDict):
    n: int
    text: str
    status: str
    evidence: str
    by: str
    note: str | None


class FollowUpView(TypedDict):
    plan_id: str
    goal: str


class PlanPulled(Told):
    plan_id: str
    plan_path: str
    goal: str
    plan_text: str
    worker: NotRequired[str]
    #: The plans it waited for, in the order named, each with what it produced.
    prerequisites: NotRequired[list[PrerequisiteView]]
    #: Its success criteria, numbered: what a complete's verdicts answer.
    criteria: NotRequired[list[CriterionView]]


class PlanDeferred(Told):
    plan_id: str
    queue_position: int


class PlanCompleted(Told):
    plan_id: str
    completed_count: int
    queue_length: int
    next_goal: str | None
    #: The plan its unmet criteria became (null: none was unmet, or the chain's limit).
    follow_up: NotRequired[FollowUpView | None]
    #: Derived from the verdicts: met, partial, needs_person or unchecked.
    verdict: NotRequired[str]


class PlanDiscarded(Told):
    plan_id: str
    queue_length: int


class Match(TypedDict):
    id: str
    goal: str
    outcome: str | None
    relevance_rank: int
    #: The plan's verdict, derived from its verdicts (unchecked: it has none).
    verdict: NotRequired[str]


class SearchResults(Told):
    matches: list[Match]
    #: The words searched for, as given.
    query: NotRequired[str]


class CompletedPlan(Told):
    id: str
    goal: str
    context: str
    inputs: str
    outputs: str
    approach: str
    success_criteria: str
    notes: str
    outcome: str | None
    created_at: str
    completed_at: str | None
    #: Who holds it, when it is active (`9plan_history_get` shows an active plan as last
    #: stored).
    worker: NotRequired[str]
    #: The plans it waits (or waited) for, and the plans that name it in theirs.
    after: NotRequired[list[str]]
    needed_by: NotRequired[list[str]]
    criteria: NotRequired[list[CriterionView]]
    verdicts: NotRequired[list[VerdictView]]
    verdict: NotRequired[str]
    follow_up_of: NotRequired[str | None]
    follow_ups: NotRequired[list[str]]


class Invariants(TypedDict):
    single_active_plan: bool
    queue_order_preserved: bool
    files_match_database: bool
    no_orphaned_files: bool
    journal_matches_state: bool
    prerequisites_respected: bool
    verdicts_consistent: bool


class Validation(Told):
    valid: bool
    invariants: Invariants
    issues: list[str]
    notes: list[str]


class SessionListItem(TypedDict):
    """A session of the list; one that cannot be read has its `error` (one line) and every
    field read from it null."""

    name: str
    created: str | None
    task_description: str | None
    queue_length: int | None
    completed_count: int | None
    has_active_plan: bool | None
    workspace: str | None
    archived: bool
    error: str | None
    active_count: NotRequired[int]


class SessionList(TypedDict):
    sessions: list[SessionListItem]
    #: The archived sessions the list leaves out.
    archived_left_out: int
    #: The calling client's current session (what its breadcrumb names), if it has one.
    current_session: NotRequired[str | None]


def session_created(state: SessionState) -> SessionCreated:
    return {
        "session_name": state.session.name,
        "session_path": state.path,
        "workspace": state.session.workspace,
    }


def session_state(state: SessionState) -> SessionStateView:
    active = state.active_plan
    return {
        "session_name": state.session.name,
        "session_path": state.path,
        "task_description": state.session.task_description,
        "workspace": state.session.workspace,
        "queue": [
            {
                "id": e.id,
                "goal": e.goal,
                "queue_position": e.rank,
                "defer_count": state.defer_count(e.id),
                "stuck": state.stuck(e.id),
                "waiting_for": list(e.waiting_for),
            }
            for e in state.queue
        ],
        "active_plan": (
            {
                "id": active.id,
                "goal": active.goal,
                "file_path": state.active_plan_path or "",
                "pulled_at": format_timestamp(state.pulled_at) if state.pulled_at else None,
                "defer_count": state.defer_count(active.id),
                "stuck": state.stuck(active.id),
            }
            if active
            else None
        ),
        "completed_count": state.completed_count,
        "recent": [journal_entry(event) for event in state.recent],
        "active_plans": [
            {
                "id": hold.plan.id,
                "goal": hold.plan.goal,
                "file_path": hold.path,
                "worker": hold.worker,
                "pulled_at": format_timestamp(hold.pulled_at) if hold.pulled_at else None,
                "last_seen": (
                    format_timestamp(hold.plan.last_seen) if hold.plan.last_seen else None
                ),
                "stale": hold.stale,
                "defer_count": state.defer_count(hold.plan.id),
                "stuck": state.stuck(hold.plan.id),
            }
            for hold in state.active_plans
        ],
    }


def admin_state(state: SessionState) -> AdminState:
    return {
        **session_state(state),
        "plan_files": state.plan_files,
        "file_db_match": state.file_db_match,
    }


def plan_added(placed: PlacedPlan) -> PlanAdded:
    return {
        "plan_id": placed.plan.id,
        "plan_path": placed.path,
        "queue_position": placed.rank or 0,
        "waiting_for": list(placed.waiting_for),
    }


def plans_added(added: AddedPlans) -> PlansAdded:
    return {
        "plans": [
            {
                "plan_id": entry.plan.id,
                "key": entry.key,
                "plan_path": entry.path,
                "queue_position": entry.rank,
                "waiting_for": list(entry.waiting_for),
            }
            for entry in added.plans
        ],
        "queue_length": added.queue_length,
    }


def plan_pulled(placed: PlacedPlan) -> PlanPulled:
    return {
        "plan_id": placed.plan.id,
        "plan_path": placed.path,
        "goal": placed.plan.goal,
        "plan_text": placed.text or "",
        "worker": stored_worker(placed.plan.worker),
        "criteria": criteria_view(placed.plan),
        "prerequisites": [
            {
                "id": named.id,
                "goal": named.goal,
                "status": named.status.value,
                "outcome": named.outcome,
                "reason": named.reason,
            }
            for named in placed.prerequisites
        ],
    }


def plan_deferred(placed: PlacedPlan) -> PlanDeferred:
    return {"plan_id": placed.plan.id, "queue_position": placed.rank or 0}


def plan_completed(completion: Completion) -> PlanCompleted:
    """A completion; with verdicts, its follow-up and derived verdict too (a complete without
    verdicts has the fields it always had)."""
    view: PlanCompleted = {
        "plan_id": completion.plan.id,
        "completed_count": completion.completed_count,
        "queue_length": completion.queue_length,
        "next_goal": completion.next_goal,
    }
    if completion.plan.verdicts:
        follow_up = completion.follow_up
        view["follow_up"] = {"plan_id": follow_up.id, "goal": follow_up.goal} if follow_up else None
        view["verdict"] = verdict_of(completion.plan)
    return view


def criteria_view(plan: Plan) -> list[CriterionView]:
    """A plan's success criteria, numbered as verdicts name them."""
    return [{"n": item.n, "text": item.text} for item in criteria(plan.content.success_criteria)]


def verdict_of(plan: Plan) -> str:
    """A plan's verdict, derived from its verdicts on its criteria."""
    return plan_verdict(criteria(plan.content.success_criteria), plan.verdicts).value


def plan_discarded(discarded: Discarded) -> PlanDiscarded:
    return {"plan_id": discarded.plan.id, "queue_length": discarded.queue_length}


def search_results(
    matches: list[HistoryMatch], query: str, plans: Mapping[str, Plan] | None = None
) -> SearchResults:
    """Search matches, each with its plan's verdict when `plans` has the plan."""
    found: list[Match] = []
    for m in matches:
        match: Match = {"id": m.id, "goal": m.goal, "outcome": m.outcome, "relevance_rank": m.rank}
        if plans is not None and (plan := plans.get(m.id)) is not None:
            match["verdict"] = verdict_of(plan)
        found.append(match)
    return {"matches": found, "query": query}


def completed_plan(plan: Plan) -> CompletedPlan:
    content = plan.content
    return {
        "id": plan.id,
        "goal": content.goal,
        "context": content.context,
        "inputs": content.inputs,
        "outputs": content.outputs,
        "approach": content.approach,
        "success_criteria": content.success_criteria,
        "notes": plan.notes,
        "outcome": plan.outcome,
        "created_at": format_timestamp(plan.created_at),
        "completed_at": format_timestamp(plan.completed_at) if plan.completed_at else None,
    }


def whole_plan(plan: Plan, needed_by: Sequence[str] = ()) -> CompletedPlan:
    """A plan as `9plan_history_get` shows it: completed, or active with its worker; what it
    waited for and what waits for it."""
    view = completed_plan(plan)
    if plan.hold is not None:
        view["worker"] = plan.hold.worker
    view["after"] = list(plan.after)
    view["needed_by"] = list(needed_by)
    view["criteria"] = criteria_view(plan)
    view["verdicts"] = [
        {
            "n": v.n,
            "text": v.text,
            "status": v.status.value,
            "evidence": v.evidence,
            "by": v.by,
            "note": v.note,
        }
        for v in plan.verdicts
    ]
    if plan.status is PlanStatus.COMPLETED:
        view["verdict"] = verdict_of(plan)
    view["follow_up_of"] = plan.follow_up_of
    view["follow_ups"] = list(plan.follow_ups)
    return view


def validation(report: ValidationReport) -> Validation:
    return {
        "valid": report.valid,
        "invariants": {
            "single_active_plan": report.single_active_plan,
            "queue_order_preserved": report.queue_order_preserved,
            "files_match_database": report.files_match_database,
            "no_orphaned_files": report.no_orphaned_files,
            "journal_matches_state": report.journal_matches_state,
            "prerequisites_respected": report.prerequisites_respected,
            "verdicts_consistent": report.verdicts_consistent,
        },
        "issues": report.issues,
        "notes": report.notes,
    }


def session_list(listing: SessionListing) -> SessionList:
    return {
        "sessions": [session_item(entry) for entry in listing.sessions],
        "archived_left_out": listing.archived_left_out,
    }


def session_item(entry: SessionSummary | UnreadableSession) -> SessionListItem:
    if isinstance(entry, UnreadableSession):
        return {
            "name": entry.name,
            "created": None,
            "task_description": None,
            "queue_length": None,
            "completed_count": None,
            "has_active_plan": None,
            "workspace": None,
            "archived": entry.archived,
            "error": entry.error,
        }
    return {
        "name": entry.session.name,
        "created": format_timestamp(entry.session.created_at),
        "task_description": entry.session.task_description,
        "queue_length": entry.queue_length,
        "completed_count": entry.completed_count,
        "has_active_plan": entry.has_active_plan,
        "workspace": entry.session.workspace,
        "archived": entry.archived,
        "error": None,
        "active_count": entry.active_count,
    }
