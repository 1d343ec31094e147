"""The `nineplan` command: serve the MCP server, run the demo, inspect sessions."""

import argparse
import datetime as dt
import json
import os
import re
import signal
import sys
import textwrap
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, get_args

import anyio

from nineplan_adapters.config import (
    UI_PORT,
    ConfigError,
    Durability,
    LogLevel,
    Settings,
    Transport,
)
from nineplan_adapters.entrypoints.cli.catalogue import CATALOGUE, Parser, bad_usage, error_line
from nineplan_adapters.entrypoints.cli.catalogue import COMMANDS as CATALOGUE_COMMANDS
from nineplan_adapters.entrypoints.cli.catalogue import NAMES as CATALOGUE_NAMES
from nineplan_adapters.entrypoints.cli.catalogue import add_arguments as add_catalogue_arguments
from nineplan_adapters.entrypoints.cli.steering import COMMANDS as STEERING_COMMANDS
from nineplan_adapters.entrypoints.cli.steering import STEERING, edits, plan_ids
from nineplan_adapters.entrypoints.cli.steering import add_arguments as add_steering_arguments
from nineplan_adapters.entrypoints.cli.suggestions import for_the_terminal
from nineplan_adapters.entrypoints.journal_views import event_line, journal_entry
from nineplan_adapters.entrypoints.text import MARKS, indented, one_line, stale_line, terminal_safe
from nineplan_adapters.log_setup import configure_logging
from nineplan_core.criteria import criteria, plan_verdict
from nineplan_core.errors import NinePlanError, PlanHeldByAgentError, SessionNotFoundError
from nineplan_core.journal import Event, EventQuery, UnreadableEvent, minutes_since
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import SECTION_FIELDS, Plan
from nineplan_core.results import SNIPPET_MARKS, SessionState
from nineplan_core.revisions import plan_revision
from nineplan_core.service import NinePlan

if TYPE_CHECKING:
    from nineplan_adapters.entrypoints import views

EXAMPLES = """\
examples:
  nineplan serve                          MCP server on stdio (what MCP clients spawn)
  nineplan serve --transport http         streamable HTTP on 127.0.0.1:8080/mcp
  nineplan demo                           a whole session through a real MCP client
  nineplan sessions                       every session
  nineplan state brave-quiet-otter        one session's queue and active plan
  nineplan search brave-quiet-otter auth  search its completed plans
  nineplan log brave-quiet-otter --follow what happened, then each change as it happens
  nineplan validate brave-quiet-otter --repair
  nineplan ui                             the web view on http://127.0.0.1:8765/
  nineplan move brave-quiet-otter a3x9k --front   a person steers: add, move, edit, drop, release
  nineplan export brave-quiet-otter > plans.md    and import plans.md into another session
  nineplan history brave-quiet-otter      its completed plans, newest first
  nineplan archive brave-quiet-otter      filed away: out of the lists unless sessions --all
"""
COMMANDS = [
    ("serve", "run the MCP server (MCP clients spawn this on stdio)",
     "nineplan serve\n  nineplan serve --transport http --port 8080"),
    ("demo", "drive a whole session through a freshly spawned server",
     "nineplan demo\n  nineplan demo --transport http"),
    ("sessions", "list every session", "nineplan sessions\n  nineplan sessions --json"),
    ("state", "show a session's queue, active plan and counts", "nineplan state brave-quiet-otter"),
    ("show", "show one plan of a session in full", "nineplan show brave-quiet-otter a3x9k"),
    ("search", "search a session's completed plans, best first",
     'nineplan search brave-quiet-otter "users table" --limit 5'),
    ("log", "show a session's journal (the last 100 events, newest last)",
     "nineplan log brave-quiet-otter --limit 20\n  nineplan log brave-quiet-otter --json --follow"),
    ("validate", "check a session's invariants; exit 1 when invalid",
     "nineplan validate brave-quiet-otter\n  nineplan validate brave-quiet-otter --repair"),
    ("ui", "serve the web view of every session (live, and a person can steer)",
     "nineplan ui\n  NINEPLAN_HTTP_TOKEN=... nineplan ui --host 0.0.0.0 --port 8765"),
    ("prime", "print where this folder's session stands, for a client's session-start hook",
     "nineplan prime\n  nineplan prime --workspace ~/project --json"),
]  # fmt: skip
#: The settings each command's flags may give, and how the flags are spelled.
FLAG_NAMES = {
    "sessions_path": "--sessions-path",
    "log_level": "--log-level",
    "durability": "--durability",
    "transport": "--transport",
    "http_host": "--host",
    "http_port": "--port",
}
SETTING_FLAGS = tuple(FLAG_NAMES)
# Exit codes besides 0 (docs/configuration.md): refused or invalid; bad usage, bad configuration
# or no such session (argparse exits 2 for bad usage itself).
REFUSED, USAGE = 1, 2
#: Steering commands whose every refusal and bad usage is one line (the plan, and why).
ONE_LINE_STEERS = frozenset({"move", "edit", "release", "workers", "verdict"})
MAX_LIMIT = 100  # search
MAX_LOG_LIMIT = 10_000  # log
SECTIONS = ("context", "inputs", "outputs", "approach", "success_criteria", "notes")


