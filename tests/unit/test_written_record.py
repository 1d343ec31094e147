"""The record of what a machine wrote into each plan file, the machine's id, and what they
let a pull do on a shared database (DESIGN §2 "a copy before every loss", §3)."""

import datetime as dt
from pathlib import Path

import attrs
import pytest

from nineplan_adapters.storage.plan_files import DirectoryPlanFiles
from nineplan_adapters.storage.unit_of_work import FileChanges
from nineplan_adapters.storage.written import MACHINE_FILE, DirectoryWriteRecord, machine_id
from nineplan_core.copies import digest, unsaved_lines
from nineplan_core.model import Plan, PlanContent, PlanId, SessionName
from nineplan_core.plan_file import render
from tests.fakes import PLAN, open_backend


def test_a_machine_id_is_made_once_per_sessions_folder(tmp_path: Path):
    """The first use of a sessions folder makes its id; every later one reads the same id,
    and another folder (another machine) has another."""
    first = machine_id(tmp_path / "a")
    assert first == machine_id(tmp_path / "a")
    assert (tmp_path / "a" / MACHINE_FILE).read_text("ascii").strip() == first
    assert len(first) == 16
    assert machine_id(tmp_path / "b") != first
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [MACHINE_FILE]


async def test_the_record_follows_every_write_removal_and_undo(tmp_path: Path):
    """A committed write records the hash of the bytes written; a write not yet committed is
    the transaction's alone (the record on disk is unchanged, so a process killed before the
    commit leaves a file that counts as edited, never as a render); an undone write leaves the
    record as it was; a removal after the commit forgets it. A file changed behind nineplan's
    back (the agent) no longer matches the record."""
    (tmp_path / "plans").mkdir()
    files = DirectoryPlanFiles(tmp_path / "plans", tmp_path / "recovered")
    record = DirectoryWriteRecord(tmp_path / "written")
    plan_id = PlanId("abcde")
    first = FileChanges(files, record)
    await first.write(plan_id, "one")
    assert await first.written(plan_id) == digest(b"one")
    assert record.get(plan_id) is None
    for action in first.later:
        await action()
    assert record.get(plan_id) == digest(b"one")
    second = FileChanges(files, record)
    await second.write(plan_id, "two")
    assert await second.written(plan_id) == digest(b"two")
    assert record.get(plan_id) == digest(b"one")
    assert digest(await files.read(plan_id) or b"") != record.get(plan_id)
    await second.undo()
    assert await second.written(plan_id) == digest(b"one")
    assert await files.read(plan_id) == b"one"
    await files.write(plan_id, b"one, edited")
    assert digest(await files.read(plan_id) or b"") != record.get(plan_id)
    third = FileChanges(files, record)
    third.remove_after_commit(plan_id)
    for action in third.later:
        await action()
    assert record.get(plan_id) is None
    assert await files.read(plan_id) is None


def test_unsaved_lines_reads_tolerantly():
    """A BOM, CRLF line ends and a heading in lower case hide nothing and invent nothing: only
    the line the stored plan lacks is named."""
    plan = Plan(
        id=PlanId("abcde"),
        content=PlanContent(**PLAN),
        notes="- kept",
        created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    )
    text = render(plan.content, plan.notes).replace("# Notes", "# notes") + "- new line  \n"
    data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    assert unsaved_lines(data, plan) == ["- new line"]
    assert unsaved_lines(render(plan.content, plan.notes).encode(), plan) == []


@pytest.mark.postgres
async def test_a_change_made_in_the_database_reaches_the_next_pull(tmp_path: Path):
    """A plan changed in the database through the library (not through this machine) is
    re-rendered over this machine's unedited file at the next pull; over an edited file, the
    pull keeps the database's sections, adds the file's own lines to Notes, copies the
    original to recovered/ and says so."""
    async with open_backend("postgres", tmp_path) as backend:
        service = backend.service
        name = await backend.session()
        store = await backend.catalog.open(SessionName(name))

        async def change_goal(plan_id: str, goal: str) -> None:
            async with store.transaction() as tx:
                plan = await tx.plan(PlanId(plan_id))
                assert plan is not None
                await tx.save(attrs.evolve(plan, content=attrs.evolve(plan.content, goal=goal)))

        first = (await service.add_plan(name, **PLAN)).plan.id
        await change_goal(first, "Changed in the database")
        pulled = await service.pull_plan(name)
        assert "Changed in the database" in (pulled.text or "")
        assert "Changed in the database" in (await backend.plan_text(name, first) or "")
        assert pulled.salvage is None
        await service.complete_plan(name, "done")

        second = (await service.add_plan(name, **PLAN)).plan.id
        edited = (await backend.plan_text(name, second) or "") + "- the agent's line\n"
        await backend.write_plan_text(name, second, edited)
        await change_goal(second, "Changed again")
        pulled = await service.pull_plan(name)
        assert "Changed again" in (pulled.text or "")
        assert "- the agent's line" in pulled.plan.notes
        assert "edited here while the plan changed elsewhere" in (pulled.salvage or "")
        assert edited.encode() in (await backend.recovered(name)).values()
