"""The composition root: the one module that names every concrete class."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from dependency_injector import containers, providers

from nineplan_adapters.clock import utc_now
from nineplan_adapters.config import Durability, Settings
from nineplan_adapters.files import PlanFilesFactory, directory_plan_files
from nineplan_adapters.ids import ThreeWordNames, random_plan_id
from nineplan_adapters.memory import MemorySessionCatalog
from nineplan_adapters.sqlite.catalog import SqliteSessionCatalog
from nineplan_core.ports import SessionCatalog
from nineplan_core.service import NinePlan


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


async def postgres_catalog(
    url: str, root: Path, plan_files: PlanFilesFactory, remembered: int
) -> AsyncIterator[SessionCatalog]:
    # Imported here: asyncpg is only loaded when a database URL asks for it.
    from nineplan_adapters.postgres.catalog import PostgresSessionCatalog, connect_pool  # noqa: PLC0415

    catalog = PostgresSessionCatalog(
        await connect_pool(url), root, plan_files=plan_files, remembered=remembered
    )
    try:
        yield catalog
    finally:
        await catalog.aclose()


async def memory_catalog(remembered: int) -> AsyncIterator[SessionCatalog]:
    yield MemorySessionCatalog(remembered=remembered)


class SqliteStorage(containers.DeclarativeContainer):
    """The embedded default: a SQLite database and a plan folder per session."""

    settings = providers.Dependency(instance_of=Settings)
    one_client = providers.Dependency(instance_of=bool, default=False)
    plan_files = providers.Object(directory_plan_files)
    catalog = providers.Resource(
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
    plan_files = providers.Object(directory_plan_files)
    catalog = providers.Resource(
        postgres_catalog,
        url=settings.provided.database_url,
        root=settings.provided.sessions_path,
        plan_files=plan_files,
        remembered=settings.provided.limits.remembered_requests,
    )


class MemoryStorage(containers.DeclarativeContainer):
    """Everything in memory: for embedding without a disk and for tests."""

    settings = providers.Dependency(instance_of=Settings)
    catalog = providers.Resource(
        memory_catalog, remembered=settings.provided.limits.remembered_requests
    )


class App(containers.DeclarativeContainer):
    """The use cases wired to a storage backend, a clock and id generators."""

    settings = providers.Dependency(instance_of=Settings)
    storage = providers.DependenciesContainer()
    clock = providers.Object(utc_now)
    plan_ids = providers.Object(random_plan_id)
    session_names = providers.Singleton(ThreeWordNames)
    limits = settings.provided.limits
    service = providers.Singleton(
        NinePlan,
        catalog=storage.catalog,
        clock=clock,
        plan_ids=plan_ids,
        session_names=session_names,
        limits=limits,
    )


def build_container(settings: Settings, *, one_client: bool = False) -> App:
    """An App container over the storage backend the settings choose.

    `one_client`: everything runs for one client that waits for each answer (the stdio
    server), so the SQLite store may wait for its fsync on the event loop (see
    SqliteSessionCatalog.commit_on_loop).
    """
    storage: containers.DeclarativeContainer
    if settings.database_url:
        storage = PostgresStorage(settings=settings)
    elif settings.storage == "memory":
        storage = MemoryStorage(settings=settings)
    else:
        storage = SqliteStorage(settings=settings, one_client=one_client)
    app = App(settings=settings, storage=storage)
    app.service.enable_async_mode()
    app.check_dependencies()
    return app


@asynccontextmanager
async def running(app: App) -> AsyncIterator[NinePlan]:
    """Open the container's resources, yield the use cases, and close everything after."""
    storage = app.storage()
    try:
        await storage.init_resources()
        service: NinePlan = await app.service()  # type: ignore[misc] # async mode: the provider returns a Future
        yield service
    finally:
        await storage.shutdown_resources()
        app.reset_singletons()
