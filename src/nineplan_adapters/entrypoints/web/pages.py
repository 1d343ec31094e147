"""The pages: sessions, one session, its graph, one plan; what every handler shares (rendering, the
error page, the CSRF check of a posted form).

Every read goes through `Reads`; the forms a person steers with are `steering`'s, signing in
is `sign_in`'s.
"""

import datetime as dt
import math
import re
import urllib.parse
from collections.abc import Iterable
from typing import Any

import attrs
import jinja2
import markupsafe
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from nineplan_adapters.entrypoints.web.chart import Chart, hours
from nineplan_adapters.entrypoints.web.forms import AddForm, MoveForm
from nineplan_adapters.entrypoints.web.graph import lay_out
from nineplan_adapters.entrypoints.web.marks import Decided
from nineplan_adapters.entrypoints.web.reads import BoardPage, GraphPage, Reads
from nineplan_adapters.entrypoints.web.rendering import templates
from nineplan_adapters.entrypoints.web.security import WebSecurity
from nineplan_adapters.entrypoints.web.suggestions import for_people
from nineplan_core.errors import NinePlanError
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.results import HistoryMatch, SessionState, SessionSummary, UnreadableSession
from nineplan_core.service import NinePlan

#: A session whose database cannot be read is unavailable, not a fault of the view.
STATUS_CODES = {
    "SESSION_NOT_FOUND": 404,
    "PLAN_NOT_FOUND": 404,
    "VALIDATION_ERROR": 400,
    "DATABASE_ERROR": 503,
}


