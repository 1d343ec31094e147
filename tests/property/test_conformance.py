"""The core's conformance machine, run against the memory and the SQLite adapters."""

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from hypothesis import settings

from nineplan_adapters.clock import FixedClock
from nineplan_adapters.memory import MemorySessionCatalog
from nineplan_adapters.sqlite import SqliteSessionCatalog
from nineplan_core.service import NinePlan
from nineplan_core.testing import QueueConformance
from tests.fakes import make_service, postgres_catalog

EXAMPLES = 2000 if os.environ.get("NINEPLAN_SOAK") else 200


class MemoryConformance(QueueConformance):
    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[NinePlan]:
            yield make_service(MemorySessionCatalog(), FixedClock())

        return opened()


class SqliteConformance(QueueConformance):
    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[NinePlan]:
            root = Path(tempfile.mkdtemp(prefix="nineplan-conformance-"))
            catalog = SqliteSessionCatalog(root, durability="normal")
            try:
                yield make_service(catalog, FixedClock())
            finally:
                await catalog.aclose()
                shutil.rmtree(root, ignore_errors=True)

        return opened()


TestMemoryConformance = MemoryConformance.TestCase
TestMemoryConformance.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=25, deadline=None
)
TestSqliteConformance = SqliteConformance.TestCase
TestSqliteConformance.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=25, deadline=None
)


class PostgresConformance(QueueConformance):
    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[NinePlan]:
            root = Path(tempfile.mkdtemp(prefix="nineplan-conformance-"))
            try:
                async with postgres_catalog(root) as catalog:
                    yield make_service(catalog, FixedClock())
            finally:
                shutil.rmtree(root, ignore_errors=True)

        return opened()


TestPostgresConformance = pytest.mark.postgres(PostgresConformance.TestCase)
TestPostgresConformance.settings = settings(
    max_examples=EXAMPLES, stateful_step_count=25, deadline=None
)