def _limit(raw: str, high: int = MAX_LIMIT) -> int:
    """`--limit`: a whole number 1-`high` (argparse names the flag when this raises)."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {raw!r}") from None
    if not 1 <= value <= high:
        raise argparse.ArgumentTypeError(f"must be between 1 and {high:,}, not {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    from nineplan_adapters.version import package_version  # noqa: PLC0415 - only --version needs it

    parser = argparse.ArgumentParser(
        prog="nineplan",
        description="A persistent work queue of self-contained plans for AI agents.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nineplan {package_version()}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser
    )
    for name, summary, examples in [*COMMANDS, *STEERING_COMMANDS, *CATALOGUE_COMMANDS]:
        command = commands.add_parser(
            name,
            help=summary,
            description=f"{summary[0].upper()}{summary[1:]}.",
            epilog=f"examples:\n  {examples}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            # bad usage of these is one line
            one_line_errors=name in CATALOGUE_NAMES or name in ONE_LINE_STEERS,
        )
        _command_arguments(name, command)
    choices: dict[str, argparse.ArgumentParser] = {**commands.choices}
    _reading_arguments(choices)
    add_steering_arguments(choices)
    add_catalogue_arguments(choices, _limit)
    return parser


def _command_arguments(name: str, command: argparse.ArgumentParser) -> None:
    """The flags of command `name`: the settings every command but demo and prime takes, then
    its own."""
    if name == "demo":
        command.add_argument("--transport", choices=get_args(Transport), default="stdio")
        return
    if name == "prime":
        from nineplan_adapters.entrypoints.cli.prime import add_arguments  # noqa: PLC0415

        add_arguments(command)
        return
    command.add_argument(
        "--sessions-path", help="folder holding the sessions (NINEPLAN_SESSIONS_PATH)"
    )
    command.add_argument(
        "--log-level",
        type=str.lower,
        choices=[*get_args(LogLevel), "warning"],  # `warning` as Python spells it
        help="NINEPLAN_LOG_LEVEL",
    )
    command.add_argument("--durability", choices=get_args(Durability), help="NINEPLAN_DURABILITY")
    if name == "serve":
        command.add_argument(
            "--transport", choices=get_args(Transport), help="NINEPLAN_TRANSPORT (default stdio)"
        )
        command.add_argument(
            "--host", dest="http_host", help="NINEPLAN_HTTP_HOST (default 127.0.0.1)"
        )
        command.add_argument("--port", dest="http_port", help="NINEPLAN_HTTP_PORT (default 8080)")
    elif name == "ui":
        command.add_argument(
            "--host", dest="http_host", help="NINEPLAN_HTTP_HOST (default 127.0.0.1)"
        )
        command.add_argument("--port", dest="ui_port", help="default 8765")
    else:
        command.add_argument("--json", action="store_true", help="print JSON for scripts")
        if name != "sessions":
            command.add_argument("name", help="session name, e.g. brave-quiet-otter")
        else:
            command.add_argument("--all", action="store_true", help="archived sessions too")


def _reading_arguments(commands: Mapping[str, argparse.ArgumentParser]) -> None:
    """The arguments of the commands that read a session: show, search, validate and log."""
    commands["show"].add_argument("plan_id", help="5-character plan id")
    commands["search"].add_argument("query", help="words to look for")
    commands["search"].add_argument(
        "--limit", type=_limit, default=10, help="at most this many (1-100)"
    )
    commands["validate"].add_argument("--repair", action="store_true", help="reconcile files first")
    commands["log"].add_argument(
        "--limit",
        type=partial(_limit, high=MAX_LOG_LIMIT),
        default=100,
        help="the last this many events (1-10,000)",
    )
    commands["log"].add_argument(
        "--follow", action="store_true", help="keep printing new events until Ctrl-C"
    )


#: How the command line runs the commands that start a way in of their own (`serve`, `ui`): given
#: by the `nineplan` command (entrypoints.console), since the CLI imports neither the MCP server
#: nor the web view.
Launcher = Callable[[Settings], int]


def main(argv: Sequence[str] | None = None, launchers: Mapping[str, Launcher] | None = None) -> int:
    """Run one `nineplan` command; returns its exit code. `launchers` run `serve` and `ui`."""
    args = _parser().parse_args(argv)
    flags = {key: getattr(args, key, None) for key in SETTING_FLAGS}
    try:
        settings = Settings.load(os.environ, FLAG_NAMES, **flags)
        configure_logging(settings.log_level if args.command in {"serve", "ui"} else "warn")
        if args.command == "ui":
            port = args.ui_port if args.ui_port is not None else UI_PORT
            settings = Settings.load(os.environ, FLAG_NAMES, **{**flags, "http_port": port})
        if args.command == "serve" and settings.transport == "stdio":
            _warn_unused(flags, ("http_host", "http_port"), "--transport http")
        if args.command in {"serve", "ui"}:
            if launchers is None or args.command not in launchers:
                print(f"nineplan: {args.command} is not available in this program", file=sys.stderr)
                return USAGE
            return launchers[args.command](settings)
        if args.command == "prime":  # a hook waits for it: no mcp, no container (docs/clients.md)
            from nineplan_adapters.entrypoints.cli.prime import prime  # noqa: PLC0415

            text = prime(settings, args.workspace, as_json=args.json, worker=args.worker)
            if text is not None:
                print(text if args.json else terminal_safe(text))
            return 0
    except ConfigError as exc:
        error = {"category": "CONFIGURATION_ERROR", "message": str(exc),
                 "suggestion": f"Correct {exc.variable}."}  # fmt: skip
        return _fail(args, error, f"nineplan: {exc}", USAGE)
    if args.command == "demo":
        from nineplan_adapters.entrypoints.cli.demo import run_demo  # noqa: PLC0415

        return int(anyio.run(run_demo, args.transport, print))
    return int(anyio.run(_inspect, settings, args))


async def _inspect(settings: Settings, args: argparse.Namespace) -> int:
    from nineplan_adapters.container import build_container, running  # noqa: PLC0415

    try:
        async with running(build_container(settings)) as service:
            return await INSPECTORS[args.command](service, args)
    except NinePlanError as exc:
        missing = isinstance(exc, SessionNotFoundError) or (
            args.command in CATALOGUE_NAMES and bad_usage(exc)
        )
        suggestion = for_the_terminal(exc.suggestion, getattr(args, "name", None))
        error = {"category": exc.category, "message": exc.message, "suggestion": suggestion}
        human = f"nineplan: {exc.category}: {exc.message}\n  {suggestion}"
        if isinstance(exc, PlanHeldByAgentError) or (
            args.command in ONE_LINE_STEERS and not missing
        ):
            human = f"nineplan: {exc.message}"  # one line: a refused steer names the plan
        elif args.command in CATALOGUE_NAMES:  # these report every error in one line
            human = error_line(exc, suggestion, getattr(args, "name", None))
        return _fail(args, error, human, USAGE if missing else REFUSED)


def _warn_unused(flags: Mapping[str, object], names: Sequence[str], needed: str) -> None:
    """One line on stderr naming the flags given that only `needed` makes use of."""
    given = [FLAG_NAMES[name] for name in names if flags.get(name) is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        print(
            f"nineplan: {' and '.join(given)} {verb} only with {needed}; ignored", file=sys.stderr
        )


def _fail(args: argparse.Namespace, error: dict[str, str], human: str, code: int) -> int:
    """Report `error`: JSON on stdout with --json, `human` on stderr otherwise; return `code`."""
    if getattr(args, "json", False):
        print(json.dumps({"error": error}, indent=2, ensure_ascii=False))
    else:
        print(terminal_safe(human), file=sys.stderr)
    return code


def _emit(args: argparse.Namespace, data: Any, text: str, *, escaped: bool = False) -> None:
    """`data` as JSON with --json, else `text` with stored text's terminal controls escaped;
    `escaped`: `text` escaped them already, around colours of its own."""
    if args.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        print(text if escaped else terminal_safe(text))


async def _sessions(service: NinePlan, args: argparse.Namespace) -> int:
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    listed = views.session_list(await service.catalogue(archived=args.all))
    listing = listed["sessions"]
    rows = [["NAME", "CREATED", "QUEUED", "DONE", "ACTIVE", "TASK"]] + [
        _session_row(s) for s in listing
    ]
    filed = listed["archived_left_out"]
    text = _table(rows) if listing else "No sessions listed." if filed else "No sessions yet."
    if filed:
        text += f"\n{filed} archived session(s) not listed; `nineplan sessions --all` lists them."
    _emit(args, listing, text, escaped=True)
    return 0


def _session_row(s: "views.SessionListItem") -> list[str]:
    """A line of the session table; one that cannot be read is marked, with the reason."""
    archived = "[archived] " if s["archived"] else ""
    if s["error"] is not None:
        return [s["name"], "UNREADABLE", "-", "-", "-", f"{archived}! {s['error']}"]
    return [s["name"], s["created"] or "-", str(s["queue_length"]), str(s["completed_count"]),
            "yes" if s["has_active_plan"] else "-",
            f"{archived}{one_line(s['task_description'])[:50]}"]  # fmt: skip


def _held_lines(found: SessionState, now: dt.datetime) -> list[str]:
    """Every active plan with its worker, how long it has been held and a stale mark, then
    one line per stale plan; only once a worker other than `main` takes part."""
    if not found.many_workers:
        return []
    rows = [
        f"  {hold.worker}  {hold.plan.id}  held "
        f"{minutes_since(hold.pulled_at, now) if hold.pulled_at else '?'} min"
        f"{'  [STALE]' if hold.stale else ''}  {one_line(hold.plan.goal)[:60]}"
        for hold in found.active_plans
    ]
    release = "put it back at the front with nineplan release {} {}"  # a person's way
    stale = [
        stale_line(hold.plan.id, hold.worker, hold.plan.last_seen, now,
                   then=release.format(found.session.name, hold.plan.id))
        for hold in found.stale_plans
    ]  # fmt: skip
    return [f"Active plans ({len(rows)}):", *rows, *stale]


async def _state(service: NinePlan, args: argparse.Namespace) -> int:
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    found = await service.session_state(args.name)  # a look only: nothing is repaired
    state = views.admin_state(found)
    active = found.active_plan
    queue = [["RANK", "ID", "DEFERRED", "GOAL"]] + [
        [str(q["queue_position"]), q["id"], _deferred(q["defer_count"], stuck=q["stuck"]),
         one_line(q["goal"])[:70] + _waits(q.get("waiting_for", []))]
        for q in state["queue"]
    ]  # fmt: skip
    held = "-"
    if active is not None:
        held = f"{active.id}  {one_line(active.goal)}"
        if found.pulled_at is not None:
            held += f"  (pulled {minutes_since(found.pulled_at, service.clock())} min ago)"
        if found.stuck(active.id):
            held += f"  [STUCK: deferred {found.defer_count(active.id)} times]"
    lines = [
        f"Session {state['session_name']}  ({state['session_path']})",
        f"Task: {one_line(state['task_description']) or '-'}",
        f"Workspace: {state['workspace'] or '-'}",
        f"Active: {held}",
        *(
            f"  {item.n}. {one_line(item.text)[:100]}"
            for item in (criteria(active.content.success_criteria) if active else ())
        ),
        *_held_lines(found, service.clock()),
        f"Completed: {state['completed_count']}   Files match database: {state['file_db_match']}",
        "",
    ]
    recent = ["", "Recent events:", *map(event_line, found.recent)] if found.recent else []
    # The table escapes its cells itself, around its bold header.
    table = _table(queue) if state["queue"] else "The queue is empty."
    text = "\n".join([terminal_safe("\n".join(lines)), table, *map(terminal_safe, recent)])
    _emit(args, state, text, escaped=True)
    return 0


def verdict_lines(plan: Plan) -> list[str]:
    """A plan's criteria marked by their verdicts (✔ met, ✘ unmet, ? waits for a person, —
    none) with the evidence, the derived verdict and the follow-up links; none without
    verdicts."""
    if not plan.verdicts:
        return []
    given = {v.n: v for v in plan.verdicts}
    items = criteria(plan.content.success_criteria)
    lines = [indented("verdict", plan_verdict(items, plan.verdicts).value)]
    for item in items:
        verdict = given.get(item.n)
        mark = MARKS[verdict.status.value if verdict else None]
        lines.append(f"  {mark} {item.n}. {one_line(item.text)}")
        if verdict is not None:
            by = f" (a person: {verdict.note or 'no note'})" if verdict.by == "person" else ""
            lines.append(f"       {one_line(verdict.evidence)}{by}")
    links = [("follow_up_of", plan.follow_up_of), ("follow_ups", ", ".join(plan.follow_ups))]
    return lines + [indented(key, value) for key, value in links if value]


def _waits(waiting_for: list[str]) -> str:
    """`  [waits for k3v9x]` after a queued plan's goal while it waits."""
    return f"  [waits for {', '.join(waiting_for)}]" if waiting_for else ""


