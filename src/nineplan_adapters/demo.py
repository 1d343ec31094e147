"""`nineplan demo`: a whole session through a real MCP client against a freshly spawned server."""

import json
import os
import sys
import tempfile
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import TextContent

RULE = "-" * 72


def _show(title: str, arguments: dict[str, Any], text: str) -> None:
    print(RULE)
    print(f"> {title}({json.dumps(arguments, ensure_ascii=False)})" if arguments else f"> {title}()")
    print(textwrap.indent(text, "  "))


def server_command(sessions_path: Path, *extra: str) -> StdioServerParameters:
    """How to spawn `nineplan serve` with this interpreter on a sessions folder."""
    env = {"NINEPLAN_SESSIONS_PATH": str(sessions_path), "NINEPLAN_LOG_LEVEL": "warn"}
    env |= {key: os.environ[key] for key in ("PATH", "HOME", "COVERAGE_PROCESS_START") if key in os.environ}
    return StdioServerParameters(command=sys.executable, args=["-m", "nineplan_adapters", "serve", *extra], env=env)


@asynccontextmanager
async def _client(transport: str, sessions_path: Path) -> AsyncIterator[Client]:
    if transport == "http":
        from nineplan_adapters.http import spawned_http_server  # noqa: PLC0415

        async with spawned_http_server(sessions_path) as url, Client(url, mode="legacy") as client:
            yield client
        return
    async with Client(server_command(sessions_path), mode="legacy") as client:
        yield client


async def run_demo(transport: str = "stdio") -> int:
    """Run the demo on a temporary sessions folder and print every call and result."""
    with tempfile.TemporaryDirectory(prefix="nineplan-demo-") as folder:
        async with _client(transport, Path(folder)) as client:
            print(f"Connected to {client.server_info.name} {client.server_info.version} over {transport}.")

            async def call(tool: str, **arguments: Any) -> dict[str, Any]:
                result = await client.call_tool(tool, arguments)
                text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
                _show(tool, arguments, text)
                return result.structured_content or {}

            await call("9plan_session_create", task_description="Add login to the notekeeper app")
            common = {"context": "The notekeeper web app has no accounts yet."}
            await call(
                "9plan_queue_add",
                **common,
                goal="Design the users table",
                approach="Write the migration; add a unique index on email.",
                success_criteria="Migration applies cleanly on an empty database.",
                outputs="migrations/0002_users.sql",
            )
            await call(
                "9plan_queue_add",
                **common,
                goal="Build the login form",
                approach="Form with email and password; POST to /login.",
                success_criteria="A user can log in and sees their notes.",
                inputs="The users table from the schema plan",
                position="back",
            )
            await call(
                "9plan_queue_add",
                **common,
                goal="Pick a password hashing library",
                approach="Compare argon2 and bcrypt bindings; pick one.",
                success_criteria="A decision with a reason in the outcome.",
                position="front",
            )
            pulled = await call("9plan_queue_pull")
            await call("9plan_plan_defer", reason="Waiting for the security review", position="back")
            pulled = await call("9plan_queue_pull")
            plan_file = Path(pulled["plan_path"])
            plan_file.write_text(plan_file.read_text() + "- Used a UUID primary key; email is citext.\n")
            print(RULE)
            print(f"(the agent adds a line to the Notes section of {plan_file.name})")
            done = await call(
                "9plan_plan_complete",
                outcome="Created migrations/0002_users.sql: users(id uuid, email citext unique, password_hash).",
            )
            await call("9plan_history_search", query="users table migration")
            await call("9plan_history_get", plan_id=done["plan_id"])
            await call("9plan_admin_validate")
            await call("9plan_admin_state")
    print(RULE)
    print("Demo finished: the session lived in a temporary folder that is now removed.")
    return 0
