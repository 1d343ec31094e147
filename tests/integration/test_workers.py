"""Many agents on one queue (DESIGN §10) through real stdio servers and the SDK client: a
second worker pulling while the first holds a plan, retries per worker, bad worker names,
and workers in separate processes racing for one queue."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from tests.fakes import postgres_schema
from tests.integration.servers import PROJECT, memory_client, run_nineplan, stdio_server
from tests.mcp_helpers import error, ok, text
from tests.reliability.race import postgres_race, sqlite_race

PLAN = {
    "context": "A queue several agents share",
    "approach": "Do it",
    "success_criteria": "Done",
}


async def _session_with(client: Client, count: int) -> tuple[str, list[str]]:
    created = await ok(client, "9plan_session_create", task_description="shared backlog")
    name = created["session_name"]
    ids = [
        (await ok(client, "9plan_queue_add", goal=f"Plan {number}", **PLAN))["plan_id"]
        for number in range(count)
    ]
    return name, ids


async def test_on_a_shared_connection_no_agent_finishes_a_plan_it_does_not_hold(tmp_path: Path):
    """Over a real stdio server, two agents on one connection: once worker `x` has pulled, a
    pull or complete that names no worker is refused naming `worker` (the lead may pass
    worker="main"); `y` completing with `plan_id` of x's plan is refused naming x as its
    holder, an unknown `plan_id` is PLAN_NOT_FOUND; nothing changed, and x completes its own."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        name, (a, b, _) = await _session_with(client, 3)
        assert (await ok(client, "9plan_queue_pull", worker="x"))["plan_id"] == a
        for tool, arguments in (
            ("9plan_queue_pull", {}),
            ("9plan_plan_complete", {"outcome": "agent Y's own work"}),
            ("9plan_plan_defer", {"reason": "later"}),
            ("9plan_plan_discard", {"reason": "obsolete"}),
        ):
            kind, body = await error(client, tool, session_name=name, **arguments)
            assert kind == "VALIDATION_ERROR", (tool, body)
            assert "worker: this session has several workers" in body, (tool, body)
            assert 'worker="main"' in body, (tool, body)
        kind, body = await error(
            client, "9plan_plan_complete", outcome="not mine", worker="y", plan_id=a
        )
        assert kind == "NO_ACTIVE_PLAN", body
        assert f"Plan {a} is not the active plan of worker y: worker x holds it." in body
        kind, body = await error(
            client, "9plan_plan_complete", outcome="x", worker="x", plan_id="zzzzz"
        )
        assert kind == "PLAN_NOT_FOUND", body
        state = await ok(client, "9plan_admin_state", session_name=name, worker="x")
        assert (state["active_plan"]["id"], state["completed_count"]) == (a, 0)
        await ok(client, "9plan_plan_complete", outcome="x's work", worker="x", plan_id=a)
        assert (await ok(client, "9plan_queue_pull", worker="main"))["plan_id"] == b


