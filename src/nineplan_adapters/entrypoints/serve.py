"""`nineplan serve`: the MCP server on a transport until it is told to stop; over HTTP the web
view answers beside `/mcp` (the one place that puts two ways in on one port)."""

import logging

from starlette.types import ASGIApp, Receive, Scope, Send

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, running
from nineplan_adapters.entrypoints.mcp import build_server
from nineplan_adapters.entrypoints.tool_names import ToolNames
from nineplan_adapters.entrypoints.workspace import WorkspaceSources

log = logging.getLogger("nineplan.serve")


async def serve(settings: Settings) -> int:
    """Serve MCP on the configured transport; returns the exit code.

    Raises:
        ConfigError: an HTTP bind the settings do not allow, or a port in use.
    """
    names = ToolNames(settings.tool_prefix)
    if settings.transport == "stdio":
        async with running(build_container(settings, one_client=True)) as service:
            log.info("9plan serving", extra={"transport": settings.transport})
            workspace = WorkspaceSources.stdio(
                settings.workspace, project_dir=settings.client_project_dir
            )
            server = build_server(service, workspace=workspace, names=names)
            await server.run_stdio_async()
            return 0
    # uvicorn, starlette and the web view only for HTTP
    from nineplan_adapters.entrypoints.asgi import (  # noqa: PLC0415
        address,
        announce,
        bind,
        check_bind,
        serve_asgi,
    )
    from nineplan_adapters.entrypoints.mcp.http import mcp_app  # noqa: PLC0415
    from nineplan_adapters.entrypoints.web import web_app  # noqa: PLC0415

    check_bind(settings)
    # Bound before anything starts: a busy port is one line, not a started-then-stopped server.
    with bind(settings) as listener:
        async with running(build_container(settings, one_client=False)) as service:
            log.info("9plan serving", extra={"transport": settings.transport})
            server = build_server(service, names=names)
            app = BesideMcp(mcp_app(server, settings), web_app(service, settings))
            base = address(settings, listener)
            announce(f"MCP is at {base}/mcp, the web view at {base}/ (Ctrl-C stops it)")
            await serve_asgi(app, settings, listener)
    log.info("9plan HTTP server stopped")
    return 0


class BesideMcp:
    """`/mcp` (and the lifespan, which runs the MCP session manager) to MCP; the rest to the view."""

    def __init__(self, mcp: ASGIApp, view: ASGIApp) -> None:
        self.mcp = mcp
        self.view = view

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "lifespan" or path == "/mcp" or path.startswith("/mcp/"):
            await self.mcp(scope, receive, send)
        else:
            await self.view(scope, receive, send)
