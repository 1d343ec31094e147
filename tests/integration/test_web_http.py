"""The web view's guard over real HTTP: `nineplan ui` and `nineplan serve --transport http`."""

import json
import re
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

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
    memory_client,
    run_nineplan,
    spawned_ui,
    stdio_server,
    wait_until_listening,
)
from tests.mcp_helpers import ok


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]+)"', html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)


def queue_of(sessions: Path, name: str) -> list[str]:
    state = run_nineplan(sessions, "state", name, "--json", check=True)
    return [entry["goal"] for entry in json.loads(state.stdout)["queue"]]


async def test_a_foreign_origin_or_a_missing_csrf_token_changes_nothing(tmp_path: Path):
    """POSTs from another Origin, or without the page's CSRF token, are refused; the queue stays."""
    async with memory_client(tmp_path) as agent:
        name = (await ok(agent, "9plan_session_create"))["session_name"]
        plan_id = (await ok(agent, "9plan_queue_add", **PLAN))["plan_id"]
        await ok(agent, "9plan_queue_add", **{**PLAN, "goal": "second"})
    async with spawned_ui(tmp_path) as ui, httpx2.AsyncClient(base_url=ui) as http:
        csrf = csrf_of((await http.get(f"/sessions/{name}")).text)
        move = f"/sessions/{name}/plans/{plan_id}/move"
        drop = f"/sessions/{name}/plans/{plan_id}/drop"
        foreign = {"origin": "http://evil.example"}
        assert (await http.post(move, data={"position": "back", "csrf": csrf}, headers=foreign)).status_code == 403  # fmt: skip
        assert (await http.post(drop, data={"reason": "x", "csrf": csrf}, headers=foreign)).status_code == 403  # fmt: skip
        assert (await http.post(drop, data={"reason": "x"}, headers={"origin": ui})).status_code == 403  # fmt: skip
        assert (await http.post(drop, data={"reason": "x", "csrf": "0" * 64})).status_code == 403
        assert (await http.get("/", headers={"host": "rebound.example"})).status_code == 421
        assert queue_of(tmp_path, name) == [PLAN["goal"], "second"]
        accepted = await http.post(move, data={"position": "back", "csrf": csrf}, headers={"origin": ui})  # fmt: skip
        assert accepted.status_code == 303
        assert queue_of(tmp_path, name) == ["second", PLAN["goal"]]


async def test_serve_over_http_also_serves_the_view(tmp_path: Path):
    """`serve --transport http` answers MCP at /mcp (bearer) and the view at / (token cookie)."""
    token = {"NINEPLAN_HTTP_TOKEN": "serve-t0ken"}
    async with spawned_http_server(tmp_path, env=token) as mcp_url:
        base = mcp_url.removesuffix("/mcp")
        bearer = {"Authorization": "Bearer serve-t0ken"}
        async with (
            httpx2.AsyncClient(headers=bearer) as authorised,
            Client(streamable_http_client(mcp_url, http_client=authorised)) as agent,
        ):
            name = (await ok(agent, "9plan_session_create", task_description="over http"))[
                "session_name"
            ]
        async with httpx2.AsyncClient(base_url=base) as http:
            assert (await http.post("/mcp", json={})).status_code == 401  # no bearer
            first = await http.get("/")
            assert (first.status_code, first.headers["location"]) == (303, "/login?next=/")
            login = await http.get("/login")
            signed = await http.post(
                "/login",
                data={"token": "serve-t0ken", "csrf": csrf_of(login.text), "next": "/"},
                headers={"origin": base},
            )
            assert signed.status_code == 303
            listing = await http.get("/")
            assert f'data-session="{name}"' in listing.text
            assert "over http" in listing.text


OAUTH_PROBES = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/mcp",
    "/register",
    "/authorize",
    "/token",
)


@pytest.mark.parametrize("token", [None, "probe-t0ken"])
@pytest.mark.parametrize("command", ["serve", "ui"])
async def test_oauth_discovery_is_a_json_404_never_the_sign_in_page(
    tmp_path: Path, command: str, token: str | None
):
    """An OAuth-probing client asking `serve --transport http` or `ui` (with or without a token)
    for the protected-resource or authorization-server metadata, or a path below them, or
    registering, authorizing or asking for a token (GET or POST), gets a 404 with a JSON body
    naming the bearer token, not the sign-in redirect, page or 401, so it falls back to the
    bearer token."""
    env = {"NINEPLAN_HTTP_TOKEN": token} if token else {}
    if command == "serve":
        server = spawned_http_server(tmp_path, env=env)
    else:
        server = spawned_ui(tmp_path, env=env)
    async with server as url, httpx2.AsyncClient(base_url=url.removesuffix("/mcp")) as http:
        for path in OAUTH_PROBES:
            for answered in (await http.get(path), await http.post(path, json={})):
                assert answered.status_code == 404, (path, answered.status_code, answered.headers)
                assert answered.headers["content-type"] == "application/json", path
                assert answered.json()["error"] == "not_found", path
                assert "NINEPLAN_HTTP_TOKEN" in answered.json()["error_description"], path


