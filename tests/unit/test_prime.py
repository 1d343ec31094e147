"""`nineplan prime`'s reading of the sessions folder, in process: what it skips and what it
falls back on when folders, databases or plan files are not what they should be."""

import json
import os
import sqlite3
from pathlib import Path

import asyncpg
import attrs
import pytest

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.cli.prime import block
from nineplan_adapters.entrypoints.console import main
from nineplan_adapters.storage.memory.primer import MemoryPrimer
from nineplan_adapters.storage.postgres.primer import find_postgres
from nineplan_adapters.storage.sqlite.primer import SqlitePrimer, find_sqlite, last_activity
from nineplan_core.callers import Caller
from nineplan_core.model import STUCK_DEFERS
from nineplan_core.plan_file import MAX_FILE_BYTES
from nineplan_core.primed import OtherSession, PrimedHold, PrimedPlan, PrimedSession
from tests.fakes import PLAN, open_backend, open_service, postgres_schema


async def bound_session(
    root: Path, workspace: Path, *, pull: bool = True, later: float = 0
) -> tuple[str, str]:
    """A session bound to `workspace` with one plan, active when `pull`, its events `later`
    seconds after the test clock's start; its name and plan id."""
    async with open_backend("sqlite", root) as backend:
        backend.clock.advance(later)
        name = (await backend.service.create_session(workspace=str(workspace))).session.name
        placed = await backend.service.add_plan(name, **PLAN)
        if pull:
            await backend.service.pull_plan(name)
    return name, placed.plan.id


def test_no_sessions_folder_finds_nothing(tmp_path: Path):
    """A sessions folder that does not exist yet is no error: there is simply no session."""
    assert find_sqlite(tmp_path / "missing", str(tmp_path), STUCK_DEFERS) is None


async def test_the_database_decides_and_damage_is_skipped(tmp_path: Path):
    """The workspace file only narrows the search: a session whose database says otherwise, or
    whose database cannot be read, is skipped, and the next candidate is used."""
    project = tmp_path / "project"
    good, _ = await bound_session(tmp_path / "s", project)
    moved, _ = await bound_session(tmp_path / "s", project)
    broken, _ = await bound_session(tmp_path / "s", project)
    with sqlite3.connect(tmp_path / "s" / moved / "session.db") as db:
        db.execute("UPDATE workspace SET path = '/somewhere/else'")
    (tmp_path / "s" / broken / "session.db").write_bytes(b"not a database" * 100)
    for name in (good, moved, broken):  # make the good one the oldest
        os.utime(tmp_path / "s" / name / "session.db", ns=(1, 1 if name == good else 2))
    found = find_sqlite(tmp_path / "s", str(project), STUCK_DEFERS)
    assert found is not None
    assert found.session_name == good


async def test_a_symlinked_session_folder_is_never_followed(tmp_path: Path):
    """A session folder that is a symlink (names are checked before paths are built, and links
    are not followed) is not a session of the folder."""
    project = tmp_path / "project"
    name, _ = await bound_session(tmp_path / "real", project)
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "linked-session-here").symlink_to(tmp_path / "real" / name)
    assert find_sqlite(tmp_path / "s", str(project), STUCK_DEFERS) is None
    assert last_activity(tmp_path / "s" / "no-such-folder") is None


@pytest.mark.parametrize(
    ("damage", "tail"),
    [
        ("symlink", ["Deferred: waiting on the schema"]),
        ("not utf-8", ["\ufffd\ufffd"]),
        ("too large", ["Deferred: waiting on the schema", "x" * 20]),
        ("not a plan", ["Deferred: waiting on the schema", "just some text"]),
    ],
)
async def test_a_damaged_plan_file_is_read_as_the_use_cases_read_it(
    tmp_path: Path, damage: str, tail: list[str]
):
    """The notes tail is what defer or complete would store from the file: the stored notes
    for a symlink (never followed), the file's own notes otherwise, salvaged tolerantly (bad
    bytes replaced, a file without headings kept whole after the stored notes)."""
    project = tmp_path / "project"
    async with open_backend("sqlite", tmp_path / "s") as backend:
        name = (await backend.service.create_session(workspace=str(project))).session.name
        await backend.service.add_plan(name, **PLAN)
        await backend.service.pull_plan(name)
        await backend.service.defer_plan(name, "waiting on the schema")
        placed = await backend.service.pull_plan(name)
    plan_file = Path(placed.path)
    plan_file.unlink()
    if damage == "symlink":
        (tmp_path / "elsewhere.txt").write_text("# Notes\nnot mine\n")
        plan_file.symlink_to(tmp_path / "elsewhere.txt")
    elif damage == "not utf-8":
        plan_file.write_bytes(b"# Notes\n\xff\xfe\n")
    elif damage == "too large":
        plan_file.write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    else:
        plan_file.write_text("just some text\n")
    found = find_sqlite(tmp_path / "s", str(project), STUCK_DEFERS)
    assert found is not None
    assert found.active_plan is not None
    got = found.active_plan.notes_tail
    assert len(got) == len(tail)
    assert all(
        line.endswith(end) or line.startswith(end) for line, end in zip(got, tail, strict=True)
    )


