"""The web view's guard: Host/Origin allow-lists, the token cookie, CSRF tokens, strict headers.

Loopback without a token is open to this machine's user; with NINEPLAN_HTTP_TOKEN the pages ask
for the token once and keep a value derived from it in an `HttpOnly; SameSite=Strict` cookie.
Every request must name an allowed Host (DNS rebinding); every POST must come from an allowed
Origin (or none, as scripts send) and carry the CSRF token the page was rendered with.
"""

import hashlib
import hmac
import secrets
from urllib.parse import quote

import attrs
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.asgi import allow_lists

COOKIE = "nineplan_token"
#: No inline script or style, nothing from elsewhere, no framing.
CSP = (
    "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; "
    "object-src 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make the Origin "null"
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
#: The paths an OAuth client tries after discovery: dynamic client registration, then the
#: authorization and token endpoints.
OAUTH_PATHS = ("/register", "/authorize", "/token")
#: Reachable without the token: the login page itself, the static files it uses, the
#: well-known paths and the OAuth endpoints (an OAuth client's probes must get their JSON 404,
#: not the sign-in page, or Claude Code reports "Dynamic Client Registration rejected").
OPEN_PATHS = ("/login", "/static/", "/.well-known/", *OAUTH_PATHS)


def allowed(value: str, patterns: list[str]) -> bool:
    """Whether `value` matches one of `patterns` exactly or as `base:*` (any port, or none)."""
    return any(
        value == pattern
        or (pattern.endswith(":*") and (value == pattern[:-2] or value.startswith(pattern[:-1])))
        for pattern in patterns
    )


@attrs.frozen
class WebSecurity:
    """What the guard checks, made once per app from the settings."""

    hosts: list[str]
    origins: list[str]
    token: str | None = None
    secret: bytes = attrs.field(factory=lambda: secrets.token_bytes(32))

    @classmethod
    def from_settings(cls, settings: Settings) -> "WebSecurity":
        lists = allow_lists(settings)
        return cls(lists.hosts, lists.origins, settings.http_token)

    @property
    def csrf_token(self) -> str:
        """The token every form carries; only a page of this server can know it."""
        return hmac.new(self.secret, b"nineplan-csrf", hashlib.sha256).hexdigest()

    def csrf_ok(self, given: object) -> bool:
        return isinstance(given, str) and hmac.compare_digest(
            given.encode(), self.csrf_token.encode()
        )

    def cookie_value(self) -> str:
        """What the cookie holds: derived from the token, so the token itself is not stored."""
        assert self.token is not None  # noqa: S101 - only called with a token
        return hmac.new(self.token.encode(), b"nineplan-ui-cookie", hashlib.sha256).hexdigest()

    def token_ok(self, given: object) -> bool:
        return (
            self.token is not None
            and isinstance(given, str)
            and hmac.compare_digest(given.encode(), self.token.encode())
        )

    def signed_in(self, request: Request) -> bool:
        if self.token is None:
            return True
        cookie = request.cookies.get(COOKIE, "")
        bearer = request.headers.get("authorization", "")
        return hmac.compare_digest(cookie.encode(), self.cookie_value().encode()) or self.token_ok(
            bearer.removeprefix("Bearer ")
        )

    def sign_in(self, response: Response) -> None:
        response.set_cookie(COOKIE, self.cookie_value(), httponly=True, samesite="strict", path="/")


class Guard:
    """ASGI middleware in front of every page: the checks above, and the strict headers."""

    def __init__(self, app: ASGIApp, security: WebSecurity) -> None:
        self.app = app
        self.security = security

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        refusal = self.refusal(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    def refusal(self, request: Request) -> Response | None:
        """The response refusing this request, or None to let it through."""
        headers = Headers(scope=request.scope)
        if not allowed(headers.get("host", ""), self.security.hosts):
            return PlainTextResponse(
                f"misdirected request: Host {headers.get('host', '')!r} is not allowed; add it to "
                "NINEPLAN_HTTP_ALLOWED_HOSTS (comma-separated, name:* for any port)\n",
                status_code=421,
            )
        if request.method not in {"GET", "HEAD"} and not allowed(
            headers.get("origin") or "", [*self.security.origins, ""]
        ):
            return PlainTextResponse(
                "forbidden: this Origin may not change sessions (NINEPLAN_HTTP_ALLOWED_ORIGINS "
                "adds origins)\n",
                status_code=403,
            )
        if request.url.path.startswith(OPEN_PATHS) or self.security.signed_in(request):
            return None
        if request.method in {"GET", "HEAD"}:
            return RedirectResponse(f"/login?next={quote(request.url.path)}", status_code=303)
        return PlainTextResponse("unauthorized: sign in at /login first\n", status_code=401)
