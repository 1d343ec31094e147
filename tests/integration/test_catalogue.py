"""The session catalogue through the real surfaces: sessions that cannot be read are listed,
never left out (the CLI, the server `nineplan serve` builds, the web view); `nineplan archive |
unarchive | delete | history`."""

import json
import subprocess
from functools import partial
from pathlib import Path

import anyio
import httpx2
import pytest

from tests.fakes import PLAN, open_backend, postgres_schema
from tests.integration.servers import memory_client, run_nineplan, spawned_ui
from tests.mcp_helpers import ok, text

GARBAGE = b"this is not a database, it is garbage written over one" * 80
READ_FIELDS = (
    "created",
    "task_description",
    "queue_length",
    "completed_count",
    "has_active_plan",
    "workspace",
)


def build(root: Path) -> dict[str, str]:
    """Sessions on disk: `done` with two completed plans (the second's texts hold terminal
    controls) and one queued, `busy` holding an active plan, `broken` whose session.db is then
    overwritten with garbage."""

    async def make() -> dict[str, str]:
        async with open_backend("sqlite", root) as backend:
            names = {
                key: await backend.session(f"{key} task") for key in ("done", "busy", "broken")
            }
            service = backend.service
            for goal in ["first goal", "second \x1b[2K goal", "third goal"]:
                await service.add_plan(names["done"], **{**PLAN, "goal": goal})
            await service.pull_plan(names["done"])
            await service.complete_plan(names["done"], "first outcome")
            await service.pull_plan(names["done"])
            await service.complete_plan(names["done"], "second \x1b]0;TITLE\x07 outcome")
            await service.add_plan(names["busy"], **PLAN)
            await service.pull_plan(names["busy"])
        return names

    names = anyio.run(make)
    (root / names["broken"] / "session.db").write_bytes(GARBAGE)
    return names


def sessions_json(root: Path, *flags: str, url: str | None = None) -> dict[str, dict[str, object]]:
    """`nineplan sessions --json FLAGS` by name (on the PostgreSQL database at `url`)."""
    arguments = ("sessions", "--json", *flags)
    listed = (
        run_nineplan(root, *arguments, check=True)
        if url is None
        else run_nineplan(root, *arguments, check=True, NINEPLAN_DATABASE_URL=url)
    )
    return {entry["name"]: entry for entry in json.loads(listed.stdout)}


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The command's stderr, checked to be exactly one line."""
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


# -- sessions that cannot be read ---------------------------------------------------------


def test_the_cli_lists_an_unreadable_session_with_a_mark_and_the_reason(tmp_path: Path):
    """A session whose session.db is garbage is a marked line of `nineplan sessions` with the
    reason, and `{name, error}` with the other fields null in `--json`; the others are as ever."""
    names = build(tmp_path)
    listed = run_nineplan(tmp_path, "sessions")
    assert listed.returncode == 0
    [line] = [line for line in listed.stdout.splitlines() if names["broken"] in line]
    assert "UNREADABLE" in line
    assert "file is not a database" in line
    assert names["done"] in listed.stdout
    entries = sessions_json(tmp_path)
    broken = entries[names["broken"]]
    assert "file is not a database" in str(broken["error"])
    assert all(broken[field] is None for field in READ_FIELDS)
    assert entries[names["done"]]["error"] is None
    assert entries[names["done"]]["queue_length"] == 1


async def test_admin_sessions_lists_an_unreadable_session(tmp_path: Path):
    """Through the server `nineplan serve` builds, `9plan_admin_sessions` gives the unreadable
    session as `{name, error}` (the output schema allows the nulls: the SDK client checks it)
    and its text names it with the reason."""
    names = await anyio.to_thread.run_sync(build, tmp_path)
    async with memory_client(tmp_path, mode="legacy") as client:
        result = await client.call_tool("9plan_admin_sessions", {})
        assert not result.is_error, text(result)
        listed = {entry["name"]: entry for entry in (result.structured_content or {})["sessions"]}
    broken = listed[names["broken"]]
    assert "file is not a database" in broken["error"]
    assert all(broken[field] is None for field in READ_FIELDS)
    assert listed[names["busy"]]["has_active_plan"] is True
    assert f"- {names['broken']}: UNREADABLE - " in text(result)


