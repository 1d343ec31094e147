"""What agents do to their plan files, over the server `nineplan serve` builds (the SDK's
in-memory client): nothing they wrote is lost.

Each case is one the issue found losing an agent's notes: lines appended under # Notes
(a heading-like line among them), a BOM, CRLF line ends, a byte that is not UTF-8, text above
the first heading, a `# notes` heading in lower case, a deleted `# Notes` heading. Each goes
through defer, pull and complete, and history_get must show every line; when the file had to
be salvaged, the result says so in one line.
"""

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes import PLAN
from tests.integration.servers import memory_client, run_nineplan
from tests.mcp_helpers import ok, text

NOTES = "- root cause is the cache TTL\n# Outputs\n- cache.py (new)\n"
LINES = ["- root cause is the cache TTL", "# Outputs", "- cache.py (new)"]


def _append(data: bytes) -> bytes:
    return data + NOTES.encode()


CASES: dict[str, tuple[Callable[[bytes], bytes], str | None]] = {
    # case: (what the agent does to the file's bytes, a phrase the salvage line must hold)
    "notes-with-a-heading-line": (_append, None),
    "bom": (lambda data: b"\xef\xbb\xbf" + _append(data), None),
    "crlf": (lambda data: _append(data).replace(b"\n", b"\r\n"), None),
    "not-utf8": (lambda data: _append(data) + b"- caf\xe9 au lait\n", "not UTF-8"),
    "text-above": (lambda data: b"Status: half done\n" + _append(data), "before the first heading"),
    "lower-case-notes": (
        lambda data: _append(data.replace(b"# Notes", b"# notes")),
        "'# notes' read as # Notes",
    ),
    "deleted-notes-heading": (
        lambda data: _append(data.replace(b"# Notes\n", b"")),
        "no # Notes heading",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_agent_edits_survive_defer_and_complete(tmp_path: Path, case: str):
    """The agent's lines reach history_get's notes after defer, pull and complete; the goal
    comes back clean; a salvaged file is named in the defer result's one extra line, and a
    file that was not UTF-8 is first copied, byte for byte, to recovered/."""
    mangle, phrase = CASES[case]
    async with memory_client(tmp_path, mode="legacy") as client:
        await ok(client, "9plan_session_create")
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await ok(client, "9plan_queue_pull")
        path = Path(pulled["plan_path"])
        assert pulled["plan_text"] == path.read_text("utf-8")
        edited = mangle(path.read_bytes())
        path.write_bytes(edited)
        deferred = await client.call_tool("9plan_plan_defer", {"reason": "waiting on review"})
        assert not deferred.is_error, text(deferred)
        result_lines = text(deferred).split("\n")
        salvage = [line for line in result_lines if line.startswith("Plan file read tolerantly")]
        if phrase is None:
            assert salvage == []
        else:
            assert len(salvage) == 1
            assert phrase in salvage[0]
        if case == "not-utf8":
            copies = list((path.parent.parent / "recovered").iterdir())
            assert [copy.read_bytes() for copy in copies] == [edited]
            assert str(copies[0]) in salvage[0]
        await ok(client, "9plan_queue_pull")
        await ok(client, "9plan_plan_complete", outcome="Cached lookups", notes="- from MCP")
        plan = await ok(client, "9plan_history_get", plan_id=pulled["plan_id"])
    assert plan["goal"] == PLAN["goal"]
    notes = plan["notes"].split("\n")
    for line in LINES:
        assert line in notes, (case, plan["notes"])
    assert notes[-1] == "- from MCP"
    assert any("Deferred: waiting on review" in line for line in notes)
    if case == "not-utf8":
        assert "- caf\ufffd au lait" in notes
    if case == "text-above":
        assert notes[0] == "Status: half done"


@pytest.mark.parametrize("tool", ["9plan_plan_complete", "9plan_plan_discard"])
async def test_a_damaged_file_at_complete_or_discard_is_salvaged_and_said(
    tmp_path: Path, tool: str
):
    """complete and discard read a non-UTF-8 file back too: the result line names the copy,
    the copy holds the original bytes, and the lines are in the stored notes."""
    arguments = {"outcome": "done"} if tool == "9plan_plan_complete" else {"reason": "obsolete"}
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await ok(client, "9plan_queue_pull")
        path = Path(pulled["plan_path"])
        edited = path.read_bytes() + b"- r\xe9sum\xe9 of the work\n"
        path.write_bytes(edited)
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, text(result)
        (line,) = [x for x in text(result).split("\n") if x.startswith("Plan file read tolerantly")]
        copy = tmp_path / name / "recovered" / f"{pulled['plan_id']}.txt"
        assert str(copy) in line
        assert copy.read_bytes() == edited
        if tool == "9plan_plan_complete":
            plan = await ok(client, "9plan_history_get", plan_id=pulled["plan_id"])
            assert "- r\ufffdsum\ufffd of the work" in plan["notes"]
    assert not path.exists()


async def test_a_fresh_process_leaves_a_damaged_active_file_alone(tmp_path: Path):
    """Resume in a new server (the path after compaction), admin_state and `nineplan state`
    never re-render a non-UTF-8 active plan file; the next complete salvages it."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await ok(client, "9plan_queue_pull")
    path = Path(pulled["plan_path"])
    damaged = path.read_bytes() + b"- \xff the agent's finding\n"
    path.write_bytes(damaged)
    assert run_nineplan(tmp_path, "state", name).returncode == 0
    async with memory_client(tmp_path, mode="legacy") as client:
        await ok(client, "9plan_session_resume", session_name=name)
        await ok(client, "9plan_admin_state")
        assert path.read_bytes() == damaged
        report = await ok(client, "9plan_admin_validate")
        assert not report["invariants"]["files_match_database"]
        assert report["issues"] == [
            f"plan file {pulled['plan_id']}.txt cannot be read as a plan: not UTF-8"
        ]
        await ok(client, "9plan_plan_complete", outcome="done")
        plan = await ok(client, "9plan_history_get", plan_id=pulled["plan_id"])
    assert "- \ufffd the agent's finding" in plan["notes"]