def _deferred(count: int, *, stuck: bool) -> str:
    if not count:
        return "-"
    return f"{count} STUCK" if stuck else str(count)


async def _log(service: NinePlan, args: argparse.Namespace) -> int:
    events = await service.journal(args.name, EventQuery(last=args.limit))
    if not events and not args.json and not args.follow:
        print("No events yet.")
    for event in events:
        _print_event(args, event)
    if args.follow:
        await _follow(service, args, events[-1].seq if events else 0)
    return 0


async def _follow(service: NinePlan, args: argparse.Namespace, after_seq: int) -> None:
    """Print each new event until SIGINT or SIGTERM (then return: exit 0).

    Raises:
        NinePlanError: the feed broke off (the session was deleted, say), raised as itself.
    """
    failure: NinePlanError | None = None
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with anyio.create_task_group() as group:

            async def stop() -> None:
                async for _ in signals:
                    group.cancel_scope.cancel()

            group.start_soon(stop)
            # Cancelled by stop(): the feed's watch closes as the cancellation passes through it.
            try:
                async for event in service.follow(args.name, after_seq):
                    _print_event(args, event)
            except NinePlanError as exc:  # not wrapped in the task group's ExceptionGroup
                failure = exc
                group.cancel_scope.cancel()
    if failure is not None:
        raise failure


