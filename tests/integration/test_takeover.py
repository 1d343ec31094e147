"""Take-over and release (DESIGN §10) as agents and people meet them: the server `nineplan
serve` builds, with the SDK's in-memory client, for `take_over`, the real `nineplan release`
command (its own process) for a person."""

import json
from pathlib import Path

import anyio
from mcp import Client

from tests.integration.servers import memory_client, run_nineplan
from tests.mcp_helpers import error, ok, text

PLAN = {"context": "A queue several agents share", "approach": "Do it", "success_criteria": "Done"}
#: A three-second lease: a worker that falls silent goes stale within the test.
SHORT_LEASE = "0.05"


async def _session_with(client: Client, count: int) -> tuple[str, list[str]]:
    name = (await ok(client, "9plan_session_create", task_description="shared"))["session_name"]
    ids = [
        (await ok(client, "9plan_queue_add", goal=f"Plan {number}", **PLAN))["plan_id"]
        for number in range(count)
    ]
    return name, ids


async def test_a_live_lease_is_refused_over_mcp(tmp_path: Path):
    """Within the (default, 30-minute) lease, another worker's take_over is refused with
    PLAN_ALREADY_ACTIVE naming the holder and when its lease ends; a malformed id is refused
    naming take_over; the plan stays its worker's."""
    async with memory_client(tmp_path / "sessions", mode="legacy") as client:
        name, (a, _) = await _session_with(client, 2)
        await ok(client, "9plan_queue_pull", worker="w1")
        kind, body = await error(
            client, "9plan_queue_pull", session_name=name, worker="w2", take_over=a
        )
        assert kind == "PLAN_ALREADY_ACTIVE"
        assert f"Plan {a} is held by worker w1, whose lease is live until " in body
        result = await client.call_tool(
            "9plan_queue_pull", {"session_name": name, "worker": "w2", "take_over": "NOPE!"}
        )
        assert result.is_error
        assert "take_over" in text(result)
        state = await ok(client, "9plan_admin_state", session_name=name)
        assert [(p["id"], p["worker"]) for p in state["active_plans"]] == [(a, "w1")]


async def test_a_stale_plan_is_taken_over_with_the_old_workers_notes(tmp_path: Path):
    """With a three-second lease: worker w1 writes notes into its plan file and falls silent;
    once state shows the plan stale (polled, under a deadline), w2 takes it over and is
    handed the file with w1's notes; w1's next call is told w2 took it and when; when w2
    completes, w1's notes are in the completed plan, and the journal replays to the state."""
    sessions = tmp_path / "sessions"
    async with memory_client(sessions, mode="legacy", lease_minutes=SHORT_LEASE) as client:
        name, (a, _) = await _session_with(client, 2)
        pulled = await ok(client, "9plan_queue_pull", worker="w1")
        path = Path(pulled["plan_path"])
        path.write_text(path.read_text() + "\nw1: the index is missing, add it first\n")
        with anyio.fail_after(60):
            while not (await ok(client, "9plan_admin_state", session_name=name))["active_plans"][0][
                "stale"
            ]:
                await anyio.sleep(0.5)
        taken = await client.call_tool(
            "9plan_queue_pull", {"session_name": name, "worker": "w2", "take_over": a}
        )
        assert not taken.is_error, text(taken)
        assert (taken.structured_content or {})["worker"] == "w2"
        assert f"Pulled plan {a}: Plan 0" in text(taken)
        assert f"Took over plan {a} from worker w1." in (taken.structured_content or {})["notices"]
        assert "w1: the index is missing, add it first" in text(taken)
        kind, body = await error(
            client, "9plan_plan_complete", session_name=name, worker="w1", outcome="done"
        )
        assert kind == "NO_ACTIVE_PLAN"
        assert f"No plan is active for worker w1: plan {a} was taken over by worker w2 at " in body
        await ok(client, "9plan_plan_complete", session_name=name, worker="w2", outcome="indexed")
        done = await ok(client, "9plan_history_get", session_name=name, plan_id=a)
        assert "w1: the index is missing, add it first" in done["notes"]
        validation = await ok(client, "9plan_admin_validate", session_name=name)
        assert validation["valid"], validation["issues"]
    log = run_nineplan(sessions, "log", name, "--json")
    kinds = [json.loads(line)["kind"] for line in log.stdout.splitlines()]
    assert "plan_taken_over" in kinds


async def test_a_person_releases_a_plan_from_the_command_line(tmp_path: Path):
    """`nineplan release` puts a worker's active plan back at the front, its file's notes read
    into the plan and the file left as it is, prints the new queue (`--json`: the state's
    shape); the worker's next call is told a person released it; releasing it again (now
    queued) or an unknown id exits 1 with one line; an unknown session exits 2."""
    sessions = tmp_path / "sessions"
    async with memory_client(sessions, mode="legacy") as client:
        name, (a, b) = await _session_with(client, 2)
        pulled = await ok(client, "9plan_queue_pull", worker="w1")
        path = Path(pulled["plan_path"])
        written = path.read_text() + "\nw1: half done, the table exists\n"
        path.write_text(written)
        released = run_nineplan(sessions, "release", name, a)
        assert released.returncode == 0, released.stderr
        assert released.stdout.splitlines()[0] == f"Released {a} to the front of the queue."
        assert released.stdout.splitlines()[1].split() == ["1", a, "Plan", "0"]
        assert released.stdout.splitlines()[2].split()[:2] == ["2", b]
        assert path.read_text() == written
        kind, body = await error(
            client, "9plan_plan_defer", session_name=name, worker="w1", reason="later"
        )
        assert kind == "NO_ACTIVE_PLAN"
        assert f"plan {a} was released back to the queue by a person at " in body
        shown = run_nineplan(sessions, "show", name, a, "--json")
        assert "w1: half done, the table exists" in json.loads(shown.stdout)["notes"]
        again = run_nineplan(sessions, "release", name, a)
        assert again.returncode == 1
        assert again.stderr.strip().splitlines() == [
            f"nineplan: No active plan with id {a!r} in this session."
        ]
        unknown = run_nineplan(sessions, "release", name, "zzzzz")
        assert (unknown.returncode, len(unknown.stderr.strip().splitlines())) == (1, 1)
        no_session = run_nineplan(sessions, "release", "no-such-session", a)
        assert no_session.returncode == 2
        await ok(client, "9plan_queue_pull", session_name=name, worker="w2")
        as_json = run_nineplan(sessions, "release", name, a, "--json")
        assert as_json.returncode == 0, as_json.stderr
        state = json.loads(as_json.stdout)
        assert [entry["id"] for entry in state["queue"]] == [a, b]
        assert state["active_plan"] is None
        assert state["session_name"] == name
        validation = await ok(client, "9plan_admin_validate", session_name=name)
        assert validation["valid"], validation["issues"]