@attrs.define
class Pages:
    """The pages people read (GET), over the use cases, the reads and the guard's tokens; and
    what every handler renders with (a page, a fragment, the error page) and checks a posted
    form with."""

    service: NinePlan
    security: WebSecurity
    environment: jinja2.Environment = attrs.field(factory=templates)

    def clock(self) -> dt.datetime:
        return self.service.clock()

    @property
    def reads(self) -> Reads:
        return Reads(self.service)

    def render(self, template: str, status_code: int = 200, **values: Any) -> HTMLResponse:
        values.setdefault("live_url", None)
        body = self.environment.get_template(template).render(**values)
        return HTMLResponse(body, status_code=status_code)

    def fragment(self, macro: str, *arguments: object) -> str:
        module = self.environment.get_template("fragments.html").module
        return str(getattr(module, macro)(*arguments))

    def chart(self, name: str, board: BoardPage) -> markupsafe.Markup:
        """The session's chart of its last 24 hours, rendered as the page renders it, from the
        board's counts (counted in the database: no render reads the window's events)."""
        drawing = Chart(hours(board.counts, board.now))
        module = self.environment.get_template("chart.html").module
        task = board.state.session.task_description
        drawn = module.chart(drawing, name, task)  # type: ignore[attr-defined]
        return markupsafe.Markup(drawn)  # noqa: S704 - the template escaped every value in it

    def graph(self, name: str, drawn: GraphPage) -> markupsafe.Markup:
        """The session's graph, laid out and rendered as its page renders it."""
        module = self.environment.get_template("graph.html").module
        figure = module.graph(lay_out(drawn.nodes(name)), name)  # type: ignore[attr-defined]
        return markupsafe.Markup(figure)  # noqa: S704 - the template escaped every value in it

    async def graph_fragments(self, name: str) -> tuple[dict[str, str], SessionState]:
        """The parts of a graph page that change (the drawing and the counts above it),
        rendered as the page renders them."""
        drawn = await self.reads.graph(name)
        parts = {
            "summary": self.fragment("summary", drawn.state),
            "graph": self.graph(name, drawn),
            "left-out": self.fragment("left_out", drawn.left_out),
        }
        return parts, drawn.state

    async def board(self, name: str, view: "SessionView") -> BoardPage:
        """The board of a session page showing `view`, read in one snapshot."""
        return await self.reads.board(name, view.page, view.before, self.clock())

    async def fragments(
        self, name: str, view: "SessionView"
    ) -> tuple[dict[str, str], SessionState]:
        """The parts of a session page that change, rendered as the page renders them, from
        one read snapshot."""
        board = await self.board(name, view)
        state, now, csrf = board.state, board.now, self.security.csrf_token
        parts = {
            "summary": self.fragment("summary", state),
            "chart": self.chart(name, board),
            "active": self.fragment("active", state, board.files, name, csrf, now),
            "queue": self.fragment("queue", state, board.queue, name, csrf, view),
            "done": self.fragment("done", board.done, state, name, now),
            "needs-you": self.fragment("needs_you", board.needs_you, name, csrf),
            "journal": self.fragment("journal", board.journal, view, now),
        }
        return parts, state

    async def session_rows(
        self, names: list[str] | None = None, *, archived: bool = False
    ) -> dict[str, SessionSummary | UnreadableSession]:
        """The session list's lines (of `names`, or every session; archived ones if asked),
        by name."""
        listing = await self.reads.sessions(names, archived=archived)
        return {s.name: s for s in listing.sessions}

    def rows_html(
        self, summaries: Iterable[SessionSummary | UnreadableSession], query: str = ""
    ) -> str:
        return self.fragment("session_rows", list(summaries), self.clock(), query)

    def row_html(self, summary: SessionSummary | UnreadableSession) -> str:
        return self.fragment("session_row", summary, self.clock())

    def error(self, exc: NinePlanError, back: str, status_code: int | None = None) -> HTMLResponse:
        return self.render(
            "error.html",
            status_code or STATUS_CODES.get(exc.category, 500),
            title="Refused" if exc.category == "VALIDATION_ERROR" else "Not available",
            category=exc.category,
            message=exc.message,
            suggestion=for_people(exc.suggestion),
            back=back,
        )

    async def sessions(self, request: Request) -> Response:
        archived, query = showing_archived(request), list_query(request)
        listing = await self.reads.sessions(archived=archived)
        live = {"archived": "1"} if archived else {}
        live |= {"q": query} if query.strip() else {}
        return self.render(
            "sessions.html",
            sessions=listed(listing.sessions, query),
            archived_left_out=listing.archived_left_out,
            showing_archived=archived,
            query=query,
            now=self.clock(),
            live_url="/live" + (f"?{urllib.parse.urlencode(live)}" if live else ""),
        )

    async def session(self, request: Request) -> Response:
        return await self.session_page(request, request.path_params["name"])

    async def session_page(
        self,
        request: Request,
        name: str,
        add: "AddForm | None" = None,
        status_code: int = 200,
        move: "MoveForm | None" = None,
    ) -> Response:
        """The session page; with `add`, its add form as the person filled it in, and why it
        was refused (`status_code` then says the request was refused); with `move`, a queued
        queued card's refused form (move before, drop, to front or back) as it was sent, with
        why it was refused."""
        view = SessionView.of(request)
        query = request.query_params.get("q", "")
        try:
            board = await self.board(name, view)
            matches: list[HistoryMatch] | None = None
            search_error = None
            if query.strip():
                try:
                    matches = await self.reads.search(name, query)
                except NinePlanError as exc:
                    search_error = exc.message
            return self.render(
                "session.html",
                status_code,
                name=name,
                state=board.state,
                files=board.files,
                done=board.done,
                chart=self.chart(name, board),
                now=board.now,
                page=board.queue,
                view=view,
                csrf=self.security.csrf_token,
                journal=board.journal,
                needs_you=board.needs_you,
                said=Decided.parse(request.query_params.get("decided", "")),
                query=query,
                matches=matches,
                search_error=search_error,
                add=add or AddForm(),
                move=move,
                live_url=f"/sessions/{name}/live{view.query()}",
            )
        except NinePlanError as exc:
            return self.error(exc, back="/")

    async def session_graph(self, request: Request) -> Response:
        """The graph page: the session's plans as boxes by layer, an arrow from each
        prerequisite to the plans that wait for it."""
        name = request.path_params["name"]
        try:
            drawn = await self.reads.graph(name)
        except NinePlanError as exc:
            return self.error(exc, back="/")
        return self.render(
            "session_graph.html",
            name=name,
            state=drawn.state,
            graph=self.graph(name, drawn),
            left_out=drawn.left_out,
            live_url=f"/sessions/{name}/graph/live",
        )

    async def plan(self, request: Request) -> Response:
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        try:
            copy = await self.reads.plan(name, plan_id)
            plan, text = copy.plan, copy.text
            path = await self.service.plan_file_path(name, plan_id) if text is not None else None
        except NinePlanError as exc:
            return self.error(exc, back=f"/sessions/{name}")
        finished = "Discarded" if plan.status is PlanStatus.DISCARDED else "Completed"
        fields = [
            ("Goal", plan.content.goal),
            ("Context", plan.content.context),
            ("Inputs", plan.content.inputs),
            ("Outputs", plan.content.outputs),
            ("Approach", plan.content.approach),
            ("Success criteria", plan.content.success_criteria),
            ("Notes", plan.notes),
            ("Outcome", plan.outcome or ""),
        ]
        times = [("Created", plan.created_at), (finished, plan.completed_at)]
        return self.render(
            "plan.html",
            name=name,
            plan_id=plan_id,
            status=plan.status,
            fields=fields,
            times=[(label, at) for label, at in times if at is not None],
            now=self.clock(),
            file_text=text,
            file_path=path,
            waits_for=copy.waits_for,
            needed_by=copy.needed_by,
            plan=plan,
        )

    async def posted(self, request: Request) -> FormData | Response:
        """The posted form, or the refusal when it lacks this server's CSRF token."""
        form = await request.form()
        if not self.security.csrf_ok(form.get("csrf")):
            return self.render(
                "error.html",
                403,
                title="Refused",
                category="FORBIDDEN",
                message="The form did not carry this server's CSRF token; nothing was changed.",
                suggestion="Reload the page and submit the form again.",
                back=local_path(request.url.path.rsplit("/plans", 1)[0]),
            )
        return form


