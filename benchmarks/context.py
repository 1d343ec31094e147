"""What nineplan costs a client's context before any call: the tool list and the instructions."""

import json

from mcp import Client

from nineplan_adapters import open_nineplan
from nineplan_adapters.entrypoints.mcp import build_server

#: The budget for tools/list: tokens, taken as characters / 4 (docs/architecture.md,
#: "Prerequisites": thirteen tools, `after` and `queue_add_many` among them, stay under it).
TOOL_TOKENS = 2_500
#: The cap one major client applies to server instructions.
INSTRUCTION_BYTES = 2_048


async def context_cost() -> tuple[int, int]:
    """tools/list in tokens (the sum over tools of len(description) + len(json.dumps(
    inputSchema)), divided by 4) and the instructions' size in UTF-8 bytes, as a client
    receives them."""
    async with open_nineplan(storage="memory") as service, Client(build_server(service)) as client:
        tools = (await client.list_tools()).tools
        characters = sum(
            len(tool.description or "") + len(json.dumps(tool.input_schema)) for tool in tools
        )
        return characters // 4, len((client.instructions or "").encode())
