"""What a new user meets in the first hour, over the real stdio server, HTTP server and CLI;
what a tool answers (refusals, errors, lists) through the server `nineplan serve` builds, over
the SDK's in-memory client."""

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema  # type: ignore[import-untyped] # installed with mcp, without stubs
import pytest
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, PromptReference, ResourceTemplateReference

from nineplan_adapters.entrypoints.cli.demo import spawned_http_server
from tests.fakes import PLAN, open_backend
from tests.integration.servers import (
    PROJECT,
    PYTHON,
    child_env,
    memory_client,
    run_nineplan,
    stdio_server,
)
from tests.integration.test_http import INITIALIZE as INITIALIZE_CALL
from tests.integration.test_http import JSON_HEADERS, TOKEN
from tests.mcp_helpers import both_eras, ok, text

INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"},
}


async def three_plans(folder: Path) -> str:
    """A session with plan 00001 completed, 00002 discarded and 00003 queued."""
    async with open_backend("sqlite", folder) as backend:
        name = await backend.session("inspect me")
        for goal in ["first", "second", "third"]:
            await backend.service.add_plan(name, **{**PLAN, "goal": goal})
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, "built the penguin importer")
        await backend.service.pull_plan(name)
        await backend.service.discard_plan(name, "superseded by the SSO plan")
    return name


