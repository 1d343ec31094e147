"""The twelve 9plan tools: each resolves its session, calls one use case, returns text + view."""

import datetime as dt
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from nineplan_adapters.formatting import indented, one_line
from nineplan_adapters.journal_views import event_line
from nineplan_adapters.mcp import views
from nineplan_adapters.mcp.clients import CurrentSessions
from nineplan_adapters.mcp.results import ToolCall
from nineplan_adapters.mcp.uris import plan_link
from nineplan_core.journal import reminder_line, stuck_text
from nineplan_core.model import SessionState
from nineplan_core.service import NinePlan

SessionArg = Annotated[str | None, Field(description="Instead of the current session")]
RequestArg = Annotated[
    str | None,
    Field(description="Retry key: a repeat returns the first result", min_length=1, max_length=128),
]
NotesArg = Annotated[str | None, Field(description="Appended to the plan's Notes")]
PositionArg = Annotated[
    Literal["front", "back"], Field(description="front = next to pull; back = last")
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


def _with_salvage(text: str, salvage: str | None) -> str:
    """A result's text, with the line saying what was salvaged from the plan file, if any."""
    return f"{text}\n{salvage}" if salvage else text


QUEUE_LINES = 20  # the text shows this many queued plans; structured content has them all


def _next(goal: str | None, empty: str) -> str:
    return f"Next: {one_line(goal)} (9plan_queue_pull)." if goal else empty


def _queue_lines(state: SessionState) -> str:
    lines = [
        f"  {entry.rank}. {entry.id} {one_line(entry.goal)}{_stuck_mark(state, entry.id)}"
        for entry in state.queue[:QUEUE_LINES]
    ]
    if len(state.queue) > QUEUE_LINES:
        lines.append(f"  ... and {len(state.queue) - QUEUE_LINES} more")
    return "\n".join(lines) or "  (empty)"


def _stuck_mark(state: SessionState, plan_id: str) -> str:
    count = state.defer_count(plan_id)
    return f" (deferred {count} times: stuck)" if state.stuck(plan_id) else ""


def state_text(state: SessionState, verb: str, now: dt.datetime) -> str:
    active = state.active_plan
    active_line = (
        f"{reminder_line(active.id, active.goal, state.pulled_at, now)}"
        f"{_stuck_mark(state, active.id)}\nFile: {state.active_plan_path}"
        if active
        else "Active plan: none"
    )
    recent = "\n".join(f"  {event_line(event)}" for event in state.recent)
    follow = "Continue the active plan." if active else "Pull the next plan with 9plan_queue_pull."
    if not state.queue and not active:
        follow = "The queue is empty: add plans with 9plan_queue_add."
    workspace = f"Workspace: {state.session.workspace}\n" if state.session.workspace else ""
    return (
        f"{verb} session {state.session.name}.\nPath: {state.path}\n{workspace}"
        f"Task: {one_line(state.session.task_description) or '(none)'}\n{active_line}\n"
        f"Queue ({len(state.queue)}):\n{_queue_lines(state)}\n"
        f"Completed: {state.completed_count}\nRecent events (oldest first):\n{recent or '  (none)'}\n"
        f"{follow}"
    )


def _with_reminder(text: str, reminder: str | None) -> str:
    """The result text, and the active-plan line when a plan is active."""
    return f"{text}\n{reminder}" if reminder else text


def register_tools(  # noqa: PLR0915 - one closure per tool
    server: MCPServer,
    service: NinePlan,
    sessions: CurrentSessions,
    *,
    workspace: str | None = None,
) -> None:
    """Add the twelve tools to `server`; sessions it creates record `workspace` (§9)."""

    def start(tool: str, ctx: Context, explicit: str | None) -> ToolCall:
        return ToolCall(tool, explicit, ctx.headers, sessions)

    @server.tool(
        name="9plan_session_create",
        title="Create session",
        description="Start a session (a three-word name) and make it current. Save the name: it "
        "resumes the work after compaction. Next: 9plan_queue_add.",
        annotations=WRITE,
    )
    async def session_create(
        ctx: Context,
        task_description: Annotated[str | None, Field(description="The overall task")] = None,
        request_id: RequestArg = None,
    ) -> Annotated[CallToolResult, views.SessionCreated]:
        async with (call := start("9plan_session_create", ctx, None)):
            state = await service.create_session(
                task_description, request_id=request_id, workspace=workspace
            )
            call.make_current(state.session.name)
            call.succeed(
                f"Created session {state.session.name}.\nPath: {state.path}\n"
                "Remember this name. Next: add plans with 9plan_queue_add, then 9plan_queue_pull.",
                views.session_created(state),
                label=state.session.name,
            )
        return call.outcome

    @server.tool(
        name="9plan_session_resume",
        title="Resume session",
        description="Resume a session by name and make it current: its queue, active plan and "
        "counts. Use after a new conversation or compaction.",
        annotations=RESUME,
    )
    async def session_resume(
        ctx: Context, session_name: Annotated[str, Field(description="e.g. brave-quiet-otter")]
    ) -> Annotated[CallToolResult, views.SessionStateView]:
        async with (call := start("9plan_session_resume", ctx, session_name)):
            state = await service.resume_session(call.session)
            call.make_current(state.session.name)
            active = state.active_plan
            call.succeed(
                state_text(state, "Resumed", service.clock()),
                views.session_state(state),
                extra=[plan_link(state.session.name, active.id, active.goal)] if active else [],
            )
        return call.outcome

    @server.tool(
        name="9plan_queue_add",
        title="Add plan",
        description="Queue a self-contained plan: front for blocking work, back (default) for "
        "later. A, B, C added at front give C, B, A.",
        annotations=WRITE,
    )
    async def queue_add(
        ctx: Context,
        context: Annotated[str, Field(description="Where it fits in the task")],
        goal: Annotated[str, Field(description="What it achieves")],
        approach: Annotated[str, Field(description="Concrete steps")],
        success_criteria: Annotated[str, Field(description="Observable end conditions")],
        inputs: Annotated[str | None, Field(description="Needed from other plans")] = None,
        outputs: Annotated[str | None, Field(description="What it produces")] = None,
        position: PositionArg = "back",
        session_name: SessionArg = None,
        request_id: RequestArg = None,
    ) -> Annotated[CallToolResult, views.PlanAdded]:
        async with (call := start("9plan_queue_add", ctx, session_name)):
            placed = await service.add_plan(
                call.session,
                context=context,
                goal=goal,
                approach=approach,
                success_criteria=success_criteria,
                inputs=inputs or "",
                outputs=outputs or "",
                position=position,
                request_id=request_id,
            )
            call.succeed(
                _with_reminder(
                    f"Added plan {placed.plan.id} at queue position {placed.rank}.\nFile: {placed.path}",
                    await service.reminder(call.session),
                ),
                views.plan_added(placed),
            )
        return call.outcome

    @server.tool(
        name="9plan_queue_pull",
        title="Pull next plan",
        description="Make the next queued plan active; returns its text and file. Do the work, "
        "keep notes in the file or pass notes, then complete, defer or discard it.",
        annotations=WRITE,
    )
    async def queue_pull(
        ctx: Context, session_name: SessionArg = None, request_id: RequestArg = None
    ) -> Annotated[CallToolResult, views.PlanPulled]:
        async with (call := start("9plan_queue_pull", ctx, session_name)):
            placed = await service.pull_plan(call.session, request_id=request_id)
            stuck = f"\n{stuck_text(placed.plan.id, placed.defer_count)}" if placed.stuck else ""
            call.succeed(
                f"Pulled plan {placed.plan.id}: {one_line(placed.plan.goal)}\nFile: {placed.path}\n"
                f"Keep notes in its # Notes section (or pass notes when you finish).{stuck}\n\n"
                f"{placed.text}",
                views.plan_pulled(placed),
                extra=[plan_link(call.session, placed.plan.id, placed.plan.goal)],
            )
        return call.outcome

    @server.tool(
        name="9plan_plan_defer",
        title="Defer plan",
        description="Return the active plan to the queue with a reason: front when blocked, back "
        "(default) after splitting it. File edits are kept.",
        annotations=WRITE,
    )
    async def plan_defer(
        ctx: Context,
        reason: Annotated[str, Field(description="Why")],
        position: PositionArg = "back",
        notes: NotesArg = None,
        session_name: SessionArg = None,
        request_id: RequestArg = None,
    ) -> Annotated[CallToolResult, views.PlanDeferred]:
        async with (call := start("9plan_plan_defer", ctx, session_name)):
            placed = await service.defer_plan(
                call.session, reason, position, notes=notes, request_id=request_id
            )
            call.succeed(
                _with_salvage(
                    f"Deferred plan {placed.plan.id} to queue position {placed.rank}.",
                    placed.salvage,
                ),
                views.plan_deferred(placed),
            )
        return call.outcome

    @server.tool(
        name="9plan_plan_complete",
        title="Complete plan",
        description="Finish the active plan. The outcome (what was produced, where) and notes "
        "become searchable history. Returns what remains.",
        annotations=WRITE,
    )
    async def plan_complete(
        ctx: Context,
        outcome: Annotated[str, Field(description="Summary with the outputs produced")],
        notes: NotesArg = None,
        session_name: SessionArg = None,
        request_id: RequestArg = None,
    ) -> Annotated[CallToolResult, views.PlanCompleted]:
        async with (call := start("9plan_plan_complete", ctx, session_name)):
            done = await service.complete_plan(
                call.session, outcome, notes=notes, request_id=request_id
            )
            follow = _next(done.next_goal, "The queue is empty. Task complete!")
            call.succeed(
                _with_salvage(
                    f"Completed plan {done.plan.id}. {done.completed_count} completed, "
                    f"{done.queue_length} queued.\n{follow}",
                    done.salvage,
                ),
                views.plan_completed(done),
            )
        return call.outcome

    @server.tool(
        name="9plan_plan_discard",
        title="Discard plan",
        description="Abandon the active plan (obsolete or misconceived); it is never searchable. "
        "Prefer 9plan_plan_defer if the work is still needed.",
        annotations=DESTRUCTIVE,
    )
    async def plan_discard(
        ctx: Context,
        reason: Annotated[str, Field(description="Why")],
        notes: NotesArg = None,
        session_name: SessionArg = None,
        request_id: RequestArg = None,
    ) -> Annotated[CallToolResult, views.PlanDiscarded]:
        async with (call := start("9plan_plan_discard", ctx, session_name)):
            gone = await service.discard_plan(
                call.session, reason, notes=notes, request_id=request_id
            )
            follow = _next(gone.next_goal, "The queue is empty: add plans with 9plan_queue_add.")
            call.succeed(
                _with_salvage(
                    f"Discarded plan {gone.plan.id}. {gone.queue_length} queued.\n{follow}",
                    gone.salvage,
                ),
                views.plan_discarded(gone),
            )
        return call.outcome

    @server.tool(
        name="9plan_history_search",
        title="Search history",
        description="Search completed plans (all sections, outcome, notes) by words, best first, "
        "to find what earlier plans produced. Plain text, any language.",
        annotations=READ_ONLY,
    )
    async def history_search(
        ctx: Context,
        query: Annotated[str, Field(description="Words to find")],
        max_results: Annotated[int, Field(description="1-100", strict=True)] = 10,
        session_name: SessionArg = None,
    ) -> Annotated[CallToolResult, views.SearchResults]:
        async with (call := start("9plan_history_search", ctx, session_name)):
            matches = await service.search_history(call.session, query, max_results)
            lines = [
                f"{m.rank}. {m.id} {one_line(m.goal)}\n   Outcome: {one_line(m.outcome)}"
                for m in matches
            ]
            found = (
                f"{len(matches)} match(es) for {query!r}:\n" + "\n".join(lines)
                if matches
                else f"No completed plan matches {query!r}."
            )
            call.succeed(
                _with_reminder(found, await service.reminder(call.session)),
                views.search_results(matches),
            )
        return call.outcome

    @server.tool(
        name="9plan_history_get",
        title="Get completed plan",
        description="A completed plan in full by id: all sections, notes, outcome, times.",
        annotations=READ_ONLY,
    )
    async def history_get(
        ctx: Context,
        plan_id: Annotated[str, Field(description="5 characters, e.g. a3x9k")],
        session_name: SessionArg = None,
    ) -> Annotated[CallToolResult, views.CompletedPlan]:
        async with (call := start("9plan_history_get", ctx, session_name)):
            view = views.completed_plan(await service.get_history(call.session, plan_id))
            body = "\n".join(indented(key, value) for key, value in view.items())
            call.succeed(
                _with_reminder(
                    f"Completed plan {plan_id}:\n{body}", await service.reminder(call.session)
                ),
                view,
            )
        return call.outcome

    @server.tool(
        name="9plan_admin_validate",
        title="Validate session",
        description="Check the session's invariants (one active plan, distinct queue positions, a "
        "readable file per live plan, no stray files, a journal that replays to the state). "
        "Reports only.",
        annotations=READ_ONLY,
    )
    async def admin_validate(
        ctx: Context, session_name: SessionArg = None
    ) -> Annotated[CallToolResult, views.Validation]:
        async with (call := start("9plan_admin_validate", ctx, session_name)):
            report = await service.validate_session(call.session)
            issues = "\n".join(f"- {issue}" for issue in report.issues)
            call.succeed(
                "Session is valid." if report.valid else f"Session is INVALID:\n{issues}",
                views.validation(report),
            )
        return call.outcome

    @server.tool(
        name="9plan_admin_sessions",
        title="List sessions",
        description="Every session with its task, queue length, completed count and whether a "
        "plan is active: find one to resume.",
        annotations=READ_ONLY,
    )
    async def admin_sessions(ctx: Context) -> Annotated[CallToolResult, views.SessionList]:
        async with (call := start("9plan_admin_sessions", ctx, None)):
            view = views.session_list(await service.list_sessions())
            lines = [
                f"- {s['name']}: {s['queue_length']} queued, {s['completed_count']} completed"
                f"{', 1 active' if s['has_active_plan'] else ''} - {one_line(s['task_description']) or '(no task)'}"
                f"{'' if s['workspace'] is None else ' (workspace: ' + s['workspace'] + ')'}"
                for s in view["sessions"]
            ]
            call.succeed(f"{len(lines)} session(s):\n" + "\n".join(lines), view)
        return call.outcome

    @server.tool(
        name="9plan_admin_state",
        title="Session state",
        description="The session's queue, active plan, counts, plan files on disk and whether "
        "they match the database. Reads only.",
        annotations=READ_ONLY,
    )
    async def admin_state(
        ctx: Context, session_name: SessionArg = None
    ) -> Annotated[CallToolResult, views.AdminState]:
        async with (call := start("9plan_admin_state", ctx, session_name)):
            state = await service.session_state(call.session)
            call.succeed(
                f"{state_text(state, 'State of', service.clock())}\n"
                f"Plan files: {', '.join(state.plan_files) or '(none)'}\n"
                f"Files match database: {state.file_db_match}",
                views.admin_state(state),
            )
        return call.outcome
