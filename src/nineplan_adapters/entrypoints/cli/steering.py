"""The `nineplan add | move | edit | drop | release | workers | verdict | import | export`
commands: a person steers a session (`edit` prints the plan as `show` does: its handler is beside `show`'s)."""

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from nineplan_adapters.entrypoints.cli.bundle import END_OF_QUEUE, join_plans, split_plans
from nineplan_adapters.entrypoints.journal_views import journal_entry
from nineplan_adapters.entrypoints.text import one_line, terminal_safe
from nineplan_core.callers import PERSON
from nineplan_core.errors import InvalidInputError, PlanFileFormatError
from nineplan_core.model import SECTION_FIELDS, Plan, format_timestamp
from nineplan_core.plan_file import PlanText
from nineplan_core.results import Finished, PlacedPlan
from nineplan_core.service import NinePlan

COMMANDS = [
    ("add", "add a plan to a session's queue (at the back, or --front)",
     'nineplan add brave-quiet-otter --goal "Add the users table" --context "..." --approach "..." --success-criteria "..." --front'),
    ("move", "move a queued plan to the front, the back, or before another queued plan",
     "nineplan move brave-quiet-otter a3x9k --front\n  nineplan move brave-quiet-otter a3x9k --before k3v9x"),
    ("edit", "change sections of a queued plan, printing it as show does",
     ('nineplan edit brave-quiet-otter a3x9k --goal "Add the users table, with email"\n'
     "  nineplan edit brave-quiet-otter a3x9k --approach \"...\" --revision REVISION")),
    ("drop", "discard a queued plan, saying why",
     'nineplan drop brave-quiet-otter a3x9k --reason "not needed any more"'),
    ("release", "put an active plan back at the front of the queue (its file's edits kept)",
     "nineplan release brave-quiet-otter a3x9k\n  nineplan release brave-quiet-otter a3x9k --json"),
    ("workers", "show who holds a session's plans; --forget makes unnamed calls main's again",
     "nineplan workers brave-quiet-otter\n  nineplan workers brave-quiet-otter --forget"),
    ("export", "print a whole session (queue, active plan, history) as Markdown or JSON",
     "nineplan export brave-quiet-otter > session.md\n  nineplan export brave-quiet-otter --format json"),
    ("verdict", "decide a completed plan's criterion that waits for a person: met or unmet",
     'nineplan verdict brave-quiet-otter a3x9k 2 met\n  nineplan verdict brave-quiet-otter a3x9k 3 unmet --note "the label is missing"'),
    ("import", "add the plans of a file (plan files separated by ---), all or none",
     "nineplan import brave-quiet-otter plans.md\n  nineplan import brave-quiet-otter plans.md --front"),
]  # fmt: skip
TEXTS = ("goal", "context", "approach", "success_criteria")
USAGE = 2  # bad usage (docs/configuration.md, "Exit codes")


def add_arguments(commands: dict[str, argparse.ArgumentParser]) -> None:
    """The arguments of the steering commands (the session name and --json are there already)."""
    add = commands["add"]
    for field in TEXTS:
        add.add_argument(f"--{field.replace('_', '-')}", required=True, help=f"the plan's {field}")
    for field in ("inputs", "outputs"):
        add.add_argument(f"--{field}", default="", help=f"the plan's {field} (optional)")
    add.add_argument("--front", action="store_true", help="pulled next (default: at the back)")
    add.add_argument(
        "--after", metavar="ID[,ID]", help="pulled only once these plans are completed or discarded"
    )
    for name in ("move", "drop", "release"):
        commands[name].add_argument("plan_id", help="5-character plan id")
    where = commands["move"].add_mutually_exclusive_group(required=True)
    where.add_argument("--front", action="store_const", dest="position", const="front")
    where.add_argument("--back", action="store_const", dest="position", const="back")
    where.add_argument(
        "--before", metavar="OTHER_ID", help="just before this queued plan (its 5-character id)"
    )
    edit = commands["edit"]
    edit.add_argument("plan_id", help="5-character plan id")
    for field in SECTION_FIELDS:
        edit.add_argument(
            f"--{field.replace('_', '-')}", help=f"the plan's new {field.replace('_', ' ')}"
        )
    edit.add_argument(
        "--after",
        metavar="ID[,ID]",
        help="what it waits for instead ('' for nothing); a cycle is refused",
    )
    edit.add_argument(
        "--revision",
        help="the revision `nineplan show` printed: refused if the plan changed since",
    )
    commands["drop"].add_argument("--reason", required=True, help="why it is dropped")
    verdict = commands["verdict"]
    verdict.add_argument("plan_id", help="5-character plan id of a completed plan")
    verdict.add_argument("criterion", type=int, help="the criterion's number")
    verdict.add_argument("status", choices=("met", "unmet"), help="what a person decided")
    verdict.add_argument("--note", help="why (kept with the verdict)")
    commands["workers"].add_argument(
        "--forget",
        action="store_true",
        help="forget that workers were named (only while no worker but main holds a plan)",
    )
    commands["export"].add_argument(
        "--format", choices=("md", "json"), help="md (the default) or json (as --json gives)"
    )
    commands["import"].add_argument("file", help="the file of plans (- reads stdin)")
    commands["import"].add_argument(
        "--front", action="store_true", help="before the queue, keeping the file's order"
    )


