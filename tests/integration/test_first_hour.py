"""What a new user meets in the first hour, over the real stdio server, HTTP server and CLI."""

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client, MCPError

from tests.fakes import PLAN
from tests.integration.servers import PROJECT, PYTHON, child_env, stdio_server
from tests.integration.test_stdio import both_eras, ok, text

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}


def test_stdio_answers_a_line_that_is_not_json_rpc_and_goes_on(tmp_path: Path):
    """Not JSON, and JSON with a lone surrogate, each get -32700 with id null; then a normal
    session works on the same pipe."""
    process = subprocess.Popen(
        [PYTHON, "-m", "nineplan_adapters", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(tmp_path, NINEPLAN_LOG_LEVEL="warn"),
        cwd=PROJECT,
    )
    assert process.stdin is not None
    assert process.stdout is not None

    def send(line: str) -> dict[str, Any]:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(line + "\n")
        process.stdin.flush()
        return json.loads(process.stdout.readline())

    for line in [
        "this is not json",
        '{"jsonrpc": "2.0", "id": 7, "method": "ping", "x": "\\udc80"}',
    ]:
        reply = send(line)
        assert reply["id"] is None, line
        assert reply["error"]["code"] == -32700, line
    reply = send(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
    )
    assert reply["id"] == 1
    assert reply["result"]["serverInfo"]["name"] == "9plan"
    process.stdin.write(
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
    )
    call = {"name": "9plan_session_create", "arguments": {}}
    reply = send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
    assert reply["id"] == 2
    assert not reply["result"]["isError"]
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "not JSON-RPC" in stderr


@both_eras
async def test_unknown_arguments_and_wrong_types_are_refused_by_name(tmp_path: Path, mode: str):
    """A misspelt `positon` and `max_results: true` are VALIDATION_ERRORs naming the argument;
    every listed input schema says additionalProperties false."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        tools = (await client.list_tools()).tools
        assert all(tool.input_schema["additionalProperties"] is False for tool in tools)
        name = (await ok(client, "9plan_session_create"))["session_name"]
        result = await client.call_tool(
            "9plan_queue_add", {**PLAN, "positon": "front", "session_name": name}
        )
        assert result.is_error
        assert text(result).startswith(f"[Session: {name}] Error: VALIDATION_ERROR")
        assert "positon: not an argument of 9plan_queue_add" in text(result)
        assert (await ok(client, "9plan_admin_state", session_name=name))["queue"] == []
        result = await client.call_tool(
            "9plan_history_search", {"query": "x", "max_results": True, "session_name": name}
        )
        assert result.is_error
        assert "max_results" in text(result)
        assert (result.structured_content or {})["category"] == "VALIDATION_ERROR"


@both_eras
async def test_both_kinds_of_result_match_the_listed_output_schema(tmp_path: Path, mode: str):
    """Each tool's outputSchema (root type object, anyOf success or error) accepts its success
    result and an error result's structuredContent {category, message, suggestion, session_name}."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        assert all(schema and schema["type"] == "object" for schema in schemas.values())
        name = (await ok(client, "9plan_session_create"))["session_name"]
        explicit = {"session_name": name}
        successes = [
            ("9plan_session_create", {}),
            ("9plan_session_resume", explicit),
            ("9plan_queue_add", {**PLAN, **explicit}),
            ("9plan_queue_pull", explicit),
            ("9plan_plan_defer", {"reason": "later", **explicit}),
            ("9plan_queue_pull", explicit),
            ("9plan_plan_complete", {"outcome": "made the users table", **explicit}),
            ("9plan_queue_add", {**PLAN, **explicit}),
            ("9plan_queue_pull", explicit),
            ("9plan_plan_discard", {"reason": "not needed", **explicit}),
            ("9plan_history_search", {"query": "users", **explicit}),
            ("9plan_admin_validate", explicit),
            ("9plan_admin_sessions", {}),
            ("9plan_admin_state", explicit),
        ]
        seen = set()
        for tool, arguments in successes:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, text(result)
            jsonschema.validate(result.structured_content, schemas[tool])
            seen.add(tool)
        plan_id = (await ok(client, "9plan_history_search", query="users", **explicit))["matches"]
        result = await client.call_tool(
            "9plan_history_get", {"plan_id": plan_id[0]["id"], **explicit}
        )
        jsonschema.validate(result.structured_content, schemas["9plan_history_get"])
        for tool, schema in schemas.items():
            result = await client.call_tool(tool, {"session_name": "no-such-session"})
            assert result.is_error, tool
            error = result.structured_content
            assert error is not None, tool
            assert set(error) == {"category", "message", "suggestion", "session_name"}, tool
            jsonschema.validate(error, schema)
        assert seen | {"9plan_history_get"} == set(schemas)


@both_eras
async def test_errors_suggest_tools_and_an_empty_queue_says_what_to_do(tmp_path: Path, mode: str):
    """A session that never had a plan says to add plans; only after the last plan is
    finished is it "Task complete!"; suggestions name tools, never library calls."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        result = await client.call_tool("9plan_queue_pull", {"session_name": name})
        assert "no plan has been added" in text(result)
        assert "Task complete" not in text(result)
        assert "Suggested action: Add plans with 9plan_queue_add, then 9plan_queue_pull." in text(
            result
        )
        await ok(client, "9plan_queue_add", **PLAN, session_name=name)
        await ok(client, "9plan_queue_pull", session_name=name)
        result = await client.call_tool(
            "9plan_plan_complete", {"outcome": "done", "session_name": name}
        )
        assert "Task complete!" in text(result)
        result = await client.call_tool("9plan_queue_pull", {"session_name": name})
        assert "Task complete!" in text(result)
        result = await client.call_tool(
            "9plan_plan_complete", {"outcome": "x", "session_name": name}
        )
        assert "Suggested action: Pull the next plan with 9plan_queue_pull." in text(result)
        assert "pull_plan" not in text(result)


async def test_a_full_queue_is_its_own_message(tmp_path: Path):
    """With NINEPLAN_MAX_QUEUE=1 a second add says the queue is full and how to make room."""
    async with Client(stdio_server(tmp_path, NINEPLAN_MAX_QUEUE="1"), mode="legacy") as client:
        await ok(client, "9plan_session_create")
        await ok(client, "9plan_queue_add", **PLAN)
        result = await client.call_tool("9plan_queue_add", PLAN)
        assert "The queue is full: 1 plans are queued" in text(result)
        assert "9plan_queue_pull, then 9plan_plan_complete or 9plan_plan_discard" in text(result)
        assert "Correct queue" not in text(result)


@pytest.mark.parametrize(
    ("mode", "code"), [("legacy", -32002), ("auto", -32602)], ids=["2025-11-25", "2026-07-28"]
)
async def test_an_unknown_resource_is_the_error_of_each_protocol(
    tmp_path: Path, mode: str, code: int
):
    """-32002 up to 2025-11-25, -32602 on 2026-07-28; the URI is in data either way. A plan
    resource is text/plain, as its .txt file."""
    async with Client(stdio_server(tmp_path), mode=mode) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        uri = f"nineplan://sessions/{name}/plans/zzzzz"
        with pytest.raises(MCPError) as caught:
            await client.read_resource(uri)
        assert caught.value.error.code == code
        assert caught.value.error.data == {"uri": uri}
        plan_id = (await ok(client, "9plan_queue_add", **PLAN, session_name=name))["plan_id"]
        read = await client.read_resource(f"nineplan://sessions/{name}/plans/{plan_id}")
        assert read.contents[0].mime_type == "text/plain"
        templates = (await client.list_resource_templates()).resource_templates
        assert {t.name: t.mime_type for t in templates}["plan"] == "text/plain"
