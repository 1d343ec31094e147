"""The one file watch the lease keeper and the live session page share."""

import hashlib
from pathlib import Path

import anyio

from nineplan_adapters.entrypoints.file_watch import content_changes, digest


def _replace(path: Path, text: str) -> None:
    """Write `text` to `path` as plan files are written: a new file renamed into place."""
    fresh = path.with_suffix(".tmp")
    fresh.write_text(text, encoding="utf-8")
    fresh.replace(path)


async def test_a_watch_yields_a_file_and_its_hash_only_when_its_content_changes(tmp_path: Path):
    """A touch, a rewrite of the same bytes and a change to a file not watched yield nothing;
    new content (written by rename, as plan files are) yields that file and its hash."""
    watched, other = tmp_path / "a1b2c.md", tmp_path / "zzzzz.md"
    watched.write_text("# Plan\n", encoding="utf-8")
    other.write_text("# Other\n", encoding="utf-8")
    stop = anyio.Event()
    sent, seen = anyio.create_memory_object_stream[tuple[Path, str]](10)

    async def collect() -> None:
        async with sent:
            async for change in content_changes([watched], stop):
                await sent.send(change)

    async with seen, anyio.create_task_group() as tasks:
        tasks.start_soon(collect)
        await anyio.sleep(0.3)  # the watch is set up
        watched.touch()
        _replace(watched, "# Plan\n")
        other.write_text("# Other, changed\n", encoding="utf-8")
        await anyio.sleep(0.5)
        _replace(watched, "# Plan\n\nnotes\n")
        with anyio.fail_after(5):
            first = await seen.receive()
        stop.set()
        rest = [change async for change in seen]
    expected = hashlib.sha256(b"# Plan\n\nnotes\n").hexdigest()
    assert (first, rest) == ((watched, expected), [])
    assert digest(watched) == expected
    assert digest(tmp_path / "gone.md") is None


async def test_a_watch_starts_from_a_known_hash_without_reading_the_file(tmp_path: Path):
    """Given the hash of what a file held when it was handed over, a watch starts from it:
    the file edited before the watch began yields its new content at the next event there,
    even a rewrite of the same bytes."""
    watched = tmp_path / "a1b2c.md"
    watched.write_text("# Plan\n\nedited before the watch\n", encoding="utf-8")
    handed = hashlib.sha256(b"# Plan\n").hexdigest()
    stop = anyio.Event()
    sent, seen = anyio.create_memory_object_stream[tuple[Path, str]](10)

    async def collect() -> None:
        async with sent:
            async for change in content_changes([watched], stop, {watched: handed}):
                await sent.send(change)

    async with seen, anyio.create_task_group() as tasks:
        tasks.start_soon(collect)
        await anyio.sleep(0.3)  # the watch is set up
        _replace(watched, "# Plan\n\nedited before the watch\n")
        with anyio.fail_after(5):
            first = await seen.receive()
        stop.set()
    assert first == (watched, hashlib.sha256(b"# Plan\n\nedited before the watch\n").hexdigest())