async def test_a_second_worker_pulls_while_the_first_holds_a_plan(tmp_path: Path):
    """Over a real stdio server: the lone agent (main) holds a plan; worker `tests` pulls
    the next one, is refused a second, completes its own; resume and state report each
    worker's active plan, every active plan with its worker, and list both in the text."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        name, (a, b, c) = await _session_with(client, 3)
        first = await ok(client, "9plan_queue_pull")
        assert (first["plan_id"], first["worker"]) == (a, "main")
        pulled = await ok(client, "9plan_queue_pull", session_name=name, worker="tests")
        assert (pulled["plan_id"], pulled["worker"]) == (b, "tests")
        kind, body = await error(client, "9plan_queue_pull", session_name=name, worker="tests")
        assert kind == "PLAN_ALREADY_ACTIVE"
        assert f"Plan {b} is already active for worker tests; each worker works on one" in body
        assert f"Other workers hold 1 plan(s): {a} (main)." in body
        state = await ok(client, "9plan_admin_state", session_name=name, worker="tests")
        assert state["active_plan"]["id"] == b
        assert [(p["id"], p["worker"], p["stale"]) for p in state["active_plans"]] == [
            (a, "main", False),
            (b, "tests", False),
        ]
        assert all(p["last_seen"] and p["pulled_at"] for p in state["active_plans"])
        result = await client.call_tool("9plan_session_resume", {"session_name": name})
        resumed = result.structured_content or {}
        assert resumed["active_plan"]["id"] == a
        assert f"Active plans (2):\n  main: {a} Plan 0\n  tests: {b} Plan 1\n" in text(result)
        done = await ok(
            client, "9plan_plan_complete", session_name=name, worker="tests", outcome="ok"
        )
        assert done["plan_id"] == b
        kind, body = await error(
            client, "9plan_plan_defer", session_name=name, worker="tests", reason="later"
        )
        said = f"No plan is active for worker tests. Other workers hold 1 plan(s): {a} (main)."
        assert (kind, said in body) == ("NO_ACTIVE_PLAN", True)
        assert (await ok(client, "9plan_queue_pull", worker="tests"))["plan_id"] == c
        listed = await ok(client, "9plan_admin_sessions")
        assert [s["active_count"] for s in listed["sessions"]] == [2]
        validation = await ok(client, "9plan_admin_validate", session_name=name)
        assert validation["valid"], validation["issues"]


async def test_two_workers_with_one_request_id_get_their_own_plans(tmp_path: Path):
    """Two workers sending the same request_id each get their own plan (never each other's
    result); a repeat by either returns its own first result."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        name, (a, b, _) = await _session_with(client, 3)
        one = await ok(client, "9plan_queue_pull", worker="one", request_id="same-id")
        two = await ok(client, "9plan_queue_pull", worker="two", request_id="same-id")
        assert (one["plan_id"], two["plan_id"]) == (a, b)
        again = await ok(client, "9plan_queue_pull", worker="two", request_id="same-id")
        assert again["plan_id"] == b
        state = await ok(client, "9plan_admin_state", session_name=name)
        assert sorted(p["worker"] for p in state["active_plans"]) == ["one", "two"]


async def test_each_worker_is_reminded_of_its_own_plan_only(tmp_path: Path):
    """Over a real stdio server, with `main` and `alice` each holding a plan: alice's
    queue_add, history_search and history_get carry the reminder of her own plan and never
    name main's; main's calls name only main's; worker `bob`, holding none, gets no reminder
    line at all."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        name, (done, mains, alices) = await _session_with(client, 3)
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_complete", outcome="wrote users.sql")
        assert (await ok(client, "9plan_queue_pull"))["plan_id"] == mains
        pulled = await ok(client, "9plan_queue_pull", session_name=name, worker="alice")
        assert pulled["plan_id"] == alices
        calls: list[tuple[str, dict[str, object]]] = [
            ("9plan_queue_add", {"goal": "Later", **PLAN}),
            ("9plan_history_search", {"query": "users"}),
            ("9plan_history_get", {"plan_id": done}),
        ]
        for tool, arguments in calls:
            said = {
                worker: text(await _succeeded(client, tool, name, worker, arguments))
                for worker in ("alice", None, "bob")
            }
            assert f"Active plan: {alices} Plan 2 (pulled " in said["alice"], (tool, said)
            assert mains not in said["alice"], (tool, said)
            assert f"Active plan: {mains} Plan 1 (pulled " in said[None], (tool, said)
            assert alices not in said[None], (tool, said)
            assert "Active plan:" not in said["bob"], (tool, said)


async def _succeeded(
    client: Client, tool: str, name: str, worker: str | None, arguments: dict[str, object]
) -> CallToolResult:
    """`tool` called on session `name` as `worker` (None: naming none), checked to succeed."""
    named = {"worker": worker} if worker is not None else {}
    result = await client.call_tool(tool, {"session_name": name, **named, **arguments})
    assert not result.is_error, (tool, text(result))
    return result


@pytest.mark.parametrize("worker", ["", "Tests", "-x", "a" * 41, "a/b", "tést"])
async def test_a_bad_worker_name_is_a_validation_error(tmp_path: Path, worker: str):
    """A worker name outside [a-z0-9._-], starting otherwise, empty or longer than 40 is a
    VALIDATION_ERROR naming `worker`, on every tool that takes one; nothing is pulled or added."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        name, _ = await _session_with(client, 1)
        for tool, arguments in [
            ("9plan_queue_pull", {}),
            ("9plan_plan_defer", {"reason": "r"}),
            ("9plan_plan_complete", {"outcome": "o"}),
            ("9plan_plan_discard", {"reason": "r"}),
            ("9plan_session_resume", {"session_name": name}),
            ("9plan_admin_state", {}),
            ("9plan_queue_add", {"goal": "g", **PLAN}),
            ("9plan_history_search", {"query": "plan"}),
            ("9plan_history_get", {"plan_id": "aaaaa"}),
        ]:
            kind, body = await error(client, tool, worker=worker, **arguments)
            assert kind == "VALIDATION_ERROR", (tool, body)
            assert "worker" in body.split("\n\n")[1], (tool, body)
        state = await ok(client, "9plan_admin_state")
        assert (len(state["queue"]), state["active_plans"]) == (1, [])


