"""The session invariants, checked over a snapshot of plan rows and plan-file names (the
journal's replay, the fifth, is checked in `replay` and its issues passed in here), and the
reads of the plan files that the check is given."""

from collections import Counter
from collections.abc import Collection, Sequence

from nineplan_core.errors import FileSystemError
from nineplan_core.journal import Event, last_pull
from nineplan_core.lifecycle import LIVE, PlanStatus
from nineplan_core.model import PlanRow, file_name, plan_id_of
from nineplan_core.plan_file import unreadable
from nineplan_core.ports import SessionReader, SessionStore
from nineplan_core.results import ValidationReport
from nineplan_core.workers import MAIN, stored_worker


def check(
    rows: list[PlanRow],
    file_names: list[str],
    damaged: dict[str, str] | None = None,
    *,
    journal: Sequence[str] = (),
    waits: Sequence[str] = (),
    verdicts: Sequence[str] = (),
    unrendered: Collection[str] = (),
    finished_elsewhere: Collection[str] = (),
) -> ValidationReport:
    """Check a session snapshot; never repairs, only reports.

    `rows` must include every queued or active plan and every plan that holds a position;
    `damaged` names the live plans' files that cannot be read as a plan, and why; `journal`
    holds what keeps the journal from replaying to these rows, `waits` the pulls made before a
    prerequisite was settled, prerequisites never added and cycles (`replay_issues`), `verdicts`
    what breaks `verdicts_consistent` (`follow_ups.verdict_issues`). On a
    machine's copy of a shared database, `unrendered` names the live plans' files this
    machine never wrote and `finished_elsewhere` the files of plans finished on another
    machine: what its next open heals, named in `notes`, never a violation.
    """
    issues: list[str] = []
    held: dict[str, list[str]] = {}
    for row in rows:
        if row.status is PlanStatus.ACTIVE:
            held.setdefault(stored_worker(row.worker), []).append(row.id)
    shared = {worker: ids for worker, ids in sorted(held.items()) if len(ids) > 1}
    for worker, ids in shared.items():
        who = "" if worker == MAIN else f" for worker {worker}"
        issues.append(f"more than one active plan{who}: {', '.join(sorted(ids))}")
    single_active = not shared

    order_issues = _queue_order_issues(rows)
    issues += order_issues

    live = {file_name(row.id) for row in rows if row.status in LIVE}
    files = set(file_names)
    missing = sorted(live - files - set(unrendered))
    orphans = sorted(files - live - set(finished_elsewhere))
    issues += [f"missing plan file: {name}" for name in missing]
    unreadable = sorted((damaged or {}).items())
    issues += [f"plan file {name} cannot be read as a plan: {why}" for name, why in unreadable]
    issues += [f"orphaned file: {name}" for name in orphans]
    return ValidationReport(
        advice=_damage_advice(rows, [name for name, _ in unreadable]),
        single_active_plan=single_active,
        queue_order_preserved=not order_issues,
        files_match_database=not missing and not unreadable,
        no_orphaned_files=not orphans,
        journal_matches_state=not journal,
        prerequisites_respected=not waits,
        verdicts_consistent=not verdicts,
        issues=[*issues, *journal, *waits, *verdicts],
        notes=_healed_next(live - files, files & set(finished_elsewhere), unrendered),
    )


def _healed_next(missing: set[str], finished: set[str], unrendered: Collection[str]) -> list[str]:
    """What the next open of the session on this machine renders or moves: information."""
    waiting = len(missing & set(unrendered))
    parts = [f"{waiting} plan(s) not rendered here yet"] if waiting else []
    if finished:
        parts.append(
            f"{len(finished)} file(s) of a plan finished elsewhere, kept until the next open"
        )
    return ["; ".join(parts)] if parts else []


def _queue_order_issues(rows: list[PlanRow]) -> list[str]:
    issues = [
        f"queued plan {row.id} has no queue position"
        for row in rows
        if row.status is PlanStatus.QUEUED and row.position is None
    ]
    issues += [
        f"{row.status.value} plan {row.id} holds queue position {row.position}"
        for row in rows
        if row.status is not PlanStatus.QUEUED and row.position is not None
    ]
    counts = Counter(
        r.position for r in rows if r.status is PlanStatus.QUEUED and r.position is not None
    )
    issues += [f"queue position {pos} is shared by {n} plans" for pos, n in counts.items() if n > 1]
    return issues


def _damage_advice(rows: list[PlanRow], damaged: list[str]) -> list[str]:
    """What to do about each live plan's file that cannot be read as a plan: a repair leaves
    a non-empty file as it is, because it may hold what someone wrote."""
    active = {file_name(row.id) for row in rows if row.status is PlanStatus.ACTIVE}
    later = {
        True: "the next defer, complete or discard reads it back",
        False: "its plan's pull reads it back",
    }
    return [
        f"{name} is left as it is by --repair (it may hold what someone wrote): "
        f"{later[name in active]}, keeping the stored plan where the file cannot be read and "
        "copying the file to recovered/ first; to drop it now, move it out of plans/ and run "
        "--repair to render it again from the stored plan"
        for name in damaged
    ]


async def damaged_files(
    reader: SessionReader, rows: list[PlanRow], present: set[str]
) -> dict[str, str]:
    """The live plans' files that are there but cannot be read as a plan, and why."""
    damaged: dict[str, str] = {}
    for row in rows:
        if row.status in LIVE and file_name(row.id) in present:
            try:
                problem = unreadable(await reader.files.read(row.id))
            except FileSystemError as exc:  # reported, like any other damage
                problem = exc.message
            if problem is not None:
                damaged[file_name(row.id)] = problem
    return damaged


async def healed_here(
    store: SessionStore, reader: SessionReader, rows: list[PlanRow], present: set[str]
) -> tuple[set[str], set[str]]:
    """On a machine's copy of a shared database (docs/storage.md): the live plans' missing files
    this machine never wrote (save the active plan pulled through it), and the files of plans
    finished elsewhere. Both are what its next open heals; elsewhere, nothing is."""
    if not store.files_mirror:
        return set(), set()
    live = {row.id: row for row in rows if row.status in LIVE}
    unrendered = {
        file_name(row.id)
        for row in live.values()
        if file_name(row.id) not in present
        and await reader.files.written(row.id) is None
        and not await _pulled_here(store, reader, row)
    }
    finished = set()
    for name in present:
        plan_id = plan_id_of(name)
        if plan_id is None or plan_id in live:
            continue
        if (plan := await reader.plan(plan_id)) is not None and plan.status not in LIVE:
            finished.add(name)
    return unrendered, finished


async def _pulled_here(store: SessionStore, reader: SessionReader, row: PlanRow) -> bool:
    """Whether `row` is the active plan and its latest pull was made through this machine."""
    if row.status is not PlanStatus.ACTIVE:
        return False
    pulls = await reader.events(last_pull(row.id))
    return any(
        isinstance(event, Event) and event.detail.get("machine") == store.machine for event in pulls
    )
