"""The workspace of the sessions a client creates (docs/clients.md, "Finding the way back after
compaction"): the call's own `workspace` argument, else the client's MCP roots, which come
between NINEPLAN_WORKSPACE (or CLAUDE_PROJECT_DIR) and the server's working directory on
stdio, alone over HTTP."""

import logging
import warnings
from pathlib import Path
from typing import Any

import anyio
from mcp import MCPDeprecationWarning, MCPError
from mcp.server.mcpserver import Context

from nineplan_adapters.entrypoints.workspace import WorkspaceSources, root_folder, usable_folder
from nineplan_core.errors import InvalidInputError

log = logging.getLogger("nineplan.mcp")

#: How long `9plan_session_create` waits for the client's roots: a client that declared roots
#: but does not answer must not hold the call up for long.
ROOTS_TIMEOUT = 2.0


async def session_workspace(
    ctx: Context[Any, Any], sources: WorkspaceSources, named: str | None = None
) -> str | None:
    """The workspace of a session this call creates: the folder the call `named` (its
    `workspace` argument), else the first usable of `sources.given`, the client's first
    `file://` root, `sources.fallback`.

    Raises:
        InvalidInputError: `named` is not a usable folder (usable_folder).
    """
    if named is not None:
        absolute = Path(named).expanduser().is_absolute() if "\x00" not in named else False
        if not absolute or (folder := usable_folder(named)) is None:
            raise InvalidInputError(
                "workspace",
                f"{named!r} is not a usable folder: it must be an absolute path to a folder "
                "on the server's machine, neither / nor the home folder",
            )
        return folder
    return sources.given or await client_root(ctx) or sources.fallback


async def client_root(ctx: Context[Any, Any]) -> str | None:
    """The folder of the client's first `file://` root, when the client declared roots, the
    request can reach it within ROOTS_TIMEOUT, and the folder is usable; None otherwise."""
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.roots is None:
        return None
    with anyio.move_on_after(ROOTS_TIMEOUT):
        try:
            # The SDK marks roots deprecated as of the 2026-07-28 protocol; clients of the
            # earlier ones still offer them, and they are the best word on the client's
            # folder over HTTP, so the warning is not for the people running the server.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                pending = ctx.session.list_roots()
            listed = await pending
        except (MCPError, ValueError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            log.info("the client's roots could not be read: %s", exc)
            return None
        uris = [str(root.uri) for root in listed.roots]
        first = next((uri for uri in uris if uri.lower().startswith("file:")), None)
        return None if first is None else root_folder(first)
    log.info("the client did not list its roots within %s s", ROOTS_TIMEOUT)
    return None