async def test_a_plan_goes_stale_while_its_worker_is_silent(tmp_path: Path):
    """With a lease of 3 s (NINEPLAN_LEASE_MINUTES=0.05), a worker's plan is marked stale in
    active_plans once the worker is silent past the lease (others' calls do not renew it;
    waited on under fail_after, never a timed assertion), is still its worker's, and is live
    again after the worker's own call."""
    params = stdio_server(tmp_path / "sessions", NINEPLAN_LEASE_MINUTES="0.05")
    async with Client(params, mode="legacy") as client:
        name, (a, _) = await _session_with(client, 2)
        await ok(client, "9plan_queue_pull", worker="slow")

        async def holds() -> list[tuple[str, str, bool]]:
            state = await ok(client, "9plan_admin_state", session_name=name)
            return [(p["id"], p["worker"], p["stale"]) for p in state["active_plans"]]

        with anyio.fail_after(30):
            while await holds() != [(a, "slow", True)]:
                await anyio.sleep(0.2)
        resumed = await ok(client, "9plan_session_resume", session_name=name, worker="slow")
        assert resumed["active_plan"]["id"] == a
        assert [p["stale"] for p in resumed["active_plans"]] == [False]


async def test_a_lease_is_renewed_by_file_edits_alone(tmp_path: Path):
    """With a lease of 3 s, a worker that never calls again keeps its plan live while its
    plan file keeps changing (the server that pulled it watches the file and renews
    `last_seen`), and its plan goes stale once the edits stop; polled under fail_after."""
    params = stdio_server(tmp_path / "sessions", NINEPLAN_LEASE_MINUTES="0.05")
    async with Client(params, mode="legacy") as client:
        name, (a, _) = await _session_with(client, 2)
        pulled = await ok(client, "9plan_queue_pull", worker="editor")
        plan_file = Path(pulled["plan_path"])

        async def stale() -> bool:
            state = await ok(client, "9plan_admin_state", session_name=name)
            [hold] = state["active_plans"]
            assert (hold["id"], hold["worker"]) == (a, "editor")
            return bool(hold["stale"])

        started = time.monotonic()
        edits = 0
        while time.monotonic() - started < 9:  # three leases of edits and nothing else
            with plan_file.open("a", encoding="utf-8") as notes:
                notes.write(f"- edit {edits}\n")
            edits += 1
            await anyio.sleep(0.25)
            assert not await stale(), f"stale after {edits} edits"
        with anyio.fail_after(30):
            while not await stale():
                await anyio.sleep(0.2)