def listed(
    sessions: Iterable[SessionSummary | UnreadableSession], query: str = ""
) -> list[SessionSummary | UnreadableSession]:
    """The session list's lines in the list's order: the newest activity first (a session
    with none, or that cannot be read, after those), then by name; only those whose name or
    task holds `query` (case-insensitive; every line for a blank one)."""
    words = query.strip().casefold()

    def matches(line: SessionSummary | UnreadableSession) -> bool:
        task = line.session.task_description if isinstance(line, SessionSummary) else None
        return words in line.name.casefold() or words in (task or "").casefold()

    def newest_first(line: SessionSummary | UnreadableSession) -> tuple[float, str]:
        at = line.last_activity if isinstance(line, SessionSummary) else None
        return (-at.timestamp() if at else math.inf, line.name)

    return sorted((line for line in sessions if matches(line)), key=newest_first)


def list_query(request: Request) -> str:
    """The session list's filter (`?q=`), at most 200 characters."""
    return request.query_params.get("q", "")[:200]


def showing_archived(request: Request) -> bool:
    """Whether the session list was asked for archived sessions too (`?archived=1`)."""
    return request.query_params.get("archived") == "1"


#: A page number or a seq as a query parameter: ASCII digits, at most 18 (below 2**63).
_COUNT = re.compile(r"[0-9]{1,18}")


def _count(text: str) -> int:
    """A query parameter's count; 0 for anything else (the default view is shown)."""
    return int(text) if _COUNT.fullmatch(text) else 0


@attrs.frozen
class SessionView:
    """Which part of a session page is shown: the queue's `page`, the journal `before` a seq;
    `path` is the session page's, which its links lead to (also from a refused form, shown at
    the form's address)."""

    page: int = 1
    before: int | None = None
    path: str = ""

    @classmethod
    def of(cls, request: Request) -> "SessionView":
        page = _count(request.query_params.get("page", ""))
        before = _count(request.query_params.get("before", ""))
        name = request.path_params.get("name")
        return cls(page or 1, before or None, f"/sessions/{name}" if name else "")

    def query(self) -> str:
        """This view as a query string: `?page=2&before=40`, defaults left out."""
        return _query(self.page, self.before)

    def link(self, page: int, before: int | None) -> str:
        """The session page with queue `page` and journal `before`."""
        return self.path + _query(page, before)


def _query(page: int, before: int | None) -> str:
    """The query string of the view with queue `page` and journal `before`."""
    parts = [f"page={page}"] if page != 1 else []
    parts += [f"before={before}"] if before is not None else []
    return "?" + "&".join(parts)


def local_path(target: str | None) -> str:
    """Only a path on this server: never a redirect to somewhere else."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