async def test_the_web_view_lists_an_unreadable_session_and_says_what_is_wrong(tmp_path: Path):
    """The web list shows the unreadable session with its mark and reason; its page is a
    readable HTML page with status 503 that says the database cannot be read, no traceback."""
    names = await anyio.to_thread.run_sync(build, tmp_path)
    async with spawned_ui(tmp_path) as ui, httpx2.AsyncClient(base_url=ui) as http:
        listing = await http.get("/")
        page = await http.get(f"/sessions/{names['broken']}")
    assert listing.status_code == 200
    assert f'data-session="{names["broken"]}" class="unreadable"' in listing.text
    assert "Cannot be read:" in listing.text
    assert "file is not a database" in listing.text
    assert page.status_code == 503
    assert page.headers["content-type"].startswith("text/html")
    assert "file is not a database" in page.text
    assert "Traceback" not in page.text


# -- archive, unarchive -------------------------------------------------------------------


def test_an_archived_session_is_left_out_of_the_list_unless_asked(tmp_path: Path):
    """`nineplan archive` leaves the session out of `nineplan sessions` (which says how many
    it leaves out) but `--all` lists it, `archived: true` in `--json`; `unarchive` brings it back."""
    names = build(tmp_path)
    archived = run_nineplan(tmp_path, "archive", names["done"])
    assert archived.returncode == 0, archived.stderr
    listed = run_nineplan(tmp_path, "sessions", check=True)
    assert names["done"] not in listed.stdout
    assert "1 archived session(s) not listed" in listed.stdout
    assert names["done"] not in sessions_json(tmp_path)
    everything = sessions_json(tmp_path, "--all")
    assert everything[names["done"]]["archived"] is True
    assert everything[names["busy"]]["archived"] is False
    assert "[archived]" in run_nineplan(tmp_path, "sessions", "--all", check=True).stdout
    run_nineplan(tmp_path, "unarchive", names["done"], check=True)
    assert sessions_json(tmp_path)[names["done"]]["archived"] is False


async def test_every_call_on_an_archived_session_still_works(tmp_path: Path):
    """An archived session is whole: a person's `add`, `state` and `history` work on it, and
    through the server's tools resume, add, pull and complete do; `9plan_admin_sessions` leaves it
    out and says how many archived sessions it leaves out."""
    names = await anyio.to_thread.run_sync(build, tmp_path)
    done = names["done"]
    for arguments in [("archive", done), ("add", done, "--goal", "late goal", "--context", "c",
                      "--approach", "a", "--success-criteria", "s"), ("state", done),
                      ("history", done)]:  # fmt: skip
        ran = await anyio.to_thread.run_sync(partial(run_nineplan, tmp_path, *arguments))
        assert ran.returncode == 0, (arguments, ran.stderr)
    async with memory_client(tmp_path, mode="legacy") as client:
        state = await ok(client, "9plan_session_resume", session_name=done)
        assert [entry["goal"] for entry in state["queue"]] == ["third goal", "late goal"]
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "agent goal"})
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_complete", outcome="done while archived")
        result = await client.call_tool("9plan_admin_sessions", {})
    listed = [entry["name"] for entry in (result.structured_content or {})["sessions"]]
    assert done not in listed
    assert names["busy"] in listed
    assert (result.structured_content or {})["archived_left_out"] == 1
    assert "1 archived session(s) not listed." in text(result)


def test_the_web_list_shows_archived_sessions_only_when_asked(tmp_path: Path):
    """The web list leaves an archived session out and links to `?archived=1`, which shows
    it marked archived."""
    names = build(tmp_path)
    run_nineplan(tmp_path, "archive", names["done"], check=True)

    async def fetch() -> tuple[str, str]:
        async with spawned_ui(tmp_path) as ui, httpx2.AsyncClient(base_url=ui) as http:
            return (await http.get("/")).text, (await http.get("/?archived=1")).text

    hidden, shown = anyio.run(fetch)
    assert f'data-session="{names["done"]}"' not in hidden
    assert f'data-session="{names["busy"]}"' in hidden
    assert 'href="/?archived=1"' in hidden
    assert "1 archived session(s) not shown" in hidden
    assert f'data-session="{names["done"]}"' in shown
    assert 'data-testid="archived">archived</span>' in shown