async def test_stale_plans_are_marked_in_the_texts_once_a_worker_is_named(tmp_path: Path):
    """With a 3 s lease: a lone agent's stale plan is `stale` in active_plans but its texts
    are unchanged; once worker `slow` holds a plan gone stale, another worker's pull (`tests`,
    and the lead as worker="main"), state and resume each say so in one line naming the
    worker and how to take it over."""
    params = stdio_server(tmp_path / "sessions", NINEPLAN_LEASE_MINUTES="0.05")
    async with Client(params, mode="legacy") as client:
        name, (a, b, _, _) = await _session_with(client, 4)
        await ok(client, "9plan_queue_pull")

        async def stale_workers() -> list[str]:
            state = await ok(client, "9plan_admin_state", session_name=name)
            return [p["worker"] for p in state["active_plans"] if p["stale"]]

        with anyio.fail_after(30):
            while await stale_workers() != ["main"]:
                await anyio.sleep(0.2)
        lone = await client.call_tool("9plan_admin_state", {"session_name": name})
        assert "is stale:" not in text(lone)
        await ok(client, "9plan_plan_complete", outcome="done")
        await ok(client, "9plan_queue_pull", session_name=name, worker="slow")
        with anyio.fail_after(30):
            while await stale_workers() != ["slow"]:
                await anyio.sleep(0.2)
        line = rf'Plan {b} is stale: worker slow last heard \d+ s ago; take it over with take_over="{b}"'
        pulled = await client.call_tool(
            "9plan_queue_pull", {"session_name": name, "worker": "tests"}
        )
        assert any(re.fullmatch(line, said) for said in text(pulled).splitlines())
        lead = await client.call_tool("9plan_queue_pull", {"session_name": name, "worker": "main"})
        assert not lead.is_error, text(lead)
        assert any(re.fullmatch(line, said) for said in text(lead).splitlines())
        state = await client.call_tool("9plan_admin_state", {"session_name": name})
        assert any(re.fullmatch(line, said) for said in text(state).splitlines())
        resumed = await client.call_tool("9plan_session_resume", {"session_name": name})
        assert any(re.fullmatch(line, said) for said in text(resumed).splitlines())
        assert a not in {p["id"] for p in (resumed.structured_content or {})["active_plans"]}


async def test_nineplan_state_shows_every_active_plan_with_its_worker(tmp_path: Path):
    """`nineplan state` (a child process) lists every active plan with its worker, the time
    it has been held and a stale mark, then the stale line; --json carries active_plans."""
    sessions = tmp_path / "sessions"
    async with Client(stdio_server(sessions), mode="legacy") as client:
        name, (a, b) = await _session_with(client, 2)
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_queue_pull", session_name=name, worker="slow")
    completed = run_nineplan(sessions, "state", name, NINEPLAN_LEASE_MINUTES="30")
    assert completed.returncode == 0, completed.stderr
    assert "Active plans (2):" in completed.stdout
    assert f"  slow  {b}  held 0 min  Plan 1" in completed.stdout
    assert "is stale:" not in completed.stdout
    time.sleep(0.1)  # a lease shorter than the time since the pulls: both plans are stale
    stale = run_nineplan(sessions, "state", name, NINEPLAN_LEASE_MINUTES="0.001")
    assert f"  main  {a}  held 0 min  [STALE]  Plan 0" in stale.stdout
    release = f"put it back at the front with nineplan release {name} {b}"  # a person's words
    line = rf"Plan {b} is stale: worker slow last heard \d+ s ago; {release}"
    assert any(re.fullmatch(line, said) for said in stale.stdout.splitlines())
    shown = json.loads(
        run_nineplan(sessions, "state", name, "--json", NINEPLAN_LEASE_MINUTES="0.001").stdout
    )
    assert [(p["id"], p["worker"], p["stale"]) for p in shown["active_plans"]] == [
        (a, "main", True),
        (b, "slow", True),
    ]


