"""Inspection never writes: read-only tools and CLI inspection commands on a damaged session.

Fresh readers (a new server as `nineplan serve` builds it, over the SDK's in-memory client,
and the installed CLI in its own processes) look at a session whose plan files an
agent damaged. Every file under plans/ and recovered/ keeps its bytes and its mtime, and no
row of session.db changes (the -wal and -shm files are not compared). Validate then reports
the damage, which a repair would have hidden.
"""

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from tests.fakes import PLAN
from tests.integration.servers import memory_client, run_nineplan
from tests.mcp_helpers import ok


def _files(folder: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry under plans/ and recovered/: its kind, bytes (for a file) and mtime."""
    seen: dict[str, tuple[str, bytes, int]] = {}
    for part in ("plans", "recovered"):
        for path in sorted((folder / part).rglob("*")):
            info = path.lstat()
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
            data = (
                path.read_bytes()
                if kind == "file"
                else os.readlink(path).encode()
                if kind == "link"
                else b""
            )
            seen[str(path.relative_to(folder))] = (kind, data, info.st_mtime_ns)
    return seen


def _rows(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, read through a read-only connection."""
    db = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)
    try:
        tables = [
            row[0]
            for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        rows = {table: db.execute(f'SELECT * FROM "{table}"').fetchall() for table in tables}  # noqa: S608 - names from sqlite_master
        rows["user_version"] = db.execute("PRAGMA user_version").fetchall()
        return rows
    finally:
        db.close()


async def test_read_only_tools_and_cli_inspection_change_nothing(tmp_path: Path):
    """A damaged session (a non-UTF-8 active file, a directory and a deleted file for queued
        plans, a stray file, an earlier recovered copy) is looked at by every read-only tool and
        by `nineplan sessions/state/show/search/validate/prime` in fresh processes (the tools in a
    fresh server): files, mtimes and
        rows stay as they were, and validate reports each damage."""
    async with memory_client(tmp_path, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create", task_description="inspect me"))[
            "session_name"
        ]
        await ok(client, "9plan_queue_add", **PLAN, outputs="users.sql")
        await ok(client, "9plan_queue_pull")
        done = await ok(client, "9plan_plan_complete", outcome="created users.sql", notes="TTL")
        gone = await ok(client, "9plan_queue_add", **{**PLAN, "goal": "deleted file"})
        folder_plan = await ok(client, "9plan_queue_add", **{**PLAN, "goal": "a folder"})
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "the active one"})
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": "active next"}, position="front")
        active = await ok(client, "9plan_queue_pull")
    folder = tmp_path / name
    plans = folder / "plans"
    Path(active["plan_path"]).write_bytes(Path(active["plan_path"]).read_bytes() + b"- \xff\n")
    (plans / f"{gone['plan_id']}.txt").unlink()
    (plans / f"{folder_plan['plan_id']}.txt").unlink()
    (plans / f"{folder_plan['plan_id']}.txt").mkdir()
    (plans / "stray.md").write_text("an agent's own file")
    (folder / "recovered").mkdir()
    (folder / "recovered" / "old.txt").write_text("kept from before")
    files, rows = _files(folder), _rows(folder / "session.db")

    async with memory_client(tmp_path, mode="legacy") as client:
        await ok(client, "9plan_admin_sessions")
        for tool, arguments in [
            ("9plan_admin_state", {}),
            ("9plan_admin_validate", {}),
            ("9plan_history_search", {"query": "users"}),
            ("9plan_history_get", {"plan_id": done["plan_id"]}),
        ]:
            await ok(client, tool, session_name=name, **arguments)
        await client.read_resource(f"nineplan://sessions/{name}/state")
        await client.read_resource(f"nineplan://sessions/{name}/plans/{active['plan_id']}")
        report = await ok(client, "9plan_admin_validate", session_name=name)
    for command in [
        ("sessions",),
        ("state", name),
        ("state", name, "--json"),
        ("show", name, active["plan_id"]),
        ("show", name, done["plan_id"]),
        ("search", name, "users"),
        ("validate", name),
        ("prime",),  # run in the project folder the server was started in: finds the session
        ("prime", "--json"),
    ]:
        run_nineplan(tmp_path, *command)
    assert f"session is {name}." in run_nineplan(tmp_path, "prime").stdout
    validated = run_nineplan(tmp_path, "validate", name, "--json")

    assert _files(folder) == files
    assert _rows(folder / "session.db") == rows
    assert not report["valid"]
    expected = {
        f"missing plan file: {gone['plan_id']}.txt",
        f"plan file {active['plan_id']}.txt cannot be read as a plan: not UTF-8",
        f"plan file {folder_plan['plan_id']}.txt cannot be read as a plan: missing or not a regular file",
        "orphaned file: stray.md",
    }
    assert set(report["issues"]) == expected
    assert set(json.loads(validated.stdout)["issues"]) == expected