def plan_ids(raw: str | None) -> list[str] | None:
    """`--after`'s ids, comma-separated (None when not given; `''` is none)."""
    return None if raw is None else [part.strip() for part in raw.split(",") if part.strip()]


def edits(args: argparse.Namespace) -> dict[str, str]:
    """The sections `nineplan edit` was given, by field name."""
    given = {field: getattr(args, field) for field in SECTION_FIELDS}
    return {field: value for field, value in given.items() if value is not None}


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else terminal_safe(text))


async def _queue(service: NinePlan, args: argparse.Namespace, said: str) -> int:
    queue = (await service.session_state(args.name)).queue
    data = {"queue": [{"queue_position": q.rank, "id": q.id, "goal": q.goal} for q in queue]}
    lines = [said, *(f"{q.rank:>4}  {q.id}  {one_line(q.goal)[:70]}" for q in queue)]
    _emit(args, data, "\n".join(lines) if queue else f"{said}\nThe queue is empty.")
    return 0


async def _add(service: NinePlan, args: argparse.Namespace) -> int:
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    placed = await service.add_plan(
        args.name,
        **{field: getattr(args, field) for field in (*TEXTS, "inputs", "outputs")},
        position="front" if args.front else "back",
        caller=PERSON,
        after=plan_ids(args.after),
    )
    waits = f"  waits for {', '.join(placed.waiting_for)}" if placed.waiting_for else ""
    said = _told(f"{placed.plan.id}  rank {placed.rank}{waits}", placed)
    _emit(args, views.plan_added(placed), said)
    return 0


def _told(said: str, result: PlacedPlan | Finished) -> str:
    """What a change says, then the lines saying what opening the session moved to
    recovered/ (a plan file with lines the database lacks), if any."""
    return f"{said}\n{result.salvage}" if result.salvage else said


async def _move(service: NinePlan, args: argparse.Namespace) -> int:
    moved = await service.move_plan(args.name, args.plan_id, args.position, before=args.before)
    return await _queue(service, args, _told(f"Moved {moved.plan.id} to rank {moved.rank}.", moved))


async def _drop(service: NinePlan, args: argparse.Namespace) -> int:
    dropped = await service.drop_plan(args.name, args.plan_id, args.reason)
    return await _queue(service, args, _told(f"Dropped {dropped.plan.id}.", dropped))


async def _release(service: NinePlan, args: argparse.Namespace) -> int:
    """The released plan goes to the front; the new queue is printed (`--json`: the state)."""
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    released = await service.release_plan(args.name, args.plan_id)
    state = await service.session_state(args.name)
    said = _told(f"Released {released.plan.id} to the front of the queue.", released)
    lines = [said, *(f"{q.rank:>4}  {q.id}  {one_line(q.goal)[:70]}" for q in state.queue)]
    _emit(args, views.admin_state(state), "\n".join(lines))
    return 0


async def _workers(service: NinePlan, args: argparse.Namespace) -> int:
    """Whether the session has several workers, and who holds which plan; with --forget,
    first forget the workers (refused while a worker other than main holds a plan)."""
    if args.forget:
        await service.forget_workers(args.name)
    state = await service.session_state(args.name)
    several = state.session.workers_named
    said = (
        "several workers: a pull, defer, complete or discard that names no worker is refused"
        if several
        else "one agent: a call that names no worker is main's"
    )
    held = [
        (hold.worker, hold.plan.id, one_line(hold.plan.goal)[:70]) for hold in state.active_plans
    ]
    data = {
        "session_name": state.session.name,
        "workers_named": several,
        "active_plans": [{"worker": w, "id": plan_id, "goal": goal} for w, plan_id, goal in held],
    }
    lines = [
        *(["Forgot the workers."] if args.forget else []),
        f"Session {state.session.name}: {said}.",
        f"Active plans ({len(held)}):" if held else "No plan is active.",
        *(f"  {worker}  {plan_id}  {goal}" for worker, plan_id, goal in held),
    ]
    _emit(args, data, "\n".join(lines))
    return 0


