"""`nineplan prime` as a hook runs it: sessions made by the server `nineplan serve` builds, as
if started in a project folder (the SDK's in-memory client; a real stdio server where what it
records from its own environment is the point), then the command in a child process."""

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from nineplan_adapters.entrypoints.cli.demo import spawned_http_server
from nineplan_adapters.entrypoints.cli.prime import BUDGET
from nineplan_adapters.entrypoints.cli.prime import block as prime_block
from nineplan_core.primed import PrimedPlan, PrimedSession, StuckPlan
from tests.fakes import PLAN, postgres_schema
from tests.integration.servers import PYTHON, child_env, memory_client, run_nineplan, stdio_server
from tests.mcp_helpers import ok, text


async def session_in(
    sessions: Path,
    workspace: Path,
    goals: list[str],
    *,
    pull: bool = True,
    settings: dict[str, Any] | None = None,
    **create: Any,
) -> str:
    """A session made by the server `nineplan serve` builds, as if started in `workspace` (with
    the extra `settings`), with `goals` queued and, with `pull`, the first of them active."""
    async with memory_client(sessions, mode="legacy", cwd=workspace, **(settings or {})) as client:
        name: str = (await ok(client, "9plan_session_create", **create))["session_name"]
        for goal in goals:
            await ok(client, "9plan_queue_add", **{**PLAN, "goal": goal})
        if pull:
            await ok(client, "9plan_queue_pull")
    return name


