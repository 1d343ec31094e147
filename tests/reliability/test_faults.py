"""Fault injection at every file step of every mutating tool, database damage, agent damage.

Faults are injected at the real OS-call boundary of the plan-file directory (`OsCalls`).
"""

import errno
import json
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from mcp import Client

from nineplan_adapters.entrypoints.mcp import build_server
from nineplan_adapters.storage.clock import FixedClock
from nineplan_adapters.storage.plan_files import DirectoryPlanFiles, OsCalls, PlanFiles
from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
from nineplan_core.model import PlanId
from tests.fakes import PLAN, make_service
from tests.mcp_helpers import error, ok, parsed_error, text

ERRNOS = [errno.ENOSPC, errno.EACCES, errno.EIO, errno.EROFS]
STEPS = ["open_to_read", "read", "create", "write", "replace", "unlink", "rename"]
READS = {"open_to_read", "read"}
# Which OS steps each tool takes before its commit; a fault there must roll everything back.
# A file that cannot be read is never taken for a missing one (nothing renders over it).
BEFORE_COMMIT = {
    "9plan_queue_add": {"open_to_read", "create", "write", "replace"},  # no file to read yet
    "9plan_queue_pull": READS,  # the plan's file is already there: it is read, not written
    "9plan_plan_defer": READS | {"create", "write", "replace"},
    "9plan_plan_complete": READS,  # the agent's edits are read; the file goes after the commit
    "9plan_plan_discard": READS,
}
ARGUMENTS: dict[str, dict[str, Any]] = {
    "9plan_queue_add": PLAN,
    "9plan_queue_pull": {},
    "9plan_plan_defer": {"reason": "blocked"},
    "9plan_plan_complete": {"outcome": "done"},
    "9plan_plan_discard": {"reason": "obsolete"},
}


@attrs.define
class FaultyCalls(OsCalls):
    """OsCalls that fail the armed step with the armed errno."""

    armed: dict[str, int] = attrs.field(factory=dict)
    injected: int = 0

    def _check(self, step: str) -> None:
        if step in self.armed:
            self.injected += 1
            raise OSError(self.armed[step], os.strerror(self.armed[step]))

    def open_to_read(self, path: Path) -> int:
        self._check("open_to_read")
        return super().open_to_read(path)

    def read(self, fd: int, size: int) -> bytes:
        self._check("read")
        return super().read(fd, size)

    def create(self, path: Path) -> int:
        self._check("create")
        return super().create(path)

    def write(self, fd: int, data: bytes) -> None:
        if "write" in self.armed:
            os.close(fd)
        self._check("write")
        super().write(fd, data)

    def replace(self, source: Path, target: Path) -> None:
        self._check("replace")
        super().replace(source, target)

    def unlink(self, path: Path) -> None:
        self._check("unlink")
        super().unlink(path)

    def rename(self, source: Path, target: Path) -> None:
        self._check("rename")
        super().rename(source, target)


@attrs.define
class Rig:
    client: Client
    calls: FaultyCalls
    root: Path


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    faulty = FaultyCalls()

    def files(folder: Path, recovered: Path) -> PlanFiles:
        return DirectoryPlanFiles(folder, recovered, calls=faulty)

    catalog = SqliteSessionCatalog(tmp_path, plan_files=files)
    try:
        async with Client(build_server(make_service(catalog, FixedClock()))) as client:
            yield Rig(client, faulty, tmp_path)
    finally:
        await catalog.aclose()


async def snapshot(client: Client) -> tuple[Any, ...]:
    state = await ok(client, "9plan_admin_state")
    return state["queue"], state["active_plan"], state["completed_count"], state["plan_files"]


