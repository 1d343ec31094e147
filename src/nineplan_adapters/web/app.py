"""The web view's Starlette app: pages, forms, live updates and static files, behind the guard."""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from nineplan_adapters.config import Settings
from nineplan_adapters.web.live import LiveResponse
from nineplan_adapters.web.pages import Pages
from nineplan_adapters.web.security import Guard, WebSecurity
from nineplan_core.errors import NinePlanError
from nineplan_core.ports import SessionWatch, WatchedCatalog
from nineplan_core.service import NinePlan


def session_watch(service: NinePlan) -> SessionWatch | None:
    """The storage's change ticks, when it has them (PostgreSQL's come with the journal feed)."""
    return service.catalog.watch() if isinstance(service.catalog, WatchedCatalog) else None


def web_app(service: NinePlan, settings: Settings) -> ASGIApp:
    """The web view of every session the service reaches, guarded as DESIGN §8 says."""
    security = WebSecurity.from_settings(settings)
    watch = session_watch(service)
    pages = Pages(service, security, live=watch is not None)

    async def live(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            await pages.reads.state(name)  # refuse an unknown session before the stream starts
        except NinePlanError as exc:
            return pages.error(exc, back="/")
        if watch is None:
            return Response(status_code=204)  # EventSource stops retrying on 204
        page = request.query_params.get("page", "1")
        return LiveResponse(pages, watch, name, int(page) if page.isdigit() else 1)

    routes = [
        Route("/", pages.sessions),
        Route("/login", pages.login_page, methods=["GET"]),
        Route("/login", pages.login, methods=["POST"]),
        Route("/sessions/{name}", pages.session),
        Route("/sessions/{name}/live", live),
        Route("/sessions/{name}/plans", pages.add, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}", pages.plan),
        Route("/sessions/{name}/plans/{plan_id}/move", pages.move, methods=["POST"]),
        Route("/sessions/{name}/plans/{plan_id}/drop", pages.drop, methods=["POST"]),
        Mount(
            "/static", StaticFiles(packages=[("nineplan_adapters.web", "static")]), name="static"
        ),
    ]
    return Guard(Starlette(routes=routes), security)
