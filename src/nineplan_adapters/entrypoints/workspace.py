"""Workspaces: the folder a session belongs to (which folders it covers: storage.priming).

docs/clients.md ("Finding the way back after compaction") orders where a new session's
workspace comes from. First `9plan_session_create`'s own `workspace` argument, on every
transport. Then, on stdio: `NINEPLAN_WORKSPACE`, the project folder the client set in its
servers' environment (`CLAUDE_PROJECT_DIR`: plugin servers may start in the plugin's cache
folder or the home folder, and Claude Code expands `${CLAUDE_PROJECT_DIR:-}` in a plugin's
`.mcp.json` to nothing), the client's first `file://` MCP root (read by the MCP server at
`9plan_session_create`: mcp.roots), the server's working directory. Over HTTP only the
client's roots: the server's environment and folder say nothing of its clients'. Each is taken
only when it is a usable folder (`usable_folder`); the first usable one wins.
"""

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import attrs

#: A variable a client left unexpanded in NINEPLAN_WORKSPACE: `${CLAUDE_PROJECT_DIR}`,
#: `${CLAUDE_PROJECT_DIR:-}`, `$CLAUDE_PROJECT_DIR`.
_UNEXPANDED = re.compile(r"\$\{|\$[A-Za-z_]")


@attrs.frozen
class WorkspaceSources:
    """What a server knows, before any call, of the workspace of the sessions it creates:
    `given` (NINEPLAN_WORKSPACE, when usable) comes before the client's roots, `fallback`
    (the working directory, when usable) after them. Both None over HTTP."""

    given: str | None = None
    fallback: str | None = None

    @classmethod
    def stdio(
        cls, variable: str | None, cwd: str | None = None, *, project_dir: str | None = None
    ) -> "WorkspaceSources":
        """A stdio server's: the NINEPLAN_WORKSPACE `variable`, else the client's `project_dir`
        (CLAUDE_PROJECT_DIR), each not usable when it holds a variable its client left
        unexpanded; then its working directory."""
        given = next(
            (
                folder
                for value in (variable, project_dir)
                if value is not None
                and not _UNEXPANDED.search(value)
                and (folder := usable_folder(value))
            ),
            None,
        )
        return cls(given, process_workspace(cwd))


def usable_folder(value: str | None, home: str | None = None) -> str | None:
    """`value` as a workspace, resolved; None when it is not usable: empty, not an existing
    folder, `/`, or the home folder (some clients start servers there, and such a workspace
    would cover every folder). `home` defaults to the process's own."""
    if value is None or not value.strip() or "\x00" in value:
        return None
    try:
        folder = Path(value).expanduser().resolve()
        if not folder.is_dir():
            return None
    except (OSError, RuntimeError, ValueError):  # a folder that cannot be read, or a loop
        return None
    if folder == Path(folder.anchor) or folder == _home(home):
        return None
    return str(folder)


def process_workspace(cwd: str | None = None, home: str | None = None) -> str | None:
    """The working directory as a workspace (usable_folder); None when it is not usable, or
    was deleted under the process. `cwd` and `home` default to the process's own."""
    try:
        folder = cwd if cwd is not None else str(Path.cwd())
    except OSError:  # the working directory was deleted under the process
        return None
    return usable_folder(folder, home)


def root_folder(uri: str, home: str | None = None) -> str | None:
    """A `file://` MCP root's folder, when usable (usable_folder); None for other schemes, a
    root on another host, or a folder that is not usable."""
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file" or parts.netloc not in {"", "localhost"}:
        return None
    return usable_folder(unquote(parts.path), home)


def _home(home: str | None) -> Path | None:
    """The home folder, resolved; None when the process has none (no HOME, no passwd entry)."""
    try:
        return Path(home if home is not None else Path.home()).resolve()
    except (RuntimeError, KeyError, OSError):
        return None
