"""The web view's Starlette app: pages, forms, live updates and static files, behind the guard."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.web.live import LiveResponse, SessionsLiveResponse
from nineplan_adapters.entrypoints.web.pages import Pages, SessionView, showing_archived
from nineplan_adapters.entrypoints.web.security import Guard, WebSecurity
from nineplan_core.errors import NinePlanError
from nineplan_core.model import check_session_name
from nineplan_core.service import NinePlan


def web_app(service: NinePlan, settings: Settings) -> ASGIApp:
    """The web view of every session the service reaches, guarded as docs/ui.md (Security) says.

    Every page is live: the service's watch ticks on every commit (the journal's change feed
    rides on it too).
    """
    security = WebSecurity.from_settings(settings)
    watch = service.watch()
    pages = Pages(service, security)

    async def live(request: Request) -> Response:
        try:
            name = check_session_name(request.path_params["name"])
            await pages.reads.state(name)  # refuse an unknown session before the stream starts
        except NinePlanError as exc:
            return pages.error(exc, back="/")
        return LiveResponse(pages, watch, name, SessionView.of(request))

    async def live_list(request: Request) -> Response:
        return SessionsLiveResponse(pages, watch, archived=showing_archived(request))

    routes = [
        Route("/", pages.sessions),
        Route("/live", live_list),
        Route("/login", pages.login_page, methods=["GET"]),
        Route("/login", pages.login, methods=["POST"]),
        Route("/sessions/{name}", pages.session),
        Route("/sessions/{name}/live", live),
        Route("/sessions/{name}/plans", pages.add, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}", pages.plan),
        Route("/sessions/{name}/plans/{plan_id}/move", pages.move, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}/drop", pages.drop, methods=["POST"]),
        Mount(
            "/static",
            StaticFiles(packages=[("nineplan_adapters.entrypoints.web", "static")]),
            name="static",
        ),
    ]
    return Guard(Starlette(routes=routes), security)
