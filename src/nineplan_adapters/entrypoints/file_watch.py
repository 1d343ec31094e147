"""Watching plan files as workers write them: what the lease keeper (MCP) and the live session
page (web) both wait on.

A watch is on the files' folder, not the files: plan files are replaced by rename, which a
watch on a file itself would lose. It yields a file's content hash only when the content
changed, so a touch or a rewrite of the same bytes is no change.
"""

import hashlib
from collections.abc import AsyncIterator, Collection, Mapping
from pathlib import Path

import anyio
from watchfiles import Change, awatch

#: How long a watch gathers events before it looks at the files (milliseconds).
DEBOUNCE_MS = 50


def digest(path: Path) -> str | None:
    """The SHA-256 of the file's content, or None when it cannot be read (not there)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


async def content_changes(
    paths: Collection[Path], stop: anyio.Event, known: Mapping[Path, str] | None = None
) -> AsyncIterator[tuple[Path, str]]:
    """Each time one of `paths` (files of one folder) holds new content: that file and its
    content's hash, until `stop` is set (the watch's thread sees it within a step).

    The content each file has when the watch starts is the first that is not new, unless
    `known` gives its hash already (the content the caller just wrote or read: the file is
    not read again, and what changed it since is new); a file that goes away yields nothing,
    and yields again when it comes back with other content.
    """
    by_name = {path.name: path for path in paths}
    folders = {path.parent for path in paths}
    if len(folders) != 1:
        raise ValueError("the files of one watch share one folder")
    given = known or {}
    last = {name: given[path] if path in given else digest(path) for name, path in by_name.items()}

    def these_files(_: Change, changed: str) -> bool:
        return Path(changed).name in by_name

    async for events in awatch(
        *folders,
        watch_filter=these_files,
        debounce=DEBOUNCE_MS,
        step=20,
        stop_event=stop,
        rust_timeout=1000,
        recursive=False,
    ):
        for name in sorted({Path(changed).name for _, changed in events}):
            now = digest(by_name[name])
            if now is not None and now != last[name]:
                last[name] = now
                yield by_name[name], now