@pytest.mark.parametrize("value", ["0", "-5", "soon"])
def test_a_bad_lease_exits_2_naming_the_variable(tmp_path: Path, value: str):
    """`nineplan serve` with NINEPLAN_LEASE_MINUTES of 0, negative or not a number exits 2
    with one line naming the variable, and writes nothing to stdout."""
    completed = run_nineplan(tmp_path, "serve", timeout=60, NINEPLAN_LEASE_MINUTES=value)
    assert completed.returncode == 2
    [line] = completed.stderr.strip().splitlines()
    assert "NINEPLAN_LEASE_MINUTES" in line
    assert completed.stdout == ""


#: The race runs once per backend in `make test`; `make torture` (in `make test-deep`) runs it 20
#: times more through tests.reliability.race.
RUNS = 1


@pytest.mark.parametrize("run", range(RUNS))
@pytest.mark.serial
async def test_eight_worker_processes_empty_one_queue_exactly_once(tmp_path: Path, run: int):
    """8 workers, each its own stdio server process and SDK client, pull and complete on one
    SQLite session until a 200-plan queue is empty: every plan is completed exactly once,
    none is lost, no result says "Task complete!" while a plan is queued or active, and the
    journal replays to the state (admin_validate is valid)."""
    result = await sqlite_race(tmp_path, workers=8, plans=200)
    assert (result.once, result.twice, result.lost, result.premature) == (200, 0, 0, 0)
    assert result.valid, result.issues
    print(f"run {run}: 8 workers completed 200 plans in {result.seconds:.1f} s")  # noqa: T201


@pytest.mark.postgres
@pytest.mark.parametrize("run", range(RUNS))
@pytest.mark.serial
async def test_two_machines_of_four_workers_empty_one_postgres_queue_exactly_once(
    tmp_path: Path, run: int
):
    """2 x 4 workers, each its own stdio server process, on two "machines" (separate sessions
    folders) sharing one PostgreSQL database, pull and complete until a 200-plan queue is
    empty: every plan completed exactly once, none lost, no "Task complete!" while a plan is
    queued or active, the journal valid."""
    async with postgres_schema() as url:
        result = await postgres_race(tmp_path, url, workers=8, plans=200)
    assert (result.once, result.twice, result.lost, result.premature) == (200, 0, 0, 0)
    assert result.valid, result.issues
    print(f"run {run}: 2 x 4 workers on PostgreSQL completed 200 plans in {result.seconds:.1f} s")  # noqa: T201


