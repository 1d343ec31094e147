"""The one renderer of each tool's fields: a success result's text is the breadcrumb, then
`RENDERERS[tool](structuredContent)`, then the result's `notices` word for word
(docs/architecture.md, "What the model sees").

Each renderer reads the result's structured content and nothing else, so the text restates
fields and every line beyond them is a notice: a client that hands the model only the
structured content (Claude Code, Codex) loses nothing an agent must read.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from nineplan_adapters.entrypoints.journal_views import entry_line
from nineplan_adapters.entrypoints.text import MARKS, indented, one_line

#: The text shows this many queued plans; structured content has them all.
QUEUE_LINES = 20

View = Mapping[str, Any]
Renderer = Callable[[View], str]


def text_of(label: str, fields: str, notices: Sequence[str]) -> str:
    """A success result's text: `[Session: NAME] `, the rendered fields, then each notice on
    its own line."""
    return "\n".join([f"[Session: {label}] {fields}", *notices])


def stuck_mark(item: View) -> str:
    """` (deferred N times: stuck)` after a plan a queue or state line shows, when stuck."""
    return f" (deferred {item['defer_count']} times: stuck)" if item.get("stuck") else ""


def waits_mark(item: View) -> str:
    """` (waits for k3v9x, m2p8q)` after a queued plan whose prerequisites are not settled."""
    waiting = item.get("waiting_for") or []
    return f" (waits for {', '.join(waiting)})" if waiting else ""


def _queue_lines(queue: Sequence[View]) -> list[str]:
    lines = [
        f"  {item['queue_position']}. {item['id']} {one_line(item['goal'])}{stuck_mark(item)}"
        f"{waits_mark(item)}"
        for item in queue[:QUEUE_LINES]
    ]
    if len(queue) > QUEUE_LINES:
        lines.append(f"  ... and {len(queue) - QUEUE_LINES} more")
    return lines or ["  (empty)"]


def _active_lines(view: View) -> list[str]:
    """The caller's active plan and its file; then, when another worker holds a plan, every
    active plan with its worker, the caller's first, one label per line."""
    active = view["active_plan"]
    if active is None:
        lines = ["Active plan: none"]
    else:
        lines = [
            f"Active plan: {active['id']} {one_line(active['goal'])}{stuck_mark(active)}",
            f"File: {active['file_path']}",
        ]
    holds: Sequence[View] = view.get("active_plans", [])
    mine = active["id"] if active else None
    if any(hold["id"] != mine for hold in holds):
        ordered = sorted(holds, key=lambda hold: hold["id"] != mine)
        lines.append(f"Active plans ({len(ordered)}):")
        lines += [f"  {h['worker']}: {h['id']} {one_line(h['goal'])}" for h in ordered]
    return lines


def state(view: View, verb: str) -> str:
    """A session's state as create, resume, admin_state and the resume prompt show it."""
    workspace = [f"Workspace: {view['workspace']}"] if view.get("workspace") else []
    recent = [f"  {entry_line(event)}" for event in view["recent"]] or ["  (none)"]
    return "\n".join(
        [
            f"{verb} session {view['session_name']}.",
            f"Path: {view['session_path']}",
            *workspace,
            f"Task: {one_line(view['task_description']) or '(none)'}",
            *_active_lines(view),
            f"Queue ({len(view['queue'])}):",
            *_queue_lines(view["queue"]),
            f"Completed: {view['completed_count']}",
            "Recent events (oldest first):",
            *recent,
        ]
    )


def admin_state(view: View) -> str:
    files = ", ".join(view["plan_files"]) or "(none)"
    return (
        f"{state(view, 'State of')}\nPlan files: {files}\n"
        f"Files match database: {view['file_db_match']}"
    )


def session_created(view: View) -> str:
    workspace = f"\nWorkspace: {view['workspace']}" if view.get("workspace") else ""
    return f"Created session {view['session_name']}.\nPath: {view['session_path']}{workspace}"


def plan_added(view: View) -> str:
    waiting_for = view.get("waiting_for") or []
    those = "that plan is" if len(waiting_for) == 1 else "those are"
    waiting = (
        f"\nIt waits for {', '.join(waiting_for)}: it is pulled once {those} completed or "
        "discarded."
        if waiting_for
        else ""
    )
    return (
        f"Added plan {view['plan_id']} at queue position {view['queue_position']}.\n"
        f"File: {view['plan_path']}{waiting}"
    )


def plans_added(view: View) -> str:
    lines = [
        f"  {item['queue_position']}. {item['plan_id']}"
        + (f" ({item['key']})" if item.get("key") else "")
        + f"{waits_mark(item)} {item['plan_path']}"
        for item in view["plans"]
    ]
    return "\n".join([f"Added {len(lines)} plans; {view['queue_length']} queued.", *lines])


