"""The composition root: the one module that names every concrete class."""

import datetime as dt
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from dependency_injector import containers, providers

from nineplan_adapters.backends import BackendName, chosen
from nineplan_adapters.config import Durability, Settings
from nineplan_adapters.storage.clock import FixedClock, utc_now
from nineplan_adapters.storage.ids import SequentialPlanIds, ThreeWordNames, random_plan_id
from nineplan_adapters.storage.plan_files import PlanFilesFactory, directory_plan_files
from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
from nineplan_core.ports import Clock, SessionCatalog
from nineplan_core.service import NinePlan


@asynccontextmanager
async def sqlite_catalog(
    root: Path,
    *,
    durability: Durability,
    plan_files: PlanFilesFactory,
    commit_on_loop: bool,
    remembered: int,
) -> AsyncIterator[SessionCatalog]:
    catalog = SqliteSessionCatalog(
        root,
        durability=durability,
        plan_files=plan_files,
        commit_on_loop=commit_on_loop,
        remembered=remembered,
    )
    try:
        yield catalog
    finally:
        await catalog.aclose()


@asynccontextmanager
async def postgres_catalog(
    url: str, root: Path, plan_files: PlanFilesFactory, remembered: int
) -> AsyncIterator[SessionCatalog]:
    # Imported here: asyncpg is only loaded when a database URL asks for it.
    from nineplan_adapters.storage.postgres.catalog import PostgresSessionCatalog, connect_pool  # noqa: PLC0415

    catalog = PostgresSessionCatalog(
        await connect_pool(url), root, plan_files=plan_files, remembered=remembered
    )
    try:
        yield catalog
    finally:
        await catalog.aclose()


@asynccontextmanager
async def memory_catalog(remembered: int) -> AsyncIterator[SessionCatalog]:
    # Imported here: a server on the default SQLite storage answers `initialize` sooner
    # without it (docs/performance.md, row 4).
    from nineplan_adapters.storage.memory.catalog import MemorySessionCatalog  # noqa: PLC0415

    yield MemorySessionCatalog(remembered=remembered)


class SqliteStorage(containers.DeclarativeContainer):
    """The embedded default: a SQLite database and a plan folder per session."""

    settings = providers.Dependency(instance_of=Settings)
    one_client = providers.Dependency(instance_of=bool, default=False)
    plan_files = providers.Object(directory_plan_files)
    open_catalog = providers.Factory(
        sqlite_catalog,
        root=settings.provided.sessions_path,
        durability=settings.provided.durability,
        plan_files=plan_files,
        commit_on_loop=one_client,
        remembered=settings.provided.limits.remembered_requests,
    )


class PostgresStorage(containers.DeclarativeContainer):
    """Every session in one PostgreSQL database; plan files mirrored on this machine."""

    settings = providers.Dependency(instance_of=Settings)
    one_client = providers.Dependency(instance_of=bool, default=False)  # SQLite's alone
    plan_files = providers.Object(directory_plan_files)
    open_catalog = providers.Factory(
        postgres_catalog,
        url=settings.provided.database_url,
        root=settings.provided.sessions_path,
        plan_files=plan_files,
        remembered=settings.provided.limits.remembered_requests,
    )


class MemoryStorage(containers.DeclarativeContainer):
    """Everything in memory: for embedding without a disk and for tests."""

    settings = providers.Dependency(instance_of=Settings)
    one_client = providers.Dependency(instance_of=bool, default=False)  # SQLite's alone
    open_catalog = providers.Factory(
        memory_catalog, remembered=settings.provided.limits.remembered_requests
    )


class App(containers.DeclarativeContainer):
    """The use cases wired to a storage backend, a clock and id generators."""

    settings = providers.Dependency(instance_of=Settings)
    storage = providers.DependenciesContainer()
    #: The open catalog: `running` opens `storage.open_catalog` and hands the catalog in here.
    catalog: providers.Dependency[SessionCatalog] = providers.Dependency()
    clock = providers.Object(utc_now)
    plan_ids = providers.Object(random_plan_id)
    session_names = providers.Singleton(ThreeWordNames)
    limits = settings.provided.limits
    service = providers.Singleton(
        NinePlan,
        catalog=catalog,
        clock=clock,
        plan_ids=plan_ids,
        session_names=session_names,
        limits=limits,
        stuck_defers=settings.provided.stuck_defers,
        lease_minutes=settings.provided.lease_minutes,
        verdict_policy=settings.provided.verdicts,
    )


#: The storage container of each backend (nineplan_adapters.backends).
STORAGES: dict[BackendName, type[containers.DeclarativeContainer]] = {
    "sqlite": SqliteStorage,
    "postgres": PostgresStorage,
    "memory": MemoryStorage,
}


def build_container(settings: Settings, *, one_client: bool = False) -> App:
    """An App container over the storage backend the settings choose.

    `one_client`: everything runs for one client that waits for each answer (the stdio
    server), so the SQLite store may wait for its fsync on the event loop (see
    SqliteSessionCatalog.commit_on_loop).
    """
    storage = STORAGES[chosen(settings).name](settings=settings, one_client=one_client)
    storage.check_dependencies()
    return App(settings=settings, storage=storage)


def repeatable(app: App, clock: Clock | dt.datetime, *, seed: int = 1) -> App:
    """Override the clock, plan ids and session names with repeatable ones.

    For answers that must come out the same every run: the tool reference's examples and
    the tests. `clock` is a clock, or a time that a fixed clock keeps saying. Plan ids count
    up from 00001; session names follow `seed`.
    """
    if isinstance(clock, dt.datetime):
        clock = FixedClock(clock)
    app.clock.override(providers.Object(clock))
    app.plan_ids.override(providers.Singleton(SequentialPlanIds))
    app.session_names.override(providers.Singleton(ThreeWordNames, seed=seed))
    return app


@asynccontextmanager
async def running(app: App) -> AsyncIterator[NinePlan]:
    """Open the storage backend's catalog, yield the use cases over it, and close it after."""
    async with app.storage.open_catalog() as catalog:
        try:
            with app.catalog.override(catalog):
                app.check_dependencies()
                yield app.service()
        finally:
            app.reset_singletons()
