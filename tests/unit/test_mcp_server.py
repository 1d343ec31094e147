"""The MCP surface through the SDK's in-memory client, in both protocol eras."""

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from benchmarks.context import TOOL_TOKENS
from mcp import Client, MCPError
from mcp.types import INVALID_PARAMS, TextResourceContents

from nineplan_adapters.entrypoints.mcp import build_server
from nineplan_adapters.entrypoints.mcp.clients import CurrentSessions, client_key
from nineplan_adapters.entrypoints.mcp.reference import tool_list_tokens
from nineplan_adapters.entrypoints.mcp.server import NineplanServer, plain_optional
from nineplan_adapters.storage.clock import FixedClock
from nineplan_adapters.storage.memory.catalog import MemorySessionCatalog
from tests.fakes import PLAN, make_service, open_backend
from tests.mcp_helpers import READ_ONLY, TOOLS, error, ok, text


@pytest.fixture(params=["auto", "legacy"])
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Client]:
    async with (
        open_backend("sqlite", tmp_path) as backend,
        Client(build_server(backend.service), mode=request.param) as c,
    ):
        yield c


async def test_the_thirteen_tools_are_listed_with_schemas_and_hints(client: Client):
    """Every tool has an output schema, a short human title and the right hints; resume may
    repair files, so it is not read-only but idempotent; state is read-only (and idempotent)
    although a named worker's call renews its lease, bookkeeping the caller did not ask for."""
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.output_schema is not None, name
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (name in READ_ONLY), name
        assert tool.title, name
        assert len(tool.title) <= 20, name
        assert "title" not in tool.input_schema, name
    assert len({tool.title for tool in tools.values()}) == 13
    resume = tools["9plan_session_resume"].annotations
    assert resume is not None
    assert resume.idempotent_hint is True
    state = tools["9plan_admin_state"].annotations
    assert state is not None
    assert (state.read_only_hint, state.idempotent_hint) == (True, True)
    assert tools["9plan_plan_discard"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert "session_name" in tools["9plan_queue_add"].input_schema["properties"]
    assert tools["9plan_queue_add"].input_schema["properties"]["position"]["enum"] == [
        "front",
        "back",
    ]


def test_the_reference_says_why_state_is_read_only():
    """docs/tools.md explains, under 9plan_admin_state, why a tool that renews a named
    worker's lease is annotated read-only."""
    reference = (Path(__file__).parents[2] / "docs" / "tools.md").read_text()
    state = reference.split("## `9plan_admin_state`")[1]
    assert "*(read-only)*" in state
    assert "renews that worker's lease" in state
    assert "bookkeeping the caller did not ask for" in state


async def test_tool_descriptions_and_schemas_stay_lean(client: Client):
    """What every agent pays for on every turn: the thirteen tools' descriptions and input
    schemas stay under 2,500 tokens (characters / 4), the figure benchmarks/latency.py prints."""
    tools = (await client.list_tools()).tools
    size = sum(len(tool.description or "") + len(json.dumps(tool.input_schema)) for tool in tools)
    assert tool_list_tokens(tools) == size // 4
    assert tool_list_tokens(tools) < TOOL_TOKENS, tool_list_tokens(tools)


async def test_optional_arguments_are_declared_as_their_plain_type(client: Client):
    """An optional argument is its plain type in tools/list: no null branch, no `"default":
    null` (pydantic's `T | None = None`), no length bounds; a default that says something (10
    results) stays, and `position`'s `back` is said by the tools' texts instead."""
    for tool in (await client.list_tools()).tools:
        required = set(tool.input_schema.get("required", []))
        for name, spec in tool.input_schema["properties"].items():
            if name in required:
                continue
            assert "anyOf" not in spec, (tool.name, name, spec)
            assert isinstance(spec["type"], str), (tool.name, name, spec)
            assert spec["type"] != "null", (tool.name, name, spec)
            assert spec.get("default", "absent") is not None, (tool.name, name, spec)
    listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    assert listed["9plan_queue_add"]["properties"]["request_id"] == {
        "description": "Retry key: a repeat returns the first result",
        "type": "string",
    }
    described = {tool.name: tool.description for tool in (await client.list_tools()).tools}
    for named in (
        "9plan_queue_add",
        "9plan_queue_add_many",
        "9plan_plan_defer",
    ):  # the text says the default instead
        assert "default" not in listed[named]["properties"]["position"]
        assert "back (default)" in (described[named] or "")
    assert listed["9plan_history_search"]["properties"]["max_results"]["default"] == 10


async def test_an_explicit_null_is_still_taken_as_an_absent_argument(client: Client):
    """A client that sends null for an optional argument is served as before: add, pull,
    complete and search with every optional argument null succeed as if it were omitted;
    a null for a required one is still a VALIDATION_ERROR naming it."""
    await ok(client, "9plan_session_create", task_description=None, request_id=None)
    nulls = {"session_name": None, "request_id": None}
    await ok(client, "9plan_queue_add", **PLAN, inputs=None, outputs=None, **nulls)
    pulled = await ok(client, "9plan_queue_pull", worker=None, take_over=None, **nulls)
    assert pulled["worker"] == "main"
    await ok(client, "9plan_plan_complete", outcome="done", notes=None, worker=None, **nulls)
    found = await ok(client, "9plan_history_search", query="users", session_name=None)
    assert [match["id"] for match in found["matches"]] == [pulled["plan_id"]]
    kind, body = await error(client, "9plan_plan_discard", reason=None)
    assert kind == "VALIDATION_ERROR"
    assert "reason" in body


def test_plain_optional_keeps_all_but_the_null():
    """The schema rewrite drops only the null branch and the null default: constraints and
    description stay, several other branches stay an anyOf, anything else is untouched."""
    assert plain_optional(
        {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}], "default": None}
        | {"description": "d"}
    ) == {"type": "string", "maxLength": 3, "description": "d"}
    assert plain_optional(
        {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}], "default": None}
    ) == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    for kept in ({"type": "string", "default": "back"}, {"type": "integer"}):
        assert plain_optional(kept) == kept


