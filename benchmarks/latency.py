"""Median latency of single calls over stdio: a no-op tool on a minimal MCPServer against
nineplan's tools, the size of nineplan's tools/list answer and what it costs in tokens.

    python -m benchmarks.latency [--calls 300]
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from benchmarks.run import MINIMAL_SERVER
from nineplan_adapters.entrypoints.cli.demo import server_command
from nineplan_adapters.entrypoints.mcp.reference import tool_list_tokens

PLAN = {"context": "c", "goal": "g", "approach": "a", "success_criteria": "s"}


async def _median_ms(client: Client, tool: str, arguments: dict[str, Any], calls: int) -> float:
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        await client.call_tool(tool, arguments)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory(prefix="nineplan-latency-") as folder:
        minimal = Path(folder) / "minimal_server.py"
        minimal.write_text(MINIMAL_SERVER)
        async with Client(
            StdioServerParameters(command=sys.executable, args=[str(minimal)]), mode="legacy"
        ) as client:
            await _median_ms(client, "noop", {}, 20)
            noop = await _median_ms(client, "noop", {}, calls)
        async with Client(server_command(Path(folder) / "sessions"), mode="legacy") as client:
            listed = await client.list_tools()
            size = len(
                json.dumps(
                    listed.model_dump(mode="json", by_alias=True, exclude_none=True)
                ).encode()
            )
            tokens = tool_list_tokens(listed.tools)
            await client.call_tool("9plan_session_create", {})
            await _median_ms(client, "9plan_queue_add", PLAN, 20)
            add = await _median_ms(client, "9plan_queue_add", PLAN, calls)
            validate = await _median_ms(client, "9plan_admin_validate", {}, calls)
    print(f"tools/list answer: {size:,} bytes")
    print(
        f"tool list: {tokens:,} tokens (descriptions + input schemas as JSON, 4 characters a token)"
    )
    print(
        f"median over {calls} calls: no-op {noop:.2f} ms, 9plan_queue_add {add:.2f} ms, 9plan_admin_validate {validate:.2f} ms"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=300)
    anyio.run(main, parser.parse_args().calls)
