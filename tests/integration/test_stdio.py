"""The real server as a subprocess, driven by the SDK's stdio client in both protocol eras."""

import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.fakes import PLAN
from tests.integration.servers import PROJECT, PYTHON, child_env, stdio_server
from tests.mcp_helpers import both_eras, category, ok, text


@both_eras
async def test_every_tool_prompt_and_resource_over_stdio(tmp_path: Path, mode: str):
    """A whole lifecycle through a spawned `nineplan serve`, touching all twelve tools of the first release."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        assert client.server_info.name == "9plan"  # type: ignore[union-attr]
        assert "9plan_queue_pull" in (client.instructions or "")
        assert len((await client.list_tools()).tools) == 13
        assert await category(client, "9plan_queue_pull") == "SESSION_NOT_FOUND"
        name = (await ok(client, "9plan_session_create", task_description="wire test"))[
            "session_name"
        ]
        first = await ok(client, "9plan_queue_add", **PLAN, outputs="users.sql")
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "second"}, position="back")
        pulled = await ok(client, "9plan_queue_pull")
        assert pulled["plan_id"] == first["plan_id"]
        assert await category(client, "9plan_queue_pull") == "PLAN_ALREADY_ACTIVE"
        await ok(client, "9plan_plan_defer", reason="waiting", position="front")
        await ok(client, "9plan_queue_pull")
        done = await ok(client, "9plan_plan_complete", outcome="created users.sql")
        assert done["next_goal"] == "second"
        await ok(client, "9plan_queue_pull")
        assert (await ok(client, "9plan_plan_discard", reason="not needed"))["queue_length"] == 0
        assert await category(client, "9plan_queue_pull") == "QUEUE_EMPTY"
        assert await category(client, "9plan_plan_complete", outcome="x") == "NO_ACTIVE_PLAN"
        assert await category(client, "9plan_history_get", plan_id="00000") == "PLAN_NOT_FOUND"
        assert await category(client, "9plan_history_search", query='"(') == "VALIDATION_ERROR"
        matches = (await ok(client, "9plan_history_search", query="users AND ("))["matches"]
        assert [m["id"] for m in matches] == [first["plan_id"]]
        assert (await ok(client, "9plan_history_get", plan_id=first["plan_id"]))[
            "outcome"
        ] == "created users.sql"
        assert (await ok(client, "9plan_admin_validate"))["valid"]
        assert (await ok(client, "9plan_admin_state"))["completed_count"] == 1
        assert (await ok(client, "9plan_admin_sessions"))["sessions"][0]["name"] == name
        assert (await ok(client, "9plan_session_resume", session_name=name))["session_name"] == name
        prompt = await client.get_prompt("bootstrap", {"task": "t"})
        assert "TASK: t" in prompt.messages[0].content.text  # type: ignore[union-attr]
        state = await client.read_resource(f"nineplan://sessions/{name}/state")
        assert json.loads(state.contents[0].text)["session_name"] == name  # type: ignore[union-attr]


async def test_the_instructions_say_a_pull_returns_the_whole_plan(tmp_path: Path):
    """The instructions and the bootstrap prompt say the pull returns the whole plan and the
    plan file is for notes; they no longer send the agent to read the file for the full
    context the pull already gave it. The pull's text does hold the plan as its file has it."""
    async with Client(stdio_server(tmp_path), mode="legacy") as client:
        told = " ".join((client.instructions or "").split())
        prompt = await client.get_prompt("bootstrap", {})
        bootstrap = " ".join(prompt.messages[0].content.text.split())  # type: ignore[union-attr]
        await ok(client, "9plan_session_create")
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await client.call_tool("9plan_queue_pull", {})
    assert "9plan_queue_pull returns the whole plan" in told
    assert "9plan_queue_pull; it returns the whole plan, and its file is for notes" in bootstrap
    for said in (told, bootstrap):
        assert "full context" not in said
        assert "read the plan file" not in said
        assert "notes" in said.lower()
    assert (pulled.structured_content or {})["plan_text"] in text(pulled)


