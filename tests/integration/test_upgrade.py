"""Sessions written by an older nineplan open, migrate and behave, on SQLite and PostgreSQL.

tests/data/v0_1_0 holds what version 0.1.0 wrote (its generate.py says how): a session folder
and a plain pg_dump with the same plans. Each later version that changes the schema adds its
own folder and a `Release` below; every release's data is opened by the server this
version's `nineplan serve` builds (over the SDK's in-memory client) and checked plan by plan,
history and search (notes included).
"""

import json
import shutil
import sqlite3
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
from mcp import Client

from tests.fakes import postgres_url
from tests.integration.servers import PROJECT, memory_client
from tests.mcp_helpers import ok

DATA = PROJECT / "tests" / "data"
SQLITE_VERSION = 12  # this version's session schema (PRAGMA user_version)
POSTGRES_VERSION = 11  # this version's nineplan_schema


@attrs.frozen
class Release:
    """What an older version wrote, and what must be read back from it."""

    folder: str
    session: str
    queue: list[tuple[str, str]]  # (id, goal), rank 1 first
    active: tuple[str, str]
    completed: dict[str, dict[str, str]]  # id -> fields history_get must show
    discarded: list[str]
    # query -> the completed plan ids it must find, best first
    searches: dict[str, list[str]]


RELEASES = [
    Release(
        folder="v0_1_0",
        session="amber-quiet-otter",
        queue=[("que01", "Review the report"), ("que02", "Publish the report")],
        active=("act01", "Write the report"),
        completed={
            "cmp01": {
                "goal": "Cache the price lookups",
                "outputs": "cache.py",
                "notes": "- root cause is the cache TTL",
                "outcome": "Cached lookups for an hour; latency down 80%.",
            }
        },
        discarded=["dsc01"],
        # "ttl" is only in the notes, which 0.1.0 did not index: the migration re-indexed them.
        searches={"ttl": ["cmp01"], "latency": ["cmp01"], "importer": []},
    )
]


async def _check(client: Client, release: Release) -> None:
    """Every plan, the history and search, as the release left them; then one more cycle."""
    state = await ok(client, "9plan_session_resume", session_name=release.session)
    assert state["workspace"] is None  # made before sessions recorded their workspace
    assert [(e["id"], e["goal"]) for e in state["queue"]] == release.queue
    assert (state["active_plan"]["id"], state["active_plan"]["goal"]) == release.active
    assert state["completed_count"] == len(release.completed)
    for plan_id, fields in release.completed.items():
        plan = await ok(client, "9plan_history_get", plan_id=plan_id)
        assert {key: plan[key] for key in fields} == fields
    for plan_id in release.discarded:
        result = await client.call_tool("9plan_history_get", {"plan_id": plan_id})
        assert result.is_error
    for query, expected in release.searches.items():
        matches = (await ok(client, "9plan_history_search", query=query))["matches"]
        assert [m["id"] for m in matches] == expected, query
    validation = await ok(client, "9plan_admin_validate")
    assert validation["valid"], validation["issues"]
    assert validation["invariants"]["journal_matches_state"]
    # The journal starts with the state the release left: its queue and its active plan.
    [started, *_] = await _log(client, release.session)
    assert (started["seq"], started["kind"], started["actor"]) == (1, "journal_started", "system")
    assert started["detail"] == {
        "queue": [plan_id for plan_id, _ in release.queue],
        "active_plan": release.active[0],
    }
    # The migrated session keeps working: finish the active plan with notes, find them.
    await ok(client, "9plan_plan_complete", outcome="Report written", notes="- 東京 figures")
    matches = (await ok(client, "9plan_history_search", query="東京"))["matches"]
    assert [m["id"] for m in matches] == [release.active[0]]
    pulled = await ok(client, "9plan_queue_pull")
    assert pulled["plan_id"] == release.queue[0][0]
    assert f"# Goal\n{release.queue[0][1]}\n" in pulled["plan_text"]
    events = await _log(client, release.session)
    assert [(e["kind"], e["plan_id"]) for e in events[-3:]] == [
        ("notes_added", release.active[0]),
        ("plan_completed", release.active[0]),
        ("plan_pulled", release.queue[0][0]),
    ]
    assert (await ok(client, "9plan_admin_validate"))["invariants"]["journal_matches_state"]


async def _log(client: Client, session: str) -> list[dict[str, Any]]:
    [content] = (await client.read_resource(f"nineplan://sessions/{session}/log")).contents
    events: list[dict[str, Any]] = json.loads(content.text)["events"]  # type: ignore[union-attr]
    return events


