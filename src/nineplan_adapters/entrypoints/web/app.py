"""The web view's Starlette app: pages, forms, live updates and static files, behind the guard."""

from collections.abc import Awaitable, Callable
from importlib.resources import files

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.tool_names import ToolNames
from nineplan_adapters.entrypoints.web.live import (
    GraphLiveResponse,
    LiveResponse,
    SessionsLiveResponse,
)
from nineplan_adapters.entrypoints.web.pages import (
    Pages,
    SessionView,
    list_query,
    showing_archived,
)
from nineplan_adapters.entrypoints.web.security import OAUTH_PATHS, Guard, WebSecurity
from nineplan_adapters.entrypoints.web.sign_in import SignIn
from nineplan_adapters.entrypoints.web.steering import Steering
from nineplan_core.errors import NinePlanError
from nineplan_core.model import check_session_name
from nineplan_core.service import NinePlan


async def no_oauth(_: Request) -> Response:
    """Every `/.well-known/` path, OAuth's protected-resource and authorization-server metadata
    among them, and the registration, authorization and token endpoints an OAuth client tries
    next: a JSON 404, so that such a client falls back to the bearer token."""
    return JSONResponse(
        {
            "error": "not_found",
            "error_description": "nineplan has no OAuth: send the NINEPLAN_HTTP_TOKEN value as "
            "'Authorization: Bearer <token>'",
        },
        status_code=404,
    )


#: The favicon, also at /favicon.ico, where browsers ask for it unprompted.
FAVICON = files("nineplan_adapters.entrypoints.web").joinpath("static/favicon.svg")


async def favicon(_: Request) -> Response:
    """The SVG favicon at /favicon.ico (a browser asks there whatever the page links)."""
    return Response(
        FAVICON.read_bytes(),
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )


def web_app(service: NinePlan, settings: Settings) -> ASGIApp:
    """The web view of every session the service reaches, guarded as docs/ui.md (Security) says.

    Every page is live: the service's watch ticks on every commit (the journal's change feed
    rides on it too).
    """
    security = WebSecurity.from_settings(settings)
    watch = service.watch()
    pages = Pages(service, security)
    pages.environment.globals["tools"] = ToolNames(settings.tool_prefix).fields
    steering, sign_in = Steering(pages), SignIn(pages)

    def live(stream: type[LiveResponse]) -> Callable[[Request], Awaitable[Response]]:
        """The handler of a session's `stream` (its page's, or its graph page's)."""

        async def respond(request: Request) -> Response:
            try:
                name = check_session_name(request.path_params["name"])
                await pages.reads.state(name)  # refuse an unknown session before it starts
            except NinePlanError as exc:
                return pages.error(exc, back="/")
            return stream(pages, watch, name, SessionView.of(request))

        return respond

    async def live_list(request: Request) -> Response:
        return SessionsLiveResponse(
            pages, watch, archived=showing_archived(request), query=list_query(request)
        )

    routes = [
        Route("/", pages.sessions),
        Route("/live", live_list),
        Route("/favicon.ico", favicon),
        Route("/.well-known/{rest:path}", no_oauth, methods=["GET", "POST"]),
        *(Route(path, no_oauth, methods=["GET", "POST"]) for path in OAUTH_PATHS),
        Route("/login", sign_in.login_page, methods=["GET"]),
        Route("/login", sign_in.login, methods=["POST"]),
        Route("/sessions/{name}", pages.session),
        Route("/sessions/{name}/live", live(LiveResponse)),
        Route("/sessions/{name}/graph", pages.session_graph),
        Route("/sessions/{name}/graph/live", live(GraphLiveResponse)),
        Route("/sessions/{name}/plans", steering.add, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}", pages.plan),
        Route("/sessions/{name}/plans/{plan_id}/move", steering.move, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}/edit", steering.edit_page, methods=["GET"]),
        Route("/sessions/{name}/plans/{plan_id}/edit", steering.edit, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}/drop", steering.drop, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}/release", steering.release, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}/verdicts/{n}", steering.decide, methods=["POST"]),
        Mount(
            "/static",
            StaticFiles(packages=[("nineplan_adapters.entrypoints.web", "static")]),
            name="static",
        ),
    ]
    return Guard(Starlette(routes=routes), security)