async def test_a_whole_lifecycle(client: Client):
    """create, add front/back, pull, defer, pull, complete, search, get, validate, state."""
    created = await ok(client, "9plan_session_create", task_description="ship it")
    name = created["session_name"]
    assert created["session_path"].endswith(name)
    first = await ok(client, "9plan_queue_add", **PLAN, outputs="schema.sql")
    second = await ok(client, "9plan_queue_add", **{**PLAN, "goal": "urgent"}, position="front")
    assert (first["queue_position"], second["queue_position"]) == (1, 1)
    pulled = await ok(client, "9plan_queue_pull")
    assert (pulled["plan_id"], pulled["goal"]) == (second["plan_id"], "urgent")
    assert Path(pulled["plan_path"]).read_text().startswith("# Context")
    assert await ok(client, "9plan_plan_defer", reason="blocked") == {
        "session_name": name,
        "plan_id": second["plan_id"],
        "queue_position": 2,
        "notices": [],
    }
    assert (await ok(client, "9plan_queue_pull"))["plan_id"] == first["plan_id"]
    done = await ok(client, "9plan_plan_complete", outcome="wrote schema.sql with the users table")
    assert done == {
        "session_name": name,
        "plan_id": first["plan_id"],
        "completed_count": 1,
        "queue_length": 1,
        "next_goal": "urgent",
        "notices": [
            (
                f"No verdict on criteria 1 of {first['plan_id']}: answer each numbered criterion"
                " in 9plan_plan_complete's verdicts (met, unmet or needs_person, with evidence)."
            ),
            "Next: urgent (9plan_queue_pull).",
        ],
    }  # a complete without verdicts: the fields as before, and the one line of `ask`
    found = await ok(client, "9plan_history_search", query="users table")
    assert found["matches"][0] == {
        "id": first["plan_id"],
        "goal": PLAN["goal"],
        "outcome": "wrote schema.sql with the users table",
        "relevance_rank": 1,
        "verdict": "unchecked",
    }
    plan = await ok(client, "9plan_history_get", plan_id=first["plan_id"])
    assert plan["outputs"] == "schema.sql"
    assert plan["completed_at"].endswith("Z")
    assert (await ok(client, "9plan_admin_validate"))["valid"] is True
    state = await ok(client, "9plan_admin_state")
    assert state["queue"] == [
        {"id": second["plan_id"], "goal": "urgent", "queue_position": 1, "defer_count": 1,
         "stuck": False, "waiting_for": []}
    ]  # fmt: skip
    assert state["plan_files"] == [f"{second['plan_id']}.txt"]
    assert state["file_db_match"] is True
    sessions = await ok(client, "9plan_admin_sessions")
    assert sessions["sessions"][0]["name"] == name
    assert sessions["sessions"][0]["queue_length"] == 1