@pytest.mark.parametrize("release", RELEASES, ids=lambda release: release.folder)
async def test_an_older_session_folder_opens_and_migrates(tmp_path: Path, release: Release):
    """The SQLite session folder an older version wrote is migrated on first open, and every
    plan, the history and search (notes included) read as that version left them; its journal
    starts with one journal_started event and validates."""
    shutil.copytree(DATA / release.folder / "sessions", tmp_path / "sessions")
    database = tmp_path / "sessions" / release.session / "session.db"
    async with memory_client(tmp_path / "sessions", mode="legacy") as client:
        await _check(client, release)
    with sqlite3.connect(database) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SQLITE_VERSION
        # The plan active before workers was the lone agent's: the worker main's (v7).
        assert db.execute(
            "SELECT id, worker FROM plans WHERE status = 'active' OR worker IS NOT NULL"
        ).fetchall() == [(release.queue[0][0], "main")]


@asynccontextmanager
async def _database_from_dump(dump: Path) -> AsyncIterator[str]:
    """A fresh database on the test server loaded from a plain pg_dump; dropped after."""
    import asyncpg

    url = postgres_url()
    assert url
    name = f"upgrade_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        target = url.rsplit("/", 1)[0] + f"/{name}"
        connection = await asyncpg.connect(target)
        try:
            # psql meta-commands (\restrict) are for psql only; the rest is plain SQL.
            script = "\n".join(
                line for line in dump.read_text("utf-8").splitlines() if not line.startswith("\\")
            )
            await connection.execute(script)
        finally:
            await connection.close()
        yield target
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.mark.postgres
@pytest.mark.parametrize("release", RELEASES, ids=lambda release: release.folder)
async def test_an_older_postgres_dump_opens_and_migrates(tmp_path: Path, release: Release):
    """The database an older version filled (its pg_dump) is migrated on first connect; the
    plan files are rendered on this machine, and everything reads as that version left it."""
    import asyncpg

    async with _database_from_dump(DATA / release.folder / "postgres.sql") as url:
        async with memory_client(tmp_path / "mirror", mode="legacy", database_url=url) as client:
            await _check(client, release)
        connection: Any = await asyncpg.connect(url)
        try:
            version = await connection.fetchval("SELECT max(version) FROM nineplan_schema")
            holders = await connection.fetch(
                "SELECT id, worker FROM nineplan_plans WHERE status = 'active' OR worker IS NOT NULL"
            )
        finally:
            await connection.close()
    assert version == POSTGRES_VERSION
    assert [tuple(row) for row in holders] == [(release.queue[0][0], "main")]


@pytest.mark.parametrize("release", RELEASES, ids=lambda release: release.folder)
async def test_the_plan_active_before_workers_is_mains(tmp_path: Path, release: Release):
    """Migrating to one active plan per worker (schema 7) gives the plan that was active the
    worker `main`, seen at the migration; the lone agent still finds it as its active plan."""
    shutil.copytree(DATA / release.folder / "sessions", tmp_path / "sessions")
    async with memory_client(tmp_path / "sessions", mode="legacy") as client:
        state = await ok(client, "9plan_session_resume", session_name=release.session)
        assert state["active_plan"]["id"] == release.active[0]
    database = tmp_path / "sessions" / release.session / "session.db"
    with sqlite3.connect(database) as db:
        rows = db.execute(
            "SELECT id, worker, last_seen IS NOT NULL FROM plans WHERE worker IS NOT NULL"
        ).fetchall()
    assert rows == [(release.active[0], "main", 1)]


@pytest.mark.postgres
@pytest.mark.parametrize("release", RELEASES, ids=lambda release: release.folder)
async def test_the_plan_active_before_workers_is_mains_on_postgres(
    tmp_path: Path, release: Release
):
    """On PostgreSQL (schema 6) too, the plan that was active becomes the worker main's."""
    import asyncpg

    async with _database_from_dump(DATA / release.folder / "postgres.sql") as url:
        async with memory_client(tmp_path / "mirror", mode="legacy", database_url=url) as client:
            state = await ok(client, "9plan_session_resume", session_name=release.session)
            assert state["active_plan"]["id"] == release.active[0]
        connection: Any = await asyncpg.connect(url)
        try:
            rows = await connection.fetch(
                "SELECT id, worker, last_seen IS NOT NULL FROM nineplan_plans "
                "WHERE worker IS NOT NULL"
            )
        finally:
            await connection.close()
    assert [tuple(row) for row in rows] == [(release.active[0], "main", True)]
