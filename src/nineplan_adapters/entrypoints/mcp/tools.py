"""The thirteen 9plan tools: each resolves its session, calls one use case, returns text + view.

Each tool is a plain function of its arguments and `ctx`; `TOOLS` is the table that names,
describes and registers them, each behind the one error translation. A text that names a tool
is a template (`{queue_pull}`) filled with the server's tool names (entrypoints.tool_names)."""

import datetime as dt
import functools
from typing import Annotated, Any, Literal

import attrs
from mcp.server.mcpserver.tools import Tool as SdkTool
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from nineplan_adapters.entrypoints import views
from nineplan_adapters.entrypoints.mcp import render
from nineplan_adapters.entrypoints.mcp.results import (
    ToolCall,
    ToolContext,
    ToolFunction,
    domain_errors_as_results,
)
from nineplan_adapters.entrypoints.mcp.roots import session_workspace
from nineplan_adapters.entrypoints.mcp.uris import plan_link
from nineplan_adapters.entrypoints.text import one_line, stale_line, take_over_hint
from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES, ToolNames
from nineplan_core.criteria import criteria, numbered
from nineplan_core.errors import still_active
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.results import Completion, Finished, PlacedPlan, SessionState
from nineplan_core.workers import stored_worker

SessionArg = Annotated[str | None, Field(description="Instead of the current session")]
RequestArg = Annotated[
    str | None,
    Field(description="Retry key: a repeat returns the first result", min_length=1, max_length=128),
]
NotesArg = Annotated[str | None, Field(description="Appended to the plan's Notes")]
#: The shapes of a worker name and a plan id, as the arguments' schemas check them.
WORKER_PATTERN = "^[a-z0-9][a-z0-9._-]*$"
PLAN_ID_PATTERN = "^[0-9a-z]{5}$"
WorkerArg = Annotated[
    str | None,
    Field(
        description="Your name among agents (default main)",
        pattern=WORKER_PATTERN,
        max_length=40,
    ),
]
HeldArg = Annotated[
    str | None,
    Field(description="The plan you finish (checked)", pattern=PLAN_ID_PATTERN),
]
AfterArg = Annotated[
    list[str] | None,
    Field(description="Plan ids to complete or discard first", max_length=20),
]
#: One plan of `queue_add_many`, as tools/list shows it (the use case checks every field and
#: names the item: `plans[2].goal`).
PLAN_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{name: {"type": "string"} for name in ("context", "goal", "approach")},
        "success_criteria": {"type": "string"},
        "inputs": {"type": "string"},
        "outputs": {"type": "string"},
        "key": {"type": "string", "description": "Names it in later items' after"},
        "after": {"type": "array", "items": {"type": "string"}, "description": "Ids or keys"},
    },
    "required": ["context", "goal", "approach", "success_criteria"],
}
PlansArg = Annotated[
    list[dict[str, Any]],
    Field(description="1-50 plans, in order", json_schema_extra={"items": PLAN_ITEM}),
]
#: One verdict of `plan_complete`, as tools/list shows it (the use case checks each and names
#: it: `verdicts[1]`).
VERDICT_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "criterion": {"type": "integer"},
        "status": {"enum": ["met", "unmet", "needs_person"]},
        "evidence": {"type": "string"},
    },
    "required": ["criterion", "status", "evidence"],
}
VerdictsArg = Annotated[
    list[dict[str, Any]] | None,
    Field(description="One per numbered criterion", json_schema_extra={"items": VERDICT_ITEM}),
]
TakeOverArg = Annotated[
    str | None,
    Field(description="A stale plan's id: take it over", pattern=PLAN_ID_PATTERN),
]


def _unlisted_default(schema: dict[str, Any]) -> None:
    """Leaves the default out of tools/list where the tool's description says it already."""
    schema.pop("default", None)


#: `back` is the default: both tools that take a position say "back (default)" in their text.
PositionArg = Annotated[
    Literal["front", "back"],
    Field(description="front = next to pull; back = last", json_schema_extra=_unlisted_default),
]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)
# Resume may repair plan files on a session's first open in a process: not read-only.
RESUME = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


