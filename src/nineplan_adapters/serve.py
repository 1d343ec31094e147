"""Running the MCP server on a transport until it is told to stop."""

import logging

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, running
from nineplan_adapters.mcp import build_server
from nineplan_adapters.workspace import process_workspace

log = logging.getLogger("nineplan.serve")


async def serve(settings: Settings) -> int:
    """Serve MCP on the configured transport; returns the exit code.

    Raises:
        ConfigError: an HTTP bind the settings do not allow, or a port in use.
    """
    stdio = settings.transport == "stdio"
    if stdio:
        async with running(build_container(settings, one_client=True)) as service:
            log.info("9plan serving", extra={"transport": settings.transport})
            server = build_server(service, workspace=process_workspace())
            await server.run_stdio_async()
            return 0
    from nineplan_adapters.http import bind, check_bind, serve_http  # noqa: PLC0415 - uvicorn only for HTTP

    check_bind(settings)
    # Bound before anything starts: a busy port is one line, not a started-then-stopped server.
    with bind(settings) as listener:
        async with running(build_container(settings, one_client=False)) as service:
            log.info("9plan serving", extra={"transport": settings.transport})
            return await serve_http(build_server(service), settings, listener)
