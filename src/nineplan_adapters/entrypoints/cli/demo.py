"""`nineplan demo`: a whole session through a real MCP client against a freshly spawned server."""

import json
import os
import socket
import sys
import tempfile
import textwrap
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.types import TextContent

from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES

RULE = "-" * 72


Emit = Callable[[str], object]
#: `call(tool, **arguments)`: a tool call that is shown, returning its structured content;
#: `tool` is the name's own part (`queue_pull`).
Call = Callable[..., Awaitable[dict[str, Any]]]


def _show(emit: Emit, title: str, arguments: dict[str, Any], text: str) -> None:
    emit(RULE)
    emit(f"> {title}({json.dumps(arguments, ensure_ascii=False)})" if arguments else f"> {title}()")
    emit(textwrap.indent(text, "  "))


def server_command(sessions_path: Path, *extra: str) -> StdioServerParameters:
    """How to spawn `nineplan serve` with this interpreter on a sessions folder."""
    env = {"NINEPLAN_SESSIONS_PATH": str(sessions_path), "NINEPLAN_LOG_LEVEL": "warn"}
    env |= {
        key: os.environ[key]
        for key in ("PATH", "HOME", "COVERAGE_PROCESS_START")
        if key in os.environ
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "nineplan_adapters", "serve", *extra], env=env
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def spawned_http_server(
    sessions_path: Path,
    *extra: str,
    env: dict[str, str] | None = None,
    stderr: IO[str] | None = None,
) -> AsyncIterator[str]:
    """Spawn `nineplan serve --transport http` on a free loopback port; yield its MCP URL.
    Its logs go to `stderr` (by default this process's stderr)."""
    port = free_port()
    params = server_command(sessions_path, "--transport", "http", "--port", str(port), *extra)
    env = {**(params.env or {}), **(env or {})}
    process = await anyio.open_process(
        [params.command, *params.args], env=env, stdout=None, stderr=stderr
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    if process.returncode is not None:
                        raise RuntimeError(
                            "nineplan serve --transport http exited at start"
                        ) from None
                    await anyio.sleep(0.05)
                else:
                    await stream.aclose()
                    break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        with anyio.move_on_after(15):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()


@asynccontextmanager
async def _client(transport: str, sessions_path: Path) -> AsyncIterator[Client]:
    if transport == "http":
        async with spawned_http_server(sessions_path) as url, Client(url, mode="legacy") as client:
            yield client
        return
    # The stdio server runs in the project's folder, as clients start it: the session records it.
    project = sessions_path / "notekeeper"
    project.mkdir(exist_ok=True)
    params = server_command(sessions_path)
    params.cwd = project
    async with Client(params, mode="legacy") as client:
        yield client


async def run_demo(transport: str, emit: Emit) -> int:
    """Run the demo on a temporary sessions folder; `emit` receives every call and result
    (the CLI passes print)."""
    with tempfile.TemporaryDirectory(prefix="nineplan-demo-") as folder:
        async with _client(transport, Path(folder)) as client:
            info = client.server_info
            emit(
                f"Connected to {info.name if info else '?'} {info.version if info else ''} over {transport}."
            )
            call = _caller(client, emit)
            created = await call(
                "session_create", task_description="Add login to the notekeeper app"
            )
            await _queue_three_plans(call)
            await _work_through_the_first(call, emit)
        emit(RULE)
        emit("(the server process exits, as when a conversation ends; a fresh one starts)")
        async with _client(transport, Path(folder)) as client:
            call = _caller(client, emit)
            await call("session_resume", session_name=created["session_name"])
            await call("queue_pull")
            await call("plan_discard", reason="Superseded: the app will use single sign-on")
            await call("admin_validate")
            await call("admin_state")
    emit(RULE)
    emit("Demo finished: the session lived in a temporary folder that is now removed.")
    return 0


async def _queue_three_plans(call: Call) -> None:
    """Two plans at the back (the second waits for the first), then a blocking one at the
    front."""
    common = {"context": "The notekeeper web app has no accounts yet."}
    users = await call(
        "queue_add",
        **common,
        goal="Design the users table",
        approach="Write the migration; add a unique index on email.",
        success_criteria="- Migration applies cleanly on an empty database.\n"
        "- A second user with the same email is refused.",
        outputs="migrations/0002_users.sql",
    )
    await call(
        "queue_add",
        **common,
        goal="Build the login form",
        approach="Form with email and password; POST to /login.",
        success_criteria="A user can log in and sees their notes.",
        inputs="The users table from the schema plan",
        position="back",
        after=[users["plan_id"]],
    )
    await call(
        "queue_add",
        **common,
        goal="Pick a password hashing library",
        approach="Compare argon2 and bcrypt bindings; pick one.",
        success_criteria="A decision with a reason in the outcome.",
        position="front",
    )


async def _work_through_the_first(call: Call, emit: Emit) -> None:
    """Pull and defer the blocking plan, pull the next, note in its file, complete it, and
    find it in the history."""
    await call("queue_pull")
    await call("plan_defer", reason="Waiting for the security review", position="back")
    pulled = await call("queue_pull")
    plan_file = Path(pulled["plan_path"])
    plan_file.write_text(plan_file.read_text() + "- Used a UUID primary key; email is citext.\n")
    emit(RULE)
    emit(f"(the agent adds a line to the Notes section of {plan_file.name}; the file now reads:)")
    emit(textwrap.indent(plan_file.read_text().rstrip("\n"), "  | ", lambda _: True))
    done = await call(
        "plan_complete",
        outcome="Created migrations/0002_users.sql: users(id uuid, email citext unique, password_hash).",
        verdicts=[
            {
                "criterion": 1,
                "status": "met",
                "evidence": "psql -f 0002_users.sql on a new database: no errors",
            },
            {
                "criterion": 2,
                "status": "met",
                "evidence": "test_unique_email: the second insert is refused",
            },
        ],
    )
    await call("history_search", query="users table migration")
    await call("history_get", plan_id=done["plan_id"])


def _caller(client: Client, emit: Emit) -> Call:
    """`call(tool, **arguments)`: call a tool, show the call and its text, return its structure.
    The tools have their default names: server_command passes no NINEPLAN_TOOL_PREFIX."""

    async def call(tool: str, **arguments: Any) -> dict[str, Any]:
        name = DEFAULT_NAMES[tool]
        result = await client.call_tool(name, arguments)
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        _show(emit, name, arguments, text)
        return result.structured_content or {}

    return call