#: What a session created without a workspace tells the agent: over HTTP a client of the
#: 2026-07-28 protocol gives the server no way to ask for its folder (docs/clients.md).
NO_WORKSPACE = (
    "No project folder is recorded for it, so a hook cannot find it after compaction: if you "
    'work in one, create the session with {session_create}(workspace="/absolute/path").'
)


def _salvaged(salvage: str | None) -> list[str]:
    """The line saying what was salvaged from the plan file, if any, as a notice."""
    return [salvage] if salvage else []


def _next(names: ToolNames, goal: str | None, empty: str, queued: int = 0) -> str:
    """What to do next: pull `goal` (the first ready plan); with `queued` plans and none
    ready, wait for what they wait for; or (the queue is empty) `empty`, a template."""
    if goal:
        return f"Next: {one_line(goal)} ({names['queue_pull']})."
    if queued:
        return (
            f"{queued} plan(s) are queued, all waiting for plans still active: pull again once "
            "those are completed or discarded."
        )
    return names.fill(empty)


def _empty(finished: Finished, otherwise: str) -> str:
    """What an empty queue after a finish means: `otherwise` (a template) once nothing is
    active either; while other workers hold plans, which (the task is not complete)."""
    return still_active(finished.held) if finished.held else otherwise


def stuck_text(plan_id: str, defer_count: int, names: ToolNames) -> str:
    """What a pull says about a plan deferred again and again."""
    return f"Plan {plan_id} has been deferred {defer_count} times: it may be stuck. " + names.fill(
        "Consider splitting it (add smaller plans at the front with {queue_add}, then discard "
        "this one with {plan_discard}), or record in its notes what blocks it."
    )


def state_notices(state: SessionState, now: dt.datetime, names: ToolNames) -> list[str]:
    """What a state's text says beyond its fields: the stale plans, what opening the session
    repaired or kept, and what to do next."""
    others = [
        (hold.plan.id, hold.worker) for hold in state.active_plans if hold.worker != state.mine
    ]
    follow = (
        "Continue the active plan."
        if state.active_plan
        else "Pull the next plan with {queue_pull}."
    )
    if not state.queue and not state.active_plan:
        follow = (
            still_active(others) if others else "The queue is empty: add plans with {queue_add}."
        )
    return [*stale_lines(state, now), *state.notices, *state.kept, names.fill(follow)]


def state_text(
    state: SessionState, verb: str, now: dt.datetime, names: ToolNames = DEFAULT_NAMES
) -> str:
    """A session's state as the resume prompt shows it: the fields as the tools render them,
    then the notices."""
    return "\n".join(
        [render.state(views.session_state(state), verb), *state_notices(state, now, names)]
    )


def stale_lines(state: SessionState, now: dt.datetime) -> list[str]:
    """One line per stale plan, once a worker other than `main` takes part (else none)."""
    return [
        _stale(hold.plan.id, hold.worker, hold.plan.last_seen, now) for hold in state.stale_plans
    ]


def _stale(plan_id: str, worker: str, last_seen: dt.datetime | None, now: dt.datetime) -> str:
    """A stale plan's line, with the agent's way to act on it: `take_over`."""
    return stale_line(plan_id, worker, last_seen, now, then=take_over_hint(plan_id))


def _reminded(reminder: str | None) -> list[str]:
    """The calling worker's active-plan line, when it holds a plan, as a notice."""
    return [reminder] if reminder else []


# -- the tools ---------------------------------------------------------------------


async def session_create(
    ctx: ToolContext,
    task_description: Annotated[str | None, Field(description="The overall task")] = None,
    request_id: RequestArg = None,
    workspace: Annotated[
        str | None, Field(description="Your project folder, if the server cannot know it")
    ] = None,
) -> Annotated[CallToolResult, views.SessionCreated]:
    """Start a session (a three-word name) and make it current. Save the name: it resumes the work
    after compaction. Next: {queue_add}."""
    call = ToolCall.of(ctx, request_id=request_id)
    state = await call.service.create_session(
        task_description,
        caller=call.caller,
        workspace=await session_workspace(ctx, call.deps.workspace, workspace),
    )
    call.make_current(state.session.name)
    return call.succeed(
        render.session_created,
        views.session_created(state),
        [
            call.fill("Remember this name. Next: add plans with {queue_add}, then {queue_pull}."),
            *([] if state.session.workspace else [call.fill(NO_WORKSPACE)]),
        ],
        label=state.session.name,
    )


