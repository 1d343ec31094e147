"""What reaches recovered/ and what the result says, over the server `nineplan serve` builds
(the SDK's in-memory client) and the CLI in its own process.

Each case is one where nineplan kept the agent's words but misreported it, or kept only part
of them: a plan file over the read limit (the copy held only what was read), an active file
deleted, emptied, replaced by a directory or a symlink, and a queued plan's file edited or
damaged before its pull. `nineplan log` shows the journal event of each copy.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from nineplan_core.plan_file import MAX_FILE_BYTES
from tests.fakes import PLAN, postgres_schema
from tests.integration.servers import memory_client, run_nineplan
from tests.mcp_helpers import ok, text

SALVAGE = "Plan file read tolerantly"


def _salvage_lines(result_text: str) -> list[str]:
    return [line for line in result_text.split("\n") if line.startswith(SALVAGE)]


def _journal(sessions: Path, name: str) -> list[dict[str, Any]]:
    """The session's journal as the installed CLI prints it (`nineplan log --json`)."""
    done = run_nineplan(sessions, "log", name, "--json", check=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


async def test_a_file_over_the_limit_is_copied_whole(tmp_path: Path):
    """A 9 MB plan file at complete: the recovered/ copy equals the original byte for byte
    (not the 8 MiB that were read), the result names it, and the journal's edits_salvaged
    event (`nineplan log`) names it too. When the lease keeper's watch read the file before
    the complete did, each made its whole copy: both equal the original, and every line and
    event names one of them."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await ok(client, "9plan_queue_pull")
        path = Path(pulled["plan_path"])
        original = path.read_bytes() + b"- finding\n" * 900_000  # 9 MB, over 8 MiB
        assert len(original) > MAX_FILE_BYTES + 500_000
        path.write_bytes(original)
        result = await client.call_tool("9plan_plan_complete", {"outcome": "done"})
        assert not result.is_error, text(result)
    lines = _salvage_lines(text(result))
    # The complete's copy; and the lease keeper's too when its watch read the file first.
    copies = sorted((tmp_path / name / "recovered").iterdir())
    assert 1 <= len(copies) <= 2
    assert all(copy.read_bytes() == original for copy in copies)
    assert lines
    for line in lines:
        assert any(f"The original file is kept in {copy}." in line for copy in copies), line
    assert not path.exists()
    events = [e for e in _journal(tmp_path, name) if e["kind"] == "edits_salvaged"]
    assert events
    assert {event["detail"]["recovered"] for event in events} <= {str(copy) for copy in copies}


def _damage(path: Path, damage: str, outside: Path) -> None:
    """Do to the active plan's file what an agent or an editor did."""
    if damage == "emptied":
        path.write_text("")
        return
    path.unlink()
    if damage == "directory":
        path.mkdir()
        (path / "inside.txt").write_text("the agent's own file")
    elif damage == "symlink":
        path.symlink_to(outside)


SAID = {
    "deleted": "the plan file was deleted; kept the stored copy",
    "emptied": "the plan file was empty; kept the stored copy",
    "directory": "a directory stood in the plan file's place; it was moved to ",
    "symlink": "the plan file was a symbolic link; it was not followed and its target was left"
    " alone; kept the stored copy",
}


@pytest.mark.parametrize("process", ["same", "fresh"])
@pytest.mark.parametrize("damage", list(SAID))
async def test_what_stood_in_the_files_place_is_said(tmp_path: Path, damage: str, process: str):
    """An active plan file deleted, emptied, replaced by a directory or by a symlink: complete
    (in the server that pulled, or as the first call of a fresh server over the same folder) says in its one salvage
    line what it found; a directory is moved to recovered/ (the line and the journal's
    edits_salvaged event, seen with `nineplan log`, name where); a link's target is left as
    it was; the stored plan is what history holds."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("not the agent's")
    sessions = tmp_path / "sessions"
    async with memory_client(sessions, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await ok(client, "9plan_queue_pull")
        path = Path(pulled["plan_path"])
        _damage(path, damage, outside)
        if process == "same":
            result = await client.call_tool("9plan_plan_complete", {"outcome": "done"})
    if process == "fresh":
        async with memory_client(sessions, mode="legacy") as client:
            arguments = {"outcome": "done", "session_name": name}
            result = await client.call_tool("9plan_plan_complete", arguments)
    assert not result.is_error, text(result)
    (line,) = _salvage_lines(text(result))
    assert SAID[damage] in line
    assert outside.read_text() == "not the agent's"
    assert not path.exists()
    assert not path.is_symlink()
    recovered = sessions / name / "recovered"
    events = [e for e in _journal(sessions, name) if e["kind"] == "edits_salvaged"]
    assert len(events) == 1
    if damage == "directory":
        (moved,) = recovered.iterdir()
        assert (moved / "inside.txt").read_text() == "the agent's own file"
        assert f"moved to {moved}; kept the stored copy" in line
        assert events[0]["detail"]["recovered"] == str(moved)
    else:
        assert not recovered.exists()
    shown = json.loads(run_nineplan(sessions, "show", name, pulled["plan_id"], "--json").stdout)
    assert shown["goal"] == PLAN["goal"]
    outside.unlink()


@pytest.mark.parametrize("damage", ["deleted", "emptied"])
async def test_a_resume_says_it_rendered_the_active_file_again(tmp_path: Path, damage: str):
    """After compaction a fresh server's resume re-renders an active plan file the agent
    deleted or emptied, and its result says so in one line (it used to say nothing)."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await ok(client, "9plan_queue_pull")
    path = Path(pulled["plan_path"])
    _damage(path, damage, tmp_path / "unused")
    async with memory_client(tmp_path, mode="legacy") as client:
        resumed = await client.call_tool("9plan_session_resume", {"session_name": name})
        assert not resumed.is_error, text(resumed)
        said = f"Plan file {path.name} of the active plan was {damage}; rendered again from the stored plan."
        assert said in text(resumed).split("\n")
        assert path.read_text("utf-8").startswith("# Context\n")
        assert run_nineplan(tmp_path, "validate", name).returncode == 0


async def _two_queued(client: Client) -> tuple[str, str]:
    """A session with two queued plans; the name and the first plan's id."""
    name = (await ok(client, "9plan_session_create"))["session_name"]
    first = (await ok(client, "9plan_queue_add", **PLAN))["plan_id"]
    await ok(client, "9plan_queue_add", **{**PLAN, "goal": "Second"})
    return name, first


async def test_a_damaged_queued_file_never_becomes_the_plan_text(tmp_path: Path):
    """A queued plan's file overwritten with two bytes that are not UTF-8: `nineplan validate`
    calls it damaged and advises what to do (so do `--json` and 9plan_admin_validate), and
    `--repair` (which leaves it) says the same;
    the pull hands the agent the stored plan (not "\ufffd\ufffd"), says so in a salvage line
    naming the copy in recovered/, which holds the two bytes; the file is the plan again."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name, plan_id = await _two_queued(client)
        path = tmp_path / name / "plans" / f"{plan_id}.txt"
        path.write_bytes(b"\xff\xfe")
        for repair in ([], ["--repair"]):
            checked = run_nineplan(tmp_path, "validate", name, *repair)
            assert checked.returncode == 1, checked.stderr
            assert f"plan file {plan_id}.txt cannot be read as a plan: not UTF-8" in checked.stdout
            (advice,) = [x for x in checked.stdout.splitlines() if x.startswith("advice: ")]
            assert f"{plan_id}.txt" in advice
            assert "pull" in advice
            assert "recovered/" in advice
        as_json = json.loads(run_nineplan(tmp_path, "validate", name, "--json").stdout)
        assert as_json["advice"] == [advice.removeprefix("advice: ")]
        validated = await client.call_tool("9plan_admin_validate", {})
        assert f"Advice: {as_json['advice'][0]}" in text(validated).split("\n")
        assert path.read_bytes() == b"\xff\xfe"
        result = await client.call_tool("9plan_queue_pull", {})
        assert not result.is_error, text(result)
    pulled = result.structured_content or {}
    assert pulled["plan_text"].startswith("# Context\n")
    assert f"# Goal\n{PLAN['goal']}\n" in pulled["plan_text"]
    assert "\ufffd" not in text(result)
    (line,) = _salvage_lines(text(result))
    assert "not UTF-8" in line
    assert "kept the stored plan" in line
    (copy,) = (tmp_path / name / "recovered").iterdir()
    assert copy.read_bytes() == b"\xff\xfe"
    assert str(copy) in line
    assert path.read_text("utf-8") == pulled["plan_text"]
    assert run_nineplan(tmp_path, "validate", name).returncode == 0
    (event,) = [e for e in _journal(tmp_path, name) if e["kind"] == "edits_salvaged"]
    assert event["detail"]["recovered"] == str(copy)


async def test_a_queued_file_edited_before_its_pull_reaches_the_plan(tmp_path: Path):
    """A person edits a queued plan's file (a new goal, a note, text above the first heading):
    the pull takes the edits into the stored plan (`nineplan show`), hands the agent the
    stored sections, and says in one line what it salvaged; an unedited queued file is
    pulled as it was rendered, without a line."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name, plan_id = await _two_queued(client)
        path = tmp_path / name / "plans" / f"{plan_id}.txt"
        edited = path.read_text("utf-8").replace(PLAN["goal"], "Design the accounts table")
        path.write_text(f"Reviewed by a person\n{edited}- keep the email unique\n", "utf-8")
        result = await client.call_tool("9plan_queue_pull", {})
        assert not result.is_error, text(result)
        pulled = result.structured_content or {}
        (line,) = _salvage_lines(text(result))
        assert "text before the first heading was kept in Notes" in line
        assert "# Goal\nDesign the accounts table\n" in pulled["plan_text"]
        assert "Reviewed by a person\n- keep the email unique" in pulled["plan_text"]
        assert path.read_text("utf-8") == pulled["plan_text"]
        shown = run_nineplan(tmp_path, "show", name, plan_id, "--json", check=True)
        stored = json.loads(shown.stdout)
        assert stored["goal"] == "Design the accounts table"
        assert "- keep the email unique" in stored["notes"].split("\n")
        await ok(client, "9plan_plan_complete", outcome="done")
        second = await client.call_tool("9plan_queue_pull", {})
        assert _salvage_lines(text(second)) == []
        assert "# Goal\nSecond\n" in (second.structured_content or {})["plan_text"]


@pytest.mark.postgres
async def test_on_postgres_a_queued_files_edits_reach_the_plan_when_only_the_file_changed(
    tmp_path: Path,
):
    """On PostgreSQL a machine's plan files are a mirror, judged by what this machine wrote
    into them: a queued file a person edited here while the stored plan stayed as this machine
    wrote it is read back at pull, as on SQLite: its goal and its note reach the plan the agent
    gets and the database, with nothing to salvage (test_machines.py has the case where both
    changed, where the stored sections win)."""
    async with (
        postgres_schema() as url,
        memory_client(tmp_path, mode="legacy", database_url=url) as client,
    ):
        name, plan_id = await _two_queued(client)
        path = tmp_path / name / "plans" / f"{plan_id}.txt"
        edited = path.read_text("utf-8").replace(PLAN["goal"], "Another goal")
        path.write_text(edited + "- a person's note\n", "utf-8")
        result = await client.call_tool("9plan_queue_pull", {})
        assert not result.is_error, text(result)
        pulled = result.structured_content or {}
        assert _salvage_lines(text(result)) == []
        assert "# Goal\nAnother goal\n" in pulled["plan_text"]
        assert "- a person's note" in pulled["plan_text"]
        assert not (tmp_path / name / "recovered").exists()
        done = await ok(client, "9plan_plan_complete", outcome="done")
        assert done["plan_id"] == plan_id
        shown = run_nineplan(
            tmp_path, "show", name, plan_id, "--json", check=True, NINEPLAN_DATABASE_URL=url
        )
        stored = json.loads(shown.stdout)
        assert stored["goal"] == "Another goal"
        assert "- a person's note" in stored["notes"].split("\n")


@pytest.mark.parametrize("damage", ["directory", "symlink"])
async def test_a_pull_says_what_stood_in_a_queued_files_place(tmp_path: Path, damage: str):
    """A directory or a symlink where a queued plan's file belongs: the pull moves the
    directory to recovered/ (or leaves the link's target alone), says so in one line, and
    hands the agent the stored plan in a fresh file."""
    outside = tmp_path / "outside.txt"
    outside.write_text("not the agent's")
    sessions = tmp_path / "sessions"
    async with memory_client(sessions, mode="legacy") as client:
        name, plan_id = await _two_queued(client)
        path = sessions / name / "plans" / f"{plan_id}.txt"
        _damage(path, damage, outside)
        result = await client.call_tool("9plan_queue_pull", {})
        assert not result.is_error, text(result)
    (line,) = _salvage_lines(text(result))
    assert SAID[damage] in line
    assert outside.read_text() == "not the agent's"
    assert path.read_text("utf-8") == (result.structured_content or {})["plan_text"]
    if damage == "directory":
        (moved,) = (sessions / name / "recovered").iterdir()
        assert (moved / "inside.txt").read_text() == "the agent's own file"
        assert str(moved) in line
