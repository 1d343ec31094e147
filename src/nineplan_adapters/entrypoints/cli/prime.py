"""`nineplan prime`: the way back after compaction, printed for a client's session-start hook.

It finds the session bound to a folder (or a parent of it) that the agent most likely holds
(of those with work, the most recently active one with an active plan, else the most recently
active one: storage.priming.choose), and prints a short block about it, naming the folder's
other sessions with work: what an agent needs to pick the work back up without remembering its
session's name. A hook waits for this command, so the storage
backend's primer reads it (nineplan_adapters.backends), and nothing of `mcp`, the container or
aiosqlite is imported (tests/integration/test_prime.py checks the imports).
"""

import argparse
import datetime as dt
import json
import os
from typing import Any

import attrs

from nineplan_adapters.backends import chosen
from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.text import stale_line, take_over_hint
from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES, ToolNames
from nineplan_core.errors import InvalidInputError
from nineplan_core.model import LEASE_MINUTES
from nineplan_core.primed import OtherSession, PrimedPlan, PrimedSession
from nineplan_core.workers import MAIN, Hold, check_worker, stored_worker, worker_name

#: The most a block may hold: it lands in the agent's context on every start and compaction.
BUDGET = 2_000


@attrs.frozen
class Lease:
    """What judges a lease in prime: NINEPLAN_LEASE_MINUTES and now."""

    minutes: float = LEASE_MINUTES
    now: dt.datetime = attrs.field(factory=lambda: dt.datetime.now(dt.UTC))

    def lapsed(self, worker: str, last_seen: dt.datetime | None) -> bool:
        """Whether the hold of `worker` last heard from at `last_seen` is stale now."""
        hold = Hold(worker=stored_worker(worker), last_seen=last_seen)
        return hold.stale(self.now, dt.timedelta(minutes=self.minutes))


def for_worker(found: PrimedSession, worker: str | None) -> PrimedSession:
    """`found` as `worker` sees it: its own active plan is the block's (none if it holds
    none); with no worker named, `main`'s, as before workers."""
    if worker is None:
        return found
    hold = next((hold for hold in found.active_plans if hold.worker == worker), None)
    return attrs.evolve(found, active_plan=hold.plan if hold else None)


def _holds_json(found: PrimedSession, lease: Lease) -> list[dict[str, Any]]:
    return [
        {
            "id": hold.plan.id,
            "goal": hold.plan.goal,
            "file_path": hold.plan.file_path,
            "worker": hold.worker,
            "last_seen": hold.last_seen.isoformat() if hold.last_seen else None,
            "stale": lease.lapsed(hold.worker, hold.last_seen),
        }
        for hold in found.active_plans
    ]


def json_fields(
    found: PrimedSession,
    names: ToolNames = DEFAULT_NAMES,
    lease: Lease | None = None,
    worker: str | None = None,
) -> dict[str, Any]:
    """The fields docs/clients.md lists, as `nineplan prime --json` prints them (`resume_call`
    as `worker`, when one is given)."""
    active = found.active_plan
    return {
        "session_name": found.session_name,
        "task_description": found.task_description,
        "workspace": found.workspace,
        "active_plan": attrs.asdict(active) if active else None,
        "next": found.next,
        "stuck": [plan.id for plan in found.stuck],
        "others": [attrs.asdict(other) for other in found.others],
        "resume_call": names.resume_call(found.session_name, worker),
        "active_plans": _holds_json(found, lease or Lease()),
    }


def _held_lines(
    found: PrimedSession, lease: Lease, *, named: bool
) -> list[tuple[int, int, str, bool]]:
    """Every active plan with its worker and a stale mark, then the stale lines; only once a
    worker other than `main` takes part (it is named now or was before, or holds a plan)."""
    if (
        not named
        and not found.workers_named
        and all(hold.worker == MAIN for hold in found.active_plans)
    ):
        return []
    lines = [(60, 6, f"Active plans ({len(found.active_plans)}):", False)]
    for index, hold in enumerate(found.active_plans, start=1):
        stale = lease.lapsed(hold.worker, hold.last_seen)
        mark = " [STALE]" if stale else ""
        goal = _clip(hold.plan.goal, 120)
        lines.append((60 + index, 6, f"  {hold.worker}: {hold.plan.id} {goal}{mark}", False))
        if stale:
            then = take_over_hint(hold.plan.id)  # prime is read by the agent
            line = stale_line(hold.plan.id, hold.worker, hold.last_seen, lease.now, then=then)
            lines.append((90 + index, 6, line, False))
    return lines