async def session_resume(
    ctx: ToolContext,
    session_name: Annotated[str, Field(description="e.g. brave-quiet-otter")],
    worker: WorkerArg = None,
) -> Annotated[CallToolResult, views.SessionStateView]:
    """Resume a session by name and make it current: its queue, active plan and counts. Use after
    a new conversation or compaction."""
    call = ToolCall.of(ctx, session_name, worker=worker)
    state = await call.service.resume_session(call.session, caller=call.caller)
    call.make_current(state.session.name)
    active = state.active_plan
    return call.succeed(
        render.RENDERERS["session_resume"],
        views.session_state(state),
        state_notices(state, call.service.clock(), call.names),
        extra=[plan_link(state.session.name, active.id, active.goal)] if active else [],
    )


async def queue_add(
    ctx: ToolContext,
    context: Annotated[str, Field(description="Where it fits in the task")],
    goal: Annotated[str, Field(description="What it achieves")],
    approach: Annotated[str, Field(description="Concrete steps")],
    success_criteria: Annotated[str, Field(description="Observable end conditions")],
    inputs: Annotated[str | None, Field(description="Needed from other plans")] = None,
    outputs: Annotated[str | None, Field(description="What it produces")] = None,
    position: PositionArg = "back",
    after: AfterArg = None,
    session_name: SessionArg = None,
    request_id: RequestArg = None,
    worker: WorkerArg = None,
) -> Annotated[CallToolResult, views.PlanAdded]:
    """Queue a self-contained plan: front for blocking work, back (default) for later. A, B, C
    added at front give C, B, A. With after, it is pulled only once those plans are done."""
    call = ToolCall.of(ctx, session_name, worker=worker, request_id=request_id)
    placed = await call.service.add_plan(
        call.session,
        context=context,
        goal=goal,
        approach=approach,
        success_criteria=success_criteria,
        inputs=inputs or "",
        outputs=outputs or "",
        position=position,
        caller=call.caller,
        after=after,
    )
    return call.succeed(
        render.plan_added,
        views.plan_added(placed),
        [
            *_salvaged(placed.salvage),
            *_reminded(await call.service.reminder(call.session, caller=call.caller)),
        ],
    )


async def queue_add_many(
    ctx: ToolContext,
    plans: PlansArg,
    position: PositionArg = "back",
    session_name: SessionArg = None,
    request_id: RequestArg = None,
    worker: WorkerArg = None,
) -> Annotated[CallToolResult, views.PlansAdded]:
    """Queue a task's plans in one call, in the given order: front gives A, B, C first, back
    (default) last. An item's after names plan ids or earlier items' keys. One bad item adds
    nothing."""
    call = ToolCall.of(ctx, session_name, worker=worker, request_id=request_id)
    added = await call.service.add_plans(call.session, plans, position=position, caller=call.caller)
    return call.succeed(
        render.plans_added,
        views.plans_added(added),
        _reminded(await call.service.reminder(call.session, caller=call.caller)),
    )


def handed_over(placed: PlacedPlan, names: ToolNames) -> list[str]:
    """What a pull says of the plans the pulled plan waited for: each outcome (cut at
    OUTCOME_CHARS, with where to read it whole), or why it was discarded."""
    lines = []
    for named in placed.prerequisites:
        if named.status is PlanStatus.DISCARDED:
            lines.append(
                f"Plan {named.id}, which this plan waited for, was discarded: {named.reason or ''}".rstrip(
                    ": "
                )
            )
        elif named.outcome is not None:
            outcome = named.outcome
            if len(outcome) > OUTCOME_CHARS:
                whole = names.fill('{history_get}(plan_id="' + named.id + '")')
                outcome = outcome[:OUTCOME_CHARS] + f"... (cut; {whole} has it whole)"
            lines.append(
                f"Outcome of plan {named.id} ({one_line(named.goal)}), which this plan waited for: {outcome}"
            )
    return lines


