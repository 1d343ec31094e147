"""Test doubles that honour the ports, and a helper that opens the use cases on a backend."""

import datetime as dt
import errno
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
from dependency_injector import providers

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, repeatable, running
from nineplan_adapters.storage.clock import FixedClock
from nineplan_adapters.storage.memory.store import MemoryPlanFiles
from nineplan_adapters.storage.plan_files import (
    DirectoryPlanFiles,
    PlanFiles,
    PlanFilesFactory,
    file_system_error,
)
from nineplan_core.callers import Caller
from nineplan_core.model import DEFAULT_LIMITS, PlanId, SessionName
from nineplan_core.ports import SessionCatalog
from nineplan_core.service import NinePlan

PLAN: dict[str, Any] = {  # Any: it is spread into add_plan beside its caller
    "context": "The app has no accounts.",
    "goal": "Design the users table",
    "approach": "Write the migration.",
    "success_criteria": "The migration applies.",
}


@attrs.define
class Backend:
    """The use cases over one backend, plus what a test needs to reach behind them."""

    kind: str
    service: NinePlan
    catalog: SessionCatalog
    clock: FixedClock
    root: Path

    async def session(self, task: str | None = "a task") -> str:
        return (await self.service.create_session(task)).session.name

    async def plan_text(self, name: str, plan_id: str) -> str | None:
        store = await self.catalog.open(SessionName(name))
        async with store.reading() as reader:
            data = await reader.files.read(PlanId(plan_id))
        return None if data is None else data.decode("utf-8", errors="replace")

    async def write_plan_text(self, name: str, plan_id: str, text: str | bytes) -> None:
        """Play the agent editing a plan file."""
        store = await self.catalog.open(SessionName(name))
        data = text.encode("utf-8") if isinstance(text, str) else text
        await store.files.write(plan_id, data)  # type: ignore[attr-defined] # both stores expose files

    async def recovered(self, name: str) -> dict[str, bytes]:
        """What the session's recovered/ folder holds, by file name."""
        store = await self.catalog.open(SessionName(name))
        files = store.files  # type: ignore[attr-defined] # both stores expose files
        if isinstance(files, MemoryPlanFiles):
            return dict(files.recovered)
        folder = Path(files.recovered)
        return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}

    async def delete_plan_file(self, name: str, plan_id: str) -> None:
        store = await self.catalog.open(SessionName(name))
        await store.files.remove(plan_id)  # type: ignore[attr-defined]


@attrs.define
class FailingPlanFiles:
    """DirectoryPlanFiles that fails chosen operations with an OSError (fault injection)."""

    inner: PlanFiles
    failing: set[str] = attrs.field(factory=set)
    error: int = errno.ENOSPC

    def path(self, plan_id: str) -> str:
        return self.inner.path(PlanId(plan_id))

    def _maybe_fail(self, operation: str) -> None:
        if operation in self.failing:
            raise file_system_error(f"{operation} a plan file", OSError(self.error, "injected"))

    async def read(self, plan_id: str) -> bytes | None:
        return await self.inner.read(PlanId(plan_id))

    async def write(self, plan_id: str, data: bytes) -> None:
        self._maybe_fail("write")
        await self.inner.write(PlanId(plan_id), data)

    async def keep(self, file_name: str, data: bytes) -> str:
        self._maybe_fail("keep")
        return await self.inner.keep(file_name, data)

    async def keep_file(self, plan_id: str) -> str | None:
        self._maybe_fail("keep")
        return await self.inner.keep_file(PlanId(plan_id))

    async def set_aside(self, plan_id: str) -> tuple[str, str | None]:
        self._maybe_fail("recover")
        return await self.inner.set_aside(PlanId(plan_id))

    async def remove(self, plan_id: str) -> None:
        self._maybe_fail("remove")
        await self.inner.remove(PlanId(plan_id))

    async def names(self) -> list[str]:
        return await self.inner.names()

    async def recover(self, file_name: str) -> None:
        self._maybe_fail("recover")
        await self.inner.recover(file_name)