def test_ui_refuses_to_listen_beyond_loopback_without_a_token(tmp_path: Path):
    """`nineplan ui --host 0.0.0.0` without NINEPLAN_HTTP_TOKEN exits 2 with one line, serving nothing."""
    refused = run_nineplan(tmp_path, "ui", "--host", "0.0.0.0", "--port", "0")
    assert refused.returncode == 2
    assert "NINEPLAN_HTTP_TOKEN" in refused.stderr
    assert refused.stdout == ""
    assert "nineplan ui" in run_nineplan(tmp_path, "--help", check=True).stdout


def test_ui_on_a_busy_port_says_so_in_one_line(tmp_path: Path):
    """A port something else listens on is one line naming --port, and exit code 2."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        refused = run_nineplan(tmp_path, "ui", "--port", port)
    assert refused.returncode == 2
    expected = (
        f"nineplan: port {port} is in use on 127.0.0.1: stop what listens there, or choose "
        "another port with --port"
    )
    assert refused.stderr.strip().splitlines() == [expected]


async def _next_event(lines: AsyncIterator[str]) -> list[str]:
    """The lines of the stream's next event or comment, up to the blank line that ends it."""
    event: list[str] = []
    async for line in lines:
        if not line:
            return event
        event.append(line)
    raise AssertionError(f"the stream ended inside an event: {event}")


async def test_the_live_streams_send_fragments_as_server_sent_events(tmp_path: Path):
    """A session page's stream and the session list's stream are `text/event-stream`, unbuffered
    by proxies; each sends `event: fragments` with a JSON `data:` line at once, and the session's
    stream sends the changed fragments again when an agent's server (in the test's process,
    not the view's) adds a plan."""
    async with memory_client(tmp_path) as agent:
        name = (await ok(agent, "9plan_session_create", task_description="live"))["session_name"]
        async with spawned_ui(tmp_path) as ui, httpx2.AsyncClient(base_url=ui) as http:
            async with http.stream("GET", "/live") as listing:
                assert listing.headers["content-type"] == "text/event-stream; charset=utf-8"
                assert listing.headers["x-accel-buffering"] == "no"
                kind, data = await _next_event(listing.aiter_lines())
                assert kind == "event: fragments"
                assert f'data-session=\\"{name}\\"' in data
            async with http.stream("GET", f"/sessions/{name}/live") as live:
                assert live.headers["content-type"] == "text/event-stream; charset=utf-8"
                lines = live.aiter_lines()
                kind, data = await _next_event(lines)
                assert kind == "event: fragments"
                assert set(json.loads(data.removeprefix("data: "))) == {
                    "summary", "needs-you", "chart", "active", "queue", "done", "journal"
                }  # fmt: skip
                await ok(agent, "9plan_queue_add", **{**PLAN, "goal": "seen live"})
                with anyio.fail_after(10):
                    kind, data = await _next_event(lines)
                assert kind == "event: fragments"
                assert "seen live" in json.loads(data.removeprefix("data: "))["queue"]


@pytest.mark.serial
async def test_a_session_stream_sends_the_stale_mark_when_a_lease_lapses(tmp_path: Path):
    """With a 6 s lease and nothing changing in the session, the session's stream sends the
    active fragment again once worker `w1`'s lease lapses, now marking its plan stale; the
    first event, sent before the lapse, did not."""
    lease = {"NINEPLAN_LEASE_MINUTES": "0.1"}
    async with Client(stdio_server(tmp_path, **lease)) as agent:
        name = (await ok(agent, "9plan_session_create", task_description="t"))["session_name"]
        await ok(agent, "9plan_queue_add", **PLAN)
        await ok(agent, "9plan_queue_pull", session_name=name, worker="w1")
        async with (
            spawned_ui(tmp_path, env=lease) as ui,
            # a read waits out the lease (6 s), past httpx's default 5 s: fail_after bounds it
            httpx2.AsyncClient(base_url=ui, timeout=httpx2.Timeout(5.0, read=None)) as http,
            http.stream("GET", f"/sessions/{name}/live") as live,
        ):
            lines = live.aiter_lines()
            with anyio.fail_after(30):
                first = json.loads((await _next_event(lines))[1].removeprefix("data: "))
                kind, data = await _next_event(lines)
    assert 'data-stale="true"' not in first["active"]
    assert kind == "event: fragments"
    assert 'data-stale="true"' in json.loads(data.removeprefix("data: "))["active"]


async def test_the_web_view_starts_without_importing_the_mcp_sdk(tmp_path: Path):
    """`nineplan ui` serves its pages without loading the MCP SDK (about a second of CPU at
    every start): a page answers, and the process's import log names no `mcp` module."""
    port = free_port()
    log = tmp_path / "imports.log"
    with log.open("wb") as errors:
        process = subprocess.Popen(
            [PYTHON, "-m", "nineplan_adapters", "ui", "--port", str(port)],
            env=child_env(tmp_path / "sessions", PYTHONPROFILEIMPORTTIME="1"),
            cwd=PROJECT,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
        try:
            await wait_until_listening(port, process)
            async with httpx2.AsyncClient() as http:
                assert (await http.get(f"http://127.0.0.1:{port}/")).status_code == 200
        finally:
            process.terminate()
            process.wait(timeout=30)
    imported = {line.rsplit("|", 1)[-1].strip() for line in log.read_text().splitlines()}
    assert "nineplan_adapters.entrypoints.web.app" in imported
    assert not {module for module in imported if module.split(".")[0] == "mcp"}