#: A prerequisite's outcome in a pull's text is cut after this many characters.
OUTCOME_CHARS = 1000


async def queue_pull(
    ctx: ToolContext,
    session_name: SessionArg = None,
    request_id: RequestArg = None,
    worker: WorkerArg = None,
    take_over: TakeOverArg = None,
) -> Annotated[CallToolResult, views.PlanPulled]:
    """Make the next ready plan active (one waiting for others is passed over); returns its text
    and file. Do the work, keep notes in the file or pass notes, then complete, defer or discard
    it."""
    call = ToolCall.of(ctx, session_name, worker=worker, request_id=request_id)
    placed = await call.service.pull_plan(call.session, caller=call.caller, take_over=take_over)
    if call.deps.leases is not None:  # its file's edits renew the worker's lease
        held_by = stored_worker(placed.plan.worker)
        # A pull from the queue leaves its text in the file; a take-over leaves the file as
        # it was (its text is a decoding of it), so the watch reads where it starts.
        known = None if placed.taken_from else placed.text
        call.deps.leases.follow(call.session, held_by, placed.plan.id, placed.path, known)
    took = placed.taken_from
    notices = [f"Took over plan {placed.plan.id} from worker {took}."] if took else []
    notices += handed_over(placed, call.names)
    if listed := numbered(criteria(placed.plan.content.success_criteria)):
        notices.append(listed)
    notices.append("Keep notes in its # Notes section (or pass notes when you finish).")
    if placed.stuck:
        notices.append(stuck_text(placed.plan.id, placed.defer_count, call.names))
    # The plans beside it whose workers went silent (a lone agent's pull has none).
    now = call.service.clock()
    notices += [
        _stale(other.id, stored_worker(other.worker), other.last_seen, now)
        for other in placed.stale_beside
    ]
    return call.succeed(
        render.plan_pulled,
        views.plan_pulled(placed),
        [*notices, *_salvaged(placed.salvage)],
        extra=[plan_link(call.session, placed.plan.id, placed.plan.goal)],
    )


async def plan_defer(
    ctx: ToolContext,
    reason: Annotated[str, Field(description="Why")],
    position: PositionArg = "back",
    notes: NotesArg = None,
    session_name: SessionArg = None,
    request_id: RequestArg = None,
    worker: WorkerArg = None,
    plan_id: HeldArg = None,
) -> Annotated[CallToolResult, views.PlanDeferred]:
    """Return the active plan to the queue with a reason: front when blocked, back (default) after
    splitting it. File edits are kept."""
    call = ToolCall.of(ctx, session_name, worker=worker, request_id=request_id)
    placed = await call.service.defer_plan(
        call.session, reason, position, notes=notes, caller=call.caller, plan_id=plan_id
    )
    return call.succeed(
        render.plan_deferred, views.plan_deferred(placed), _salvaged(placed.salvage)
    )


async def plan_complete(
    ctx: ToolContext,
    outcome: Annotated[str, Field(description="Summary with the outputs produced")],
    verdicts: VerdictsArg = None,
    notes: NotesArg = None,
    session_name: SessionArg = None,
    request_id: RequestArg = None,
    worker: WorkerArg = None,
    plan_id: HeldArg = None,
) -> Annotated[CallToolResult, views.PlanCompleted]:
    """Finish the active plan. The outcome (what was produced, where) and notes become searchable
    history; verdicts answer each numbered criterion with evidence (unmet ones become the next
    plan). Returns what remains."""
    call = ToolCall.of(ctx, session_name, worker=worker, request_id=request_id)
    done = await call.service.complete_plan(
        call.session, outcome, notes=notes, caller=call.caller, plan_id=plan_id, verdicts=verdicts
    )
    follow = _next(
        call.names,
        done.next_goal,
        _empty(done, "The queue is empty. Task complete!"),
        done.queue_length,
    )
    said = judged(done, call.service.verdict_policy, call.names)
    return call.succeed(
        render.plan_completed,
        views.plan_completed(done),
        [*said, follow, *_salvaged(done.salvage)],
    )


