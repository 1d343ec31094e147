"""The streamable HTTP transport: a real server process, the SDK's HTTP client, both eras."""

import json
import re
import signal
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from nineplan_adapters.entrypoints.cli.demo import free_port, spawned_http_server
from tests.fakes import PLAN
from tests.integration.servers import (
    PROJECT,
    PYTHON,
    child_env,
    run_nineplan,
    wait_until_listening,
)
from tests.mcp_helpers import ok, text

TOKEN = "s3cret-token"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    """One `nineplan serve --transport http` for the module's tests that take `server`: each
    creates and names its own session, and none lists the sessions, so none sees another's."""
    async with spawned_http_server(tmp_path_factory.mktemp("http")) as url:
        yield url


@pytest.fixture
async def guarded(tmp_path: Path) -> AsyncIterator[str]:
    async with spawned_http_server(tmp_path, env={"NINEPLAN_HTTP_TOKEN": TOKEN}) as url:
        yield url


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_whole_lifecycle_over_http(server: str, mode: str):
    """Create, add, pull, defer, pull again, complete, search and validate all work over streamable
    HTTP, in both protocol eras."""
    async with Client(server, mode=mode) as client:
        name = (await ok(client, "9plan_session_create", task_description="over http"))[
            "session_name"
        ]
        scoped = {"session_name": name}
        await ok(client, "9plan_queue_add", **PLAN, **scoped)
        await ok(client, "9plan_queue_pull", **scoped)
        await ok(client, "9plan_plan_defer", reason="later", **scoped)
        await ok(client, "9plan_queue_pull", **scoped)
        assert (await ok(client, "9plan_plan_complete", outcome="users table made", **scoped))[
            "completed_count"
        ] == 1
        assert (await ok(client, "9plan_history_search", query="users", **scoped))["matches"]
        assert (await ok(client, "9plan_admin_validate", **scoped))["valid"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_whole_workflow_without_file_access(server: str, mode: str):
    """A remote client that never touches a file: pull hands it the plan text, its notes go
    through `notes` on defer and complete, and a history search finds a word from them."""
    async with Client(server, mode=mode) as client:
        name = (await ok(client, "9plan_session_create", task_description="remote"))["session_name"]
        scoped = {"session_name": name}
        await ok(client, "9plan_queue_add", **PLAN, outputs="users.sql", **scoped)
        pulled = await ok(client, "9plan_queue_pull", **scoped)
        assert f"# Goal\n{PLAN['goal']}\n" in pulled["plan_text"]
        await ok(client, "9plan_plan_defer", reason="later", notes="- tried uuid keys", **scoped)
        again = await ok(client, "9plan_queue_pull", **scoped)
        assert "- tried uuid keys" in again["plan_text"]
        done = await client.call_tool(
            "9plan_plan_complete",
            {"outcome": "users table made", "notes": "- chose citext for emails", **scoped},
        )
        assert not done.is_error, text(done)
        assert "Plan file read tolerantly" not in text(done)
        matches = (await ok(client, "9plan_history_search", query="citext", **scoped))["matches"]
        assert [m["id"] for m in matches] == [pulled["plan_id"]]
        plan = await ok(client, "9plan_history_get", plan_id=pulled["plan_id"], **scoped)
        assert plan["notes"].split("\n")[0] == "- tried uuid keys"
        assert plan["notes"].split("\n")[-1] == "- chose citext for emails"


async def test_two_legacy_clients_keep_separate_current_sessions(server: str):
    """Each Mcp-Session-Id has its own current session."""
    async with Client(server, mode="legacy") as first, Client(server, mode="legacy") as second:
        one = (await ok(first, "9plan_session_create", task_description="one"))["session_name"]
        two = (await ok(second, "9plan_session_create", task_description="two"))["session_name"]
        await ok(first, "9plan_queue_add", **PLAN)
        assert (await ok(first, "9plan_admin_state"))["session_name"] == one
        assert (await ok(second, "9plan_admin_state"))["session_name"] == two
        assert (await ok(second, "9plan_admin_state"))["queue"] == []


async def test_sessionless_clients_are_told_to_name_the_session(server: str):
    """On the 2026-07-28 protocol no current session is kept: after create, a session-scoped call without session_name is SESSION_NOT_FOUND naming session_name."""
    async with Client(server, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        await ok(client, "9plan_session_create")
        result = await client.call_tool("9plan_admin_state", {})
        assert result.is_error
        assert "SESSION_NOT_FOUND" in text(result)
        assert "session_name" in text(result)


async def test_wrong_host_and_foreign_origin_are_refused(server: str):
    """The HTTP server answers 421 to a foreign Host header and 403 to a foreign Origin (DNS
    rebinding protection)."""
    async with httpx2.AsyncClient() as http:
        assert (await http.post(server, json=INITIALIZE, headers=JSON_HEADERS)).status_code == 200
        wrong_host = await http.post(
            server, json=INITIALIZE, headers={**JSON_HEADERS, "Host": "evil.example"}
        )
        assert wrong_host.status_code == 421
        foreign = await http.post(
            server, json=INITIALIZE, headers={**JSON_HEADERS, "Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403


async def test_a_token_is_required_when_set(guarded: str):
    """With a token set, a request without it or with a wrong one is 401; a client with the right
    bearer token works in both eras."""
    async with httpx2.AsyncClient() as http:
        assert (await http.post(guarded, json=INITIALIZE, headers=JSON_HEADERS)).status_code == 401
        wrong = await http.post(
            guarded, json=INITIALIZE, headers={**JSON_HEADERS, "Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401
    for mode in ("legacy", "auto"):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
        async with Client(streamable_http_client(guarded, http_client=http), mode=mode) as client:
            await ok(client, "9plan_admin_sessions")
        await http.aclose()


def test_a_non_loopback_bind_without_a_token_is_refused(tmp_path: Path):
    """Serving HTTP on 0.0.0.0 without NINEPLAN_HTTP_TOKEN exits 2, names the variable and writes
    nothing to stdout."""
    completed = run_nineplan(
        tmp_path,
        "serve",
        "--transport",
        "http",
        "--host",
        "0.0.0.0",
        "--port",
        str(free_port()),
        timeout=60,
    )
    assert completed.returncode == 2
    assert "NINEPLAN_HTTP_TOKEN" in completed.stderr
    assert completed.stdout == ""


async def test_sigterm_exits_cleanly_and_loses_nothing(tmp_path: Path):
    """Acknowledged work survives a SIGTERM; the server exits 0 with nothing on stdout."""
    port = free_port()
    process = subprocess.Popen(
        [PYTHON, "-m", "nineplan_adapters", "serve", "--transport", "http", "--port", str(port)],
        env=child_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=PROJECT,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        await wait_until_listening(port, process)
        async with Client(url, mode="legacy") as client:
            name = (await ok(client, "9plan_session_create"))["session_name"]
            for index in range(5):
                await ok(client, "9plan_queue_add", **{**PLAN, "goal": f"g{index}"})
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err.decode()
    assert out == b""
    async with spawned_http_server(tmp_path) as again, Client(again, mode="legacy") as client:
        state = await ok(client, "9plan_session_resume", session_name=name)
        assert [entry["goal"] for entry in state["queue"]] == [f"g{i}" for i in range(5)]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_retried_add_and_complete_apply_once_over_http(server: str, mode: str):
    """An add and a complete sent three times with one request_id each happen once over HTTP and
    answer the same each time."""
    async with Client(server, mode=mode) as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        scoped: dict[str, Any] = {"session_name": name}
        added = [
            await ok(client, "9plan_queue_add", **PLAN, request_id="add-1", **scoped)
            for _ in range(3)
        ]
        assert added[0] == added[1] == added[2]
        await ok(client, "9plan_queue_pull", **scoped)
        done = [
            await ok(client, "9plan_plan_complete", outcome="ok", request_id="fin-1", **scoped)
            for _ in range(3)
        ]
        assert done[0] == done[2]
        state = await ok(client, "9plan_admin_state", **scoped)
        assert (state["queue"], state["completed_count"]) == ([], 1)


def serve_and_stop(tmp_path: Path, *arguments: str, requests: int = 3, **variables: str) -> str:
    """Start `nineplan ARGUMENTS --port P`, make `requests` GET requests to its web view, stop it
    with SIGINT as a person's Ctrl-C does, and return what it wrote on stderr."""
    port = free_port()
    process = subprocess.Popen(
        [PYTHON, "-m", "nineplan_adapters", *arguments, "--port", str(port)],
        env=child_env(tmp_path, **variables),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=PROJECT,
    )
    try:
        anyio.run(wait_until_listening, port, process)
        for _ in range(requests):
            assert httpx2.get(f"http://127.0.0.1:{port}/", timeout=10).status_code == 200
    finally:
        process.send_signal(signal.SIGINT)
        _, errors = process.communicate(timeout=30)
    return errors.decode()


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (("ui",), "nineplan: the web view is at http://127.0.0.1:{port}/"),
        (("serve", "--transport", "http"), "nineplan: MCP is at http://127.0.0.1:{port}/mcp"),
    ],
)
def test_a_server_says_where_it_is_and_logs_requests_only_at_debug(
    tmp_path: Path, arguments: tuple[str, ...], said: str
):
    """`nineplan ui` and `nineplan serve --transport http` say their address in one line on
    stderr; at the default log level a request writes no access line, at debug it does."""
    errors = serve_and_stop(tmp_path, *arguments)
    lines = errors.splitlines()
    announced = [line for line in lines if line.startswith("nineplan: ")]
    assert len(announced) == 1
    assert re.fullmatch(said.replace("{port}", r"\d+").replace(".", r"\.") + ".*", announced[0])
    assert not [line for line in lines if '"uvicorn.access"' in line]
    detailed = serve_and_stop(tmp_path, *arguments, NINEPLAN_LOG_LEVEL="debug")
    assert len([line for line in detailed.splitlines() if '"uvicorn.access"' in line]) >= 3


def test_stdio_says_which_flags_it_ignores(tmp_path: Path):
    """`nineplan serve --host 0.0.0.0 --port 9000` on stdio serves as usual and says, in one
    line, that the two flags apply only to HTTP."""
    done = subprocess.run(
        [PYTHON, "-m", "nineplan_adapters", "serve", "--host", "0.0.0.0", "--port", "9000"],
        env=child_env(tmp_path),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=PROJECT,
    )
    assert done.returncode == 0
    assert done.stdout == ""
    warned = [line for line in done.stderr.splitlines() if line.startswith("nineplan: ")]
    assert warned == ["nineplan: --host and --port apply only with --transport http; ignored"]


async def _sse_events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, str]]:
    """The server-sent events of `lines`, each as its fields (`id`, `data`, ...)."""
    event: dict[str, str] = {}
    async for line in lines:
        if not line:
            if event:
                yield event
            event = {}
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            event[field] = value.removeprefix(" ")
    if event:
        yield event


class RawSession:
    """A legacy-era MCP session spoken in plain HTTP, to see the wire's event ids."""

    def __init__(self, http: httpx2.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.headers = dict(JSON_HEADERS)
        self.ids = iter(range(100, 10_000))

    async def post(self, message: dict[str, Any]) -> list[dict[str, str]]:
        """POST one message; the events of its SSE answer."""
        answer = await self.http.post(self.url, json=message, headers=self.headers)
        assert answer.status_code in {200, 202}, answer.text
        self.headers.setdefault("Mcp-Session-Id", answer.headers.get("mcp-session-id", ""))
        return [event async for event in _sse_events(answer.aiter_lines())]

    async def request(self, method: str, **params: Any) -> dict[str, Any]:
        """A request's result."""
        request_id = next(self.ids)
        events = await self.post({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})  # fmt: skip
        answers = [json.loads(e["data"]) for e in events if e.get("data")]
        [answer] = [a for a in answers if a.get("id") == request_id]
        result: dict[str, Any] = answer["result"]
        return result

    async def tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.request("tools/call", name=name, arguments=arguments)
        assert not result.get("isError"), result
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    async def initialize(self) -> list[dict[str, str]]:
        """initialize and notifications/initialized; the events of initialize's answer."""
        events = await self.post(INITIALIZE)
        self.headers["MCP-Protocol-Version"] = "2025-11-25"
        await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return events

    def stream(self, last_event_id: str | None = None) -> Any:
        """The session's GET stream (resumed after `last_event_id` when given)."""
        headers = {**self.headers, "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return self.http.stream("GET", self.url, headers=headers)


LIST_CHANGED = "notifications/resources/list_changed"


async def _until_list_changed(events: AsyncIterator[dict[str, str]]) -> list[dict[str, str]]:
    """The events up to and including the next resources/list_changed notification."""
    seen = []
    with anyio.fail_after(15):
        async for event in events:
            seen.append(event)
            if event.get("data") and json.loads(event["data"]).get("method") == LIST_CHANGED:
                return seen
    raise AssertionError(f"the stream ended before a list_changed notification: {seen}")


async def test_a_reconnected_stream_receives_the_notifications_it_missed(server: str):
    """Legacy-era streams are resumable: a POST's answer opens with a priming event, events
    carry ids, and a client that drops its GET stream, misses a notification meanwhile (a plan
    added to the session it subscribed to), and reconnects with Last-Event-ID receives it; the
    id replays nothing on another MCP session, whose stream stays open for what comes next."""
    async with httpx2.AsyncClient(timeout=30) as http:
        client = RawSession(http, server)
        opened = await client.initialize()
        assert opened[0].get("id"), opened  # the priming event: an id, no data
        assert opened[0].get("data") == "", opened
        name = (await client.tool("9plan_session_create"))["session_name"]
        await client.request("resources/subscribe", uri=f"nineplan://sessions/{name}/state")
        async with client.stream() as live:
            assert live.status_code == 200
            await client.tool("9plan_queue_add", **PLAN)
            heard = await _until_list_changed(_sse_events(live.aiter_lines()))
        last_id = heard[-1]["id"]
        await client.tool("9plan_queue_add", **{**PLAN, "goal": "missed while away"})
        await anyio.sleep(2.5)  # the change is announced while no stream is open
        async with client.stream(last_event_id=last_id) as resumed:
            assert resumed.status_code == 200
            replayed = await _until_list_changed(_sse_events(resumed.aiter_lines()))
        assert all(event["id"] != last_id for event in replayed)
        methods = [json.loads(e["data"]).get("method") for e in replayed if e.get("data")]
        assert "notifications/resources/updated" in methods, replayed
        other = RawSession(http, server)
        await other.initialize()
        async with other.stream(last_event_id=last_id) as foreign:
            assert foreign.status_code == 200
            came: list[dict[str, str]] = []
            with anyio.move_on_after(1.5) as waited:  # a replay would come at once
                async for event in _sse_events(foreign.aiter_lines()):
                    came += [event] if event.get("data") else []
            assert came == []
            assert waited.cancelled_caught  # the stream stays open, live