@pytest.mark.parametrize("number", ERRNOS, ids=errno.errorcode.get)
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("tool", list(BEFORE_COMMIT))
async def test_a_file_fault_rolls_back_or_heals(rig: Rig, tool: str, step: str, number: int):
    """Before the commit: FILE_SYSTEM_ERROR with a suggestion and nothing changed. After it:
    the change stands and the cleanup heals on the next write. Either way the next call works."""
    await ok(rig.client, "9plan_session_create")
    await ok(rig.client, "9plan_queue_add", **PLAN)
    await ok(rig.client, "9plan_queue_add", **PLAN)
    if tool != "9plan_queue_pull":
        await ok(rig.client, "9plan_queue_pull")
    before = await snapshot(rig.client)

    rig.calls.armed = {step: number}
    result = await rig.client.call_tool(tool, ARGUMENTS[tool])
    rig.calls.armed = {}

    if step in BEFORE_COMMIT[tool]:
        category, body = parsed_error(result)
        assert category == "FILE_SYSTEM_ERROR", body
        assert "Suggested action: " in body
        assert await snapshot(rig.client) == before
        assert (await ok(rig.client, "9plan_admin_validate"))["valid"]
        await ok(rig.client, tool, **ARGUMENTS[tool])  # the fault cleared: the same call works
    else:
        assert not result.is_error
    await ok(rig.client, "9plan_queue_add", **PLAN)  # a later write also retries any cleanup
    assert (await ok(rig.client, "9plan_admin_validate"))["valid"]


async def test_faults_were_really_injected(rig: Rig):
    """The harness can fail: an armed write does reach the OS-call boundary."""
    await ok(rig.client, "9plan_session_create")
    rig.calls.armed = {"replace": errno.ENOSPC}
    await rig.client.call_tool("9plan_queue_add", PLAN)
    assert rig.calls.injected == 1
    assert not list(rig.root.rglob("*.tmp"))  # the temporary file was removed


async def test_a_stray_file_that_cannot_be_moved_is_retried(tmp_path: Path):
    """Reconcile on open cannot move a stray file: it is retried on the next write."""
    catalog = SqliteSessionCatalog(tmp_path)
    name = (await make_service(catalog, FixedClock()).create_session()).session.name
    await catalog.aclose()
    (tmp_path / name / "plans" / "stray.txt").write_text("x")
    faulty = FaultyCalls(armed={"rename": errno.EACCES})
    catalog = SqliteSessionCatalog(
        tmp_path, plan_files=lambda f, r: DirectoryPlanFiles(f, r, calls=faulty)
    )
    try:
        async with Client(build_server(make_service(catalog, FixedClock()))) as client:
            await ok(client, "9plan_session_resume", session_name=name)
            assert not (await ok(client, "9plan_admin_validate"))["invariants"]["no_orphaned_files"]
            faulty.armed = {}
            await ok(client, "9plan_queue_add", **PLAN)
            assert (await ok(client, "9plan_admin_validate"))["valid"]
        assert (tmp_path / name / "recovered" / "stray.txt").read_text() == "x"
    finally:
        await catalog.aclose()


@pytest.mark.parametrize("number", [errno.EACCES, errno.EIO], ids=errno.errorcode.get)
async def test_an_unreadable_active_file_is_reported_not_rendered_over(tmp_path: Path, number: int):
    """The active plan's file cannot be read when a server opens the session: resume still
    works (reconcile leaves the file alone), validate reports the file instead of failing,
    complete refuses with FILE_SYSTEM_ERROR, and once the file reads again the agent's edit
    is in the history."""
    catalog = SqliteSessionCatalog(tmp_path)
    service = make_service(catalog, FixedClock())
    name = (await service.create_session()).session.name
    await service.add_plan(name, **PLAN)
    pulled = await service.pull_plan(name)
    with Path(pulled.path).open("a", encoding="utf-8") as file:
        file.write("- an edit the agent made\n")
    await catalog.aclose()
    faulty = FaultyCalls(armed={"open_to_read": number})
    catalog = SqliteSessionCatalog(
        tmp_path, plan_files=lambda f, r: DirectoryPlanFiles(f, r, calls=faulty)
    )
    try:
        async with Client(build_server(make_service(catalog, FixedClock()))) as client:
            await ok(client, "9plan_session_resume", session_name=name)
            report = await ok(client, "9plan_admin_validate")
            assert not report["invariants"]["files_match_database"]
            refused = await client.call_tool("9plan_plan_complete", {"outcome": "done"})
            assert parsed_error(refused)[0] == "FILE_SYSTEM_ERROR"
            faulty.armed = {}
            await ok(client, "9plan_plan_complete", outcome="done")
            found = await ok(client, "9plan_history_get", plan_id=pulled.plan.id)
        assert "an edit the agent made" in json.dumps(found)
    finally:
        await catalog.aclose()