def judged(done: Completion, policy: str, names: ToolNames) -> list[str]:
    """What a completion says of its verdicts: the follow-up its unmet criteria became (or
    the chain's limit), criteria deleted since the pull, and, under `ask`, the criteria left
    without a verdict."""
    plan, lines = done.plan, []
    if done.follow_up is not None:
        lines.append(
            f"Unmet criteria of {plan.id} became plan {done.follow_up.id} at the front of the "
            f"queue: {one_line(done.follow_up.goal)}"
        )
    if done.capped:
        waiting = [str(v.n) for v in plan.verdicts if v.status.value == "needs_person"]
        lines.append(
            f"Plan {plan.id} ends a chain of follow-ups: criteria {', '.join(waiting)} now wait "
            "for a person (the board's Needs you list, or nineplan verdict)."
        )
    if done.missing and policy != "off":
        listed = ", ".join(map(str, done.missing))
        lines.append(
            f"Criteria {listed} as listed at the pull are gone from the plan: they count as "
            "without a verdict."
        )
    if done.without and policy == "ask":
        numbers = ", ".join(map(str, done.without))
        lines.append(
            f"No verdict on criteria {numbers} of {plan.id}: answer each numbered criterion "
            + names.fill(
                "in {plan_complete}'s verdicts (met, unmet or needs_person, with evidence)."
            )
        )
    return lines


async def plan_discard(
    ctx: ToolContext,
    reason: Annotated[str, Field(description="Why")],
    notes: NotesArg = None,
    session_name: SessionArg = None,
    request_id: RequestArg = None,
    worker: WorkerArg = None,
    plan_id: HeldArg = None,
) -> Annotated[CallToolResult, views.PlanDiscarded]:
    """Abandon the active plan (obsolete or misconceived); it is never searchable. Prefer
    {plan_defer} if the work is still needed."""
    call = ToolCall.of(ctx, session_name, worker=worker, request_id=request_id)
    gone = await call.service.discard_plan(
        call.session, reason, notes=notes, caller=call.caller, plan_id=plan_id
    )
    empty = _empty(gone, "The queue is empty: add plans with {queue_add}.")
    follow = _next(call.names, gone.next_goal, empty, gone.queue_length)
    return call.succeed(
        render.plan_discarded, views.plan_discarded(gone), [follow, *_salvaged(gone.salvage)]
    )


async def history_search(
    ctx: ToolContext,
    query: Annotated[str, Field(description="Words to find")],
    max_results: Annotated[int, Field(description="1-100", strict=True)] = 10,
    session_name: SessionArg = None,
    worker: WorkerArg = None,
) -> Annotated[CallToolResult, views.SearchResults]:
    """Search completed plans (all sections, outcome, notes) by words, best first, to find what
    earlier plans produced. Plain text, any language."""
    call = ToolCall.of(ctx, session_name, worker=worker)
    matches = await call.service.search_history(call.session, query, max_results)
    found = await call.service.get_plans(call.session, [match.id for match in matches])
    return call.succeed(
        render.search_results,
        views.search_results(matches, query, found),
        _reminded(await call.service.reminder(call.session, caller=call.caller)),
    )


async def history_get(
    ctx: ToolContext,
    plan_id: Annotated[str, Field(description="5 characters, e.g. a3x9k")],
    session_name: SessionArg = None,
    worker: WorkerArg = None,
) -> Annotated[CallToolResult, views.CompletedPlan]:
    """A completed plan in full by id: all sections, notes, outcome, times (an active one as
    last stored)."""
    call = ToolCall.of(ctx, session_name, worker=worker)
    plan = await call.service.get_history(call.session, plan_id)
    return call.succeed(
        render.whole_plan,
        views.whole_plan(plan, await call.service.needed_by(call.session, plan.id)),
        _reminded(await call.service.reminder(call.session, caller=call.caller)),
    )


