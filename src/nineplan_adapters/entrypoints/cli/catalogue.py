"""The `nineplan archive | unarchive | delete | history` commands: a person files sessions away,
removes them for good, and looks back over a session's completed plans."""

import argparse
import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any, NoReturn

from nineplan_adapters.entrypoints.text import one_line, terminal_safe
from nineplan_core.errors import (
    InvalidInputError,
    NinePlanError,
    SessionNotArchivedError,
    SessionNotFoundError,
)
from nineplan_core.model import format_timestamp
from nineplan_core.service import NinePlan

COMMANDS = [
    ("history", "list a session's completed plans, the newest first",
     "nineplan history brave-quiet-otter --limit 5\n  nineplan history brave-quiet-otter --json"),
    ("archive", "file a session away: kept whole, left out of the session lists",
     "nineplan archive brave-quiet-otter\n  nineplan sessions --all"),
    ("unarchive", "bring an archived session back into the session lists",
     "nineplan unarchive brave-quiet-otter"),
    ("delete", "remove an archived session without an active plan for good",
     "nineplan delete brave-quiet-otter --yes"),
]  # fmt: skip
NAMES = frozenset(name for name, _, _ in COMMANDS)
USAGE = 2  # bad usage (docs/configuration.md, "Exit codes")
MAX_HISTORY = 10_000


class Parser(argparse.ArgumentParser):
    """An argument parser whose commands may report bad usage in one line (`one_line_errors`)
    instead of the usage block and the error."""

    def __init__(self, *args: Any, one_line_errors: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.one_line_errors = one_line_errors

    def error(self, message: str) -> NoReturn:
        if not self.one_line_errors:
            super().error(message)
        self.exit(USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def add_arguments(
    commands: Mapping[str, argparse.ArgumentParser], limit: Callable[..., int]
) -> None:
    """The arguments of these commands (the session name and --json are there already);
    `limit` checks a `--limit` against its highest value."""
    commands["history"].add_argument(
        "--limit",
        type=partial(limit, high=MAX_HISTORY),
        default=100,
        help="at most this many (1-10,000; default 100)",
    )
    commands["delete"].add_argument(
        "--yes", action="store_true", help="confirm: the session is removed for good"
    )


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else terminal_safe(text))


async def _history(service: NinePlan, args: argparse.Namespace) -> int:
    plans = await service.completed_plans(args.name, args.limit)
    data = {
        "plans": [
            {
                "id": plan.id,
                "goal": plan.goal,
                "outcome": plan.outcome,
                "completed_at": format_timestamp(plan.completed_at) if plan.completed_at else None,
            }
            for plan in plans
        ]
    }
    lines = [
        f"{entry['id']}  {entry['completed_at'] or '-'}  {one_line(entry['goal'])}\n"
        f"       {one_line(entry['outcome'])}"
        for entry in data["plans"]
    ]
    _emit(args, data, "\n".join(lines) or "No completed plans yet.")
    return 0


async def _archive(service: NinePlan, args: argparse.Namespace) -> int:
    await service.archive_session(args.name)
    _emit(
        args,
        {"session_name": args.name, "archived": True},
        f"Archived {args.name}: `nineplan sessions --all` still lists it.",
    )
    return 0


async def _unarchive(service: NinePlan, args: argparse.Namespace) -> int:
    await service.unarchive_session(args.name)
    _emit(args, {"session_name": args.name, "archived": False}, f"Unarchived {args.name}.")
    return 0


async def _delete(service: NinePlan, args: argparse.Namespace) -> int:
    if not args.yes:
        print(
            f"nineplan delete: error: --yes is required: {args.name} would be removed for good",
            file=sys.stderr,
        )
        return USAGE
    await service.delete_session(args.name)
    _emit(args, {"session_name": args.name, "deleted": True}, f"Deleted {args.name}.")
    return 0


def error_line(exc: NinePlanError, suggestion: str, name: str | None) -> str:
    """The one line these commands report an error in: the message, then what to do."""
    if isinstance(exc, SessionNotArchivedError):
        suggestion = f"Archive it first: `nineplan archive {name}`."
    return f"nineplan: {exc.message.rstrip('.')}. {suggestion}"


def bad_usage(exc: NinePlanError) -> bool:
    """Whether `exc` is bad usage of these commands (exit 2): no such session, or a name that
    cannot be one."""
    return isinstance(exc, SessionNotFoundError) or (
        isinstance(exc, InvalidInputError) and exc.field == "session_name"
    )


CATALOGUE: dict[str, Callable[[NinePlan, argparse.Namespace], Awaitable[int]]] = {
    "history": _history,
    "archive": _archive,
    "unarchive": _unarchive,
    "delete": _delete,
}
