"""The MCP server's streamable HTTP app: `/mcp` behind the SDK's DNS-rebinding protection, with
its 421 reworded to say how to allow a host, and resumable streams (resumable.py)."""

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.asgi import BearerAuth, allow_lists, answer
from nineplan_adapters.entrypoints.mcp.resumable import SessionEventStore, SessionStreams


class HostRefusalHint:
    """The SDK's 421 for a Host it does not allow, reworded to say how to allow one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        refused = False

        async def reworded(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 421:  # noqa: PLR2004 - HTTP 421 Misdirected Request
                refused = True
                await answer(
                    send,
                    421,
                    f"misdirected request: Host {host!r} is not allowed; add it to "
                    "NINEPLAN_HTTP_ALLOWED_HOSTS (comma-separated, name:* for any port)\n",
                )
            elif not refused:
                await send(message)

        await self.app(scope, receive, reworded)


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """The SDK's DNS-rebinding protection over nineplan's allow-lists (asgi.allow_lists)."""
    lists = allow_lists(settings)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=lists.hosts,
        allowed_origins=lists.origins,
    )


def mcp_app(server: MCPServer[Any], settings: Settings) -> ASGIApp:
    """MCP at /mcp, with the token check in front when one is set."""
    app: ASGIApp = HostRefusalHint(
        SessionStreams(
            server.streamable_http_app(
                streamable_http_path="/mcp",
                transport_security=transport_security(settings),
                host=settings.http_host,
                event_store=SessionEventStore(),
            )
        )
    )
    return BearerAuth(app, settings.http_token) if settings.http_token else app