def prime(
    sessions: Path, *arguments: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`nineplan prime ARGUMENTS` in a child process, from `cwd` when given."""
    if cwd is None:
        return run_nineplan(sessions, "prime", *arguments)
    return subprocess.run(
        [PYTHON, "-m", "nineplan_adapters", "prime", *arguments],
        env=child_env(sessions),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=cwd,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src" / "deep").mkdir(parents=True)
    return folder


async def test_prime_in_the_workspace_prints_the_way_back(tmp_path: Path, project: Path):
    """From the folder a session was created in, the block names the session, its task, the
    active plan with its file, the next queued goals and the resume call."""
    sessions = tmp_path / "sessions"
    name = await session_in(
        sessions, project, ["build the schema", "add login", "add logout", "add reset", "deploy"],
        task_description="the auth system",
    )  # fmt: skip
    done = prime(sessions, cwd=project)
    assert done.returncode == 0, done.stderr
    block = done.stdout
    assert f"session is {name}." in block
    assert "Task: the auth system" in block
    assert "Active plan: " in block
    assert "build the schema" in block
    assert f"{sessions / name / 'plans'}" in block
    assert block.index("1. add login") < block.index("2. add logout") < block.index("3. add reset")
    assert "deploy" not in block  # the next three only
    assert f'9plan_session_resume(session_name="{name}")' in block
    assert len(block.rstrip("\n")) <= BUDGET


async def test_prime_from_a_subfolder_finds_the_parent_workspace(tmp_path: Path, project: Path):
    """A folder inside the workspace belongs to it: --workspace and the current directory
    both find the session."""
    sessions = tmp_path / "sessions"
    name = await session_in(sessions, project, ["one"])
    by_flag = prime(sessions, "--workspace", str(project / "src" / "deep"))
    from_cwd = prime(sessions, cwd=project / "src" / "deep")
    assert f"session is {name}." in by_flag.stdout
    assert by_flag.stdout == from_cwd.stdout


async def test_prime_elsewhere_prints_nothing_and_succeeds(tmp_path: Path, project: Path):
    """An unrelated folder, a sibling whose name starts like the workspace's, and a parent of
    the workspace get no output and exit 0, in text and in JSON."""
    sessions = tmp_path / "sessions"
    await session_in(sessions, project, ["one"])
    sibling = tmp_path / "project-two"
    sibling.mkdir()
    for folder in (tmp_path, sibling, Path("/")):
        for arguments in ((), ("--json",)):
            done = prime(sessions, "--workspace", str(folder), *arguments)
            assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), folder


async def test_prime_skips_a_session_without_work(tmp_path: Path, project: Path):
    """A session whose queue is empty and has no active plan is not one to go back to; an older
    one that still has work is."""
    sessions = tmp_path / "sessions"
    busy = await session_in(sessions, project, ["still to do"], pull=False)
    await session_in(sessions, project, [], pull=False)
    done = prime(sessions, "--workspace", str(project))
    assert f"session is {busy}." in done.stdout
    assert "Active plan: none" in done.stdout


async def test_the_most_recently_active_session_of_a_workspace_wins(tmp_path: Path, project: Path):
    """Two sessions in one workspace: prime names the one changed last, and changing the other
    one turns it around."""
    sessions = tmp_path / "sessions"
    first = await session_in(sessions, project, ["first's plan"])
    second = await session_in(sessions, project, ["second's plan"])
    assert f"session is {second}." in prime(sessions, "--workspace", str(project)).stdout
    async with memory_client(sessions, mode="legacy") as client:  # another folder: named
        await ok(client, "9plan_queue_add", **PLAN, session_name=first)
    assert f"session is {first}." in prime(sessions, "--workspace", str(project)).stdout


def person_adds(sessions: Path, name: str, goal: str) -> None:
    """A person's `nineplan add NAME` with `goal`, through the real CLI."""
    run_nineplan(
        sessions, "add", name, "--goal", goal, "--context", "c", "--approach", "a",
        "--success-criteria", "s", check=True,
    )  # fmt: skip


async def test_a_persons_add_into_another_session_does_not_hide_the_active_plan(
    tmp_path: Path, project: Path
):
    """Two sessions in one folder, the first holding an active plan: after a person's
    `nineplan add` into the second (now the most recently active), prime still names the first
    with its active plan, and names the second on a line of its own."""
    sessions = tmp_path / "sessions"
    held = await session_in(sessions, project, ["the held plan", "after it"], task_description="t1")
    other = await session_in(sessions, project, ["queued there"], pull=False, task_description="t2")
    person_adds(sessions, other, "a person's idea")
    done = prime(sessions, "--workspace", str(project), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["session_name"] == held
    assert data["active_plan"]["goal"] == "the held plan"
    assert data["others"] == [
        {"session_name": other, "task_description": "t2", "queued": 2, "active": 0}
    ]
    block = prime(sessions, "--workspace", str(project)).stdout
    assert f"session is {held}." in block
    assert "Active plan: " in block
    assert "the held plan" in block
    assert f"Other sessions of this folder with work:\n  {other}: t2 (2 queued)" in block
    assert f'9plan_session_resume(session_name="{held}")' in block
    assert block.count("9plan_session_resume") == 1


async def test_of_three_sessions_prime_picks_the_one_holding_an_active_plan(
    tmp_path: Path, project: Path
):
    """Three sessions with work in one folder (and one without, which is not named): the one
    with an active plan is chosen though it was changed first; after a person's add into the
    oldest of the other two, the others are named most recently active first."""
    sessions = tmp_path / "sessions"
    held = await session_in(sessions, project, ["the held plan"])
    older = await session_in(sessions, project, ["older's plan"], pull=False)
    newer = await session_in(sessions, project, ["newer's plan"], pull=False, task_description="n")
    await session_in(sessions, project, [], pull=False)  # no work
    person_adds(sessions, older, "a person's idea")
    data = json.loads(prime(sessions, "--workspace", str(project / "src"), "--json").stdout)
    assert (data["session_name"], data["active_plan"]["goal"]) == (held, "the held plan")
    assert data["others"] == [
        {"session_name": older, "task_description": None, "queued": 2, "active": 0},
        {"session_name": newer, "task_description": "n", "queued": 1, "active": 0},
    ]
    block = prime(sessions, "--workspace", str(project)).stdout
    assert block.index(f"  {older} (2 queued)") < block.index(f"  {newer}: n (1 queued)")


async def test_prime_json_has_the_documented_fields(tmp_path: Path, project: Path):
    """--json prints the §9 fields; the active plan carries the tail of the notes the agent
    wrote into its file, and plans deferred three times are listed as stuck."""
    sessions = tmp_path / "sessions"
    async with memory_client(sessions, mode="legacy", cwd=project) as client:
        name = (await ok(client, "9plan_session_create", task_description="t"))["session_name"]
        stuck = (await ok(client, "9plan_queue_add", **{**PLAN, "goal": "hard one"}))["plan_id"]
        for attempt in range(3):
            await ok(client, "9plan_queue_pull")
            await ok(client, "9plan_plan_defer", reason=f"blocked {attempt}")
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "easy one"}, position="front")
        pulled = await ok(client, "9plan_queue_pull")
    plan_file = Path(pulled["plan_path"])
    plan_file.write_text(plan_file.read_text() + "found the schema in db/\n\nnext: the index\n")
    done = prime(sessions, "--workspace", str(project), "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    [held] = data.pop("active_plans")
    assert held.pop("last_seen")
    assert held == {
        "id": pulled["plan_id"],
        "goal": "easy one",
        "file_path": str(plan_file),
        "worker": "main",
        "stale": False,
    }
    assert data == {
        "session_name": name,
        "task_description": "t",
        "workspace": str(project.resolve()),
        "active_plan": {
            "id": pulled["plan_id"],
            "goal": "easy one",
            "file_path": str(plan_file),
            "notes_tail": ["found the schema in db/", "next: the index"],
            "criteria": [PLAN["success_criteria"]],
        },
        "next": ["hard one"],
        "stuck": [stuck],
        "others": [],
        "resume_call": f'9plan_session_resume(session_name="{name}")',
    }
    block = prime(sessions, "--workspace", str(project)).stdout
    assert f"Stuck: {stuck} deferred 3 times: hard one" in block
    assert "    next: the index" in block


def test_a_block_never_exceeds_its_budget():
    """However long the texts, the block stays within 2,000 characters and keeps the session
    name and the resume call; the lines it keeps are the most important ones."""
    long = "word " * 2_000
    primer = PrimedSession(
        session_name="brave-quiet-otter",
        task_description=long,
        workspace="/p/" + "d" * 5_000,
        active_plan=PrimedPlan("a3x9k", long, "/f/" + "x" * 5_000, [long] * 5),
        next=[long] * 3,
        stuck=[StuckPlan(f"s{n}xyz", long, 4) for n in range(10)],
    )
    block = prime_block(primer)
    assert len(block) <= BUDGET
    assert block.startswith("[9plan] This folder's session is brave-quiet-otter.")
    assert block.endswith(
        'call 9plan_session_resume(session_name="brave-quiet-otter"); it makes the session current.'
    )
    assert "Active plan: a3x9k" in block
    assert max(len(line) for line in block.splitlines()) <= 320


def imported_by(sessions: Path, *arguments: str) -> set[str]:
    """The modules `nineplan ARGUMENTS` imports, as `python -X importtime` reports them."""
    done = subprocess.run(
        [PYTHON, "-X", "importtime", "-m", "nineplan_adapters", *arguments],
        env=child_env(sessions),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}


HEAVY = {"mcp", "mcp_types", "aiosqlite", "dependency_injector", "asyncpg", "pydantic"}


async def test_prime_imports_no_mcp(tmp_path: Path, project: Path):
    """The hook's command loads neither the MCP SDK nor the container nor aiosqlite (what
    `python -X importtime` reports for the real `nineplan prime`)."""
    sessions = tmp_path / "sessions"
    await session_in(sessions, project, ["one"])
    imported = imported_by(sessions, "prime", "--workspace", str(project))
    assert "nineplan_adapters.entrypoints.cli.prime" in imported
    assert {module for module in imported if module.split(".")[0] in HEAVY} == set()


async def test_inspection_commands_import_no_mcp(tmp_path: Path, project: Path):
    """The CLI loads the MCP SDK only to serve or run the demo: --version, listing sessions,
    showing one's state and journal, and the steering commands (add, move, drop, export,
    import) do not import it."""
    sessions = tmp_path / "sessions"
    name = await session_in(sessions, project, ["one", "two", "three"])
    exported = tmp_path / "plans.md"
    exported.write_text(run_nineplan(sessions, "export", name, check=True).stdout)
    queued = json.loads(run_nineplan(sessions, "state", name, "--json", check=True).stdout)
    first, second = (entry["id"] for entry in queued["queue"])
    for arguments in (
        ("--version",),
        ("sessions",),
        ("state", name, "--json"),
        ("log", name),
        (
            "add",
            name,
            "--goal",
            "g",
            "--context",
            "c",
            "--approach",
            "a",
            "--success-criteria",
            "s",
        ),
        ("move", name, second, "--front"),
        ("drop", name, first, "--reason", "not needed"),
        ("export", name),
        ("import", name, str(exported)),
    ):
        imported = imported_by(sessions, *arguments)
        assert "nineplan_adapters.entrypoints.cli.main" in imported
        assert "mcp" not in {module.split(".")[0] for module in imported}, arguments


@pytest.mark.postgres
async def test_prime_finds_a_postgresql_session(tmp_path: Path, project: Path):
    """With NINEPLAN_DATABASE_URL, prime finds the workspace's session in the shared database:
    of two, the one holding an active plan though the other is newer, naming the other; of two
    without one, the one with the latest journal event (a defer counts, which creates and
    completes no plan), its stuck plans by the journal's deferrals and NINEPLAN_STUCK_DEFERS."""
    async with postgres_schema() as url:
        sessions = tmp_path / "mirror"
        async with memory_client(sessions, mode="legacy", cwd=project, database_url=url) as client:
            name = (await ok(client, "9plan_session_create", task_description="shared"))[
                "session_name"
            ]
            for goal in ("pg one", "pg two"):
                await ok(client, "9plan_queue_add", **{**PLAN, "goal": goal})
            first = (await ok(client, "9plan_queue_pull"))["plan_id"]
        found = run_nineplan(
            sessions,
            "prime",
            "--workspace",
            str(project / "src"),
            "--json",
            NINEPLAN_DATABASE_URL=url,
        )
        assert found.returncode == 0, found.stderr
        data = json.loads(found.stdout)
        assert (data["session_name"], data["task_description"]) == (name, "shared")
        assert (data["active_plan"]["goal"], data["next"]) == ("pg one", ["pg two"])
        newer = await session_in(
            sessions, project, ["other's plan"], pull=False, settings={"database_url": url}
        )
        found = run_nineplan(
            sessions, "prime", "--json", "--workspace", str(project), NINEPLAN_DATABASE_URL=url
        )
        data = json.loads(found.stdout)  # the newer one holds no active plan: named beside
        assert (data["session_name"], data["active_plan"]["goal"]) == (name, "pg one")
        assert data["others"] == [
            {"session_name": newer, "task_description": None, "queued": 1, "active": 0}
        ]
        # A defer creates and completes no plan: only the journal knows the session was active.
        async with memory_client(sessions, mode="legacy", database_url=url) as client:
            await ok(client, "9plan_plan_defer", reason="blocked", session_name=name)
        found = run_nineplan(
            sessions, "prime", "--json", "--workspace", str(project),
            NINEPLAN_DATABASE_URL=url, NINEPLAN_STUCK_DEFERS="1",
        )  # fmt: skip
        data = json.loads(found.stdout)
        assert (data["session_name"], data["active_plan"]) == (name, None)
        assert data["next"] == ["pg two", "pg one"]
        assert data["stuck"] == [first]
        elsewhere = run_nineplan(
            sessions, "prime", "--workspace", str(tmp_path), NINEPLAN_DATABASE_URL=url
        )
        assert (elsewhere.returncode, elsewhere.stdout) == (0, "")


async def test_the_workspace_shows_in_every_view_and_not_over_http(tmp_path: Path, project: Path):
    """A stdio server started in a project records it: admin_sessions, admin_state,
    session_resume and `nineplan state --json` show it. One started in the home folder records
    none, and so does a session created over HTTP."""
    sessions = tmp_path / "sessions"
    name = await session_in(sessions, project, [], pull=False)
    home = tmp_path / "home"
    home.mkdir()
    params = stdio_server(sessions, HOME=str(home))
    params.cwd = home
    async with Client(params, mode="legacy") as client:
        homeless = (await ok(client, "9plan_session_create"))["session_name"]
        listed = {
            s["name"]: s["workspace"]
            for s in (await ok(client, "9plan_admin_sessions"))["sessions"]
        }
        listing = text(await client.call_tool("9plan_admin_sessions", {}))
        state = await ok(client, "9plan_admin_state", session_name=name)
        resumed = await ok(client, "9plan_session_resume", session_name=name)
    workspace = str(project.resolve())
    assert listed == {name: workspace, homeless: None}
    assert f"(workspace: {workspace})" in listing  # the text, for clients that show only it
    assert state["workspace"] == resumed["workspace"] == workspace
    shown = run_nineplan(sessions, "state", name, "--json")
    assert json.loads(shown.stdout)["workspace"] == workspace
    assert f"Workspace: {workspace}" in run_nineplan(sessions, "state", name).stdout
    async with spawned_http_server(tmp_path / "http") as url, Client(url, mode="legacy") as client:
        created = (await ok(client, "9plan_session_create"))["session_name"]
        over_http = await ok(client, "9plan_admin_state", session_name=created)
    assert over_http["workspace"] is None


async def test_prime_shows_every_workers_plan_and_takes_a_worker(tmp_path: Path, project: Path):
    """Once worker `docs` holds a plan beside `main`, the block lists every active plan with
    its worker (a lapsed lease marked `[STALE]` with its stale line); `--worker docs` makes
    `docs`'s plan the block's active plan and its resume call passes worker="docs"; --json
    carries active_plans; a bad name exits 2 naming `worker`."""
    sessions = tmp_path / "sessions"
    async with memory_client(sessions, mode="legacy", cwd=project) as client:
        name = (await ok(client, "9plan_session_create", task_description="t"))["session_name"]
        for goal in ("main work", "docs work"):
            await ok(client, "9plan_queue_add", **{**PLAN, "goal": goal})
        mine = await ok(client, "9plan_queue_pull")
        theirs = await ok(client, "9plan_queue_pull", session_name=name, worker="docs")
    where = ("--workspace", str(project))
    plain = prime(sessions, *where).stdout
    assert f"Active plan: {mine['plan_id']} main work" in plain
    assert "Active plans (2):" in plain
    assert f"  docs: {theirs['plan_id']} docs work" in plain
    assert "[STALE]" not in plain
    docs = prime(sessions, *where, "--worker", "docs").stdout
    assert f"Active plan: {theirs['plan_id']} docs work" in docs
    assert f'9plan_session_resume(session_name="{name}", worker="docs")' in docs
    data = json.loads(prime(sessions, *where, "--worker", "docs", "--json").stdout)
    assert data["active_plan"]["id"] == theirs["plan_id"]
    assert data["resume_call"] == f'9plan_session_resume(session_name="{name}", worker="docs")'
    assert [(p["id"], p["worker"]) for p in data["active_plans"]] == sorted(
        [(mine["plan_id"], "main"), (theirs["plan_id"], "docs")]
    )
    stale = run_nineplan(sessions, "prime", *where, NINEPLAN_LEASE_MINUTES="0.0001").stdout
    assert f"  docs: {theirs['plan_id']} docs work [STALE]" in stale
    heard = rf"Plan {theirs['plan_id']} is stale: worker docs last heard \d+ s ago; take it over"
    assert re.search(rf'{heard} with take_over="{theirs["plan_id"]}"', stale)
    bad = prime(sessions, *where, "--worker", "Not A Name")
    assert bad.returncode == 2
    assert "worker" in bad.stderr


async def test_the_texts_mark_main_stale_after_a_worker_came_and_went(
    tmp_path: Path, project: Path
):
    """Worker `docs` pulls and completes beside `main`, then is gone: `main`'s lapsed plan is
    still marked stale in prime, `nineplan state` and a resume that names no worker (the
    session remembers that a worker was named). A session only `main` worked in marks
    nothing, however long the plan has been held."""
    sessions = tmp_path / "sessions"
    async with memory_client(
        sessions, mode="legacy", cwd=project, lease_minutes="0.0001"
    ) as client:
        lone = (await ok(client, "9plan_session_create", task_description="lone"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        await ok(client, "9plan_queue_pull")
        name = (await ok(client, "9plan_session_create", task_description="t"))["session_name"]
        for goal in ("docs work", "main work"):
            await ok(client, "9plan_queue_add", **{**PLAN, "goal": goal})
        await ok(client, "9plan_queue_pull", session_name=name, worker="docs")
        await ok(client, "9plan_plan_complete", session_name=name, worker="docs", outcome="ok")
        mine = (await ok(client, "9plan_queue_pull", session_name=name, worker="main"))["plan_id"]
        await anyio.sleep(0.05)  # past the 6 ms lease
        resumed = text(await client.call_tool("9plan_session_resume", {"session_name": name}))
        quiet = text(await client.call_tool("9plan_session_resume", {"session_name": lone}))
    line = rf'Plan {mine} is stale: worker main last heard \d+ s ago; take it over with take_over="{mine}"'
    assert re.search(line, resumed)
    assert "is stale" not in quiet
    lease = "0.0001"
    primed = run_nineplan(
        sessions, "prime", "--workspace", str(project), NINEPLAN_LEASE_MINUTES=lease
    )
    assert f"  main: {mine} main work [STALE]" in primed.stdout
    assert re.search(line, primed.stdout)  # prime is read by the agent: take_over
    person = rf"Plan {mine} is stale: worker main last heard \d+ s ago; put it back at the front"
    assert re.search(
        person, run_nineplan(sessions, "state", name, NINEPLAN_LEASE_MINUTES=lease).stdout
    )
    assert (
        "is stale" not in run_nineplan(sessions, "state", lone, NINEPLAN_LEASE_MINUTES=lease).stdout
    )