async def _import(service: NinePlan, args: argparse.Namespace) -> int:
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    text = sys.stdin.read() if args.file == "-" else _read(args.file)
    try:
        plans = split_plans(text)
    except PlanFileFormatError as exc:  # the person's own file: bad input, not a storage fault
        raise InvalidInputError("file", exc.message.removeprefix(_NOT_A_PLAN)) from exc
    if not plans:
        raise InvalidInputError(
            "file",
            "holds no plan; write plans in the plan format (# Context, # Goal, # Approach, "
            "# Success Criteria), separated by lines ---",
        )
    placed = await service.import_plans(args.name, plans, "front" if args.front else "back")
    lines = [f"Imported {len(placed)} plan{'' if len(placed) == 1 else 's'}:"] + [
        f"{p.plan.id}  rank {p.rank}" for p in placed
    ]
    _emit(args, {"plans": [views.plan_added(p) for p in placed]}, "\n".join(lines))
    return 0


_NOT_A_PLAN = "The plan file is not in the plan format: "


async def _as_written(service: NinePlan, name: str, plan_id: str) -> Plan:
    """A queued or active plan as its file holds it now (the agent's notes and edits)."""
    return await service.plan_as_written(name, plan_id)


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError("file", f"cannot be read ({exc})") from exc


async def _export(service: NinePlan, args: argparse.Namespace) -> int:
    from nineplan_adapters.entrypoints import views  # noqa: PLC0415

    if args.json and args.format == "md":
        print("nineplan: --json and --format md ask for two formats; give one", file=sys.stderr)
        return USAGE
    state = await service.session_state(args.name)
    queue = [await _as_written(service, args.name, q.id) for q in state.queue]
    active = state.active_plan and await _as_written(service, args.name, state.active_plan.id)
    history = await service.finished_plans(args.name)
    journal = [journal_entry(event) for event in await service.journal(args.name)]
    if args.format == "json" or args.json:
        data = {
            **views.admin_state(state),
            "queue": [_plan(p) for p in queue],
            "active_plan": _plan(active) if active else None,
            "history": [_plan(p) for p in history],
            "journal": journal,
        }
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    parts = [
        join_plans([PlanText(p.content, p.notes) for p in queue]) if queue else "",
        END_OF_QUEUE,
    ]
    parts.append(
        f"\n# Session {state.session.name}\n\nTask: {state.session.task_description or '-'}"
    )
    parts.append(f"Completed plans: {state.completed_count}")
    if active is not None:
        parts.append(
            f"\n## Active plan {active.id}\n\n{join_plans([PlanText(active.content, active.notes)])}"
        )
    for plan in history:
        finished = format_timestamp(plan.completed_at) if plan.completed_at else "-"
        parts.append(f"\n## {plan.status.value.capitalize()} plan {plan.id} ({finished})\n")
        parts.append(join_plans([PlanText(plan.content, plan.notes)]))
        if plan.outcome is not None:
            parts.append(f"Outcome: {plan.outcome}")
    events = json.dumps(journal, indent=2, ensure_ascii=False)
    parts.append(f"\n## Journal\n\n```json\n{events}\n```")
    print("\n".join(parts))
    return 0


def _plan(plan: Plan) -> dict[str, Any]:
    finished = format_timestamp(plan.completed_at) if plan.completed_at else None
    return {"id": plan.id, "status": plan.status.value, "notes": plan.notes,
            "outcome": plan.outcome, "created_at": format_timestamp(plan.created_at),
            "completed_at": finished,
            **{k: getattr(plan.content, k) for k in (*TEXTS, "inputs", "outputs")}}  # fmt: skip


async def _verdict(service: NinePlan, args: argparse.Namespace) -> int:
    """A person's decision on a criterion that waits for one."""
    done = await service.decide_verdict(
        args.name, args.plan_id, args.criterion, args.status, note=args.note
    )
    follow_up = done.follow_up
    said = f"Criterion {args.criterion} of {done.plan.id} is {args.status}."
    if follow_up is not None:
        said += f"\nIts follow-up, {follow_up.id}, is at the front of the queue: {one_line(follow_up.goal)}"
    elif done.capped:
        said += "\nThe chain of follow-ups has reached its limit: no follow-up was added."
    data = {
        "plan_id": done.plan.id,
        "criterion": args.criterion,
        "status": args.status,
        "follow_up": None
        if follow_up is None
        else {"plan_id": follow_up.id, "goal": follow_up.goal},
    }
    _emit(args, data, said)
    return 0


STEERING: dict[str, Callable[[NinePlan, argparse.Namespace], Awaitable[int]]] = {
    "add": _add,
    "move": _move,
    "drop": _drop,
    "release": _release,
    "workers": _workers,
    "verdict": _verdict,
    "import": _import,
    "export": _export,
}
