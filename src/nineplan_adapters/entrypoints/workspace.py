"""Workspaces: the folder a session belongs to (which folders it covers: storage.priming)."""

from pathlib import Path


def process_workspace(cwd: str | None = None, home: str | None = None) -> str | None:
    """The workspace a stdio server records for the sessions it creates: its working directory.

    None for `/` and for the home folder: some clients start servers there, and such a
    workspace would cover every folder. `cwd` and `home` default to the process's own.
    """
    try:
        folder = Path(cwd if cwd is not None else Path.cwd()).resolve()
    except OSError:  # the working directory was deleted under the process
        return None
    if folder == Path(folder.anchor) or folder == _home(home):
        return None
    return str(folder)


def _home(home: str | None) -> Path | None:
    """The home folder, resolved; None when the process has none (no HOME, no passwd entry)."""
    try:
        return Path(home if home is not None else Path.home()).resolve()
    except (RuntimeError, KeyError, OSError):
        return None
