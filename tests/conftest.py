"""Shared fixtures: the asyncio backend, hypothesis profiles, and each storage backend."""

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from hypothesis import HealthCheck, settings

from tests.fakes import Backend, open_backend, postgres_url

settings.register_profile("dev", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "ci",
    parent=settings.get_profile("ci"),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "soak", deadline=None, max_examples=2000, suppress_health_check=list(HealthCheck)
)
# `make test-fast`: fewer examples for the inner loop; `make test` runs the full count.
settings.register_profile("fast", parent=settings.get_profile("dev"), max_examples=25)
settings.load_profile(
    "soak"
    if os.environ.get("NINEPLAN_SOAK")
    else "ci"
    if os.environ.get("CI")
    else "fast"
    if os.environ.get("NINEPLAN_FAST")
    else "dev"
)


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist each worker gets a PostgreSQL database of its own (`<name>_gw0`, ...),
    created if missing, and the URL in the environment names it, so the servers a test starts
    inherit it. A database, not a schema: LISTEN channels span a whole database, and one
    worker's notifications would wake another worker's watches."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or not (url := postgres_url()):
        return
    parts = urlsplit(url)
    database = f"{parts.path.lstrip('/')}_{worker}"
    asyncio.run(_create_database(url, database))
    os.environ["NINEPLAN_TEST_DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{database}"))


async def _create_database(url: str, database: str) -> None:
    """Creates `database` on the server at `url` unless it exists."""
    import asyncpg

    connection = await asyncpg.connect(url)
    try:
        if not await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database):
            await connection.execute(f'CREATE DATABASE "{database}"')
    finally:
        await connection.close()


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


#: Folders whose tests start processes (servers, CLIs, browsers) or run long: `slow`.
SLOW_FOLDERS = {"integration", "reliability", "smoke", "browser", "clients"}
#: Files elsewhere whose tests start processes too.
SLOW_FILES = {"test_watch.py"}

#: The real MCP clients' tests (`make clients`): collected only when named on the command line.
CLIENTS = Path(__file__).parent / "clients"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/clients drives the real Claude Code, Codex and Gemini CLI, which `make clients`
    installs and runs (`pytest tests/clients`): a run that does not name that folder, or a
    test in it, leaves it out (`make test`, `make test-fast`, a bare `pytest`)."""
    if collection_path != CLIENTS:
        return None
    here = config.invocation_params.dir
    named = (here / arg.split("::")[0] for arg in config.args)
    return not any(path.resolve().is_relative_to(CLIENTS) for path in named)


#: The longest tests of the parallel phase, longest first (`make test`'s slowest list): each
#: xdist worker starts with some of them (`_long_tests_first`), so that none is left to run
#: alone at the end while the other workers idle.
LONG_TESTS = (
    "tests/property/test_conformance.py::TestPostgresConformance",
    "tests/integration/test_bench.py::test_the_benchmark_suite_runs_and_writes_its_table",
    "tests/property/test_plan_edits.py::test_every_line_the_agent_added_is_stored_or_recovered[postgres]",
    "tests/property/test_conformance.py::TestSqliteConformance",
    "tests/property/test_plan_edits.py::test_every_line_the_agent_added_is_stored_or_recovered[sqlite]",
    "tests/property/test_conformance.py::TestMemoryConformance",
    "tests/reliability/test_fuzz.py::test_hostile_arguments_through_mcp",
    "tests/property/test_plan_edits.py::test_every_line_written_in_a_queued_file_is_pulled_or_recovered[postgres]",
    "tests/property/test_plan_edits.py::test_every_line_written_in_a_queued_file_is_pulled_or_recovered[sqlite]",
    "tests/integration/test_bench.py::test_the_workers_benchmark_runs_and_counts_no_plan_twice_or_lost",
    "tests/reliability/test_limits.py::test_the_queue_at_10000_plans",
    "tests/property/test_finished_elsewhere.py",
)


def _long_tests_first(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """`items` reordered for pytest-xdist's worksteal scheduling, which first hands each of
    `workers` workers one contiguous share of the list and later steals from a share's end:
    the long tests are dealt round-robin to the start of the shares, longest first, and the
    other tests keep their order (a module's tests stay together) around them."""

    def rank(item: pytest.Item) -> int:
        return next((n for n, long in enumerate(LONG_TESTS) if item.nodeid.startswith(long)), -1)

    long = sorted((item for item in items if rank(item) >= 0), key=rank)
    rest = iter([item for item in items if rank(item) < 0])
    shares: list[list[pytest.Item]] = [long[worker::workers] for worker in range(workers)]
    ordered: list[pytest.Item] = []
    for worker, share in enumerate(shares):
        size = (worker + 1) * len(items) // workers - worker * len(items) // workers
        ordered += share + [item for _, item in zip(range(size - len(share)), rest, strict=False)]
    return ordered + list(rest)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks each test by what it needs (`browser`, `slow`: `make test-fast` leaves them out),
    and on xdist workers puts the long tests first in each worker's share.

    Without a test PostgreSQL server the postgres-marked tests are skipped, with the reason
    shown; under CI (CI=true) a missing server fails the run instead of skipping silently."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if workers > 1 and config.getoption("dist", None) == "worksteal":
        items[:] = _long_tests_first(items, workers)
    tests = Path(__file__).parent
    for item in items:
        where = item.path.relative_to(tests).parts
        if where[0] == "browser":
            item.add_marker(pytest.mark.browser)
        if where[0] == "clients":
            item.add_marker(pytest.mark.clients)
        if where[0] in SLOW_FOLDERS or where[-1] in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
    if postgres_url():
        return
    if os.environ.get("CI") == "true" and any("postgres" in item.keywords for item in items):
        raise pytest.UsageError(
            "CI=true but NINEPLAN_TEST_DATABASE_URL is not set: .ci/run starts a PostgreSQL "
            "server for the postgres tests, and CI never skips them"
        )
    skip = pytest.mark.skip(
        reason="NINEPLAN_TEST_DATABASE_URL is not set (.ci/run starts a server)"
    )
    for item in items:
        if "postgres" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(
    params=["memory", "sqlite", "sqlite-loop", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def backend_kind(request: pytest.FixtureRequest) -> str:
    """Each storage backend's name, for a test that opens the backend itself."""
    return str(request.param)


@pytest.fixture
async def backend(backend_kind: str, tmp_path: Path) -> AsyncIterator[Backend]:
    """The use cases over each storage backend, with a fixed clock and sequential ids."""
    async with open_backend(backend_kind, tmp_path) as opened:
        yield opened
