"""What nineplan costs a client's context stays within its budgets (DESIGN §9, issue 17)."""

from benchmarks.context import INSTRUCTION_BYTES, TOOL_TOKENS, context_cost


async def test_the_tool_list_and_the_instructions_stay_within_budget():
    """tools/list stays under 2,000 tokens (description + input schema characters / 4, summed
    over the tools) and the server instructions under 2 KB, the cap one major client applies."""
    tokens, instructions = await context_cost()
    assert 0 < tokens < TOOL_TOKENS
    assert 0 < instructions < INSTRUCTION_BYTES
