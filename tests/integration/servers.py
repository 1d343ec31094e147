"""Spawning real nineplan processes for integration tests."""

import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import attrs
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import Client, StdioServerParameters

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, running
from nineplan_adapters.entrypoints.cli.demo import free_port, server_command
from nineplan_adapters.entrypoints.mcp import build_server
from nineplan_adapters.entrypoints.tool_names import ToolNames
from nineplan_adapters.entrypoints.workspace import WorkspaceSources

PROJECT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def stdio_server(sessions_path: Path, **env: str) -> StdioServerParameters:
    """`nineplan serve` over stdio on `sessions_path`, with extra NINEPLAN_* variables."""
    params = server_command(sessions_path)
    params.env = {**(params.env or {}), **env}
    params.cwd = PROJECT
    return params


@asynccontextmanager
async def memory_client(
    sessions_path: Path,
    *,
    mode: str = "auto",
    cwd: Path = PROJECT,
    client: dict[str, Any] | None = None,
    **settings: Any,
) -> AsyncIterator[Client]:
    """A client of the server `nineplan serve` (stdio) builds, in this process, over the SDK's
    in-memory transport: the same container (SQLite sessions in `sessions_path` unless the
    settings choose another backend, so the CLI and other processes of the test read the same
    sessions), the same tools, middleware, prompt, resources and lifespan (the change
    notifier), the same workspace sources (NINEPLAN_WORKSPACE, the client's roots, then `cwd`
    as the process's working directory: the project folder `stdio_server` starts it in).
    `settings` are `Settings` fields by name, given as the NINEPLAN_* variables would be
    (`lease_minutes="0.05"` for NINEPLAN_LEASE_MINUTES=0.05, `database_url=url`); `mode` is
    the client's era (`legacy` or `auto`) and `client` the rest of `mcp.Client`'s keywords
    (`list_roots_callback`, `message_handler`, ...).

    What it leaves out is the process and the wire: `mcp/stdio.py`'s framing (the parse error
    for a line that is not JSON-RPC, fd 1 kept off the wire), the log set-up of `nineplan`'s
    entry point, and exits, signals and kills. Tests of those start `stdio_server`.
    """
    config = Settings.load({}, sessions_path=str(sessions_path), log_level="warn", **settings)
    async with running(build_container(config, one_client=True)) as service:
        server = build_server(
            service,
            workspace=WorkspaceSources.stdio(config.workspace, cwd=str(cwd)),
            names=ToolNames(config.tool_prefix),
        )
        async with Client(server, mode=mode, **(client or {})) as connected:
            yield connected


def child_env(sessions_path: Path, **extra: str) -> dict[str, str]:
    """The environment for a plain subprocess (a script, the CLI) on `sessions_path`."""
    keep = ("PATH", "HOME", "COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")
    return {
        **{k: os.environ[k] for k in keep if k in os.environ},
        "NINEPLAN_SESSIONS_PATH": str(sessions_path),
        **extra,
    }


def run_nineplan(
    sessions_path: Path, *arguments: str, check: bool = False, timeout: float = 120, **env: str
) -> subprocess.CompletedProcess[str]:
    """`nineplan ARGUMENTS` in a child process on `sessions_path`, its output captured as text."""
    return subprocess.run(
        [PYTHON, "-m", "nineplan_adapters", *arguments],
        env=child_env(sessions_path, **env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
        cwd=PROJECT,
    )


@asynccontextmanager
async def spawned_ui(
    sessions_path: Path, *command: str, env: dict[str, str] | None = None
) -> AsyncIterator[str]:
    """Spawn `nineplan ui` (or `command`) on a free loopback port; yield its base URL."""
    port = free_port()
    arguments = command or ("ui",)
    process = await anyio.open_process(
        [PYTHON, "-m", "nineplan_adapters", *arguments, "--port", str(port)],
        env=child_env(sessions_path, NINEPLAN_LOG_LEVEL="warn", **(env or {})),
        cwd=PROJECT,
        stdout=None,
        stderr=None,
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    if process.returncode is not None:
                        raise RuntimeError(f"nineplan {arguments[0]} exited at start") from None
                    await anyio.sleep(0.05)
                else:
                    await stream.aclose()
                    break
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        with anyio.move_on_after(15):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


async def wait_until_listening(
    port: int, process: "subprocess.Popen[bytes]", *, timeout: float = 30
) -> None:
    """Poll until `process` accepts connections on `port`; fail as soon as it exits, or after
    `timeout` seconds."""
    with anyio.fail_after(timeout):
        while True:
            assert process.poll() is None, process.communicate()[1]
            try:
                stream = await anyio.connect_tcp("127.0.0.1", port)
            except OSError:
                await anyio.sleep(0.05)
            else:
                await stream.aclose()
                return


@attrs.define
class Lines:
    """A running `nineplan` child whose stdout is read line by line."""

    process: anyio.abc.Process
    stdout: BufferedByteReceiveStream

    async def line(self) -> str:
        return (await self.stdout.receive_until(b"\n", 1 << 20)).decode()

    async def stop(self, how: signal.Signals = signal.SIGTERM) -> int:
        """Send `how` (SIGTERM by default), then the exit code."""
        self.process.send_signal(how)
        return await self.process.wait()


@asynccontextmanager
async def spawned_nineplan(
    sessions_path: Path, *arguments: str, **env: str
) -> AsyncIterator[Lines]:
    """`nineplan ARGUMENTS` running in a child process while the block runs; killed after."""
    process = await anyio.open_process(
        [PYTHON, "-m", "nineplan_adapters", *arguments],
        env=child_env(sessions_path, **env),
        cwd=PROJECT,
    )
    assert process.stdout is not None
    try:
        yield Lines(process, BufferedByteReceiveStream(process.stdout))
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.wait()
            await process.aclose()