async def test_prime_still_finds_an_archived_session_holding_an_active_plan(tmp_path: Path):
    """`nineplan prime` for the workspace of an archived session whose plan the agent holds
    still names that session and its active plan."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    async with memory_client(tmp_path / "sessions", mode="legacy", cwd=workspace) as client:
        name = (await ok(client, "9plan_session_create", task_description="held"))["session_name"]
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "the held goal"})
        await ok(client, "9plan_queue_pull")
    sessions = tmp_path / "sessions"
    await anyio.to_thread.run_sync(lambda: run_nineplan(sessions, "archive", name, check=True))
    primed = await anyio.to_thread.run_sync(
        lambda: run_nineplan(sessions, "prime", "--workspace", str(workspace), "--json")
    )
    assert primed.returncode == 0, primed.stderr
    found = json.loads(primed.stdout)
    assert found["session_name"] == name
    assert found["active_plan"]["goal"] == "the held goal"


# -- delete ---------------------------------------------------------------------------------


def test_delete_removes_only_an_archived_session_without_an_active_plan(tmp_path: Path):
    """`nineplan delete --yes` refuses a session that is not archived (saying to archive it
    first) and one holding an active plan, each in one line with exit 1; an archived one goes
    for good: its folder and every listing of it."""
    names = build(tmp_path)
    refused = run_nineplan(tmp_path, "delete", names["done"], "--yes")
    assert refused.returncode == 1
    assert f"`nineplan archive {names['done']}`" in one_line_error(refused)
    run_nineplan(tmp_path, "archive", names["busy"], check=True)
    held = run_nineplan(tmp_path, "delete", names["busy"], "--yes")
    assert held.returncode == 1
    assert "active plan 00004" in one_line_error(held)
    assert (tmp_path / names["busy"] / "session.db").is_file()
    run_nineplan(tmp_path, "archive", names["done"], check=True)
    deleted = run_nineplan(tmp_path, "delete", names["done"], "--yes")
    assert deleted.returncode == 0, deleted.stderr
    assert not (tmp_path / names["done"]).exists()
    assert names["done"] not in sessions_json(tmp_path, "--all")
    assert run_nineplan(tmp_path, "state", names["done"]).returncode == 2


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        (("delete", "{done}"), "--yes is required"),
        (("delete", "gone-away-session", "--yes"), "No session named 'gone-away-session'"),
        (("archive", "gone-away-session"), "No session named 'gone-away-session'"),
        (("unarchive", "gone-away-session"), "No session named 'gone-away-session'"),
        (("history", "gone-away-session"), "No session named 'gone-away-session'"),
        (("archive", "NotAName"), "session_name: must be"),
        (("history", "{done}", "--limit", "0"), "--limit: must be between 1 and 10,000, not 0"),
        (("history", "{done}", "--limit", "many"), "--limit: must be a whole number"),
    ],
)
def test_bad_input_to_the_catalogue_commands_is_one_line_and_exit_2(
    tmp_path: Path, arguments: tuple[str, ...], says: str
):
    """An unknown session, a name that cannot be one, a bad `--limit` and a missing `--yes`
    are each one line on stderr and exit 2; nothing is deleted."""
    names = build(tmp_path)
    result = run_nineplan(tmp_path, *(a.format(**names) for a in arguments))
    assert result.returncode == 2
    assert says in one_line_error(result)
    assert (tmp_path / names["done"] / "session.db").is_file()


# -- history ----------------------------------------------------------------------------------


def test_history_lists_completed_plans_newest_first(tmp_path: Path):
    """`nineplan history` lists the completed plans newest first, their terminal controls
    escaped; `--limit` takes the newest; `--json` gives `{plans: [{id, goal, outcome,
    completed_at}]}` with `Z` times."""
    names = build(tmp_path)
    listed = run_nineplan(tmp_path, "history", names["done"], check=True).stdout
    assert listed.index("00002") < listed.index("00001")
    assert "second \\x1b[2K goal" in listed
    assert "\\x1b]0;TITLE\\x07" in listed
    assert "\x1b" not in listed
    data = json.loads(run_nineplan(tmp_path, "history", names["done"], "--json", check=True).stdout)
    assert [plan["id"] for plan in data["plans"]] == ["00002", "00001"]
    assert set(data["plans"][0]) == {"id", "goal", "outcome", "completed_at"}
    assert data["plans"][1]["outcome"] == "first outcome"
    assert all(plan["completed_at"].endswith("Z") for plan in data["plans"])
    newest = run_nineplan(tmp_path, "history", names["done"], "--limit", "1", "--json", check=True)
    assert [plan["id"] for plan in json.loads(newest.stdout)["plans"]] == ["00002"]
    empty = run_nineplan(tmp_path, "history", names["busy"], check=True)
    assert empty.stdout == "No completed plans yet.\n"


# -- PostgreSQL -------------------------------------------------------------------------------


@pytest.mark.postgres
async def test_on_postgresql_the_archive_mark_is_shared_and_delete_removes_the_rows(
    tmp_path: Path,
):
    """On PostgreSQL the archive mark is in the database: archived through machine A's
    folder, machine B's `sessions` leaves it out and `--all` marks it; delete through B
    removes its rows (A no longer finds it) and B's local folder."""
    async with postgres_schema() as url:
        machine_a, machine_b = tmp_path / "a", tmp_path / "b"
        async with memory_client(machine_a, database_url=url, mode="legacy") as c:
            name = (await ok(c, "9plan_session_create", task_description="shared"))["session_name"]
            await ok(c, "9plan_queue_add", **PLAN)
        async with memory_client(machine_b, database_url=url, mode="legacy") as c:
            await ok(c, "9plan_session_resume", session_name=name)
        assert (machine_b / name).is_dir()

        def cli(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
            return run_nineplan(root, *arguments, NINEPLAN_DATABASE_URL=url)

        def steps() -> None:
            refused = cli(machine_b, "delete", name, "--yes")
            assert refused.returncode == 1
            assert "`nineplan archive" in one_line_error(refused)
            assert cli(machine_a, "archive", name).returncode == 0
            assert name not in sessions_json(machine_b, url=url)
            assert sessions_json(machine_b, "--all", url=url)[name]["archived"]
            deleted = cli(machine_b, "delete", name, "--yes")
            assert deleted.returncode == 0, deleted.stderr
            assert not (machine_b / name).exists()
            assert cli(machine_a, "state", name).returncode == 2
            assert name not in sessions_json(machine_a, "--all", url=url)

        await anyio.to_thread.run_sync(steps)


@pytest.mark.postgres
async def test_on_postgresql_delete_refuses_an_archived_session_holding_an_active_plan(
    tmp_path: Path,
):
    """On PostgreSQL an archived session whose plan an agent holds is refused in one line
    (exit 1) and its rows stay; `history` reads its completed plans."""
    async with postgres_schema() as url:
        async with memory_client(tmp_path, database_url=url, mode="legacy") as c:
            name = (await ok(c, "9plan_session_create", task_description="held"))["session_name"]
            for goal in ("finished goal", "held goal"):
                await ok(c, "9plan_queue_add", **{**PLAN, "goal": goal})
            await ok(c, "9plan_queue_pull")
            await ok(c, "9plan_plan_complete", outcome="finished it")
            await ok(c, "9plan_queue_pull")

        def steps() -> None:
            run_nineplan(tmp_path, "archive", name, check=True, NINEPLAN_DATABASE_URL=url)
            held = run_nineplan(tmp_path, "delete", name, "--yes", NINEPLAN_DATABASE_URL=url)
            assert held.returncode == 1
            assert "holds active plan" in one_line_error(held)
            history = run_nineplan(
                tmp_path, "history", name, "--json", check=True, NINEPLAN_DATABASE_URL=url
            )
            assert [plan["goal"] for plan in json.loads(history.stdout)["plans"]] == [
                "finished goal"
            ]

        await anyio.to_thread.run_sync(steps)
