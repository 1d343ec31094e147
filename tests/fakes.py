"""Test doubles that honour the ports, and a helper that opens the use cases on a backend."""

import datetime as dt
import errno
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs

from nineplan_adapters.clock import FixedClock
from nineplan_adapters.files import DirectoryPlanFiles, file_system_error
from nineplan_adapters.ids import SequentialPlanIds, ThreeWordNames
from nineplan_adapters.memory import MemoryPlanFiles, MemorySessionCatalog
from nineplan_adapters.sqlite import SqliteSessionCatalog
from nineplan_core.model import DEFAULT_LIMITS
from nineplan_core.ports import PlanFiles, SessionCatalog
from nineplan_core.service import NinePlan

PLAN = {
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
        store = await self.catalog.open(name)
        async with store.reading() as reader:
            data = await reader.files.read(plan_id)
        return None if data is None else data.decode("utf-8", errors="replace")

    async def write_plan_text(self, name: str, plan_id: str, text: str | bytes) -> None:
        """Play the agent editing a plan file."""
        store = await self.catalog.open(name)
        data = text.encode("utf-8") if isinstance(text, str) else text
        await store.files.write(plan_id, data)  # type: ignore[attr-defined] # both stores expose files

    async def recovered(self, name: str) -> dict[str, bytes]:
        """What the session's recovered/ folder holds, by file name."""
        store = await self.catalog.open(name)
        files = store.files  # type: ignore[attr-defined] # both stores expose files
        if isinstance(files, MemoryPlanFiles):
            return dict(files.recovered)
        folder = Path(files.recovered)
        return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.is_dir() else {}

    async def delete_plan_file(self, name: str, plan_id: str) -> None:
        store = await self.catalog.open(name)
        await store.files.remove(plan_id)  # type: ignore[attr-defined]


@attrs.define
class FailingPlanFiles:
    """DirectoryPlanFiles that fails chosen operations with an OSError (fault injection)."""

    inner: PlanFiles
    failing: set[str] = attrs.field(factory=set)
    error: int = errno.ENOSPC

    def path(self, plan_id: str) -> str:
        return self.inner.path(plan_id)

    def _maybe_fail(self, operation: str) -> None:
        if operation in self.failing:
            raise file_system_error(f"{operation} a plan file", OSError(self.error, "injected"))

    async def read(self, plan_id: str) -> bytes | None:
        return await self.inner.read(plan_id)

    async def write(self, plan_id: str, data: bytes) -> None:
        self._maybe_fail("write")
        await self.inner.write(plan_id, data)

    async def keep(self, file_name: str, data: bytes) -> str:
        self._maybe_fail("keep")
        return await self.inner.keep(file_name, data)

    async def remove(self, plan_id: str) -> None:
        self._maybe_fail("remove")
        await self.inner.remove(plan_id)

    async def names(self) -> list[str]:
        return await self.inner.names()

    async def recover(self, file_name: str) -> None:
        self._maybe_fail("recover")
        await self.inner.recover(file_name)


def make_service(catalog: SessionCatalog, clock: FixedClock) -> NinePlan:
    return NinePlan(
        catalog=catalog,
        clock=clock,
        plan_ids=SequentialPlanIds(),
        session_names=ThreeWordNames(seed=1),
    )


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
async def postgres_catalog(
    root: Path, remembered: int = DEFAULT_LIMITS.remembered_requests
) -> AsyncIterator[SessionCatalog]:
    from nineplan_adapters.postgres.catalog import PostgresSessionCatalog, connect_pool

    async with postgres_schema() as url:
        catalog = PostgresSessionCatalog(await connect_pool(url), root, remembered=remembered)
        try:
            yield catalog
        finally:
            await catalog.aclose()


@asynccontextmanager
async def open_backend(
    kind: str,
    root: Path,
    *,
    failing: FailingPlanFiles | None = None,
    remembered: int = DEFAULT_LIMITS.remembered_requests,
) -> AsyncIterator[Backend]:
    """The use cases over backend `kind`, remembering the newest `remembered` request ids."""
    clock = FixedClock(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    catalog: SessionCatalog
    if kind == "postgres":
        async with postgres_catalog(root, remembered) as pg_catalog:
            yield Backend(kind, make_service(pg_catalog, clock), pg_catalog, clock, root)
        return
    if kind == "memory":
        catalog = MemorySessionCatalog(remembered=remembered)
    else:

        def files(folder: Path, recovered: Path) -> PlanFiles:
            directory = DirectoryPlanFiles(folder, recovered)
            if failing is None:
                return directory
            failing.inner = directory
            return failing

        # "sqlite-loop": the stdio server's catalog, committing on the event loop
        catalog = SqliteSessionCatalog(
            root, plan_files=files, commit_on_loop=kind == "sqlite-loop", remembered=remembered
        )
    try:
        yield Backend(kind, make_service(catalog, clock), catalog, clock, root)
    finally:
        await catalog.aclose()