async def test_the_last_journal_event_decides_not_the_file_times(tmp_path: Path):
    """Of two sessions of a workspace, the one whose last journal event is newer wins, though
    the other's database file was touched later (a backup, a checkpoint). A session whose last
    event's time cannot be read, or that has no events, is judged by its file's time; a time
    without a zone is read as UTC."""
    project, root = tmp_path / "project", tmp_path / "s"
    touched, _ = await bound_session(root, project)
    active, _ = await bound_session(root, project, later=60)

    def touched_after(sql: str, *parameters: str) -> str | None:
        database = root / touched / "session.db"
        with sqlite3.connect(database) as db:
            db.execute(sql, parameters)
        db.close()
        os.utime(database, ns=(4_000_000_000 * 10**9,) * 2)  # in 2096
        found = find_sqlite(root, str(project), STUCK_DEFERS)
        return found.session_name if found else None

    last_at = "UPDATE journal SET at = ? WHERE seq = (SELECT max(seq) FROM journal)"
    assert touched_after("SELECT 1") == active
    assert touched_after(last_at, "2026-01-01T00:00:00") == active
    assert touched_after(last_at, "yesterday") == touched
    assert touched_after("DELETE FROM journal") == touched


async def test_stuck_plans_come_from_the_journal_and_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """A plan is stuck by the journal's count of its deferrals against NINEPLAN_STUCK_DEFERS:
    twice is stuck at 2 and not at the default 3; notes that merely mention deferrals (edited
    by hand) count for nothing."""
    project = tmp_path / "project"
    async with open_backend("sqlite", tmp_path / "s") as backend:
        service = backend.service
        name = (await service.create_session(workspace=str(project))).session.name
        hard = (await service.add_plan(name, **PLAN)).plan.id
        for _ in range(2):
            await service.pull_plan(name)
            await service.defer_plan(name, "blocked")
        easy = (await service.add_plan(name, **PLAN, position="front")).plan.id
    root = tmp_path / "s"
    notes = "- 2026-01-01 Deferred: a\n- 2026-01-02 Deferred: b\n- 2026-01-03 Deferred: c"
    with sqlite3.connect(root / name / "session.db") as db:
        db.execute("UPDATE plans SET notes = ? WHERE id = ?", (notes, easy))
    db.close()
    assert find_sqlite(root, str(project), STUCK_DEFERS).stuck == []  # type: ignore[union-attr]
    monkeypatch.setenv("NINEPLAN_SESSIONS_PATH", str(root))
    monkeypatch.setenv("NINEPLAN_STUCK_DEFERS", "2")
    assert main(["prime", "--workspace", str(project), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stuck"] == [hard]


def test_a_bad_setting_is_exit_code_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    """A malformed NINEPLAN_* variable is reported on stderr with exit code 2, as for every
    command; nothing is printed on stdout."""
    monkeypatch.setenv("NINEPLAN_LOG_LEVEL", "loud")
    assert main(["prime", "--workspace", "/"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "NINEPLAN_LOG_LEVEL" in err


async def test_an_unreachable_database_finds_nothing(tmp_path: Path):
    """A PostgreSQL server that cannot be reached leaves the hook silent rather than failing."""
    assert (
        await find_postgres("postgresql://nobody@127.0.0.1:1/none", tmp_path, "/p", STUCK_DEFERS)
        is None
    )


@pytest.mark.parametrize(
    "damage",
    ["no session row", "plan file is a folder", "plan file is a fifo", "workspace is a fifo"],
)
async def test_one_damaged_session_never_hides_another(tmp_path: Path, damage: str):
    """A session whose database lost its session row, whose active plan file is a folder or a
    FIFO, or whose workspace file is a FIFO neither fails nor blocks the hook: that session
    is read as well as it can be or skipped, and a healthy session of the folder is found."""
    project = tmp_path / "project"
    good, _ = await bound_session(tmp_path / "s", project)
    bad, bad_plan = await bound_session(tmp_path / "s", project, later=60)
    folder = tmp_path / "s" / bad
    if damage == "no session row":
        with sqlite3.connect(folder / "session.db") as db:
            db.execute("DELETE FROM sessions")
        db.close()
    elif damage == "workspace is a fifo":
        (folder / "workspace").unlink()
        os.mkfifo(folder / "workspace")
    else:
        plan_file = folder / "plans" / f"{bad_plan}.txt"
        plan_file.unlink()
        plan_file.mkdir() if damage == "plan file is a folder" else os.mkfifo(plan_file)
    found = find_sqlite(tmp_path / "s", str(project), STUCK_DEFERS)
    assert found is not None
    if damage in {"no session row", "workspace is a fifo"}:
        assert found.session_name == good
    else:  # the stored notes stand in for a file that cannot be read
        assert found.session_name == bad
        assert found.active_plan is not None


def test_the_active_plans_notes_are_shown_under_it():
    """The block reads top to bottom: the active plan, its file and its last notes, then the
    queue, whatever order the lines are kept in when the budget is short."""
    primer = PrimedSession(
        session_name="brave-quiet-otter",
        task_description="a task",
        workspace="/p",
        active_plan=PrimedPlan("a3x9k", "the goal", "/f/a3x9k.txt", ["did one", "did two"]),
        next=["next one"],
        stuck=[],
    )
    lines = block(primer).splitlines()
    assert lines.index("    did two") < lines.index("Next in the queue:")
    assert lines.index("  File: /f/a3x9k.txt") < lines.index("  Last notes:")


def test_prime_says_pull_only_when_a_pull_would_find_a_plan():
    """With nothing active for the caller, the block says to pull the next plan only while
    plans are queued; with the queue empty it says so, and that others still hold plans
    when they do, rather than sending the agent to an empty pull."""
    queued = PrimedSession(
        session_name="brave-quiet-otter",
        task_description=None,
        workspace="/p",
        active_plan=None,
        next=["next one"],
        stuck=[],
    )
    assert "Active plan: none; pull the next one with 9plan_queue_pull." in block(queued)
    empty = attrs.evolve(queued, next=[])
    assert "Active plan: none; the queue is empty: add plans with 9plan_queue_add." in block(empty)
    held = PrimedHold("a", None, PrimedPlan("a3x9k", "the goal", "/f/a3x9k.txt", []))
    others = attrs.evolve(empty, active_plans=[held], workers_named=True)
    shown = block(others)
    assert "Active plan: none; the queue is empty and 1 plan(s) are still active." in shown
    assert "  a: a3x9k the goal" in shown
    assert "pull the next one" not in shown


async def test_a_damaged_time_on_the_active_plan_hides_nothing(tmp_path: Path):
    """The primer reads only the active plan's id, notes and content: a time in its row that
    is not a time (edited by hand) still shows the session and its active plan."""
    project = tmp_path / "project"
    name, plan_id = await bound_session(tmp_path / "s", project)
    with sqlite3.connect(tmp_path / "s" / name / "session.db") as db:
        db.execute("UPDATE plans SET created_at = 'not a time' WHERE id = ?", (plan_id,))
    found = find_sqlite(tmp_path / "s", str(project), STUCK_DEFERS)
    assert found is not None
    assert found.active_plan is not None
    assert found.active_plan.id == plan_id


@pytest.mark.postgres
async def test_a_damaged_postgresql_row_never_ends_prime_in_a_traceback(tmp_path: Path):
    """On PostgreSQL too the primer reads only what it shows: an active plan whose stored goal
    was blanked by hand (a row the store itself would refuse to read back) still primes, and
    prime never raises."""
    project = str(tmp_path / "project")
    async with postgres_schema() as url:
        settings = Settings(sessions_path=tmp_path, database_url=url)
        async with open_service(settings) as service:
            name = (await service.create_session(workspace=project)).session.name
            placed = await service.add_plan(name, **PLAN)
            await service.pull_plan(name)
        connection = await asyncpg.connect(url)
        try:
            await connection.execute(
                "UPDATE nineplan_plans SET goal = '' WHERE id = $1", placed.plan.id
            )
        finally:
            await connection.close()
        found = await find_postgres(url, tmp_path, project, STUCK_DEFERS)
    assert found is not None
    assert found.active_plan is not None
    assert found.active_plan.id == placed.plan.id


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_the_session_holding_an_active_plan_is_chosen_and_the_others_named(
    tmp_path: Path, kind: str
):
    """Of a folder's sessions with work, the one holding an active plan is chosen though a
    person's add made another the most recently active; the others are named, most recently
    active first, with their counts; a session without work is not."""
    workspace = str(tmp_path / "project")
    async with open_backend(kind, tmp_path / "s") as backend:
        service = backend.service
        held = (await service.create_session(workspace=workspace)).session.name
        await service.add_plan(held, **PLAN)
        await service.pull_plan(held)
        backend.clock.advance(60)
        older = (await service.create_session("t2", workspace=workspace)).session.name
        await service.add_plan(older, **PLAN)
        backend.clock.advance(60)
        newer = (await service.create_session(workspace=workspace)).session.name
        await service.add_plan(newer, **PLAN)
        await service.create_session(workspace=workspace)  # no work
        backend.clock.advance(60)
        await service.add_plan(older, **PLAN, caller=Caller.of(actor="person"))
        found = (
            MemoryPrimer(backend.catalog, STUCK_DEFERS)  # type: ignore[arg-type]
            if kind == "memory"
            else SqlitePrimer(tmp_path / "s", STUCK_DEFERS)
        ).find(workspace)
    assert found is not None
    assert found.session_name == held
    assert found.active_plan is not None
    assert found.others == [
        OtherSession(older, "t2", queued=2, active=0),
        OtherSession(newer, None, queued=1, active=0),
    ]
