"""The pages: sessions, one session, one plan; and the forms a person steers with.

Every read goes through `Reads` (inspection: nothing is reconciled or written); every change
goes through the NinePlan use cases. Templates autoescape: whatever an agent wrote is text.
"""

import datetime as dt
import math
import re
import urllib.parse
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import jinja2
import markupsafe
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES
from nineplan_adapters.entrypoints.web.chart import COUNTED, Chart, hours, window_start
from nineplan_adapters.entrypoints.web.security import WebSecurity
from nineplan_adapters.entrypoints.web.suggestions import for_people
from nineplan_core.errors import (
    InvalidInputError,
    NinePlanError,
    PlanChangedError,
    PlanHeldByAgentError,
    PlanNotFoundError,
)
from nineplan_core.journal import (
    Event,
    EventKind,
    EventQuery,
    UnreadableEvent,
    minutes_since,
    stale_line,
)
from nineplan_core.lifecycle import LIVE, PlanStatus
from nineplan_core.model import Plan, QueueEntry, format_timestamp
from nineplan_core.results import (
    SNIPPET_MARKS,
    HistoryMatch,
    SessionListing,
    SessionState,
    SessionSummary,
    UnreadableSession,
)
from nineplan_core.revisions import plan_revision
from nineplan_core.service import NinePlan

#: Queue entries per page: a session of 10,000 queued plans stays one quick page.
PAGE_SIZE = 200
#: Matches a history search shows.
SEARCH_RESULTS = 20
#: Journal entries a session page shows, newest first.
JOURNAL_LIMIT = 100
#: Completed plans the board's Done column shows, newest first (and as many of the most
#: recently discarded or dropped ones in its folded list).
DONE_LIMIT = 20
#: A session whose database cannot be read is unavailable, not a fault of the view.
_STATUS_CODES = {
    "SESSION_NOT_FOUND": 404,
    "PLAN_NOT_FOUND": 404,
    "VALIDATION_ERROR": 400,
    "DATABASE_ERROR": 503,
}


def templates() -> jinja2.Environment:
    """The page templates, shipped as package data; every value is escaped unless marked safe."""
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("nineplan_adapters.entrypoints.web", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["stamp"] = format_timestamp
    environment.filters["iso"] = lambda at: at.astimezone(dt.UTC).isoformat()
    environment.filters["duration"] = duration
    environment.filters["ago"] = ago
    environment.filters["held_for"] = held_for
    environment.filters["first_line"] = first_line
    environment.filters["marked"] = marked
    environment.globals["stale_line"] = stale_line
    environment.globals["tools"] = DEFAULT_NAMES.fields  # web_app sets the configured names
    return environment


def duration(then: dt.datetime, now: dt.datetime) -> str:
    """How long from `then` to `now`, for people: `4 min`, `2 h 5 min`, `3 d 4 h` (live.js
    writes the same as time passes)."""
    hour, two_days = 60, 48
    minutes = minutes_since(then, now)
    if minutes < 1:
        return "under a minute"
    if minutes < hour:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, hour)
    if hours < two_days:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


#: A `<time>` element: the UTC time in `datetime` and `title` (shown on hover), the text for
#: people; live.js counts `data-ago` ("4 min ago") and `data-since` ("4 min") on as the page
#: stays open.
_TIMES = {
    "ago": markupsafe.Markup('<time datetime="{0}" title="{0}" data-ago>{1}</time>'),
    "since": markupsafe.Markup('<time datetime="{0}" title="{0}" data-since>{1}</time>'),
}


def _time(at: dt.datetime, text: str, kind: str) -> markupsafe.Markup:
    """`text` about `at` in a `<time>` of `kind` (`ago` or `since`), every value escaped."""
    return _TIMES[kind].format(format_timestamp(at), text)


def ago(at: dt.datetime, now: dt.datetime) -> markupsafe.Markup:
    """`at` relative to `now` for people, `4 min ago`, as a `<time>` carrying the UTC time."""
    return _time(at, f"{duration(at, now)} ago", "ago")


