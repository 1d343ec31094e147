"""The core's conformance machine, run against the memory, SQLite and PostgreSQL backends."""

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import settings

from nineplan_adapters.backends import chosen
from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, repeatable, running
from nineplan_adapters.storage.priming import Primer
from nineplan_core.primed import PrimedSession
from nineplan_core.service import NinePlan
from nineplan_core.testing import QueueConformance
from tests.fakes import postgres_schema

SOAK = bool(os.environ.get("NINEPLAN_SOAK"))
EXAMPLES = 2000 if SOAK else 40 if os.environ.get("NINEPLAN_FAST") else 200


class ContainerConformance(QueueConformance):
    """The use cases as the container builds them over a scratch sessions folder, with the
    backend's primer (nineplan_adapters.backends) held to the state too."""

    options: ClassVar[dict[str, Any]] = {}
    found: Primer | None = None

    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        return self.opened(**self.options)

    @asynccontextmanager
    async def opened(self, **options: Any) -> AsyncIterator[NinePlan]:
        root = Path(tempfile.mkdtemp(prefix="nineplan-conformance-"))
        settings = Settings(sessions_path=root, durability="normal", **options)
        app = repeatable(build_container(settings), self.clock)
        try:
            async with running(app) as service:
                self.found = chosen(settings).primer(settings, app.catalog())
                yield service
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def primer(self) -> Callable[[str], PrimedSession | None] | None:
        return self.found.find if self.found is not None else None


class MemoryConformance(ContainerConformance):
    options: ClassVar[dict[str, Any]] = {"storage": "memory"}


class SqliteConformance(ContainerConformance):
    pass


class PostgresConformance(ContainerConformance):
    def service_context(self) -> AbstractAsyncContextManager[NinePlan]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[NinePlan]:
            async with postgres_schema() as url, self.opened(database_url=url) as service:
                yield service

        return opened()


#: 22 steps an example (25 before plans waited for others): a step now adds and pulls more
#: plans (batches, every worker taking its turn), so each costs more; 22 keeps the run within
#: a fifth of its time before.
STEPS = settings(max_examples=EXAMPLES, stateful_step_count=22, deadline=None)
#: The databases run the same rules as memory, SQLite with files and PostgreSQL over the
#: network too (five times slower than SQLite): fewer examples keep `make test` under its time
#: budget; `make soak` runs every backend as deep.
FILE_STEPS = settings(STEPS, max_examples=EXAMPLES if SOAK else EXAMPLES * 3 // 4)
SERVER_STEPS = settings(STEPS, max_examples=EXAMPLES if SOAK else EXAMPLES * 3 // 8)
TestMemoryConformance = MemoryConformance.TestCase
TestMemoryConformance.settings = STEPS
TestSqliteConformance = SqliteConformance.TestCase
TestSqliteConformance.settings = FILE_STEPS
TestPostgresConformance = pytest.mark.postgres(PostgresConformance.TestCase)
TestPostgresConformance.settings = SERVER_STEPS