@pytest.mark.serial
def test_the_torture_race_prints_its_table_and_exits_0():
    """`python -m tests.reliability.race` (what `make torture` runs 20 times) races its workers,
    prints one row per backend with every plan completed once, and exits 0."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.reliability.race", "--runs", "1", "--workers", "2",
         "--plans", "6"],
        capture_output=True, text=True, timeout=300, check=False, cwd=PROJECT,
        env={**os.environ, "NINEPLAN_TEST_DATABASE_URL": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| sqlite | 2 | 1 | 6 | 6 | 0 | 0 | 1/1 | 0 |" in done.stdout


async def test_a_finish_says_task_complete_only_when_nothing_is_active(tmp_path: Path):
    """Two workers empty the queue: the first to complete is told which plan the other still
    holds (not "Task complete!"), and so is a discard beside it (not "add plans"); the last
    one to finish is told the task is complete, as a lone agent is."""
    async with memory_client(tmp_path / "sessions") as client:
        name, _ = await _session_with(client, 3)
        for worker in ("one", "two"):
            await ok(client, "9plan_queue_pull", session_name=name, worker=worker)
        held = await ok(client, "9plan_admin_state", session_name=name, worker="two")
        theirs = held["active_plan"]["id"]
        done = await client.call_tool(
            "9plan_plan_complete", {"session_name": name, "worker": "one", "outcome": "ok"}
        )
        assert "Task complete!" not in text(done)
        assert "Next: Plan 2" in text(done)  # the queue is not empty yet
        still = f"The queue is empty; 1 plan(s) are still active: {theirs} (two)."
        await ok(client, "9plan_queue_pull", session_name=name, worker="one")
        emptied = await client.call_tool(
            "9plan_plan_complete", {"session_name": name, "worker": "one", "outcome": "ok"}
        )
        assert text(emptied).endswith(still)
        await ok(client, "9plan_queue_add", session_name=name, goal="Plan 3", **PLAN)
        await ok(client, "9plan_queue_pull", session_name=name, worker="one")
        gone = await client.call_tool(
            "9plan_plan_discard", {"session_name": name, "worker": "one", "reason": "moot"}
        )
        assert text(gone).endswith(still)
        last = await client.call_tool(
            "9plan_plan_complete", {"session_name": name, "worker": "two", "outcome": "ok"}
        )
        assert text(last).endswith("The queue is empty. Task complete!")


async def test_a_bad_worker_or_plan_id_is_refused_in_words_not_a_pattern(tmp_path: Path):
    """A worker name or a plan id of the wrong shape is a VALIDATION_ERROR that says what the
    argument must be (lowercase letters, digits, '.', '_' or '-'; a 5-character plan id),
    never the regular expression the schema holds."""
    async with memory_client(tmp_path / "sessions") as client:
        await _session_with(client, 1)
        kind, body = await error(client, "9plan_queue_pull", worker="Not A Name")
        assert kind == "VALIDATION_ERROR", body
        assert "worker: must be 1 to 40 characters of lowercase letters, digits" in body
        assert "^[" not in body
        kind, body = await error(client, "9plan_plan_complete", outcome="x", plan_id="NOPE")
        assert kind == "VALIDATION_ERROR", body
        assert "plan_id: must be a plan id: 5 characters of lowercase letters and digits" in body
        assert "^[" not in body


async def test_an_empty_pull_marks_a_stale_plan_and_how_to_take_it_over(tmp_path: Path):
    """Over a real stdio server with a 3 s lease: worker `slow` holds the last plan. While its
    lease is live another worker's pull is QUEUE_EMPTY naming it, with no stale mark; once
    `slow` has gone silent past the lease the same pull marks the plan stale (who, when last
    heard) and suggests the take-over call, which then succeeds."""
    params = stdio_server(tmp_path / "sessions", NINEPLAN_LEASE_MINUTES="0.05")
    async with Client(params, mode="legacy") as client:
        name, (only,) = await _session_with(client, 1)
        await ok(client, "9plan_queue_pull", session_name=name, worker="slow")
        still = f"The queue is empty; 1 plan(s) are still active: {only} (slow)."
        kind, live = await error(client, "9plan_queue_pull", session_name=name, worker="tests")
        assert kind == "QUEUE_EMPTY", live
        assert still in live
        assert "is stale" not in live
        assert "take_over" not in live
        with anyio.fail_after(30):
            while True:
                state = await ok(client, "9plan_admin_state", session_name=name)
                if state["active_plans"][0]["stale"]:
                    break
                await anyio.sleep(0.2)
        kind, lapsed = await error(client, "9plan_queue_pull", session_name=name, worker="tests")
        assert kind == "QUEUE_EMPTY", lapsed
        assert still in lapsed
        assert re.search(
            rf"^Plan {only} is stale: worker slow last heard \d+ s ago\.$", lapsed, re.MULTILINE
        )
        assert f'call 9plan_queue_pull with your worker and take_over="{only}"' in lapsed
        taken = await ok(
            client, "9plan_queue_pull", session_name=name, worker="tests", take_over=only
        )
        assert (taken["plan_id"], taken["worker"]) == (only, "tests")


async def test_the_lead_sees_every_plan_its_workers_hold(tmp_path: Path):
    """Over a real stdio server, worker `a` holds the only plan: the lead's state, resume and
    `resume` prompt list it with its worker, one label per line, and say the queue is empty
    with that plan still active (not "add plans"). With a plan of its own, each caller's plan
    comes first in the list. A lone agent's state has no such list."""
    async with Client(stdio_server(tmp_path / "sessions"), mode="legacy") as client:
        name, (first,) = await _session_with(client, 1)
        lone = await client.call_tool("9plan_admin_state", {"session_name": name})
        assert "Active plans" not in text(lone)
        await ok(client, "9plan_queue_pull", session_name=name, worker="a")
        held = rf"^  a: {first} Plan 0$"
        still = f"The queue is empty; 1 plan(s) are still active: {first} (a)."
        state = await client.call_tool("9plan_admin_state", {"session_name": name})
        resumed = await client.call_tool(
            "9plan_session_resume", {"session_name": name, "worker": "main"}
        )
        prompt = await client.get_prompt("resume", {"session_name": name})
        prompted = prompt.messages[0].content
        assert isinstance(prompted, TextContent)
        for said in (text(state), text(resumed), prompted.text):
            assert "Active plan: none\nActive plans (1):\n" in said
            assert re.search(held, said, re.MULTILINE), said
            assert "Active plan: " + first not in said
            assert still in said.splitlines()
            assert "add plans" not in said
        (second,) = [
            (await ok(client, "9plan_queue_add", session_name=name, goal="Plan 1", **PLAN))[
                "plan_id"
            ]
        ]
        await ok(client, "9plan_queue_pull", session_name=name, worker="main")
        for worker, mine, theirs in (("main", second, first), ("a", first, second)):
            listed = text(
                await client.call_tool(
                    "9plan_admin_state", {"session_name": name, "worker": worker}
                )
            )
            rows = [line for line in listed.splitlines() if line.startswith("  ") and ": " in line]
            assert [row.split()[1] for row in rows[:2]] == [mine, theirs], listed


