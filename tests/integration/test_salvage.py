"""What reaches recovered/ and what the result says, over a real stdio server and the CLI.

Each case is one where nineplan kept the agent's words but misreported it, or kept only part
of them: a plan file over the read limit (the copy held only what was read), an active file
deleted, emptied, replaced by a directory or a symlink, and a queued plan's file edited or
damaged before its pull. `nineplan log` shows the journal event of each copy.
"""

import json
from pathlib import Path

from mcp import Client

from nineplan_core.plan_file import MAX_FILE_BYTES
from tests.fakes import PLAN
from tests.integration.servers import run_nineplan, stdio_server
from tests.mcp_helpers import ok, text

SALVAGE = "Plan file read tolerantly"


def _salvage_lines(result_text: str) -> list[str]:
    return [line for line in result_text.split("\n") if line.startswith(SALVAGE)]


def _journal(sessions: Path, name: str) -> list[dict]:
    """The session's journal as the installed CLI prints it (`nineplan log --json`)."""
    done = run_nineplan(sessions, "log", name, "--json", check=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


async def test_a_file_over_the_limit_is_copied_whole(tmp_path: Path):
    """A 9 MB plan file at complete: the recovered/ copy equals the original byte for byte
    (not the 8 MiB that were read), the result names it, and the journal's edits_salvaged
    event (`nineplan log`) names it too."""
    async with Client(stdio_server(tmp_path), mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
        pulled = await ok(client, "9plan_queue_pull")
        path = Path(pulled["plan_path"])
        original = path.read_bytes() + b"- finding\n" * 900_000  # 9 MB, over 8 MiB
        assert len(original) > MAX_FILE_BYTES + 500_000
        path.write_bytes(original)
        result = await client.call_tool("9plan_plan_complete", {"outcome": "done"})
        assert not result.is_error, text(result)
    (line,) = _salvage_lines(text(result))
    copies = list((tmp_path / name / "recovered").iterdir())
    assert len(copies) == 1
    assert copies[0].read_bytes() == original
    assert f"The original file is kept in {copies[0]}." in line
    assert not path.exists()
    (event,) = [e for e in _journal(tmp_path, name) if e["kind"] == "edits_salvaged"]
    assert event["detail"]["recovered"] == str(copies[0])
