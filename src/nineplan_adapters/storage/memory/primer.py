"""The memory backend's primer: `nineplan prime`'s read of the sessions of one process.

Memory sessions live as long as their process, so a primer over a fresh catalog (a new
`nineplan prime` process) finds nothing; over a running catalog, it finds what the others do.
"""

import datetime as dt

import attrs

from nineplan_adapters.config import Settings
from nineplan_adapters.storage.journal_rows import row_event
from nineplan_adapters.storage.memory.catalog import MemorySessionCatalog
from nineplan_adapters.storage.memory.store import MemorySessionStore
from nineplan_adapters.storage.priming import (
    NEXT_GOALS,
    Candidate,
    choose,
    covers,
    primed_holds,
    primed_plan,
    stuck_from_events,
)
from nineplan_core.journal import Event
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import file_name
from nineplan_core.primed import PrimedSession
from nineplan_core.workers import MAIN


@attrs.frozen
class MemoryPrimer:
    """Finds a folder's session among `catalog`'s."""

    catalog: MemorySessionCatalog
    stuck_defers: int

    def find(self, folder: str) -> PrimedSession | None:
        candidates, stores = [], {}
        for name, store in self.catalog.stores.items():
            statuses = [plan.status for plan in store.plans.values()]
            queued, active = statuses.count(PlanStatus.QUEUED), statuses.count(PlanStatus.ACTIVE)
            if (
                store.session.workspace is not None
                and covers(store.session.workspace, folder)
                and (queued or active)
            ):
                stores[str(name)] = store
                candidates.append(
                    Candidate(
                        name,
                        store.session.task_description,
                        queued,
                        active,
                        _last_activity(store),
                    )
                )
        if (chosen := choose(candidates)) is None:
            return None
        store = stores[chosen[0].name]
        primed = self._primed(store, store.session.workspace or folder)
        return attrs.evolve(primed, others=chosen[1])

    def _primed(self, store: MemorySessionStore, workspace: str) -> PrimedSession:
        plans = store.plans.values()
        queue = sorted(
            (plan for plan in plans if plan.status is PlanStatus.QUEUED),
            key=lambda plan: plan.position or 0,
        )
        active = next(
            (p for p in plans if p.status is PlanStatus.ACTIVE and p.worker == MAIN), None
        )
        live: dict[str, str] = {
            plan.id: plan.goal
            for plan in plans
            if plan.status in {PlanStatus.QUEUED, PlanStatus.ACTIVE}
        }
        events = [row_event(row) for row in store.event_rows]
        return PrimedSession(
            session_name=store.name,
            task_description=store.session.task_description,
            workspace=workspace,
            active_plan=(
                primed_plan(
                    {"id": active.id, "notes": active.notes, **attrs.asdict(active.content)},
                    store.plan_path(active.id),
                    store.files.texts.get(file_name(active.id)),
                )
                if active is not None
                else None
            ),
            next=[plan.goal for plan in queue][:NEXT_GOALS],
            stuck=stuck_from_events(live, events, self.stuck_defers),
            active_plans=primed_holds(
                (
                    {"id": p.id, "notes": p.notes, "worker": p.worker, "last_seen": p.last_seen}
                    | attrs.asdict(p.content)
                    for p in plans
                    if p.status is PlanStatus.ACTIVE
                ),
                lambda plan_id: (
                    store.plan_path(plan_id),
                    store.files.texts.get(file_name(plan_id)),
                ),
            ),
            workers_named=store.session.workers_named,
        )


def _last_activity(store: MemorySessionStore) -> dt.datetime:
    """When the session's newest event happened (its creation without a readable one)."""
    times = [event.at for event in map(row_event, store.event_rows) if isinstance(event, Event)]
    return max(times, default=store.session.created_at)


def primer(settings: Settings, catalog: object = None) -> MemoryPrimer:
    """The primer over `catalog`, the process's open memory catalog; over an empty one (that
    finds nothing) without it."""
    if not isinstance(catalog, MemorySessionCatalog):
        catalog = MemorySessionCatalog()
    return MemoryPrimer(catalog, settings.stuck_defers)
