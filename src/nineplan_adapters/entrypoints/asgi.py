"""Serving an ASGI app: the bind, the refusal to listen beyond loopback without a token, the
Host and Origin allow-lists, the bearer token check, and uvicorn with logs on stderr.

Shared by the MCP server's HTTP transport and the web view (`nineplan ui`).
"""

import errno
import hmac
import ipaddress
import logging
import signal
import socket
import sys

import attrs
import uvicorn
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


@attrs.frozen
class AllowLists:
    """The Host and Origin headers a server answers (DNS-rebinding protection); `name:*` is any
    port. The MCP app hands them to the SDK; the web view checks them itself, so that
    `nineplan ui` does not import the MCP SDK to start."""

    hosts: list[str]
    origins: list[str]


def allow_lists(settings: Settings) -> AllowLists:
    """Host and Origin allow-lists: loopback, the bound host, and what the settings add."""
    hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
    if not is_loopback(settings.http_host) and settings.http_host not in {"0.0.0.0", "::"}:  # noqa: S104 - a comparison, not a bind
        hosts.append(f"{settings.http_host}:*")
    return AllowLists(
        [*hosts, *settings.http_allowed_hosts], [*origins, *settings.http_allowed_origins]
    )


class PortInUseError(ConfigError):
    """Something else listens on the port already. The way out named first is `--port`,
    what a person at a terminal types; the variable too when it, or nothing, set the port."""

    def __init__(self, host: str, port: int, given_by: str) -> None:
        ways = "--port" if given_by == "--port" else f"--port or {given_by}"
        ValueError.__init__(
            self,
            f"port {port} is in use on {host}: stop what listens there, or choose another "
            f"port with {ways}",
        )
        self.variable = given_by

    def __str__(self) -> str:
        return str(self.args[0])


async def answer(send: Send, status: int, body: str, *headers: tuple[bytes, bytes]) -> None:
    """A plain-text response."""
    data = body.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(data)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


class BearerAuth:
    """Every HTTP request needs `Authorization: Bearer <token>`, compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization")
            if given is None or not hmac.compare_digest(given, self.expected):
                problem = "a bearer token is required" if given is None else "invalid bearer token"
                await answer(
                    send, 401, f"unauthorized: {problem}\n", (b"www-authenticate", b"Bearer")
                )
                return
        await self.app(scope, receive, send)


def check_bind(settings: Settings) -> None:
    """Refuse to listen beyond this machine without a token.

    Raises:
        ConfigError: a non-loopback host and no NINEPLAN_HTTP_TOKEN; it names what set the
            host (`--host` or NINEPLAN_HTTP_HOST).
    """
    if not is_loopback(settings.http_host) and not settings.http_token:
        raise ConfigError(
            settings.given_by("http_host", "--host"),
            f"refusing to listen on {settings.http_host}, which other machines can reach, without "
            "NINEPLAN_HTTP_TOKEN: anyone on the network could read and change every session",
        )


def bind(settings: Settings) -> socket.socket:
    """The listening socket, bound before uvicorn starts so that a busy port is one clear error.

    Raises:
        PortInUseError: something listens on the port already.
    """
    host = settings.http_host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, settings.http_port))
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUseError(
                settings.http_host, settings.http_port, settings.given_by("http_port", "--port")
            ) from None
        raise
    listener.set_inheritable(True)
    return listener


def address(settings: Settings, listener: socket.socket) -> str:
    """The base URL a browser or client reaches `listener` at (its port, were it chosen by the
    system), e.g. `http://127.0.0.1:8765`."""
    host = settings.http_host.strip("[]")
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{listener.getsockname()[1]}"


def announce(line: str) -> None:
    """One line for the person who started the server, on stderr (logs are JSON lines there too;
    stdout is left alone)."""
    sys.stderr.write(f"nineplan: {line}\n")
    sys.stderr.flush()


def _exit_quietly(signum: int, _: object) -> None:
    log.info("signal %d received; shutting down", signum)


async def serve_asgi(
    app: ASGIApp, settings: Settings, listener: socket.socket, *, lifespan: bool = True
) -> None:
    """Run `app` under uvicorn on `listener` until SIGINT or SIGTERM, logs on our stderr."""
    # uvicorn re-raises the signal it shut down for; a quiet handler turns that into exit 0.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_quietly)
    config = uvicorn.Config(
        app,
        host=settings.http_host,
        port=settings.http_port,
        log_config=None,  # uvicorn's loggers reach our stderr handler; its default prints to stdout
        use_colors=False,
        lifespan="on" if lifespan else "off",
        timeout_graceful_shutdown=10,
    )
    await uvicorn.Server(config).serve(sockets=[listener])