@both_eras
async def test_a_second_process_resumes_the_same_session(tmp_path: Path, mode: str):
    """Queue, active plan and completed count survive the server process."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        for goal in ["one", "two", "three"]:
            await ok(client, "9plan_queue_add", **{**PLAN, "goal": goal})
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_complete", outcome="did one")
        active = await ok(client, "9plan_queue_pull")
        before = await ok(client, "9plan_admin_state")
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        resumed = await ok(client, "9plan_session_resume", session_name=name)
        assert resumed["queue"] == before["queue"]
        assert resumed["active_plan"]["id"] == active["plan_id"]
        assert resumed["completed_count"] == 1
        assert (await ok(client, "9plan_admin_state"))["file_db_match"]


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("9plan_queue_add", {"context": 1, "goal": None, "approach": [], "success_criteria": {}}),
    ("9plan_queue_add", {}),
    ("9plan_queue_add", {**PLAN, "goal": "x" * 200_000}),
    ("9plan_queue_add", {**PLAN, "session_name": "../../../tmp/evil"}),
    ("9plan_session_resume", {"session_name": "/etc/passwd"}),
    ("9plan_session_resume", {"session_name": "a-b-c\x00"}),
    ("9plan_history_get", {"plan_id": "../../session.db"}),
    ("9plan_history_search", {"query": 'NEAR(a b) AND OR NOT * ^ "', "max_results": -1}),
    ("9plan_history_search", {"query": "\u0000"}),
    ("9plan_plan_defer", {"reason": "x", "position": "../front"}),
    ("9plan_session_create", {"task_description": 12}),
]


@both_eras
async def test_hostile_arguments_never_crash_the_server(tmp_path: Path, mode: str):
    """Wrong types, huge strings, traversal and FTS syntax are refused; the next call works."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        for tool, arguments in HOSTILE:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            first_line = text(result).split("\n")[0]
            assert first_line.endswith("Error: VALIDATION_ERROR"), (tool, first_line)
            await ok(client, "9plan_admin_state")
        assert (await ok(client, "9plan_admin_validate"))["valid"]
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]


def test_stdout_carries_only_json_rpc_at_debug_level(tmp_path: Path):
    """With NINEPLAN_LOG_LEVEL=debug a full session writes nothing but JSON-RPC to stdout."""
    calls = [
        (
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        ),
        ("tools/list", {}),
        (
            "tools/call",
            {"name": "9plan_session_create", "arguments": {"task_description": "raw pipe"}},
        ),
        ("tools/call", {"name": "9plan_queue_add", "arguments": PLAN}),
        ("tools/call", {"name": "9plan_queue_pull", "arguments": {}}),
        ("tools/call", {"name": "9plan_plan_complete", "arguments": {"outcome": "done"}}),
        ("tools/call", {"name": "9plan_queue_pull", "arguments": {}}),
        ("tools/call", {"name": "9plan_history_search", "arguments": {"query": "done"}}),
        ("prompts/get", {"name": "bootstrap", "arguments": {}}),
    ]
    # stderr to a file, not a pipe: the debug log outgrows a pipe's buffer before the test
    # reads it, and the server would block writing it.
    log = (tmp_path / "stderr.log").open("w+")
    process = subprocess.Popen(
        [PYTHON, "-m", "nineplan_adapters", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=child_env(tmp_path, NINEPLAN_LOG_LEVEL="debug"),
        cwd=PROJECT,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    replies = []
    for number, (method, params) in enumerate(calls, start=1):
        process.stdin.write(
            json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params}) + "\n"
        )
        if method == "initialize":
            process.stdin.write(
                json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
            )
        process.stdin.flush()
        replies.append(json.loads(process.stdout.readline()))
    rest, _ = process.communicate(timeout=30)
    log.seek(0)
    stderr = log.read()
    log.close()
    assert rest == ""
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    assert [reply["id"] for reply in replies] == list(range(1, len(calls) + 1))
    assert process.returncode == 0
    completed = subprocess.CompletedProcess(process.args, 0, "", stderr)
    assert '"level": "debug"' in completed.stderr
    assert "plan completed" in completed.stderr


