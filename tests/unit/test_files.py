"""The plan-file directory on a real file system."""

import os
from pathlib import Path

import pytest

from nineplan_adapters.files import MAX_FILE_BYTES, DirectoryPlanFiles
from nineplan_core.errors import FileSystemError, InvalidInputError


@pytest.fixture
def files(tmp_path: Path) -> DirectoryPlanFiles:
    (tmp_path / "plans").mkdir()
    return DirectoryPlanFiles(tmp_path / "plans", tmp_path / "recovered")


async def test_write_is_atomic_and_leaves_no_temporary_file(files: DirectoryPlanFiles):
    """A rewrite replaces the file whole and leaves only the plan file in the folder."""
    await files.write("abcde", "one")
    await files.write("abcde", "two")
    assert await files.read("abcde") == "two"
    assert {entry.name: entry.stat().st_size for entry in files.folder.iterdir()} == {
        "abcde.txt": 3
    }


async def test_a_symlink_is_never_followed(files: DirectoryPlanFiles, tmp_path: Path):
    """An agent's link to a file outside reads as missing; writing replaces the link, not the target."""
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, files.folder / "abcde.txt")
    assert await files.read("abcde") is None
    await files.write("abcde", "plan")
    assert outside.read_text() == "secret"
    assert not (files.folder / "abcde.txt").is_symlink()
    os.symlink(outside, files.folder / "fghij.txt")
    await files.remove("fghij")
    assert outside.read_text() == "secret"


async def test_unreadable_content_reads_as_missing(files: DirectoryPlanFiles):
    (files.folder / "abcde.txt").write_bytes(b"\xff\xfe not utf-8")
    assert await files.read("abcde") is None
    (files.folder / "big00.txt").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    assert await files.read("big00") is None
    os.mkfifo(files.folder / "fifo0.txt")
    assert await files.read("fifo0") is None


async def test_paths_are_built_from_valid_ids_only(files: DirectoryPlanFiles):
    with pytest.raises(InvalidInputError):
        files.path("../../x")
    with pytest.raises(InvalidInputError):
        await files.write("../ab", "x")


async def test_recover_moves_without_overwriting(files: DirectoryPlanFiles):
    for _ in range(2):
        (files.folder / "stray.md").write_text("mine")
        await files.recover("stray.md")
    assert sorted(p.read_text() for p in files.recovered.iterdir()) == ["mine", "mine"]
    await files.recover("gone.md")  # already moved: nothing to do


async def test_missing_folder_lists_nothing(tmp_path: Path):
    assert await DirectoryPlanFiles(tmp_path / "none", tmp_path / "r").names() == []


async def test_write_into_a_missing_folder_is_a_file_system_error(tmp_path: Path):
    files = DirectoryPlanFiles(tmp_path / "none", tmp_path / "r")
    with pytest.raises(FileSystemError) as caught:
        await files.write("abcde", "x")
    assert "No such file" in caught.value.message
    assert str(tmp_path) not in caught.value.message
