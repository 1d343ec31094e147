"""The benchmark suite at its tiny size, so that `make bench` keeps working (timings are not checked)."""

from benchmarks.run import run, write


async def test_the_benchmark_suite_runs_and_writes_its_table(tmp_path):
    """The tiny benchmark run measures rows 1-7 and writes its JSON and its Markdown table."""
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
    table = write(rows, "tiny", tmp_path)
    assert (tmp_path / "latest.json").exists()
    assert table.count("\n| ") == len(rows) + 1