@asynccontextmanager
async def open_service(
    settings: Settings,
    *,
    clock: FixedClock | None = None,
    plan_files: PlanFilesFactory | None = None,
    one_client: bool = False,
    seed: int = 1,
) -> AsyncIterator[NinePlan]:
    """The use cases as the container builds them for `settings`, made repeatable (a fixed
    clock, sequential plan ids, session names from `seed`). `plan_files` replaces the plan-file
    folder factory of a SQLite or PostgreSQL backend (fault injection)."""
    app = repeatable(
        build_container(settings, one_client=one_client), clock or FixedClock(), seed=seed
    )
    if plan_files is not None:
        app.storage().plan_files.override(providers.Object(plan_files))
    async with running(app) as service:
        yield service


def make_service(catalog: SessionCatalog, clock: FixedClock, *, seed: int = 1) -> NinePlan:
    """The container's use cases over an open `catalog` (the subject of an adapter test),
    made repeatable as `open_service` makes them."""
    app = repeatable(build_container(Settings(storage="memory")), clock, seed=seed)
    app.catalog.override(providers.Object(catalog))
    return app.service()


async def worked_with_and_without_workers(service: NinePlan) -> tuple[str, str]:
    """Two sessions with one completed plan each: in the first a worker `tests` pulled and
    completed it, in the second `main` did; their names."""
    named = (await service.create_session()).session.name
    lone = (await service.create_session()).session.name
    for name in (named, lone):
        await service.add_plan(name, **PLAN)
    await service.pull_plan(named, caller=Caller.of("tests"))
    await service.complete_plan(named, "done", caller=Caller.of("tests"))
    await service.pull_plan(lone)
    await service.complete_plan(lone, "done")
    return named, lone


def postgres_url() -> str | None:
    """The throw-away server's URL that .ci/run (or a developer) provides, if any."""
    return os.environ.get("NINEPLAN_TEST_DATABASE_URL")


@asynccontextmanager
async def postgres_schema() -> AsyncIterator[str]:
    """A fresh schema on the test server, as a URL that makes it the search path; dropped after."""
    import asyncpg

    url = postgres_url()
    assert url, "NINEPLAN_TEST_DATABASE_URL is not set"
    schema = f"t_{uuid.uuid4().hex[:16]}"
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(f"CREATE SCHEMA {schema}")
        yield f"{url}{'&' if '?' in url else '?'}search_path={schema}"
    finally:
        await connection.execute(f"DROP SCHEMA {schema} CASCADE")
        await connection.close()


@asynccontextmanager
async def open_backend(
    kind: str,
    root: Path,
    *,
    failing: FailingPlanFiles | None = None,
    remembered: int = DEFAULT_LIMITS.remembered_requests,
) -> AsyncIterator[Backend]:
    """The use cases over one backend: "memory", "sqlite", "sqlite-loop" (the stdio server's
    catalog, committing on the event loop) or "postgres" (a fresh schema, dropped after),
    remembering the newest `remembered` request ids."""
    clock = FixedClock(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    settings = Settings(
        sessions_path=root,
        storage="memory" if kind == "memory" else "sqlite",
        limits=attrs.evolve(DEFAULT_LIMITS, remembered_requests=remembered),
    )

    def files(folder: Path, recovered: Path) -> PlanFiles:
        assert failing is not None
        failing.inner = DirectoryPlanFiles(folder, recovered)
        return failing

    async with AsyncExitStack() as stack:
        if kind == "postgres":
            url = await stack.enter_async_context(postgres_schema())
            settings = attrs.evolve(settings, database_url=url)
        service = await stack.enter_async_context(
            open_service(
                settings,
                clock=clock,
                plan_files=None if failing is None else files,
                one_client=kind == "sqlite-loop",
            )
        )
        yield Backend(kind, service, service.catalog, clock, root)
