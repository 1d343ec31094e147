"""The benchmark suite at its tiny size, so that `make bench` keeps working (timings are not checked)."""

from benchmarks import steering, workers
from benchmarks.run import run, write

from tests.fakes import postgres_url


async def test_the_benchmark_suite_runs_and_writes_its_table(tmp_path):
    """The tiny benchmark run measures rows 1-7 and writes its JSON and its Markdown table;
    among its rows, 22-24 (and 25 with a PostgreSQL server): a pull past waiting plans beside
    one on ready plans, add_many beside single adds, and 2 workers draining a graph beside a
    flat queue, each with samples and a ratio; the drains' journals show no plan pulled before
    its prerequisites were settled, none completed twice, none lost."""
    rows = await run("tiny")
    assert [row.number for row in rows][:7] == [
        1,
        2,
        3,
        4,
        5,
        6,
        7,
    ]  # 8 and 9 with a PostgreSQL server
    assert all(row.value for row in rows)
    graph = [row for row in rows if row.number in {22, 23, 24, 25}]
    assert [row.number for row in graph] == [22, 23, 24] + ([25] if postgres_url() else [])
    assert all(row.floor and row.ratio for row in graph)
    (drain,) = [row for row in graph if row.number == 24]
    assert "journal: 0 pulled early, 0 completed twice, 0 lost" in drain.measure
    assert drain.unit == "plans/s"
    table = write(rows, "tiny", tmp_path)
    assert (tmp_path / "latest.json").exists()
    assert table.count("\n| ") == len(rows) + 1


async def test_the_workers_benchmark_runs_and_counts_no_plan_twice_or_lost():
    """`python -m benchmarks.workers` at its tiny size: 1 and 2 worker processes on SQLite (and
    PostgreSQL with a test server) beside their driver floors, every plan completed once (none
    twice, none lost), and a table row per backend and worker count with both target lines."""
    lines = await workers.measure("tiny", postgres_url())
    assert [(line.workers, line.twice, line.lost) for line in lines[:2]] == [(1, 0, 0), (2, 0, 0)]
    assert all(line.ours.latencies and line.floor.latencies for line in lines)
    text = workers.table(lines, "tiny")
    assert text.count("\n| sqlite |") == 2
    assert text.count("NOT met") + text.count(": met") == 2 * len({line.backend for line in lines})


async def test_the_drag_move_benchmark_runs_and_keeps_the_order():
    """`python -m benchmarks.steering` at its tiny size: both kinds of move on SQLite (and
    PostgreSQL with a test server), each timed, the queue left in the order the moves made
    (it exits otherwise), and a verdict line per backend."""
    lines = await steering.measure("tiny", postgres_url())
    assert [(line.backend, line.kind, len(line.samples)) for line in lines[:2]] == [
        ("sqlite", "random", 20),
        ("sqlite", "same place", 20),
    ]
    assert sum(line.renumbered for line in lines) >= 1  # a full gap was made room in
    text = steering.table(lines, "tiny")
    assert text.count("NOT met") + text.count(": met") == len({line.backend for line in lines})