def held_for(at: dt.datetime, now: dt.datetime) -> markupsafe.Markup:
    """How long since `at`, `4 min` (how long a plan has been held), as a `<time>`."""
    return _time(at, duration(at, now), "since")


def first_line(text: str | None) -> str:
    """The first line of a text that is not blank ("" for none): an outcome on a card."""
    return next((line.strip() for line in (text or "").splitlines() if line.strip()), "")


def marked(snippet: str) -> Iterator[tuple[str, bool]]:
    """Split a search snippet into (text, matched) parts, so the template can escape each."""
    start, end = SNIPPET_MARKS
    for index, part in enumerate(snippet.replace(end, start).split(start)):
        if part:
            yield part, index % 2 == 1


@attrs.frozen
class QueuePage:
    """One page of the queue: `number` of `count`, ranks `first` to `last`."""

    entries: Sequence[QueueEntry]
    number: int
    count: int

    @classmethod
    def of(cls, queue: list[QueueEntry], number: int) -> "QueuePage":
        count = max(1, math.ceil(len(queue) / PAGE_SIZE))
        number = min(max(1, number), count)
        return cls(queue[(number - 1) * PAGE_SIZE : number * PAGE_SIZE], number, count)

    @property
    def first(self) -> int:
        return self.entries[0].rank if self.entries else 1

    @property
    def last(self) -> int:
        return self.entries[-1].rank if self.entries else 0


@attrs.frozen
class JournalPage:
    """Up to JOURNAL_LIMIT events, newest first: the newest ones, or those before `before`."""

    events: Sequence[Event | UnreadableEvent]
    before: int | None = None

    @property
    def older(self) -> int | None:
        """The `before` of the next older page, or None when this page reaches event 1."""
        return self.events[-1].seq if self.events and self.events[-1].seq > 1 else None

    @property
    def newer(self) -> int | None:
        """The `before` of the next newer page (None: this is the newest page, or that one
        is)."""
        if self.before is None or not self.events:
            return None
        return self.events[0].seq + 1 + JOURNAL_LIMIT


@attrs.frozen
class Finish:
    """A finished plan on the board with the journal's event that finished it (when, who,
    and for a discard the reason)."""

    plan: Plan
    event: Event

    @property
    def reason(self) -> str:
        reason = self.event.detail.get("reason")
        return reason if isinstance(reason, str) else (self.plan.discard_reason or "")

    @property
    def by(self) -> str:
        """Who finished it, for people: `a person`, `the agent`, `worker w1`."""
        worker = self.event.detail.get("worker")
        if self.event.actor == "person":
            return "a person"
        return f"worker {worker}" if isinstance(worker, str) else "the agent"


@attrs.frozen
class DoneColumn:
    """The board's Done column: recently completed plans, and the folded list of recently
    discarded or dropped ones, each newest first."""

    completed: Sequence[Finish] = ()
    discarded: Sequence[Finish] = ()


