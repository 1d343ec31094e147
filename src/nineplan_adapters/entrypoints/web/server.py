"""`nineplan ui`: the web view on its own port, until SIGINT or SIGTERM."""

import logging

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, running
from nineplan_adapters.entrypoints.asgi import address, announce, bind, check_bind, serve_asgi
from nineplan_adapters.entrypoints.web.app import web_app

log = logging.getLogger("nineplan.web")


async def serve_ui(settings: Settings) -> int:
    """Serve the web view on `settings.http_host:http_port`; returns the exit code.

    Raises:
        ConfigError: a bind beyond loopback without a token, or a port in use.
    """
    check_bind(settings)
    with bind(settings) as listener:  # before anything starts: a busy port is one line
        async with running(build_container(settings)) as service:
            announce(f"the web view is at {address(settings, listener)}/ (Ctrl-C stops it)")
            await serve_asgi(web_app(service, settings), settings, listener, lifespan=False)
    log.info("9plan web view stopped")
    return 0