def plan_pulled(view: View) -> str:
    return (
        f"Pulled plan {view['plan_id']}: {one_line(view['goal'])}\nFile: {view['plan_path']}\n\n"
        f"{view['plan_text'].rstrip()}\n\n(end of plan {view['plan_id']})"
    )


def plan_deferred(view: View) -> str:
    return f"Deferred plan {view['plan_id']} to queue position {view['queue_position']}."


def plan_completed(view: View) -> str:
    verdict = f" Verdict: {view['verdict']}." if view.get("verdict") else ""
    return (
        f"Completed plan {view['plan_id']}.{verdict} {view['completed_count']} completed, "
        f"{view['queue_length']} queued."
    )


def criteria_lines(view: View) -> list[str]:
    """A plan's criteria, each marked by its verdict with the evidence; then the derived
    verdict. None when it has no verdicts."""
    given = {v["n"]: v for v in view.get("verdicts") or []}
    if not given:
        return []
    lines = [f"Verdict: {view['verdict']}"] if view.get("verdict") else []
    for item in view.get("criteria") or []:
        verdict = given.get(item["n"])
        mark = MARKS[verdict["status"] if verdict else None]
        lines.append(f"  {mark} {item['n']}. {one_line(item['text'])}")
        if verdict:
            by = " (a person)" if verdict["by"] == "person" else ""
            lines.append(f"     evidence{by}: {one_line(verdict['evidence'])}")
    return lines


def plan_discarded(view: View) -> str:
    return f"Discarded plan {view['plan_id']}. {view['queue_length']} queued."


def search_results(view: View) -> str:
    matches = view["matches"]
    query = view.get("query", "")
    if not matches:
        return f"No completed plan matches {query!r}."
    lines = [
        f"{m['relevance_rank']}. {m['id']} {one_line(m['goal'])}"
        + (f" (verdict: {m['verdict']})" if m.get("verdict", "unchecked") != "unchecked" else "")
        + f"\n   Outcome: {one_line(m['outcome'])}"
        for m in matches
    ]
    return f"{len(matches)} match(es) for {query!r}:\n" + "\n".join(lines)


#: The fields of a whole plan, in the order `history_get` shows them.
PLAN_FIELDS = (
    "id",
    "goal",
    "context",
    "inputs",
    "outputs",
    "approach",
    "success_criteria",
    "notes",
    "outcome",
    "created_at",
    "completed_at",
)


def whole_plan(view: View) -> str:
    worker = view.get("worker")
    what = f"Active plan (worker {worker})" if worker else "Completed plan"
    body = "\n".join(indented(key, view[key]) for key in PLAN_FIELDS)
    links = [
        f"{label}: {', '.join(view[key])}"
        for key, label in (
            ("after", "Waited for"),
            ("needed_by", "Needed by"),
            ("follow_ups", "Followed up by"),
        )
        if view.get(key)
    ]
    if view.get("follow_up_of"):
        links.append(f"Follows up: {view['follow_up_of']}")
    return "\n".join([f"{what} {view['id']}:", body, *links, *criteria_lines(view)])


def validation(view: View) -> str:
    if view["valid"]:
        said = "Session is valid."
    else:
        said = "Session is INVALID:\n" + "\n".join(f"- {issue}" for issue in view["issues"])
    return "\n".join([said, *(f"Note: {note}" for note in view["notes"])])


def session_list(view: View) -> str:
    lines = [_session_line(s) for s in view["sessions"]]
    filed = view["archived_left_out"]
    archived = f"\n{filed} archived session(s) not listed." if filed else ""
    current = view.get("current_session")
    now = f"\nCurrent session: {current}" if current else ""
    return f"{len(lines)} session(s):\n" + "\n".join(lines) + archived + now


def _session_line(s: View) -> str:
    if s["error"] is not None:
        return f"- {s['name']}: UNREADABLE - {s['error']}"
    active = f", {s['active_count']} active" if s.get("active_count") else ""
    workspace = "" if s["workspace"] is None else f" (workspace: {s['workspace']})"
    return (
        f"- {s['name']}: {s['queue_length']} queued, {s['completed_count']} completed{active}"
        f" - {one_line(s['task_description']) or '(no task)'}{workspace}"
    )


#: Each tool's renderer, by the tool's own part of its name.
RENDERERS: dict[str, Renderer] = {
    "session_create": session_created,
    "session_resume": lambda view: state(view, "Resumed"),
    "queue_add": plan_added,
    "queue_add_many": plans_added,
    "queue_pull": plan_pulled,
    "plan_defer": plan_deferred,
    "plan_complete": plan_completed,
    "plan_discard": plan_discarded,
    "history_search": search_results,
    "history_get": whole_plan,
    "admin_validate": validation,
    "admin_sessions": session_list,
    "admin_state": admin_state,
}
