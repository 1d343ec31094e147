"""The journal as users get it: the server `nineplan serve` builds (the SDK's in-memory client;
a real stdio server where a follower process watches it), the real `nineplan log` and `state`."""

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.fakes import PLAN, postgres_schema
from tests.integration.servers import memory_client, run_nineplan, spawned_nineplan, stdio_server
from tests.mcp_helpers import ok, text


def log_json(sessions: Path, name: str, *extra: str) -> list[dict[str, Any]]:
    done = run_nineplan(sessions, "log", name, "--json", *extra)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


async def test_a_scripted_workflow_gives_exactly_its_events(tmp_path: Path):
    """Create, three adds, pull, defer, pull, complete with notes, pull, discard through the tools:
    `nineplan log --json` prints exactly those kinds in order (the notes first, then the
    completion), one JSON object per line, actor agent."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create", task_description="t"))["session_name"]
        first = await ok(client, "9plan_queue_add", **PLAN)
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "second"})
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "urgent"}, position="front")
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_defer", reason="needs the schema first", position="back")
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_complete", outcome="wrote users.sql", notes="- used uuid")
        await ok(client, "9plan_queue_pull", request_id="pull-1")
        await ok(client, "9plan_queue_pull", request_id="pull-1")  # a replay: no event
        await ok(client, "9plan_plan_discard", reason="obsolete")
        await ok(client, "9plan_history_search", query="users")  # a read: no event
    events = log_json(tmp_path, name)
    assert [event["kind"] for event in events] == [
        "session_created",
        "plan_added",
        "plan_added",
        "plan_added",
        "plan_pulled",
        "plan_deferred",
        "plan_pulled",
        "notes_added",
        "plan_completed",
        "plan_pulled",
        "plan_discarded",
    ]
    assert [event["seq"] for event in events] == list(range(1, 12))
    assert {event["actor"] for event in events} == {"agent"}
    assert events[5]["detail"] == {
        "position": "back",
        "rank": 3,
        "reason": "needs the schema first",
    }
    assert events[7]["detail"] == {"notes": "- used uuid"}
    assert events[8] == {
        "seq": 9,
        "at": events[8]["at"],
        "kind": "plan_completed",
        "plan_id": first["plan_id"],
        "actor": "agent",
        "detail": {
            "outcome": "wrote users.sql",
            "verdicts": {"met": 0, "unmet": 0, "needs_person": 0, "none": 1},
        },
    }
    assert events[8]["at"].endswith("Z")
    assert [event["seq"] for event in log_json(tmp_path, name, "--limit", "3")] == [9, 10, 11]
    plain = run_nineplan(tmp_path, "log", name)
    assert plain.returncode == 0
    assert len(plain.stdout.splitlines()) == 11
    assert "plan_deferred" in plain.stdout
    assert "reason=needs the schema first" in plain.stdout


async def test_three_defers_make_the_next_pull_say_so(tmp_path: Path):
    """After three deferrals the pull's text says `deferred 3 times` and suggests splitting or
    recording the blocker; state and `nineplan state` mark the plan stuck."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        added = await ok(client, "9plan_queue_add", **PLAN)
        for attempt in range(3):
            pulled = await client.call_tool("9plan_queue_pull", {})
            assert "deferred" not in text(pulled), attempt
            await ok(client, "9plan_plan_defer", reason=f"blocked {attempt}")
        state = await ok(client, "9plan_admin_state")
        assert state["queue"][0] | {"goal": ""} == {
            "id": added["plan_id"],
            "goal": "",
            "queue_position": 1,
            "defer_count": 3,
            "stuck": True,
            "waiting_for": [],
        }
        shown = run_nineplan(tmp_path, "state", name)
        assert shown.returncode == 0
        assert "3 STUCK" in shown.stdout
        pulled = await client.call_tool("9plan_queue_pull", {})
        assert not pulled.is_error
        said = text(pulled)
        assert "deferred 3 times" in said
        assert "splitting" in said
        assert "blocks it" in said
        active = (await ok(client, "9plan_session_resume", session_name=name))["active_plan"]
        assert (active["defer_count"], active["stuck"]) == (3, True)
        assert active["pulled_at"].endswith("Z")