async def test_every_result_starts_with_the_breadcrumb(client: Client):
    """Every tool result's text starts with `[Session: NAME]` for the client's current session."""
    result = await client.call_tool("9plan_session_create", {})
    assert result.structured_content is not None
    name = result.structured_content["session_name"]
    assert text(result).startswith(f"[Session: {name}] ")
    for tool, arguments in [
        ("9plan_admin_state", {}),
        ("9plan_admin_validate", {}),
        ("9plan_admin_sessions", {}),
        ("9plan_queue_add", PLAN),
    ]:
        assert text(await client.call_tool(tool, arguments)).startswith(f"[Session: {name}] ")


async def test_without_a_session_calls_say_how_to_get_one(client: Client):
    """A session-scoped call before any session is SESSION_NOT_FOUND under `[Session: none]`, naming
    create and resume."""
    category, body = await error(client, "9plan_queue_pull")
    assert category == "SESSION_NOT_FOUND"
    assert body.startswith("[Session: none] ")
    assert "9plan_session_create" in body
    assert "9plan_session_resume" in body


async def test_each_client_provokable_error_category(client: Client):
    """SESSION_NOT_FOUND, PLAN_NOT_FOUND, NO_ACTIVE_PLAN, PLAN_ALREADY_ACTIVE, QUEUE_EMPTY, VALIDATION_ERROR."""
    assert (await error(client, "9plan_session_resume", session_name="never-seen-this"))[
        0
    ] == "SESSION_NOT_FOUND"
    await ok(client, "9plan_session_create")
    assert (await error(client, "9plan_queue_pull"))[0] == "QUEUE_EMPTY"
    assert (await error(client, "9plan_plan_complete", outcome="x"))[0] == "NO_ACTIVE_PLAN"
    assert (await error(client, "9plan_history_get", plan_id="zzzzz"))[0] == "PLAN_NOT_FOUND"
    await ok(client, "9plan_queue_add", **PLAN)
    await ok(client, "9plan_queue_add", **PLAN)
    await ok(client, "9plan_queue_pull")
    assert (await error(client, "9plan_queue_pull"))[0] == "PLAN_ALREADY_ACTIVE"
    assert (await error(client, "9plan_plan_defer", reason="   "))[0] == "VALIDATION_ERROR"


@pytest.mark.parametrize(
    ("tool", "arguments", "field"),
    [
        ("9plan_queue_add", {**PLAN, "goal": ""}, "goal"),
        ("9plan_queue_add", {**PLAN, "position": "sideways"}, "position"),
        ("9plan_queue_add", {"goal": "only"}, "context"),
        ("9plan_queue_add", {**PLAN, "goal": 42}, "goal"),
        ("9plan_plan_defer", {"reason": "x", "position": "top"}, "position"),
        ("9plan_history_search", {"query": "x", "max_results": 0}, "max_results"),
        ("9plan_history_search", {"query": "x", "max_results": 500}, "max_results"),
        ("9plan_history_search", {"query": "x", "max_results": "many"}, "max_results"),
        ("9plan_history_search", {"query": "((( )))"}, "query"),
        ("9plan_history_get", {"plan_id": "../../etc/passwd"}, "plan_id"),
        ("9plan_session_resume", {"session_name": "../../etc"}, "session_name"),
        ("9plan_admin_state", {"session_name": "/abs/path-x-y"}, "session_name"),
        ("9plan_plan_complete", {"outcome": ["not", "text"]}, "outcome"),
    ],
)
async def test_bad_arguments_are_validation_errors_naming_the_field(
    client: Client, tool, arguments, field
):
    """A wrong argument is a VALIDATION_ERROR naming the field, without a traceback, and leaves the
    session valid."""
    await ok(client, "9plan_session_create")
    category, body = await error(client, tool, **arguments)
    assert category == "VALIDATION_ERROR"
    assert field in body
    assert "Traceback" not in body
    assert (await ok(client, "9plan_admin_validate"))["valid"] is True