def test_stdio_answers_a_line_that_is_not_json_rpc_and_goes_on(tmp_path: Path):
    """Not JSON, and JSON with a lone surrogate, each get -32700 with id null; then a normal
    session works on the same pipe, and creating it logs no migrations."""
    process = subprocess.Popen(
        [PYTHON, "-m", "nineplan_adapters", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(tmp_path, NINEPLAN_LOG_LEVEL="info"),
        cwd=PROJECT,
    )
    assert process.stdin is not None
    assert process.stdout is not None

    def send(line: str) -> dict[str, Any]:
        assert process.stdin is not None
        assert process.stdout is not None
        process.stdin.write(line + "\n")
        process.stdin.flush()
        reply: dict[str, Any] = json.loads(process.stdout.readline())
        return reply

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
    assert "session created" in stderr
    assert "migrated" not in stderr  # a new session database is created at the newest version


@both_eras
async def test_unknown_arguments_and_wrong_types_are_refused_by_name(tmp_path: Path, mode: str):
    """A misspelt `positon` and `max_results: true` are VALIDATION_ERRORs naming the argument;
    every listed input schema says additionalProperties false."""
    async with memory_client(tmp_path, mode=mode) as client:
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
            ("9plan_queue_add_many", {"plans": [PLAN], **explicit}),
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
    async with memory_client(tmp_path, mode=mode) as client:
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
    """With a queue of at most one plan (NINEPLAN_MAX_QUEUE=1) a second add says the queue is
    full and how to make room."""
    async with memory_client(tmp_path, mode="legacy", max_queue="1") as client:
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


def test_a_busy_port_is_one_line_and_exit_2(tmp_path: Path):
    """A port something already listens on: exit 2 and one line naming `--port`, and
    NINEPLAN_HTTP_PORT too when the variable set the port, with no server logs around it."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        by_flag = run_nineplan(tmp_path, "serve", "--transport", "http", "--port", port)
        by_variable = run_nineplan(
            tmp_path, "serve", NINEPLAN_TRANSPORT="http", NINEPLAN_HTTP_PORT=port
        )
    for completed, given_by in [(by_flag, "--port"), (by_variable, "--port or NINEPLAN_HTTP_PORT")]:
        assert completed.returncode == 2
        assert completed.stdout == ""
        assert completed.stderr.splitlines() == [
            (
                f"nineplan: port {port} is in use on 127.0.0.1: stop what listens there, "
                f"or choose another port with {given_by}"
            )
        ]


def test_the_loopback_refusal_names_what_set_the_host(tmp_path: Path):
    """`--host 0.0.0.0` is named as --host; NINEPLAN_HTTP_HOST=0.0.0.0 as the variable."""
    by_flag = run_nineplan(tmp_path, "serve", "--transport", "http", "--host", "0.0.0.0")
    by_variable = run_nineplan(
        tmp_path, "serve", "--transport", "http", NINEPLAN_HTTP_HOST="0.0.0.0"
    )
    assert (by_flag.returncode, by_variable.returncode) == (2, 2)
    assert by_flag.stderr.startswith("nineplan: --host: refusing to listen on 0.0.0.0")
    assert by_variable.stderr.startswith("nineplan: NINEPLAN_HTTP_HOST: refusing to listen")


async def test_http_refusals_say_what_is_wrong(tmp_path: Path):
    """A Host not allowed is a 421 naming NINEPLAN_HTTP_ALLOWED_HOSTS; a wrong token is
    "invalid bearer token", a missing one "a bearer token is required"; the JSON logs carry
    neither color_message nor ANSI codes, and NINEPLAN_LOG_LEVEL takes any case."""
    log = tmp_path / "server.log"
    env = {"NINEPLAN_HTTP_TOKEN": TOKEN, "NINEPLAN_LOG_LEVEL": "INFO"}
    with log.open("w") as stderr:
        async with (
            spawned_http_server(tmp_path, env=env, stderr=stderr) as url,
            httpx2.AsyncClient() as http,
        ):
            auth = {"Authorization": f"Bearer {TOKEN}"}
            misdirected = await http.post(
                url, json=INITIALIZE_CALL, headers={**JSON_HEADERS, **auth, "Host": "x.example"}
            )
            assert misdirected.status_code == 421
            assert "NINEPLAN_HTTP_ALLOWED_HOSTS" in misdirected.text
            assert "'x.example'" in misdirected.text
            wrong = await http.post(
                url,
                json=INITIALIZE_CALL,
                headers={**JSON_HEADERS, "Authorization": "Bearer no"},
            )
            assert (wrong.status_code, wrong.text) == (
                401,
                "unauthorized: invalid bearer token\n",
            )
            missing = await http.post(url, json=INITIALIZE_CALL, headers=JSON_HEADERS)
            assert missing.text == "unauthorized: a bearer token is required\n"
            fine = await http.post(url, json=INITIALIZE_CALL, headers={**JSON_HEADERS, **auth})
            assert fine.status_code == 200
    written = log.read_text().splitlines()
    said = [line for line in written if not line.startswith("{")]  # where it serves: one line
    assert len(said) == 1
    assert said[0].startswith("nineplan: MCP is at http://127.0.0.1:")
    lines = [json.loads(line) for line in written if line not in said]
    assert any(line["logger"].startswith("uvicorn") for line in lines)
    assert all("color_message" not in line for line in lines)
    assert "\x1b[" not in log.read_text()


@pytest.mark.parametrize("level", ["WARNING", "warning", "Warn", "ERROR"])
def test_the_log_level_takes_any_case_and_warning(tmp_path: Path, level: str):
    """NINEPLAN_LOG_LEVEL=WARNING (and other spellings) is accepted, not a configuration error."""
    completed = run_nineplan(tmp_path, "sessions", NINEPLAN_LOG_LEVEL=level)
    assert completed.returncode == 0, completed.stderr
    assert run_nineplan(tmp_path, "sessions", "--log-level", level).returncode == 0


def test_cli_exit_codes_and_json_errors(tmp_path: Path):
    """Exit 0 success, 1 refused or invalid, 2 bad usage / configuration / no such session; with
    --json the error is {"error": {category, message, suggestion}} on stdout."""
    assert run_nineplan(tmp_path, "sessions").returncode == 0
    missing = run_nineplan(tmp_path, "state", "no-such-session", "--json")
    assert missing.returncode == 2
    error = json.loads(missing.stdout)["error"]
    assert error["category"] == "SESSION_NOT_FOUND"
    assert set(error) == {"category", "message", "suggestion"}
    bad_name = run_nineplan(tmp_path, "state", "Not A Name", "--json")
    assert bad_name.returncode == 1
    assert json.loads(bad_name.stdout)["error"]["category"] == "VALIDATION_ERROR"
    config = run_nineplan(tmp_path, "sessions", "--json", NINEPLAN_DURABILITY="sometimes")
    assert config.returncode == 2
    assert "NINEPLAN_DURABILITY" in json.loads(config.stdout)["error"]["message"]
    usage = run_nineplan(tmp_path, "search", "brave-quiet-otter", "x", "--limit", "0")
    assert usage.returncode == 2
    assert "argument --limit: must be between 1 and 100, not 0" in usage.stderr
    assert run_nineplan(tmp_path, "frobnicate").returncode == 2


def test_show_finds_every_plan_in_one_shape(tmp_path: Path):
    """`show --json` has the same keys for a queued, a completed and a discarded plan, with
    `status`; a discarded plan shows its reason; inspection writes nothing to stderr."""
    name = anyio.run(three_plans, tmp_path)
    shapes = {}
    for plan_id, status in [("00001", "completed"), ("00002", "discarded"), ("00003", "queued")]:
        shown = run_nineplan(tmp_path, "show", name, plan_id, "--json")
        assert shown.returncode == 0, shown.stderr
        assert shown.stderr == ""
        view = json.loads(shown.stdout)
        assert view["status"] == status
        shapes[status] = set(view)
    assert len({frozenset(keys) for keys in shapes.values()}) == 1
    discarded = run_nineplan(tmp_path, "show", name, "00002")
    assert "status: discarded" in discarded.stdout
    assert "discard_reason: superseded by the SSO plan" in discarded.stdout
    assert (
        json.loads(run_nineplan(tmp_path, "show", name, "00002", "--json").stdout)["discard_reason"]
        == "superseded by the SSO plan"
    )
    assert run_nineplan(tmp_path, "show", name, "zzzzz").returncode == 1


async def test_lists_keep_one_line_per_plan_and_history_get_indents(tmp_path: Path):
    """A multi-line goal stays on one line in resume and search lists; history_get indents the
    lines after the first; discard says what is next, as complete does."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "Design the\nusers   table"})
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "Then\nthe form"})
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "Last"})
        resumed = await client.call_tool("9plan_session_resume", {"session_name": name})
        assert "  1. " in text(resumed)
        assert "Design the users table\n  2. " in text(resumed)
        pulled = await ok(client, "9plan_queue_pull")
        done = await client.call_tool(
            "9plan_plan_complete", {"outcome": "made users.sql\nand an index"}
        )
        assert "Next: Then the form (9plan_queue_pull)." in text(done)
        found = await client.call_tool("9plan_history_search", {"query": "users"})
        assert "Design the users table\n   Outcome: made users.sql and an index" in text(found)
        got = await client.call_tool("9plan_history_get", {"plan_id": pulled["plan_id"]})
        assert "goal: Design the\n  users   table\n" in text(got)
        assert "outcome: made users.sql\n  and an index\n" in text(got)
        await ok(client, "9plan_queue_pull")
        gone = await client.call_tool("9plan_plan_discard", {"reason": "not needed"})
        assert text(gone).endswith(" 1 queued.\nNext: Last (9plan_queue_pull).")
        await ok(client, "9plan_queue_pull")
        gone = await client.call_tool("9plan_plan_discard", {"reason": "not needed either"})
        assert "0 queued.\nThe queue is empty: add plans with 9plan_queue_add." in text(gone)


