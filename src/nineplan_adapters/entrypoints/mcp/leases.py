"""Leases renewed by working (docs/architecture.md, "Workers and leases"): the server that pulled a plan watches its file.

When the content of a worker's plan file changes (a content hash, so a touch or a rewrite of
the same bytes is no work), the `renew_lease` use case reads the file back and stores its
edits with the plan's `last_seen` renewed (the Clock port stamps it), so that its notes reach
the database while the agent works; what the read-back salvaged is told to the worker in its
next call's result. Renewals are spaced: at most one every
tenth of the lease, and at least one a minute while the file keeps changing (the smaller of
the two spacings). Only while this server runs; a watch ends when the plan is no longer that
worker's, when the worker pulls again through this server, or when the server stops.
"""

import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import attrs
from anyio.abc import TaskGroup

from nineplan_adapters.entrypoints.file_watch import content_changes
from nineplan_core.errors import NinePlanError
from nineplan_core.service import NinePlan

log = logging.getLogger("nineplan.mcp")

#: The longest spacing between two renewals while the file keeps changing (seconds).
MOST_SPACING = 60.0


def spacing(lease_minutes: float) -> float:
    """Seconds between two renewals: a tenth of the lease, and never more than a minute."""
    return min(lease_minutes * 60 / 10, MOST_SPACING)


@attrs.define
class LeaseKeeper:
    """The watches of one server process: one per (session, worker) it pulled a plan for."""

    service: NinePlan
    _tasks: TaskGroup | None = None
    _stops: dict[tuple[str, str], anyio.Event] = attrs.field(factory=dict)
    #: What reading a worker's file back salvaged, not yet told to that worker.
    _salvaged: dict[tuple[str, str], list[str]] = attrs.field(factory=dict)

    def salvaged(self, session: str, worker: str) -> list[str]:
        """The salvage lines of `worker`'s renewals in `session` since it was last told:
        its next call's result carries them (once)."""
        return self._salvaged.pop((session, worker), [])

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Watches run inside this block (the server's lifespan) and stop at its end."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                yield
            finally:
                self._tasks = None
                tasks.cancel_scope.cancel()

    def follow(
        self, session: str, worker: str, plan_id: str, path: str, text: str | None = None
    ) -> None:
        """Renew `worker`'s lease on `plan_id` whenever the file at `path` changes; `text`,
        when given, is what the file held when the plan was handed over (the pull wrote or
        read it), so the watch need not read the file to know where it starts."""
        key = (session, worker)
        if (stop := self._stops.pop(key, None)) is not None:
            stop.set()
        if self._tasks is None or not Path(path).parent.is_dir():
            return
        self._stops[key] = stop = anyio.Event()
        known = None if text is None else hashlib.sha256(text.encode("utf-8")).hexdigest()
        self._tasks.start_soon(self._watch, key, plan_id, Path(path), stop, known)

    async def _watch(
        self,
        key: tuple[str, str],
        plan_id: str,
        path: Path,
        stop: anyio.Event,
        known: str | None,
    ) -> None:
        pending = _Pending()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._renew, key, plan_id, pending, stop)
            start = {} if known is None else {path: known}
            async for _ in content_changes([path], stop, start):
                pending.mark()
            tasks.cancel_scope.cancel()
        if self._stops.get(key) is stop:
            del self._stops[key]

    async def _renew(
        self, key: tuple[str, str], plan_id: str, pending: "_Pending", stop: anyio.Event
    ) -> None:
        """The changes gathered over one spacing renew the lease once; a plan that is no
        longer the worker's ends the watch."""
        session, worker = key
        while True:
            await pending.taken()
            try:
                renewal = await self.service.renew_lease(session, worker, plan_id)
            except NinePlanError as exc:
                log.warning("lease not renewed: %s", exc.message, extra={"session": session})
                held = True
            else:
                held = renewal.held
                if renewal.salvage:
                    self._salvaged.setdefault(key, []).append(renewal.salvage)
            if not held:
                stop.set()
                return
            await anyio.sleep(spacing(self.service.lease_minutes))


@attrs.define
class _Pending:
    """Whether the file changed since the last renewal, and a wake for the renewer."""

    _changed: bool = False
    _wake: anyio.Event = attrs.field(factory=anyio.Event)

    def mark(self) -> None:
        self._changed = True
        self._wake.set()

    async def taken(self) -> None:
        """Wait for a change not yet renewed, and take it."""
        while not self._changed:
            await self._wake.wait()
            self._wake = anyio.Event()
        self._changed = False
