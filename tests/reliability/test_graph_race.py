"""The workers' race on plans that wait for each other (DESIGN §11), three runs per backend:
nothing pulled before its prerequisites were settled, every plan completed exactly once."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import postgres_schema
from tests.integration.servers import PROJECT
from tests.reliability.graph_race import (
    CONCURRENT,
    GraphRaceResult,
    postgres_graph_race,
    sqlite_graph_race,
)

#: Timing-bound (races): `make test` runs these after the parallel phase, two at a time (each
#: keeps a core). `make torture` runs the race 20 times more through tests.reliability.graph_race.
pytestmark = pytest.mark.serial
RUNS = 3


def _assert_clean(result: GraphRaceResult) -> None:
    assert result.width >= 8
    assert (result.once, result.twice, result.lost) == (200, 0, 0)
    assert result.early == []
    assert result.valid, result.issues
    assert result.issues == []
    assert result.peak_active >= CONCURRENT


@pytest.mark.parametrize("run", range(RUNS))
async def test_eight_workers_drain_a_random_graph_on_sqlite_in_its_order(tmp_path: Path, run: int):
    """8 workers, each its own stdio server process and SDK client, drain a random 200-plan
    graph (at least 8 wide) on one SQLite session, holding each plan 20-50 ms: the journal
    shows no plan pulled before every plan it waits for was settled, every plan completed
    exactly once and none lost, at least 4 plans active at one moment, and admin_validate
    (prerequisites_respected included) finds the session valid."""
    result = await sqlite_graph_race(tmp_path, seed=run)
    _assert_clean(result)
    print(f"run {run}: 8 workers drained a {result.width}-wide graph in {result.seconds:.1f} s, "  # noqa: T201
          f"{result.peak_active} active at most, {result.blocked} blocked pulls")  # fmt: skip


@pytest.mark.postgres
@pytest.mark.parametrize("run", range(RUNS))
async def test_two_machines_of_four_workers_drain_a_random_graph_on_postgres_in_its_order(
    tmp_path: Path, run: int
):
    """2 x 4 workers, each its own stdio server process, on two "machines" (separate sessions
    folders) sharing one PostgreSQL database, drain a random 200-plan graph: no plan pulled
    before its prerequisites were settled (from the journal), every plan completed exactly
    once, none lost, at least 4 active at one moment, the session valid."""
    async with postgres_schema() as url:
        result = await postgres_graph_race(tmp_path, url, seed=run)
    _assert_clean(result)
    print(f"run {run}: 2 x 4 workers on PostgreSQL drained a {result.width}-wide graph in "  # noqa: T201
          f"{result.seconds:.1f} s, {result.peak_active} active at most, {result.blocked} blocked pulls")  # fmt: skip


def test_the_torture_graph_race_prints_its_table_and_exits_0():
    """`python -m tests.reliability.graph_race` (what `make torture` runs 20 times) races its
    workers over a small graph, prints one row per backend with every plan completed once and
    none pulled early, and exits 0."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.reliability.graph_race", "--runs", "1", "--workers", "2",
         "--plans", "12"],
        capture_output=True, text=True, timeout=300, check=False, cwd=PROJECT,
        env={**os.environ, "NINEPLAN_TEST_DATABASE_URL": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| sqlite | 2 | 1 | 12 | 12-12 | 12 | 0 | 0 | 0 | 1/1 | 2-2 |" in done.stdout
