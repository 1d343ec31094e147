"""The memory backend's catalog: every session of the process, by name."""

import attrs

from nineplan_adapters.storage.memory.store import MemoryPlanFiles, MemorySessionStore
from nineplan_adapters.storage.memory.watch import MemorySessionWatch
from nineplan_adapters.storage.retry_log import MemoryRequestRecords, RetryLog
from nineplan_adapters.storage.unit_of_work import FileChanges
from nineplan_core.errors import (
    NinePlanError,
    SessionExistsError,
    SessionNotFoundError,
)
from nineplan_core.journal import (
    EventQuery,
    NewEvent,
    defer_counts,
    deferrals,
    last_pull,
    pulled_at,
    readable,
)
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import DEFAULT_LIMITS, Session, SessionName
from nineplan_core.results import SessionSummary
from nineplan_core.workers import MAIN


@attrs.define
class MemorySessionCatalog:
    """Every session in a dict; nothing touches the disk."""

    stores: dict[SessionName, MemorySessionStore] = attrs.field(factory=dict)
    #: The sessions a person archived.
    filed: set[SessionName] = attrs.field(factory=set)
    #: How many recent request ids each session, and the catalog, remembers.
    remembered: int = DEFAULT_LIMITS.remembered_requests
    creations: RetryLog = attrs.field(init=False)

    @creations.default
    def _creations(self) -> RetryLog:
        return RetryLog(MemoryRequestRecords(), self.remembered)

    async def create(self, session: Session, first: NewEvent) -> MemorySessionStore:
        if session.name in self.stores:
            raise SessionExistsError(session.name)
        store = MemorySessionStore(
            session, MemoryPlanFiles(session.name), remembered=self.remembered
        )
        tx = store._tx(FileChanges(store.files))
        await tx.append(first)
        store.event_rows.extend(tx.new_events)  # the session and its first event come together
        self.stores[session.name] = store
        return store

    async def open(self, name: SessionName) -> MemorySessionStore:
        if (store := self.stores.get(name)) is None:
            raise SessionNotFoundError(name)
        return store

    async def names(self) -> list[SessionName]:
        return sorted(self.stores)

    async def summaries(self, names: list[SessionName]) -> list[SessionSummary | NinePlanError]:
        results: list[SessionSummary | NinePlanError] = []
        for name in names:
            try:
                results.append(await self.summary(name))
            except NinePlanError as exc:
                results.append(exc)
        return results

    async def summary(self, name: SessionName) -> SessionSummary:
        store = await self.open(name)
        async with store.reading() as reader:
            tally = await reader.tally()
            every = await reader.active_plans()
            active = next((p for p in every if p.worker == MAIN), every[0] if every else None)
            live = {entry.id for entry in await reader.queue()} | {plan.id for plan in every}
            newest = await reader.events(EventQuery(last=1))
            return SessionSummary(
                session=store.session,
                queue_length=tally.queued,
                completed_count=tally.completed,
                active_plan_id=active.id if active else None,
                active_goal=active.goal if active else None,
                pulled_at=(
                    pulled_at(await reader.events(last_pull(active.id)), active.id)
                    if active
                    else None
                ),
                defer_counts=dict(defer_counts(await reader.events(deferrals(live)))),
                last_activity=readable(newest)[-1].at if readable(newest) else None,
                active_count=len(every),
            )

    async def archived(self) -> frozenset[SessionName]:
        return frozenset(self.filed & self.stores.keys())

    async def set_archived(self, name: SessionName, *, archived: bool) -> None:
        await self.open(name)
        if archived:
            self.filed.add(name)
        else:
            self.filed.discard(name)

    async def delete(self, name: SessionName) -> bool:
        store = await self.open(name)
        if name not in self.filed or any(
            plan.status is PlanStatus.ACTIVE for plan in store.plans.values()
        ):
            return False
        del self.stores[name]
        self.filed.discard(name)
        return True

    def watch(self) -> MemorySessionWatch:
        """Change ticks for these sessions (commits in this process: the only one there is)."""
        return MemorySessionWatch(self.open, self.versions)

    def versions(self) -> dict[str, int]:
        """What the session list's watch compares: each session's commit count, doubled, plus
        one while it is archived (so archiving changes it too)."""
        return {
            name: store.version * 2 + (name in self.filed) for name, store in self.stores.items()
        }

    async def aclose(self) -> None:
        """Nothing to release; present so every catalog closes alike."""