@attrs.define
class Reads:
    """Every read the view makes, in one place (so each can switch to a better call)."""

    service: NinePlan

    async def sessions(
        self, names: list[str] | None = None, *, archived: bool = False
    ) -> SessionListing:
        """The session list's lines, unreadable sessions included; archived ones if asked."""
        return await self.service.catalogue(names, archived=archived)

    async def state(self, name: str) -> SessionState:
        return await self.service.session_state(name)

    async def search(self, name: str, query: str) -> list[HistoryMatch]:
        return await self.service.search_history(name, query, SEARCH_RESULTS, snippets=True)

    async def plan(self, name: str, plan_id: str) -> Plan:
        """Any plan, whatever its status, as stored."""
        return await self.service.get_plan(name, plan_id)

    async def file_text(self, name: str, plan_id: str) -> str:
        return await self.service.plan_file_text(name, plan_id)

    async def active_files(self, name: str, state: SessionState) -> dict[str, str]:
        """The file text of every active plan, by id (the notes its worker writes)."""
        texts: dict[str, str] = {}
        for hold in state.active_plans:
            try:
                texts[hold.plan.id] = await self.file_text(name, hold.plan.id)
            except PlanNotFoundError:  # finished between the two reads: the next tick shows it
                texts[hold.plan.id] = ""
        return texts

    async def done(self, name: str) -> "DoneColumn":
        """The board's Done column: the DONE_LIMIT most recently completed plans and the
        DONE_LIMIT most recently discarded or dropped ones, newest first, from the journal
        (a few rows read, however long the history)."""
        completed = await self._finished(name, EventKind.PLAN_COMPLETED)
        discarded = await self._finished(name, EventKind.PLAN_DISCARDED)
        plans = await self.service.get_plans(
            name, [event.plan_id for event in (*completed, *discarded) if event.plan_id]
        )
        return DoneColumn(
            completed=[Finish(plans[e.plan_id], e) for e in completed if e.plan_id in plans],
            discarded=[Finish(plans[e.plan_id], e) for e in discarded if e.plan_id in plans],
        )

    async def _finished(self, name: str, kind: EventKind) -> list[Event]:
        query = EventQuery(last=DONE_LIMIT, kinds=frozenset({kind}))
        events = await self.service.journal(name, query)
        return [event for event in reversed(events) if isinstance(event, Event)]

    async def counted(
        self, name: str, now: dt.datetime
    ) -> Mapping[tuple[dt.datetime, EventKind], int]:
        """The completions and deferrals of the chart's 24 hours, per UTC hour, counted by
        the store (only the counts are read, however crowded the window)."""
        return await self.service.hourly_counts(name, frozenset(COUNTED), window_start(now))

    async def journal(self, name: str, before: int | None = None) -> JournalPage:
        """The newest JOURNAL_LIMIT events (before `before`, when given), newest first."""
        query = EventQuery(last=JOURNAL_LIMIT, before_seq=before)
        return JournalPage((await self.service.journal(name, query))[::-1], before)