async def test_history_get_of_a_discarded_plan_says_who_discarded_it_and_why(tmp_path: Path):
    """`9plan_history_get` of a plan the agent discarded, or a person dropped, says so, by whom
    and why, instead of only "no completed plan"; a plan never seen is still PLAN_NOT_FOUND."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        first = await ok(client, "9plan_queue_add", **{**PLAN, "goal": "First"})
        second = await ok(client, "9plan_queue_add", **{**PLAN, "goal": "Second"})
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_discard", reason="the API went away")
        dropped = run_nineplan(tmp_path, "drop", name, second["plan_id"], "--reason", "a duplicate")
        assert dropped.returncode == 0, dropped.stderr
        by_agent = await client.call_tool("9plan_history_get", {"plan_id": first["plan_id"]})
        by_person = await client.call_tool("9plan_history_get", {"plan_id": second["plan_id"]})
        never = await client.call_tool("9plan_history_get", {"plan_id": "zzzzz"})
    assert by_agent.is_error
    assert (
        f"Plan '{first['plan_id']}' was discarded by the agent, not completed: the API went away."
        in text(by_agent)
    )
    assert f"Plan '{second['plan_id']}' was discarded by a person, not completed: a duplicate." in (
        text(by_person)
    )
    assert "Error: PLAN_NOT_FOUND" in text(by_person)
    assert "No completed plan with id 'zzzzz'" in text(never)


async def test_a_clients_prompt_mistakes_are_invalid_params(tmp_path: Path):
    """prompts/get of an unknown prompt, without a required argument or with an unknown one,
    and completion/complete on an unknown prompt or resource template, answer -32602 (invalid params) naming what
    to change, as the protocol asks, rather than an internal error."""
    async with Client(stdio_server(tmp_path), mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("no-such-prompt", {})
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("resume", {})
        with pytest.raises(MCPError) as extra:
            await client.get_prompt("resume", {"session_name": name, "colour": "blue"})
        with pytest.raises(MCPError) as completed:
            await client.complete(
                PromptReference(type="ref/prompt", name="no-such-prompt"),
                {"name": "session_name", "value": ""},
            )
        with pytest.raises(MCPError) as template:
            await client.complete(
                ResourceTemplateReference(type="ref/resource", uri="nineplan://nowhere/{x}"),
                {"name": "x", "value": ""},
            )
        resumed = await client.get_prompt("resume", {"session_name": name})
    caught = (unknown, missing, extra, completed, template)
    assert [error.value.error.code for error in caught] == [INVALID_PARAMS] * 5
    assert "Unknown prompt 'no-such-prompt'; the prompts are bootstrap, resume." in str(
        unknown.value
    )
    assert "Prompt 'resume' needs session_name." in str(missing.value)
    assert "colour: not an argument of prompt 'resume', which takes session_name, worker." in str(
        extra.value
    )
    assert name in str(resumed.messages[0].content)


async def test_http_declares_the_list_changes_it_sends(tmp_path: Path):
    """`initialize` over HTTP declares `resources.listChanged`, as stdio does: the server sends
    notifications/resources/list_changed when plans come or go, on either transport."""
    async with (
        spawned_http_server(tmp_path) as url,
        httpx2.AsyncClient() as http,
        Client(stdio_server(tmp_path), mode="legacy") as stdio,
    ):
        answer = await http.post(url, json=INITIALIZE_CALL, headers=JSON_HEADERS)
        assert stdio.server_capabilities is not None
        over_stdio = stdio.server_capabilities.resources
    # An SSE answer: a priming event (an id, empty data), then the message.
    [message] = [
        line.removeprefix("data:").strip()
        for line in answer.text.splitlines()
        if line.startswith("data:") and line.removeprefix("data:").strip()
    ]
    data = json.loads(message)
    assert data["result"]["capabilities"]["resources"]["listChanged"] is True
    assert over_stdio is not None
    assert over_stdio.list_changed is True