async def admin_validate(
    ctx: ToolContext, session_name: SessionArg = None
) -> Annotated[CallToolResult, views.Validation]:
    """Check the session's invariants (one active plan per worker, distinct queue positions, a
    readable file per live plan, no stray files, a journal that replays to the state). Reports
    only."""
    call = ToolCall.of(ctx, session_name)
    report = await call.service.validate_session(call.session)
    return call.succeed(
        render.validation, views.validation(report), [f"Advice: {x}" for x in report.advice]
    )


async def admin_sessions(ctx: ToolContext) -> Annotated[CallToolResult, views.SessionList]:
    """Every session with its task, queue length, completed count and whether a plan is active:
    find one to resume. A session that cannot be read is listed with its error; archived
    sessions are left out (counted)."""
    call = ToolCall.of(ctx)
    view = views.session_list(await call.service.catalogue())
    view["current_session"] = call.current
    return call.succeed(render.session_list, view, scoped=False)


async def admin_state(
    ctx: ToolContext, session_name: SessionArg = None, worker: WorkerArg = None
) -> Annotated[CallToolResult, views.AdminState]:
    """The session's queue, active plan, counts, plan files on disk and whether they match the
    database. Changes nothing but a named worker's lease (renewed)."""
    call = ToolCall.of(ctx, session_name, worker=worker)
    state = await call.service.session_state(call.session, caller=call.caller)
    return call.succeed(
        render.admin_state,
        views.admin_state(state),
        state_notices(state, call.service.clock(), call.names),
    )


# -- the table ---------------------------------------------------------------------


@attrs.frozen
class Tool:
    """One row of the tool table: the function, its name's own part (`queue_pull`), and how
    tools/list presents it. The description an agent reads is the function's docstring, on
    one line, naming the tools as the server's names do."""

    function: ToolFunction
    short_name: str
    title: str
    annotations: ToolAnnotations

    def description(self, names: ToolNames) -> str:
        return names.fill(" ".join((self.function.__doc__ or "").split()))


TOOLS: tuple[Tool, ...] = (
    Tool(session_create, "session_create", "Create session", WRITE),
    Tool(session_resume, "session_resume", "Resume session", RESUME),
    Tool(queue_add, "queue_add", "Add plan", WRITE),
    Tool(queue_add_many, "queue_add_many", "Add plans", WRITE),
    Tool(queue_pull, "queue_pull", "Pull next plan", WRITE),
    Tool(plan_defer, "plan_defer", "Defer plan", WRITE),
    Tool(plan_complete, "plan_complete", "Complete plan", WRITE),
    Tool(plan_discard, "plan_discard", "Discard plan", DESTRUCTIVE),
    Tool(history_search, "history_search", "Search history", READ_ONLY),
    Tool(history_get, "history_get", "Get completed plan", READ_ONLY),
    Tool(admin_validate, "admin_validate", "Validate session", READ_ONLY),
    Tool(admin_sessions, "admin_sessions", "List sessions", READ_ONLY),
    # Read-only although a named worker's call renews its lease: bookkeeping the caller did not
    # ask for (docs/tools.md says so).
    Tool(admin_state, "admin_state", "Session state", READ_ONLY),
)


@functools.cache
def built_tools(names: ToolNames = DEFAULT_NAMES) -> tuple[SdkTool, ...]:
    """Every tool of `TOOLS` under `names`, each behind the one error translation, as the
    SDK's tool objects: built once per process and names (the SDK derives each tool's
    argument model and schemas from its signature, some 10 ms a tool), then shared by every
    server built (they hold no state of their own)."""
    return tuple(
        SdkTool.from_function(
            domain_errors_as_results(names[tool.short_name], tool.function),
            name=names[tool.short_name],
            title=tool.title,
            description=tool.description(names),
            annotations=tool.annotations,
        )
        for tool in TOOLS
    )
