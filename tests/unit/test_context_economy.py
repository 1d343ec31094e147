"""What nineplan costs a client's context stays within its budgets (docs/performance.md, rows
18 and 19; issue 17)."""

from benchmarks.context import INSTRUCTION_BYTES, TOOL_TOKENS, context_cost
from benchmarks.run import run, table


async def test_the_tool_list_and_the_instructions_stay_within_budget():
    """tools/list stays under 2,000 tokens (description + input schema characters / 4, summed
    over the tools) and the server instructions under 2 KB, the cap one major client applies."""
    tokens, instructions = await context_cost()
    assert 0 < tokens < TOOL_TOKENS
    assert 0 < instructions < INSTRUCTION_BYTES


async def test_the_benchmark_rows_for_the_budgets_run_alone():
    """`python -m benchmarks.run --rows 18,19` measures just those rows, both within target."""
    rows = await run("tiny", {18, 19})
    assert [row.number for row in rows] == [18, 19]
    assert all(row.met for row in rows)
    assert "tokens" in table(rows, "tiny")
