"""Streamable HTTP: DNS-rebinding protection, an optional bearer token, logs on stderr."""

import hmac
import ipaddress
import logging
import signal
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from nineplan_adapters.config import ConfigError, Settings

log = logging.getLogger("nineplan.http")

LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (127.0.0.0/8, ::1 or localhost)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """Host and Origin allow-lists: loopback, the bound host, and what the settings add."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if not is_loopback(settings.http_host) and settings.http_host not in {"0.0.0.0", "::"}:  # noqa: S104 - a comparison, not a bind
        hosts.append(f"{settings.http_host}:*")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *settings.http_allowed_hosts],
        allowed_origins=[*origins, *settings.http_allowed_origins],
    )


class BearerAuth:
    """Every HTTP request needs `Authorization: Bearer <token>`, compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"text/plain"),
                            (b"www-authenticate", b"Bearer"),
                        ],
                    }
                )
                await send(
                    {
                        "type": "http.response.body",
                        "body": b"unauthorized: a bearer token is required\n",
                    }
                )
                return
        await self.app(scope, receive, send)


def check_bind(settings: Settings) -> None:
    """Refuse to listen beyond this machine without a token.

    Raises:
        ConfigError: a non-loopback host and no NINEPLAN_HTTP_TOKEN.
    """
    if not is_loopback(settings.http_host) and not settings.http_token:
        raise ConfigError(
            "NINEPLAN_HTTP_HOST",
            f"refusing to listen on {settings.http_host}, which other machines can reach, without "
            "NINEPLAN_HTTP_TOKEN: anyone on the network could read and change every session",
        )


def build_app(server: MCPServer[Any], settings: Settings) -> ASGIApp:
    """MCP at /mcp, with the token check in front when one is set, and the web view at /."""
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path="/mcp",
        transport_security=transport_security(settings),
        host=settings.http_host,
    )
    app = BearerAuth(app, settings.http_token) if settings.http_token else app
    service = getattr(server, "service", None)
    if service is None:
        return app
    from nineplan_adapters.web import web_app  # noqa: PLC0415 - web imports this module

    return BesideMcp(app, web_app(service, settings))


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


def _exit_quietly(signum: int, _: object) -> None:
    log.info("signal %d received; shutting down", signum)


async def serve_http(server: MCPServer[Any], settings: Settings) -> int:
    """Serve until SIGINT or SIGTERM, let in-flight calls finish, and return 0."""
    check_bind(settings)
    # uvicorn re-raises the signal it shut down for; a quiet handler turns that into exit 0.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_quietly)
    config = uvicorn.Config(
        build_app(server, settings),
        host=settings.http_host,
        port=settings.http_port,
        log_config=None,  # uvicorn's loggers reach our stderr handler; its default prints to stdout
        lifespan="on",
        timeout_graceful_shutdown=10,
    )
    await uvicorn.Server(config).serve()
    log.info("9plan HTTP server stopped")
    return 0