def _print_event(args: argparse.Namespace, event: Event | UnreadableEvent) -> None:
    if args.json:
        print(json.dumps(journal_entry(event), ensure_ascii=False), flush=True)
    else:
        print(terminal_safe(event_line(event)), flush=True)


async def _show(service: NinePlan, args: argparse.Namespace) -> int:
    """One plan in full; a queued plan's revision too (what `edit --revision` takes)."""
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    copy = await service.plan_in_full(args.name, args.plan_id)
    plan, file, written = copy.plan, copy.text, copy.written
    revision = (
        plan_revision(written.content)
        if written is not None and plan.status is PlanStatus.QUEUED
        else None
    )
    view: dict[str, Any] = {
        "status": plan.status.value,
        **views.completed_plan(plan),
        "discard_reason": plan.discard_reason,
        "discarded_by": plan.discarded_by,
        "revision": revision,
        "file": file,
        "after": list(plan.after),
    }
    shown = ["status", "id", "goal", "discarded_by", "discard_reason", "outcome", "created_at"]
    lines = [indented(key, view[key]) for key in shown if view[key] is not None]
    if view["completed_at"] is not None:  # a discarded plan was not completed: say which
        finished = "discarded_at" if plan.status is PlanStatus.DISCARDED else "completed_at"
        lines.append(indented(finished, view["completed_at"]))
    if revision is not None:
        lines.append(indented("revision", revision))
    if plan.after:
        lines.append(indented("after", ", ".join(plan.after)))
    lines += verdict_lines(plan)
    body = (
        [f"file:\n{textwrap.indent(file, '  ')}"]
        if file is not None
        else [indented(key, view[key]) for key in SECTIONS]
    )
    _emit(args, view, "\n".join(lines + body))
    return 0