async def test_unknown_tools_are_validation_errors(client: Client):
    """Calling a tool that does not exist is a VALIDATION_ERROR that names it."""
    category, body = await error(client, "9plan_nothing")
    assert category == "VALIDATION_ERROR"
    assert "9plan_nothing" in body


async def test_explicit_session_name_addresses_without_switching(client: Client):
    """session_name addresses another session without changing the current one; resume switches it."""
    first = (await ok(client, "9plan_session_create", task_description="one"))["session_name"]
    second = (await ok(client, "9plan_session_create", task_description="two"))["session_name"]
    result = await client.call_tool("9plan_queue_add", {**PLAN, "session_name": first})
    assert text(result).startswith(f"[Session: {first}]")
    assert (await ok(client, "9plan_admin_state"))["session_name"] == second
    assert len((await ok(client, "9plan_admin_state", session_name=first))["queue"]) == 1
    resumed = await ok(client, "9plan_session_resume", session_name=first)
    assert resumed["task_description"] == "one"
    assert (await ok(client, "9plan_admin_state"))["session_name"] == first


async def test_the_bootstrap_prompt_and_instructions(client: Client):
    """The server offers one `bootstrap` prompt with an optional task, and instructions that name
    session_create and the breadcrumb."""
    prompts = (await client.list_prompts()).prompts
    assert [p.name for p in prompts] == ["bootstrap", "resume"]
    assert prompts[0].arguments[0].name == "task"  # type: ignore[index]
    assert prompts[0].arguments[0].required is False  # type: ignore[index]
    plain = await client.get_prompt("bootstrap", {})
    with_task = await client.get_prompt("bootstrap", {"task": "migrate the database"})
    assert "WORKFLOW" in plain.messages[0].content.text  # type: ignore[union-attr]
    assert "TASK: migrate the database" in with_task.messages[0].content.text  # type: ignore[union-attr]
    assert client.instructions is not None
    assert "9plan_session_create" in client.instructions
    assert "[Session: name]" in client.instructions


async def test_plan_files_and_state_are_resources(client: Client):
    """Plan files and session state are readable resources from two templates; unknown plans and
    sessions are MCP errors."""
    name = (await ok(client, "9plan_session_create"))["session_name"]
    added = await ok(client, "9plan_queue_add", **PLAN)
    templates = {
        t.uri_template for t in (await client.list_resource_templates()).resource_templates
    }
    assert templates == {
        "nineplan://sessions/{session}/plans/{plan_id}",
        "nineplan://sessions/{session}/state",
        "nineplan://sessions/{session}/log",
    }
    uris = {str(r.uri) for r in (await client.list_resources()).resources}
    plan_uri = f"nineplan://sessions/{name}/plans/{added['plan_id']}"
    assert {plan_uri, f"nineplan://sessions/{name}/state"} <= uris
    plan = await client.read_resource(plan_uri)
    assert plan.contents[0].text.startswith("# Context")  # type: ignore[union-attr]
    [state_text] = (await client.read_resource(f"nineplan://sessions/{name}/state")).contents
    assert isinstance(state_text, TextResourceContents)
    state = json.loads(state_text.text)
    assert state["queue"][0]["id"] == added["plan_id"]
    with pytest.raises(MCPError):
        await client.read_resource(f"nineplan://sessions/{name}/plans/zzzzz")
    with pytest.raises(MCPError):
        await client.read_resource("nineplan://sessions/not-a-session/state")


async def test_a_bug_is_reported_without_a_traceback(tmp_path: Path, caplog):
    """An unexpected exception is logged with its traceback and answered plainly."""

    class Exploding:
        async def resume_session(self, name: str, **_: object) -> None:
            raise ZeroDivisionError("boom")

    async with Client(build_server(Exploding())) as c:  # type: ignore[arg-type] # a broken service
        result = await c.call_tool("9plan_session_resume", {"session_name": "brave-quiet-otter"})
    assert result.is_error
    assert "INTERNAL_ERROR" in text(result)
    assert "ZeroDivisionError" not in text(result)
    assert "ZeroDivisionError: boom" in caplog.text


