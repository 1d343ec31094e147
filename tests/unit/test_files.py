"""The plan-file directory on a real file system."""

import os
from pathlib import Path

import pytest

from nineplan_adapters.storage.plan_files import DirectoryPlanFiles
from nineplan_core.errors import FileSystemError, InvalidInputError
from nineplan_core.model import PlanId
from nineplan_core.plan_file import MAX_FILE_BYTES


@pytest.fixture
def files(tmp_path: Path) -> DirectoryPlanFiles:
    (tmp_path / "plans").mkdir()
    return DirectoryPlanFiles(tmp_path / "plans", tmp_path / "recovered")


async def test_write_is_atomic_and_leaves_no_temporary_file(files: DirectoryPlanFiles):
    """A write replaces the file whole and leaves no temporary file behind."""
    await files.write(PlanId("abcde"), b"one")
    await files.write(PlanId("abcde"), b"two")
    assert await files.read(PlanId("abcde")) == b"two"
    assert {entry.name: entry.stat().st_size for entry in files.folder.iterdir()} == {
        "abcde.txt": 3
    }


async def test_a_symlink_is_never_followed(files: DirectoryPlanFiles, tmp_path: Path):
    """An agent's link to a file outside reads as missing; writing replaces the link, not the target."""
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, files.folder / "abcde.txt")
    assert await files.read(PlanId("abcde")) is None
    await files.write(PlanId("abcde"), b"plan")
    assert outside.read_text() == "secret"
    assert not (files.folder / "abcde.txt").is_symlink()
    os.symlink(outside, files.folder / "fghij.txt")
    await files.remove(PlanId("fghij"))
    assert outside.read_text() == "secret"


async def test_reads_give_bytes_and_stop_past_the_limit(files: DirectoryPlanFiles):
    """Bad bytes come back as they are (the core salvages them), a huge file only to one byte
    past the limit, and a FIFO or a directory in a plan file's place reads as missing."""
    (files.folder / "abcde.txt").write_bytes(b"\xff\xfe not utf-8")
    assert await files.read(PlanId("abcde")) == b"\xff\xfe not utf-8"
    (files.folder / "big00.txt").write_bytes(b"x" * (MAX_FILE_BYTES + 10))
    assert len(await files.read(PlanId("big00")) or b"") == MAX_FILE_BYTES + 1
    os.mkfifo(files.folder / "fifo0.txt")
    assert await files.read(PlanId("fifo0")) is None
    (files.folder / "dir00.txt").mkdir()
    assert await files.read(PlanId("dir00")) is None


async def test_a_directory_in_a_plan_files_place_is_moved_aside(files: DirectoryPlanFiles):
    """Writing or removing a plan file that is a directory moves the directory to recovered/
    (with what it holds) instead of failing."""
    for operation in ("write", "remove"):
        (files.folder / "abcde.txt").mkdir()
        (files.folder / "abcde.txt" / "inside").write_text("mine")
        if operation == "write":
            await files.write(PlanId("abcde"), b"plan")
            assert await files.read(PlanId("abcde")) == b"plan"
        else:
            await files.remove(PlanId("abcde"))
            assert not (files.folder / "abcde.txt").exists()
        (files.folder / "abcde.txt").unlink(missing_ok=True)
    kept = sorted(p.name for p in files.recovered.iterdir())
    assert len(kept) == 2
    assert all((files.recovered / name / "inside").read_text() == "mine" for name in kept)


async def test_keep_writes_a_fresh_copy_each_time(files: DirectoryPlanFiles):
    """keep() never overwrites an earlier copy, and says where each one went."""
    first = await files.keep("abcde.txt", b"one")
    second = await files.keep("abcde.txt", b"two")
    assert first != second
    assert [Path(first).read_bytes(), Path(second).read_bytes()] == [b"one", b"two"]
    assert Path(first).parent == files.recovered


async def test_paths_are_built_from_valid_ids_only(files: DirectoryPlanFiles):
    """A plan id that is not a valid id (a path escape) is refused as invalid input, for paths and
    writes."""
    with pytest.raises(InvalidInputError):
        files.path(PlanId("../../x"))
    with pytest.raises(InvalidInputError):
        await files.write(PlanId("../ab"), b"x")


async def test_recover_moves_without_overwriting(files: DirectoryPlanFiles):
    """Recovering two stray files of the same name keeps both in recovered/; recovering a file
    already gone does nothing."""
    for _ in range(2):
        (files.folder / "stray.md").write_text("mine")
        await files.recover("stray.md")
    assert sorted(p.read_text() for p in files.recovered.iterdir()) == ["mine", "mine"]
    await files.recover("gone.md")  # already moved: nothing to do


async def test_missing_folder_lists_nothing(tmp_path: Path):
    """A plan folder that does not exist lists no files rather than failing."""
    assert await DirectoryPlanFiles(tmp_path / "none", tmp_path / "r").names() == []


async def test_write_into_a_missing_folder_is_a_file_system_error(tmp_path: Path):
    """Writing into a missing folder is a FILE_SYSTEM_ERROR whose message gives the OS reason but
    not the machine's path."""
    files = DirectoryPlanFiles(tmp_path / "none", tmp_path / "r")
    with pytest.raises(FileSystemError) as caught:
        await files.write(PlanId("abcde"), b"x")
    assert "No such file" in caught.value.message
    assert str(tmp_path) not in caught.value.message


async def test_keep_file_copies_the_whole_file_and_follows_no_link(
    files: DirectoryPlanFiles, tmp_path: Path
):
    """keep_file copies a file past the read limit whole, byte for byte; a link, a directory
    or no file at all is not copied (None), and a link's target is not read."""
    big = os.urandom(64) + b"x" * (MAX_FILE_BYTES + 1000)
    (files.folder / "big00.txt").write_bytes(big)
    kept = await files.keep_file(PlanId("big00"))
    assert kept is not None
    assert Path(kept).read_bytes() == big
    assert Path(kept).parent == files.recovered
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, files.folder / "abcde.txt")
    (files.folder / "dir00.txt").mkdir()
    assert await files.keep_file(PlanId("abcde")) is None
    assert await files.keep_file(PlanId("dir00")) is None
    assert await files.keep_file(PlanId("none0")) is None
    assert [p.name for p in files.recovered.iterdir()] == ["big00.txt"]