async def test_a_person_forgets_the_workers_once_only_main_holds_a_plan(tmp_path: Path):
    """`nineplan workers NAME` (its own process) says whether a session has several workers
    and who holds what; `--forget` is refused (exit 1, one line naming the plan and its
    worker) while worker x holds a plan, and once x has finished it makes a call that names
    no worker main's again over the running server; --json carries the mark and the holds."""
    sessions = tmp_path / "sessions"
    async with Client(stdio_server(sessions), mode="legacy") as client:
        name, (first, _) = await _session_with(client, 2)
        await ok(client, "9plan_queue_pull", session_name=name, worker="x")
        kind, _ = await error(client, "9plan_queue_pull", session_name=name)
        assert kind == "VALIDATION_ERROR"
        shown = run_nineplan(sessions, "workers", name)
        assert shown.returncode == 0, shown.stderr
        assert f"Session {name}: several workers" in shown.stdout
        assert f"  x  {first}  Plan 0" in shown.stdout
        refused = run_nineplan(sessions, "workers", name, "--forget")
        assert refused.returncode == 1
        assert refused.stderr.strip().count("\n") == 0, refused.stderr
        assert f"{first} (x)" in refused.stderr
        await ok(client, "9plan_plan_complete", session_name=name, worker="x", outcome="ok")
        forgot = run_nineplan(sessions, "workers", name, "--forget")
        assert forgot.returncode == 0, forgot.stderr
        assert forgot.stdout.startswith(f"Forgot the workers.\nSession {name}: one agent")
        pulled = await ok(client, "9plan_queue_pull", session_name=name)
        assert pulled["worker"] == "main"
        data = json.loads(run_nineplan(sessions, "workers", name, "--json").stdout)
        assert data["workers_named"] is False
        assert [(p["worker"], p["id"]) for p in data["active_plans"]] == [
            ("main", pulled["plan_id"])
        ]
