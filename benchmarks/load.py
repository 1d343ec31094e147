"""Load: N concurrent MCP clients, each running add -> pull -> complete cycles on its own session.

Over HTTP all clients share one server; over stdio each client spawns its own server (that is
how stdio works). Prints throughput and latency per transport.

    python -m benchmarks.load [--clients 8] [--cycles 100] [--transport http stdio]
"""

import argparse
import statistics
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import attrs
from mcp import Client

from nineplan_adapters.entrypoints.cli.demo import server_command, spawned_http_server

PLAN = {
    "context": "load test",
    "goal": "do a unit of work",
    "approach": "steps",
    "success_criteria": "done",
}


@attrs.define
class LoadResult:
    transport: str
    clients: int
    cycles: int
    calls: int = 0
    errors: int = 0
    seconds: float = 0.0
    latencies_ms: list[float] = attrs.field(factory=list)
    valid: bool = True

    @property
    def throughput(self) -> float:
        return self.calls / self.seconds if self.seconds else 0.0

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0

    def row(self) -> str:
        return (
            f"| {self.transport} | {self.clients} x {self.cycles} | {self.calls} | {self.errors} | "
            f"{self.throughput:.0f} | {statistics.median(self.latencies_ms):.2f} | {self.percentile(0.99):.2f} | "
            f"{'yes' if self.valid else 'NO'} |"
        )


HEADER = "| transport | clients x cycles | calls | errors | calls/s | p50 ms | p99 ms | valid |\n|---|---|---|---|---|---|---|---|"


async def _timed(
    client: Client, result: LoadResult, tool: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    start = time.perf_counter()
    reply = await client.call_tool(tool, arguments)
    result.latencies_ms.append((time.perf_counter() - start) * 1000)
    result.calls += 1
    if reply.is_error:
        result.errors += 1
    return reply.structured_content or {}


async def _worker(client: Client, result: LoadResult, cycles: int) -> None:
    name = (await _timed(client, result, "9plan_session_create", {}))["session_name"]
    scoped = {"session_name": name}
    for _ in range(cycles):
        await _timed(client, result, "9plan_queue_add", {**PLAN, **scoped})
        await _timed(client, result, "9plan_queue_pull", scoped)
        await _timed(client, result, "9plan_plan_complete", {"outcome": "done", **scoped})
    report = await client.call_tool("9plan_admin_validate", scoped)
    state = await client.call_tool("9plan_admin_state", scoped)
    completed = (state.structured_content or {}).get("completed_count")
    if report.is_error or not (report.structured_content or {}).get("valid") or completed != cycles:
        result.valid = False


async def run_load(transport: str, clients: int, cycles: int, folder: Path) -> LoadResult:
    """Run the load on `transport` with sessions under `folder`."""
    result = LoadResult(transport, clients, cycles)
    async with AsyncExitStack() as stack:
        if transport == "http":
            url = await stack.enter_async_context(spawned_http_server(folder))
            targets: list[Any] = [url] * clients
        else:
            targets = [server_command(folder) for _ in range(clients)]
        connected = [
            await stack.enter_async_context(Client(target, mode="legacy")) for target in targets
        ]
        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for client in connected:
                group.start_soon(_worker, client, result, cycles)
        result.seconds = time.perf_counter() - start
    return result


async def main(clients: int, cycles: int, transports: list[str]) -> None:
    print(HEADER)
    for transport in transports:
        with tempfile.TemporaryDirectory(prefix="nineplan-load-") as folder:
            print((await run_load(transport, clients, cycles, Path(folder))).row(), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--cycles", type=int, default=100)
    parser.add_argument(
        "--transport", nargs="+", default=["http", "stdio"], choices=["http", "stdio"]
    )
    options = parser.parse_args()
    anyio.run(main, options.clients, options.cycles, options.transport)