async def test_a_transaction_that_fails_after_writing_restores_the_file(tmp_path: Path):
    """If anything fails before the commit, the plan file is put back as it was."""
    catalog = SqliteSessionCatalog(tmp_path)
    try:
        service = make_service(catalog, FixedClock())
        name = (await service.create_session()).session.name
        placed = await service.add_plan(name, **PLAN)
        store = await catalog.open(name)
        original = Path(placed.path).read_text()

        async def fail_after_writing() -> None:
            async with store.transaction() as tx:
                await tx.files.write(placed.plan.id, "overwritten")
                await tx.files.write(PlanId("zzzzz"), "new file")
                raise RuntimeError("fail before commit")

        with pytest.raises(RuntimeError):
            await fail_after_writing()
        assert Path(placed.path).read_text() == original
        assert not Path(store.plan_path(PlanId("zzzzz"))).exists()
    finally:
        await catalog.aclose()


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
async def test_a_damaged_database_fails_only_its_session(tmp_path: Path, damage: str):
    """DATABASE_ERROR for the damaged session; others and admin_sessions keep working."""
    catalog = SqliteSessionCatalog(tmp_path)
    service = make_service(catalog, FixedClock())
    broken = (await service.create_session("broken")).session.name
    for _ in range(30):
        await service.add_plan(broken, **PLAN)
    healthy = (await service.create_session("healthy")).session.name
    await catalog.aclose()
    database = tmp_path / broken / "session.db"
    for suffix in ("-wal", "-shm"):
        Path(f"{database}{suffix}").unlink(missing_ok=True)
    size = database.stat().st_size
    database.write_bytes(
        {
            "truncated": database.read_bytes()[: size // 3],
            "garbage": os.urandom(size),
            "empty": b"",
        }[damage]
    )

    catalog = SqliteSessionCatalog(tmp_path)
    try:
        async with Client(build_server(make_service(catalog, FixedClock()))) as client:
            category, _ = await error(client, "9plan_session_resume", session_name=broken)
            assert category == "DATABASE_ERROR"
            assert (await ok(client, "9plan_session_resume", session_name=healthy))[
                "task_description"
            ] == "healthy"
            await ok(client, "9plan_queue_add", **PLAN)
            names = [s["name"] for s in (await ok(client, "9plan_admin_sessions"))["sessions"]]
            assert healthy in names
    finally:
        await catalog.aclose()


DAMAGE = ["deleted", "emptied", "garbled", "symlinked", "directory"]


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("tool", ["9plan_plan_defer", "9plan_plan_complete", "9plan_plan_discard"])
async def test_agent_damage_to_the_active_plan_file(rig: Rig, tool: str, damage: str, caplog):
    """The stored copy serves (garbled bytes are kept too, the original copied to recovered/);
    a symlink is never followed; a directory is moved aside; the result says so in one line
    and a warning is logged; the session is valid afterwards."""
    name = (await ok(rig.client, "9plan_session_create"))["session_name"]
    await ok(rig.client, "9plan_queue_add", **PLAN)
    pulled = await ok(rig.client, "9plan_queue_pull")
    path = Path(pulled["plan_path"])
    outside = rig.root.parent / f"outside-{rig.root.name}.txt"
    outside.write_text("not yours")
    garbled = b"\xff" + os.urandom(300)
    if damage == "deleted":
        path.unlink()
    elif damage == "emptied":
        path.write_text("")
    elif damage == "garbled":
        path.write_bytes(garbled)
    elif damage == "directory":
        path.unlink()
        path.mkdir()
    else:
        path.unlink()
        path.symlink_to(outside)
    with caplog.at_level(logging.WARNING, logger="nineplan.service"):
        result = await rig.client.call_tool(tool, ARGUMENTS[tool])
    assert not result.is_error
    said = [line for line in text(result).split("\n") if line.startswith("Plan file read")]
    assert len(said) == 1
    assert "plan file salvaged" in caplog.text
    assert outside.read_text() == "not yours"
    outside.unlink()
    recovered = rig.root / name / "recovered"
    if damage == "garbled":
        assert [copy.read_bytes() for copy in recovered.iterdir()] == [garbled]
    if tool == "9plan_plan_complete":
        assert (await ok(rig.client, "9plan_history_get", plan_id=pulled["plan_id"]))[
            "goal"
        ] == PLAN["goal"]
    state = await ok(rig.client, "9plan_admin_state")
    assert state["session_name"] == name
    assert (await ok(rig.client, "9plan_admin_validate"))["valid"]