async def _edit(service: NinePlan, args: argparse.Namespace) -> int:
    """Change sections of a queued plan, then print it as `show` does."""
    changes, after = edits(args), plan_ids(args.after)
    if not changes and after is None:
        flags = ", ".join(f"--{field.replace('_', '-')}" for field in (*SECTION_FIELDS, "after"))
        error = {
            "category": "VALIDATION_ERROR",
            "message": f"nothing to edit: give at least one of {flags}",
            "suggestion": "Name the sections to change.",
        }
        return _fail(args, error, f"nineplan: edit: {error['message']}", USAGE)
    if changes:
        await service.edit_plan(args.name, args.plan_id, changes, revision=args.revision)
    if after is not None:
        await service.edit_plan_after(args.name, args.plan_id, after)
    return await _show(service, args)


async def _search(service: NinePlan, args: argparse.Namespace) -> int:
    matches = await service.search_history(args.name, args.query, args.limit, snippets=True)
    data = [
        {"id": m.id, "goal": m.goal, "outcome": m.outcome, "relevance_rank": m.rank,
         "snippet": _highlight(m.snippet, colour=False)}
        for m in matches
    ]  # fmt: skip
    colour = _colour()
    text = "\n".join(
        f"{_bold(f'{m.rank}. {m.id}', colour=colour)}  {terminal_safe(one_line(m.goal))}\n   {_highlight(m.snippet, colour=colour)}"
        for m in matches
    )
    _emit(args, data, text or "No matches.", escaped=True)
    return 0