@both_eras
async def test_two_processes_adding_at_once_lose_nothing(tmp_path: Path, mode: str):
    """Two servers on one session add concurrently: every plan is there, positions distinct."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
    ids: list[str] = []

    async def writer(tag: str) -> None:
        async with Client(stdio_server(tmp_path), mode=mode) as client:
            for index in range(25):
                where = "front" if index % 2 else "back"
                added = await ok(
                    client,
                    "9plan_queue_add",
                    **{**PLAN, "goal": f"{tag}{index}"},
                    position=where,
                    session_name=name,
                )
                ids.append(added["plan_id"])

    async with anyio.create_task_group() as group:
        group.start_soon(writer, "a")
        group.start_soon(writer, "b")
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        state = await ok(client, "9plan_admin_state", session_name=name)
        assert sorted(entry["id"] for entry in state["queue"]) == sorted(ids)
        assert len(ids) == 50
        assert [entry["queue_position"] for entry in state["queue"]] == list(range(1, 51))
        assert (await ok(client, "9plan_admin_validate", session_name=name))["valid"]


@both_eras
async def test_a_retry_after_a_restart_is_still_applied_once(tmp_path: Path, mode: str):
    """Request ids are kept in the session's storage, so a new server process honours them."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        name = (await ok(client, "9plan_session_create", request_id="boot"))["session_name"]
        added = await ok(client, "9plan_queue_add", **PLAN, request_id="add-1")
        await ok(client, "9plan_queue_pull")
        done = await ok(client, "9plan_plan_complete", outcome="ok", request_id="done-1")
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        assert (await ok(client, "9plan_session_create", request_id="boot"))["session_name"] == name
        assert (
            await ok(client, "9plan_queue_add", **PLAN, request_id="add-1", session_name=name)
            == added
        )
        assert (
            await ok(
                client, "9plan_plan_complete", outcome="ok", request_id="done-1", session_name=name
            )
            == done
        )
        state = await ok(client, "9plan_admin_state", session_name=name)
        assert (state["queue"], state["completed_count"]) == ([], 1)
        assert len((await ok(client, "9plan_admin_sessions"))["sessions"]) == 1


STRAY = textwrap.dedent(
    """
    import os, anyio
    from mcp.server.mcpserver import MCPServer
    from nineplan_adapters.entrypoints.mcp.stdio import serve_stdio

    server = MCPServer("stray")

    @server.tool()
    async def shout() -> str:
        print("a stray print")              # block-buffered: left in sys.stdout's buffer
        os.write(1, b"a stray write\\n")     # straight to fd 1
        return f"stdin gave {os.read(0, 10)!r}"

    low = server._lowlevel_server
    anyio.run(serve_stdio, low, low.create_initialization_options())
    os.write(1, b"after\\n")                 # fd 1 is the wire again
    """
)


def stray_run(tmp_path: Path, stderr: int) -> tuple[list[dict[str, Any]], str, str]:
    """The STRAY server in a child with a block-buffered stdout, driven over raw pipes: its
    two replies, the rest of its stdout once stdin is closed, and its stderr ("" with 2>&1)."""
    script = tmp_path / "stray.py"
    script.write_text(STRAY)
    process = subprocess.Popen(
        [PYTHON, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=child_env(tmp_path),
        cwd=PROJECT,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}  # fmt: skip
    for message in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shout"}},
    ]:
        process.stdin.write(json.dumps(message) + "\n")
    process.stdin.flush()
    replies = [json.loads(process.stdout.readline()) for _ in range(2)]
    rest, errors = process.communicate(timeout=30)
    assert process.returncode == 0, errors
    return replies, rest, errors or ""


@pytest.mark.parametrize("stderr", [subprocess.PIPE, subprocess.STDOUT], ids=["apart", "2>&1"])
def test_a_stray_print_never_reaches_the_wire(tmp_path: Path, stderr: int):
    """A tool's block-buffered print and its write to fd 1 miss the wire: they go to stderr
    (the print flushed before fd 1 is given back), or to /dev/null when stderr is the wire
    itself (`2>&1`). Meanwhile stdin reads nothing, the wire carries only the replies, and
    after serving fd 1 is the wire again."""
    replies, rest, errors = stray_run(tmp_path, stderr)
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[1]["result"]["content"][0]["text"] == "stdin gave b''"
    assert rest == "after\n"
    if stderr == subprocess.PIPE:
        assert "a stray print" in errors
        assert "a stray write" in errors