async def test_the_reminder_line_follows_the_active_plan(tmp_path: Path):
    """While a plan is active, add, search and get carry `Active plan: {id} {goal} (pulled N min
    ago)` in their text and their notices, and state and resume show `Active plan: {id} {goal}`
    from their `active_plan` field; with none active, they do not."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "done first"})
        await ok(client, "9plan_queue_pull")
        done = await ok(client, "9plan_plan_complete", outcome="made users.sql")
        quiet = await client.call_tool("9plan_queue_add", PLAN)
        assert "Active plan:" not in text(quiet)
        pulled = await ok(client, "9plan_queue_pull")
        line = f"Active plan: {pulled['plan_id']} {PLAN['goal']} (pulled 0 min ago)"
        calls: list[tuple[str, dict[str, Any]]] = [
            ("9plan_queue_add", {**PLAN, "goal": "later"}),
            ("9plan_history_search", {"query": "users"}),
            ("9plan_history_get", {"plan_id": done["plan_id"]}),
        ]
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, text(result)
            assert line in text(result), (tool, text(result))
            assert result.structured_content is not None
            assert line in result.structured_content["notices"], tool
        for tool, arguments in [
            ("9plan_admin_state", {}),
            ("9plan_session_resume", {"session_name": name}),
        ]:
            result = await client.call_tool(tool, arguments)
            assert f"\nActive plan: {pulled['plan_id']} {PLAN['goal']}\n" in text(result), tool
            assert result.structured_content is not None
            assert result.structured_content["active_plan"]["id"] == pulled["plan_id"]
        resumed = await ok(client, "9plan_session_resume", session_name=name)
        assert [event["kind"] for event in resumed["recent"]] == [
            "plan_pulled",
            "plan_completed",
            "plan_added",
            "plan_pulled",
            "plan_added",
        ]


async def test_the_log_resource_serves_the_journal(tmp_path: Path):
    """`nineplan://sessions/{session}/log` is listed and reads as the journal, oldest first."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        uri = f"nineplan://sessions/{name}/log"
        assert uri in {str(r.uri) for r in (await client.list_resources()).resources}
        [content] = (await client.read_resource(uri)).contents
        log = json.loads(content.text)  # type: ignore[union-attr]
        assert log["session_name"] == name
        assert [event["kind"] for event in log["events"]] == ["session_created", "plan_added"]


@pytest.mark.parametrize("limit", ["0", "10001", "many"])
def test_a_limit_out_of_range_is_refused_naming_it(tmp_path: Path, limit: str):
    """`nineplan log --limit` outside 1-10,000 exits 2 with a message naming --limit."""
    done = run_nineplan(tmp_path, "log", "brave-quiet-otter", "--limit", limit)
    assert done.returncode == 2
    assert "--limit" in done.stderr


async def test_log_and_state_write_nothing(tmp_path: Path):
    """Inspecting a damaged session (a plan file deleted) with log and state repairs nothing:
    the file stays missing, no event is added, and validate still reports the damage."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        added = await ok(client, "9plan_queue_add", **PLAN)
    plan_file = Path(added["plan_path"])
    plan_file.unlink()
    before = log_json(tmp_path, name)
    assert run_nineplan(tmp_path, "state", name).returncode == 0
    assert run_nineplan(tmp_path, "state", name, "--json").returncode == 0
    assert log_json(tmp_path, name) == before
    assert not plan_file.exists()
    assert run_nineplan(tmp_path, "validate", name).returncode == 1


async def follow_sees_an_add(
    follower: Path, writer: Path, how: signal.Signals = signal.SIGTERM, **env: str
) -> None:
    """`nineplan log --json --follow` on `follower` prints an add made through a server on
    `writer`, then exits 0 on `how` (SIGTERM or SIGINT)."""
    async with Client(stdio_server(writer, **env), mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        async with spawned_nineplan(follower, "log", name, "--json", "--follow", **env) as log:
            with anyio.fail_after(5):
                first = json.loads(await log.line())
            assert first["kind"] == "session_created"
            added = await ok(client, "9plan_queue_add", **PLAN)
            with anyio.fail_after(5):
                seen = json.loads(await log.line())
            assert (seen["kind"], seen["plan_id"], seen["seq"]) == (
                "plan_added",
                added["plan_id"],
                2,
            )
            with anyio.fail_after(5):
                assert await log.stop(how) == 0


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
async def test_follow_in_a_second_process_sees_an_add(tmp_path: Path, how: signal.Signals):
    """On SQLite, a follower process sees the server process's add, and Ctrl-C (SIGINT) or
    SIGTERM ends it with exit code 0."""
    await follow_sees_an_add(tmp_path, tmp_path, how)


@pytest.mark.postgres
async def test_follow_on_another_machine_sees_an_add(tmp_path: Path):
    """On PostgreSQL, a follower with its own sessions folder sees an add made through a
    server with another one: two machines, one database."""
    async with postgres_schema() as url:
        await follow_sees_an_add(tmp_path / "b", tmp_path / "a", NINEPLAN_DATABASE_URL=url)


async def test_follow_ends_when_the_session_folder_is_deleted(tmp_path: Path):
    """`nineplan log NAME --follow` stops with SESSION_NOT_FOUND (exit 2) once the session's
    folder is deleted under it, instead of running on in silence."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
    async with spawned_nineplan(tmp_path, "log", name, "--follow") as log:
        with anyio.fail_after(5):
            assert "session_created" in await log.line()
        shutil.rmtree(tmp_path / name)
        with anyio.fail_after(10):
            assert await log.process.wait() == 2
        assert log.process.stderr is not None
        said = (await log.process.stderr.receive()).decode()
    assert f"nineplan: SESSION_NOT_FOUND: No session named '{name}' exists." in said