def test_current_sessions_are_bounded():
    """The per-client current-session map keeps at most its capacity, dropping the oldest client."""
    sessions = CurrentSessions(capacity=2)
    for client_id in "abc":
        sessions.select(client_id, f"{client_id}-b-c")
    assert len(sessions) == 2
    assert sessions.current("a") is None
    assert sessions.current("c") == "c-b-c"
    assert sessions.in_use() == {"b-b-c", "c-b-c"}


def test_client_keys_per_transport():
    """A stdio client is the process, an HTTP client is its mcp-session-id, and HTTP headers without one give no key."""
    assert client_key(None) == "process"
    assert client_key({"mcp-session-id": "abc"}) == "abc"
    assert client_key({"host": "x"}) is None


async def test_sessionless_clients_must_name_the_session(tmp_path: Path):
    """A call with headers but no Mcp-Session-Id (the sessionless HTTP protocol) needs session_name."""
    from nineplan_adapters.entrypoints.mcp.results import ToolCall, ToolDeps, refusal
    from nineplan_core.errors import SessionNameRequiredError

    deps = ToolDeps(make_service(MemorySessionCatalog(), FixedClock()), CurrentSessions())
    call = ToolCall(deps, None, {"host": "127.0.0.1"})
    with pytest.raises(SessionNameRequiredError) as caught:
        _ = call.session
    assert "session_name" in caught.value.suggestion_text
    outcome = refusal("9plan_queue_pull", call.label, caught.value)
    assert "SESSION_NOT_FOUND" in text(outcome)


async def test_server_identity(tmp_path: Path):
    """build_server gives a NineplanServer named 9plan, and a client sees that name in the server
    info."""
    async with open_backend("memory", tmp_path) as backend:
        server = build_server(backend.service)
        assert isinstance(server, NineplanServer)
        assert server.name == "9plan"
        async with Client(server, mode="legacy") as c:
            assert c.server_info.name == "9plan"  # type: ignore[union-attr]


async def test_retried_calls_with_a_request_id_apply_once(client: Client):
    """A client that timed out and retries gets the first result, and nothing changes twice."""
    first = await ok(client, "9plan_session_create", request_id="c-1")
    assert await ok(client, "9plan_session_create", request_id="c-1") == first
    added = await ok(client, "9plan_queue_add", **PLAN, request_id="a-1")
    assert await ok(client, "9plan_queue_add", **PLAN, request_id="a-1") == added
    await ok(client, "9plan_queue_pull", request_id="p-1")
    done = await ok(client, "9plan_plan_complete", outcome="ok", request_id="d-1")
    assert await ok(client, "9plan_plan_complete", outcome="ok", request_id="d-1") == done
    state = await ok(client, "9plan_admin_state")
    assert (len(state["queue"]), state["completed_count"]) == (0, 1)
    category, body = await error(
        client, "9plan_queue_add", **{**PLAN, "goal": "other"}, request_id="a-1"
    )
    assert category == "VALIDATION_ERROR"
    assert "request_id" in body


async def test_a_prompt_mistake_is_no_error_in_the_servers_log(
    client: Client, caplog: pytest.LogCaptureFixture
):
    """A client asking for a prompt that does not exist gets -32602, and the server logs the
    client's mistake in one warning line, with no error and no traceback."""
    with caplog.at_level(logging.DEBUG), pytest.raises(MCPError) as caught:
        await client.get_prompt("no-such-prompt", {})
    assert caught.value.error.code == INVALID_PARAMS
    assert [record for record in caplog.records if record.levelno >= logging.ERROR] == []
    assert [record for record in caplog.records if record.exc_info] == []
    refused = [record for record in caplog.records if record.name == "nineplan.mcp"]
    assert [record.levelno for record in refused] == [logging.WARNING]
    assert "no-such-prompt" in refused[0].getMessage()
