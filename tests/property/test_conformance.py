"""The core's conformance machine, run against the memory, SQLite and PostgreSQL backends."""

import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from nineplan_adapters.config import Settings
from nineplan_core.service import NinePlan
from nineplan_core.testing import QueueConformance
from tests.fakes import open_service, postgres_schema

EXAMPLES = 2000 if os.environ.get("NINEPLAN_SOAK") else 200


@asynccontextmanager
async def container_service(**options: Any) -> AsyncIterator[NinePlan]:
    """The use cases as the container builds them, over a scratch sessions folder."""
    root = Path(tempfile.mkdtemp(prefix="nineplan-conformance-"))
    try:
        async with open_service(
            Settings(sessions_path=root, durability="normal", **options)
        ) as service:
            yield service
    finally:
        shutil.rmtree(root, ignore_errors=True)


class MemoryConformance(QueueConformance):
    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        return container_service(storage="memory")


class SqliteConformance(QueueConformance):
    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        return container_service()


class PostgresConformance(QueueConformance):
    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[NinePlan]:
            async with postgres_schema() as url, container_service(database_url=url) as service:
                yield service

        return opened()


STEPS = settings(max_examples=EXAMPLES, stateful_step_count=25, deadline=None)
TestMemoryConformance = MemoryConformance.TestCase
TestMemoryConformance.settings = STEPS
TestSqliteConformance = SqliteConformance.TestCase
TestSqliteConformance.settings = STEPS
TestPostgresConformance = pytest.mark.postgres(PostgresConformance.TestCase)
TestPostgresConformance.settings = STEPS