async def _validate(service: NinePlan, args: argparse.Namespace) -> int:
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    repairs = await service.repair_session(args.name) if args.repair else []
    report = await service.validate_session(args.name)
    data = {
        **views.validation(report),
        "repairs": [f"{r.action} {r.file_name}" for r in repairs],
        "advice": report.advice,
    }
    lines = [
        f"repaired: {r.describe() if r.action == 'kept' else f'{r.action} {r.file_name}'}"
        for r in repairs
    ]
    lines.append("valid" if report.valid else "INVALID")
    lines += [f"  - {issue}" for issue in report.issues]
    lines += [f"  note: {note}" for note in report.notes]
    lines += [f"advice: {advice}" for advice in report.advice]
    _emit(args, data, "\n".join(lines))
    return 0 if report.valid else 1


INSPECTORS: dict[str, Callable[[NinePlan, argparse.Namespace], Awaitable[int]]] = {
    "sessions": _sessions,
    "state": _state,
    "show": _show,
    "edit": _edit,
    "search": _search,
    "log": _log,
    "validate": _validate,
    **STEERING,
    **CATALOGUE,
}


def _colour() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _bold(text: str, *, colour: bool) -> str:
    return f"\x1b[1m{text}\x1b[0m" if colour else text


def _highlight(snippet: str, *, colour: bool) -> str:
    """Matched words bold yellow on a terminal, [bracketed] elsewhere; the snippet's own
    terminal controls escaped."""
    words = (
        {SNIPPET_MARKS[0]: "\x1b[1;33m", SNIPPET_MARKS[1]: "\x1b[0m"}
        if colour
        else {
            SNIPPET_MARKS[0]: "[",
            SNIPPET_MARKS[1]: "]",
        }
    )
    parts = re.split(f"([{''.join(SNIPPET_MARKS)}])", snippet.replace("\n", " "))
    return "".join(words.get(part) or terminal_safe(part) for part in parts)


def _table(rows: list[list[str]]) -> str:
    """Aligned columns, their stored text's terminal controls escaped; the header row bold on
    a colour terminal."""
    rows = [[terminal_safe(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
    lines[0] = _bold(lines[0], colour=_colour())
    return "\n".join(lines)
