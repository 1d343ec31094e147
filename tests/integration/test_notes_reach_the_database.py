"""Notes reach the database while the agent works (docs/architecture.md, "Workers and
leases"): the server that pulled a plan reads its file back when it changes and stores the
edits with the lease's renewal, through real `nineplan serve` processes and the SDK client —
on SQLite, and on two machines sharing PostgreSQL with the first one's server killed."""

import json
import os
import signal
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.fakes import postgres_schema
from tests.integration.servers import run_nineplan, stdio_server
from tests.mcp_helpers import ok, text
from tests.reliability.torture import SHIM, _death

PLAN = {"context": "A parser crashes", "approach": "Find it", "success_criteria": "Found"}
#: A three-second lease: renewals come every 0.3 s, and a silent worker goes stale in the test.
SHORT_LEASE = "0.05"
WORDS = "the root cause is in parser.c line 120"


async def _pulled_with_notes(client: Client) -> tuple[str, str, Path]:
    """A new session whose one plan worker `a` pulled and wrote WORDS into: the session's
    name, the plan's id and its file."""
    name = (await ok(client, "9plan_session_create"))["session_name"]
    await ok(client, "9plan_queue_add", goal="Fix the parser", **PLAN)
    pulled = await ok(client, "9plan_queue_pull", session_name=name, worker="a")
    plan_id, path = pulled["plan_id"], Path(pulled["plan_path"])
    path.write_text(path.read_text() + f"\n{WORDS}\n")
    return name, plan_id, path


def _journal(sessions: Path, name: str) -> list[dict[str, object]]:
    log = run_nineplan(sessions, "log", name, "--json")
    assert log.returncode == 0, log.stderr
    return [json.loads(line) for line in log.stdout.splitlines()]


async def test_a_workers_notes_are_stored_while_it_works(tmp_path: Path):
    """Over a real stdio server, worker `a` writes notes into its plan file and makes no call:
    within seconds `nineplan show` (another process, reading the database) has them, and the
    journal has one `plan_edited` by the agent naming notes and the worker; a second edit
    within the minute is stored with no second event. A messy line is kept in the notes, and
    the worker's next call is told what was salvaged."""
    sessions = tmp_path / "sessions"
    params = stdio_server(sessions, NINEPLAN_LEASE_MINUTES=SHORT_LEASE)
    async with Client(params, mode="legacy") as client:
        name, plan_id, path = await _pulled_with_notes(client)

        async def shown() -> dict[str, object]:
            shown = run_nineplan(sessions, "show", name, plan_id, "--json")
            assert shown.returncode == 0, shown.stderr
            return dict(json.loads(shown.stdout))

        with anyio.fail_after(30):
            while WORDS not in str((await shown())["notes"]):
                await anyio.sleep(0.2)
        edits = [e for e in _journal(sessions, name) if e["kind"] == "plan_edited"]
        assert [(e["actor"], e["plan_id"], e["detail"]) for e in edits] == [
            ("agent", plan_id, {"sections": ["notes"], "worker": "a"})
        ]
        stray = "a line above every heading, which fits no section"
        path.write_text(f"{stray}\n{path.read_text()}\nsecond thought\n")
        with anyio.fail_after(30):
            while "second thought" not in str((await shown())["notes"]):
                await anyio.sleep(0.2)
        assert stray in str((await shown())["notes"])
        kinds = [e["kind"] for e in _journal(sessions, name)]
        assert kinds.count("plan_edited") == 1
        assert kinds.count("edits_salvaged") == 1
        salvaged = "Plan file read tolerantly: text before the first heading was kept in Notes."
        told = await client.call_tool("9plan_admin_state", {"session_name": name, "worker": "a"})
        assert text(told).endswith(f"\n{salvaged}"), text(told)
        again = await client.call_tool("9plan_admin_state", {"session_name": name, "worker": "a"})
        assert salvaged not in text(again).splitlines()
        done = await ok(client, "9plan_plan_complete", session_name=name, worker="a", outcome="ok")
        assert done["plan_id"] == plan_id
        validation = await ok(client, "9plan_admin_validate", session_name=name)
        assert validation["valid"], validation["issues"]


@pytest.mark.postgres
@pytest.mark.serial
async def test_notes_reach_another_machine_after_the_first_dies(tmp_path: Path):
    """Two machines (sessions folders) on one PostgreSQL database, a 3 s lease. Worker `a`'s
    server on machine 1 pulls a plan; `a` writes notes into the file and goes silent.
    Machine 2's `history_get` of the active plan shows the notes (stored while `a` worked);
    then machine 1's server is killed with SIGKILL. Once the plan is stale, worker `b` on
    machine 2 takes it over and is handed `a`'s notes, completes it, and `history_get` and
    `history_search` find them: machine 1's recovered/ is not their only copy."""
    async with postgres_schema() as url:
        one, two = tmp_path / "machine-1", tmp_path / "machine-2"
        pid_file = tmp_path / "pid"
        env = {"NINEPLAN_DATABASE_URL": url, "NINEPLAN_LEASE_MINUTES": SHORT_LEASE}
        first = stdio_server(one, **env)
        first.args = ["-c", SHIM, str(pid_file), *first.args]
        async with Client(stdio_server(two, **env), mode="legacy") as other:
            killed = False
            try:
                async with Client(first, mode="legacy") as client:
                    name, plan_id, _ = await _pulled_with_notes(client)
                    with anyio.fail_after(30):
                        while True:
                            got = await other.call_tool(
                                "9plan_history_get", {"session_name": name, "plan_id": plan_id}
                            )
                            if not got.is_error and WORDS in text(got):
                                break
                            await anyio.sleep(0.2)
                    assert "Active plan" in text(got)
                    os.kill(int(pid_file.read_text()), signal.SIGKILL)
                    killed = True
            except Exception as exc:
                if not killed or not _death(exc):  # only the killed server's client may fail
                    raise
            with anyio.fail_after(60):
                while True:
                    state = await ok(other, "9plan_admin_state", session_name=name, worker="b")
                    if state["active_plans"][0]["stale"]:
                        break
                    await anyio.sleep(0.3)
            taken = await other.call_tool(
                "9plan_queue_pull", {"session_name": name, "worker": "b", "take_over": plan_id}
            )
            assert not taken.is_error, text(taken)
            assert WORDS in text(taken)
            await ok(other, "9plan_plan_complete", session_name=name, worker="b", outcome="fixed")
            done = await ok(other, "9plan_history_get", session_name=name, plan_id=plan_id)
            assert WORDS in str(done["notes"])
            found = await ok(other, "9plan_history_search", session_name=name, query="parser.c")
            assert [hit["id"] for hit in found["matches"]] == [plan_id]
