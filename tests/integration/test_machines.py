"""Two machines on one PostgreSQL database, as two real `nineplan serve` stdio processes with
sessions folders of their own: what one machine's agent wrote into its plan file is never lost
when the plan changes or finishes on the other, and a healthy session validates on both
(DESIGN §2 "a copy before every loss", §3 "several machines")."""

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.fakes import PLAN, postgres_schema
from tests.integration.servers import run_nineplan, stdio_server
from tests.mcp_helpers import ok, text

pytestmark = pytest.mark.postgres


async def _validate(folder: Path, name: str, database: str) -> dict[str, object]:
    """`nineplan validate NAME --json` on the machine whose sessions folder is `folder`."""
    done = await anyio.to_thread.run_sync(
        lambda: run_nineplan(folder, "validate", name, "--json", NINEPLAN_DATABASE_URL=database)
    )
    report = json.loads(done.stdout)
    assert done.returncode == (0 if report["valid"] else 1), done.stderr
    return dict(report)


async def _next_on_a(client: Client, call: str, folder: Path, name: str, database: str) -> str:
    """Make machine A's next call (a tool, or the CLI's repair) and return what it said."""
    if call.startswith("nineplan "):
        done = await anyio.to_thread.run_sync(
            lambda: run_nineplan(folder, *call.split()[1:], name, NINEPLAN_DATABASE_URL=database)
        )
        assert done.returncode == 0, done.stderr
        return done.stdout
    result = await client.call_tool(call, {"session_name": name})
    assert not result.is_error, text(result)
    return text(result)


def _recovered(folder: Path, name: str) -> str:
    """Everything in a session's recovered/ folder on one machine, as text."""
    where = folder / name / "recovered"
    return "".join(path.read_text("utf-8") for path in where.iterdir()) if where.is_dir() else ""


@pytest.mark.parametrize(
    "next_call", ["9plan_session_resume", "9plan_queue_pull", "nineplan validate --repair"]
)
async def test_notes_written_on_one_machine_survive_the_plan_finished_on_another(
    tmp_path: Path, next_call: str
):
    """A pulls a plan; once A's server has stopped (so nothing stores the file's edits), the
    agent writes notes into A's file; B completes the plan. Before A opens the session again
    both machines validate (what A's next open heals is a note, not a violation); A's next
    resume (or pull, or a person's `validate --repair`) moves its file to A's recovered/ (the
    notes are there), says so in its result and journals it; then both machines still
    validate."""
    a, b = tmp_path / "a", tmp_path / "b"
    async with postgres_schema() as database:
        machine_a = stdio_server(a, NINEPLAN_DATABASE_URL=database)
        machine_b = stdio_server(b, NINEPLAN_DATABASE_URL=database)
        async with Client(machine_a, mode="legacy") as client_a:
            name = (await ok(client_a, "9plan_session_create"))["session_name"]
            await ok(client_a, "9plan_queue_add", **PLAN)
            await ok(client_a, "9plan_queue_add", **{**PLAN, "goal": "Second plan"})
            pulled = await ok(client_a, "9plan_queue_pull")
        path = Path(pulled["plan_path"])
        path.write_text(path.read_text("utf-8") + "- A found: the index is never used\n")
        async with Client(machine_a, mode="legacy") as client_a:
            # B's folder has rendered nothing yet: a note, not a violation.
            report_b = await _validate(b, name, database)
            assert report_b["valid"], report_b
            assert report_b["notes"] == ["2 plan(s) not rendered here yet"]

            async with Client(machine_b, mode="legacy") as client_b:
                await ok(client_b, "9plan_plan_complete", outcome="done on B", session_name=name)
            report_a = await _validate(a, name, database)
            assert report_a["valid"], report_a
            assert report_a["notes"] == [
                "1 file(s) of a plan finished elsewhere, kept until the next open"
            ]
            assert path.exists(), "validate wrote nothing"

            said = await _next_on_a(client_a, next_call, a, name, database)
            assert f"moved {path.name} to recovered/: it holds lines the database lacks" in said
            assert "completed elsewhere" in said
            assert not path.exists()
            assert "- A found: the index is never used" in _recovered(a, name)

        log = run_nineplan(a, "log", name, "--json", NINEPLAN_DATABASE_URL=database)
        events = [json.loads(line) for line in log.stdout.splitlines()]
        repaired = [event for event in events if event["kind"] == "files_repaired"]
        assert any(path.name in json.dumps(event) for event in repaired), log.stdout
        for folder in (a, b):
            report = await _validate(folder, name, database)
            assert report["valid"], report
            assert not report["issues"], report


async def test_a_change_made_on_another_machine_reaches_the_next_pull(tmp_path: Path):
    """B pulls a plan A has a file for and defers it with notes: A's next pull re-renders its
    unedited file, so the agent sees B's notes. When A's file was edited meanwhile, A's pull
    keeps the database's text and adds the file's own lines to the notes, the original goes
    to A's recovered/, and the pull's result says so; completing on A keeps every line."""
    a, b = tmp_path / "a", tmp_path / "b"
    async with postgres_schema() as database:
        machine_a = stdio_server(a, NINEPLAN_DATABASE_URL=database)
        machine_b = stdio_server(b, NINEPLAN_DATABASE_URL=database)
        async with (
            Client(machine_a, mode="legacy") as client_a,
            Client(machine_b, mode="legacy") as client_b,
        ):
            name = (await ok(client_a, "9plan_session_create"))["session_name"]
            plan_id = (await ok(client_a, "9plan_queue_add", **PLAN))["plan_id"]
            path = a / name / "plans" / f"{plan_id}.txt"
            assert path.exists()

            async def elsewhere(notes: str) -> None:
                await ok(client_b, "9plan_queue_pull", session_name=name)
                await ok(
                    client_b,
                    "9plan_plan_defer",
                    reason="handed back",
                    position="front",
                    notes=notes,
                    session_name=name,
                )

            await elsewhere("- B noted: use the replica")
            pulled = await ok(client_a, "9plan_queue_pull", session_name=name)
            assert "- B noted: use the replica" in pulled["plan_text"]
            assert "- B noted: use the replica" in path.read_text("utf-8")
            await ok(client_a, "9plan_plan_defer", reason="later", position="front")

            path.write_text(path.read_text("utf-8") + "- A wrote while queued\n")
            await elsewhere("- B noted again: the replica lags")
            result = await client_a.call_tool("9plan_queue_pull", {"session_name": name})
            said = text(result)
            assert "was edited here while the plan changed elsewhere" in said
            pulled = dict(result.structured_content or {})
            for line in ("- B noted again: the replica lags", "- A wrote while queued"):
                assert line in pulled["plan_text"], pulled["plan_text"]
            assert "- A wrote while queued" in _recovered(a, name)

            await ok(client_a, "9plan_plan_complete", outcome="done on A")
            stored = await ok(client_b, "9plan_history_get", plan_id=plan_id, session_name=name)
            for line in ("- B noted: use the replica", "- B noted again: the replica lags",
                         "- A wrote while queued"):  # fmt: skip
                assert line in stored["notes"], stored["notes"]