@attrs.define
class Pages:
    """The handlers, over the use cases, the reads and the guard's tokens."""

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

    async def chart(self, name: str, state: SessionState) -> markupsafe.Markup:
        """The session's chart of its last 24 hours, rendered as the page renders it: one
        count in the database each time, so no render reads the window's events."""
        now = self.clock()
        drawing = Chart(hours(await self.reads.counted(name, now), now))
        module = self.environment.get_template("chart.html").module
        drawn = module.chart(drawing, name, state.session.task_description)  # type: ignore[attr-defined]
        return markupsafe.Markup(drawn)  # noqa: S704 - the template escaped every value in it

    async def fragments(
        self, name: str, view: "SessionView"
    ) -> tuple[dict[str, str], SessionState]:
        """The parts of a session page that change, rendered as the page renders them."""
        state = await self.reads.state(name)
        queue = QueuePage.of(state.queue, view.page)
        now, csrf = self.clock(), self.security.csrf_token
        files = await self.reads.active_files(name, state)
        journal = await self.reads.journal(name, view.before)
        parts = {
            "summary": self.fragment("summary", state),
            "chart": await self.chart(name, state),
            "active": self.fragment("active", state, files, name, csrf, now),
            "queue": self.fragment("queue", state, queue, name, csrf, view),
            "done": self.fragment("done", await self.reads.done(name), state, name, now),
            "journal": self.fragment("journal", journal, view, now),
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
            status_code or _STATUS_CODES.get(exc.category, 500),
            title="Refused" if exc.category == "VALIDATION_ERROR" else "Not available",
            category=exc.category,
            message=exc.message,
            suggestion=for_people(exc.suggestion),
            back=back,
        )

    # -- pages -----------------------------------------------------------------------

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
            state = await self.reads.state(name)
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
                state=state,
                files=await self.reads.active_files(name, state),
                done=await self.reads.done(name),
                chart=await self.chart(name, state),
                now=self.clock(),
                page=QueuePage.of(state.queue, view.page),
                view=view,
                csrf=self.security.csrf_token,
                journal=await self.reads.journal(name, view.before),
                query=query,
                matches=matches,
                search_error=search_error,
                add=add or AddForm(),
                move=move,
                live_url=f"/sessions/{name}/live{view.query()}",
            )
        except NinePlanError as exc:
            return self.error(exc, back="/")

    async def plan(self, request: Request) -> Response:
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        try:
            plan = await self.reads.plan(name, plan_id)
            text = await self.reads.file_text(name, plan_id) if plan.status in LIVE else None
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
        )

    # -- steering (POST, CSRF-checked) ---------------------------------------------------

    async def add(self, request: Request) -> Response:
        """Add the posted plan; a refused one comes back as the session page with the form
        filled in as it was sent and the reason beside the field it names."""
        name = request.path_params["name"]
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        values = {field: _text(form, field) for field in (*ADD_FIELDS, "position")}
        try:
            await self.service.add_plan(
                name,
                **{field: values[field] for field in ADD_FIELDS},
                position=values["position"] or "back",
                actor="person",
            )
        except InvalidInputError as exc:
            refused = AddForm(values, exc.field, exc.message, for_people(exc.suggestion))
            return await self.session_page(request, name, refused, status_code=400)
        except NinePlanError as exc:
            return self.error(exc, back=f"/sessions/{name}")
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    async def move(self, request: Request) -> Response:
        """Move a queued plan to the front or back (`position`), or before another (`before`,
        a plan id); a refused move comes back as the session page with the reason beside that
        plan's "move before" field."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        position = _text(form, "position") or None
        before = _text(form, "before").strip() or None
        try:
            await self.service.move_plan(name, plan_id, position, before=before)
        except NinePlanError as exc:
            if before is not None:
                refused = MoveForm(plan_id, before, exc.message, for_people(exc.suggestion))
            else:
                refused = MoveForm(
                    plan_id, position or "", exc.message, for_people(exc.suggestion), "position"
                )
            return await self._refused(request, name, exc, refused)
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    async def _refused(
        self, request: Request, name: str, exc: NinePlanError, refused: "MoveForm"
    ) -> Response:
        """The session page again, the card's refused form filled in with the reason beside
        it (a session that cannot be read gets the error page, as the page itself does)."""
        status = _steer_status(exc) or _STATUS_CODES.get(exc.category, 400)
        return await self.session_page(request, name, status_code=status, move=refused)

    async def edit_page(self, request: Request) -> Response:
        """The edit form of a queued plan: its sections as its file holds them now, and the
        revision they are; the active plan or a finished one is refused with the reason."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        try:
            plan = await self.reads.plan(name, plan_id)
            if plan.status is PlanStatus.ACTIVE:
                raise PlanHeldByAgentError(plan.id)
            if plan.status is not PlanStatus.QUEUED:
                raise PlanNotFoundError(plan_id, kind="queued")
            written = await self.service.plan_as_written(name, plan_id)
        except NinePlanError as exc:
            return self.error(exc, back=f"/sessions/{name}", status_code=_steer_status(exc))
        values = {field: getattr(written.content, field) for field in ADD_FIELDS}
        edit = EditForm(values, revision=plan_revision(written.content))
        return self._edit_form(name, plan_id, edit)

    async def edit(self, request: Request) -> Response:
        """Save a person's edit of a queued plan; a refused one comes back as the edit form,
        filled in as it was sent, with the reason beside the field it names (or above the
        form: the plan changed since it was opened)."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        # A browser sends a textarea's line ends as CRLF: the plan keeps LF, as a file does.
        values = {field: _text(form, field).replace("\r\n", "\n") for field in ADD_FIELDS}
        revision = _text(form, "revision") or None
        try:
            await self.service.edit_plan(name, plan_id, values, revision=revision)
        except (InvalidInputError, PlanChangedError) as exc:
            field = exc.field if isinstance(exc, InvalidInputError) else None
            refused = EditForm(
                values, field, exc.message, for_people(exc.suggestion), revision=revision or ""
            )
            return self._edit_form(name, plan_id, refused, status_code=400)
        except NinePlanError as exc:
            return self.error(exc, back=f"/sessions/{name}", status_code=_steer_status(exc))
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    def _edit_form(
        self, name: str, plan_id: str, edit: "EditForm", status_code: int = 200
    ) -> HTMLResponse:
        return self.render(
            "edit.html",
            status_code,
            name=name,
            plan_id=plan_id,
            edit=edit,
            csrf=self.security.csrf_token,
        )

    async def drop(self, request: Request) -> Response:
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        reason = _text(form, "reason")
        try:
            await self.service.drop_plan(name, plan_id, reason)
        except NinePlanError as exc:
            refused = MoveForm(plan_id, reason, exc.message, for_people(exc.suggestion), "reason")
            return await self._refused(request, name, exc, refused)
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    async def release(self, request: Request) -> Response:
        """A person puts an active plan back at the front of the queue (its file's edits kept)."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        try:
            await self.service.release_plan(name, plan_id)
        except NinePlanError as exc:
            return self.error(exc, back=f"/sessions/{name}", status_code=_steer_status(exc))
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    # -- the token -----------------------------------------------------------------------

    async def login_page(self, request: Request) -> Response:
        if self.security.token is None:
            return RedirectResponse("/", status_code=303)
        return self.render(
            "login.html",
            csrf=self.security.csrf_token,
            next=_local(request.query_params.get("next")),
            wrong=False,
        )

    async def login(self, request: Request) -> Response:
        form = await self._form(request)
        if isinstance(form, Response):
            return form
        target = _local(_text(form, "next"))
        if not self.security.token_ok(form.get("token")):
            return self.render(
                "login.html", 401, csrf=self.security.csrf_token, next=target, wrong=True
            )
        response = RedirectResponse(target, status_code=303)
        self.security.sign_in(response)
        return response

    async def _form(self, request: Request) -> FormData | Response:
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
                back=_local(request.url.path.rsplit("/plans", 1)[0]),
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


#: The add form's text fields, in the order the use case takes them.
ADD_FIELDS = ("context", "goal", "approach", "success_criteria", "inputs", "outputs")


@attrs.frozen
class AddForm:
    """The add form as the page shows it: empty, or as a person sent it with the reason it
    was refused and the field that reason names (None when it names none of the form's)."""

    values: Mapping[str, str] = attrs.field(factory=dict)
    field: str | None = None
    message: str | None = None
    #: What to do about it, in the words of the page's controls.
    suggestion: str | None = None

    def value(self, field: str) -> str:
        return self.values.get(field, "")

    def refuses(self, field: str) -> bool:
        """Whether the refusal is about `field` (its reason is shown beside it)."""
        return self.message is not None and self.field == field

    @property
    def general(self) -> str | None:
        """A refusal about none of the form's fields (a full queue): shown above them."""
        named = self.field in {*ADD_FIELDS, "position"}
        return None if self.message is None or named else self.message


@attrs.frozen
class MoveForm:
    """A queued card's form as a person sent it, refused: which plan, which field (`before`,
    `reason` for a drop, `position` for to front or back) and what was typed in it, why, and
    what to do about it."""

    plan_id: str
    before: str
    message: str
    suggestion: str | None = None
    field: str = "before"


@attrs.frozen
class EditForm(AddForm):
    """The edit form of a queued plan: its sections (as the file holds them, or as a person
    sent them), the `revision` they were opened at, and, when refused, the reason."""

    revision: str = ""


def _text(form: FormData, field: str) -> str:
    value = form.get(field)
    return value if isinstance(value, str) else ""


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


def _local(target: str | None) -> str:
    """Only a path on this server: never a redirect to somewhere else."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _steer_status(exc: NinePlanError) -> int | None:
    """The plan the agent holds is a conflict with the session's state; the rest as usual."""
    return 409 if isinstance(exc, PlanHeldByAgentError) else None


__all__ = [
    "ADD_FIELDS",
    "DONE_LIMIT",
    "JOURNAL_LIMIT",
    "PAGE_SIZE",
    "AddForm",
    "DoneColumn",
    "EditForm",
    "Finish",
    "JournalPage",
    "MoveForm",
    "Pages",
    "QueuePage",
    "Reads",
    "SessionView",
    "list_query",
    "listed",
]
