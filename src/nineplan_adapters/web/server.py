"""`nineplan ui`: the web view on its own port, until SIGINT or SIGTERM."""

import logging
import signal

import uvicorn

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, running
from nineplan_adapters.http import check_bind
from nineplan_adapters.web.app import web_app

log = logging.getLogger("nineplan.web")

#: Where `nineplan ui` listens unless --port says otherwise (the MCP server's default is 8080).
DEFAULT_PORT = 8765


def _exit_quietly(signum: int, _: object) -> None:
    log.info("signal %d received; shutting down", signum)


async def serve_ui(settings: Settings) -> int:
    """Serve the web view on `settings.http_host:http_port`; returns the exit code.

    Raises:
        ConfigError: a bind beyond loopback without a token.
    """
    check_bind(settings)
    for sig in (signal.SIGINT, signal.SIGTERM):  # uvicorn re-raises the signal; exit 0 instead
        signal.signal(sig, _exit_quietly)
    async with running(build_container(settings)) as service:
        config = uvicorn.Config(
            web_app(service, settings),
            host=settings.http_host,
            port=settings.http_port,
            log_config=None,  # uvicorn's loggers reach our stderr handler
            lifespan="off",
            timeout_graceful_shutdown=2,  # live streams end when the server goes
        )
        server = uvicorn.Server(config)
        await server.serve()
    log.info("9plan web view stopped")
    return 0