def block(
    found: PrimedSession,
    names: ToolNames = DEFAULT_NAMES,
    lease: Lease | None = None,
    *,
    named: bool = False,
    worker: str | None = None,
) -> str:
    """The text for the agent's context: at most BUDGET characters; its resume call is
    `worker`'s when one is given.

    The session's name and the resume call always fit; the other lines are kept in order
    of importance as long as the budget allows, and shown in reading order.
    """
    # (where it is shown, how important it is, the text, whether it must be shown)
    resume = names.resume_call(found.session_name, worker)
    lines: list[tuple[int, int, str, bool]] = [
        (0, 0, f"[9plan] This folder's session is {found.session_name}.", True),
        (10, 1, f"Workspace: {_clip(found.workspace, 300)}", False),
        (999, 99, f"To continue, call {resume}; it makes the session current.", True),
    ]
    if found.task_description:
        lines.append((20, 2, f"Task: {_clip(found.task_description, 300)}", False))
    if (active := found.active_plan) is not None:
        lines += _active_lines(active)
    else:
        lines.append((30, 3, _nothing_held(found, names), True))
    if found.next:
        lines.append((100, 5, "Next in the queue:", False))
        lines += [
            (100 + index, 5 + index, f"  {index}. {_clip(goal, 150)}", False)
            for index, goal in enumerate(found.next, start=1)
        ]
    lines += [
        (
            200 + index,
            20 + index,
            (
                f"Stuck: {plan.id} deferred {plan.defers} times: {_clip(plan.goal, 120)} "
                "(split it, or record why it is blocked)"
            ),
            False,
        )
        for index, plan in enumerate(found.stuck)
    ]
    lines += _other_lines(found.others)
    lines += _held_lines(found, lease or Lease(), named=named)
    return _fitted(lines)


def _nothing_held(found: PrimedSession, names: ToolNames) -> str:
    """The caller holds no plan: pull the next one, or (nothing queued) say so, and whether
    others still hold plans."""
    if found.next:
        return f"Active plan: none; pull the next one with {names['queue_pull']}."
    if found.active_plans:
        return f"Active plan: none; the queue is empty and {len(found.active_plans)} plan(s) are still active."
    return f"Active plan: none; the queue is empty: add plans with {names['queue_add']}."


def _fitted(lines: list[tuple[int, int, str, bool]]) -> str:
    """The required lines, then the others by importance while the budget allows, shown in
    reading order."""
    kept = [(shown, text) for shown, _, text, required in lines if required]
    used = sum(len(text) + 1 for _, text in kept)
    for shown, _, text, required in sorted(lines, key=lambda line: line[1]):
        if not required and used + len(text) + 1 <= BUDGET:
            kept.append((shown, text))
            used += len(text) + 1
    return "\n".join(text for _, text in sorted(kept))[:BUDGET]


def _other_lines(others: list[OtherSession]) -> list[tuple[int, int, str, bool]]:
    """The folder's other sessions with work, one short line each, after the stuck plans."""
    if not others:
        return []
    lines = [(300, 9, "Other sessions of this folder with work:", False)]
    for index, other in enumerate(others, start=1):
        counts = f"{other.queued} queued" + (f", {other.active} active" if other.active else "")
        task = f": {_clip(other.task_description, 100)}" if other.task_description else ""
        lines.append((300 + index, 9, f"  {other.session_name}{task} ({counts})", False))
    return lines


def _clip(text: str | None, limit: int) -> str:
    """One line of at most `limit` characters."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- the command -----------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`nineplan prime`'s options."""
    parser.add_argument(
        "--workspace",
        metavar="DIR",
        help="the folder to find a session for (default: the current directory)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument(
        "--worker",
        metavar="NAME",
        type=_worker,
        help="the worker whose active plan the block shows (default: main)",
    )
    parser.add_argument(
        "--sessions-path", help="folder holding the sessions (NINEPLAN_SESSIONS_PATH)"
    )


def _worker(value: str) -> str:
    try:
        return worker_name(check_worker(value))
    except InvalidInputError as exc:
        raise argparse.ArgumentTypeError(exc.message) from exc


def find(settings: Settings, folder: str) -> PrimedSession | None:
    """What the chosen backend's primer finds for `folder`."""
    return chosen(settings).primer(settings).find(folder)


def prime(
    settings: Settings, workspace: str | None, *, as_json: bool, worker: str | None = None
) -> str | None:
    """The block (or JSON) for `workspace` (default: the current directory), its active plan
    `worker`'s; None when no session is bound to it (the command then prints nothing)."""
    folder = os.path.realpath(workspace or os.getcwd())  # noqa: PTH109 - a string is compared
    found = find(settings, folder)
    if found is None:
        return None
    found = for_worker(found, worker)
    names = ToolNames(settings.tool_prefix)
    lease = Lease(settings.lease_minutes)
    if as_json:
        return json.dumps(json_fields(found, names, lease, worker), indent=2, ensure_ascii=False)
    return block(found, names, lease, named=worker is not None and worker != MAIN, worker=worker)


def _active_lines(active: PrimedPlan) -> list[tuple[int, int, str, bool]]:
    """The caller's active plan as `block` ranks its lines: its id and goal (always shown),
    its file, its first criteria and the last lines of its notes."""
    lines = [
        (30, 3, f"Active plan: {active.id} {_clip(active.goal, 200)}", True),
        (40, 4, f"  File: {_clip(active.file_path, 300)}", False),
    ]
    if active.criteria:
        lines.append((45, 8, "  Success criteria (answer each with evidence when done):", False))
        lines += [
            (45 + index, 8 + index, f"    {index}. {_clip(item, 150)}", False)
            for index, item in enumerate(active.criteria[:4], start=1)
        ]
    if active.notes_tail:
        lines.append((50, 10, "  Last notes:", False))
        lines += [
            (50 + index, 10 + index, f"    {_clip(line, 200)}", False)
            for index, line in enumerate(active.notes_tail, start=1)
        ]
    return lines
