"""A person's steering: add, move, edit, drop and release plans, and decide the criteria that
wait for a person (POSTs, CSRF-checked), and the edit form; a refused change comes back as its
page with the reason beside the field."""

import attrs
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from nineplan_adapters.entrypoints.web.forms import ADD_FIELDS, AddForm, EditForm, MoveForm, text_of
from nineplan_adapters.entrypoints.web.marks import Decided
from nineplan_adapters.entrypoints.web.pages import STATUS_CODES, Pages
from nineplan_adapters.entrypoints.web.suggestions import for_people
from nineplan_core.callers import PERSON
from nineplan_core.errors import (
    InvalidInputError,
    NinePlanError,
    PlanChangedError,
    PlanHeldByAgentError,
    PlanNotFoundError,
)
from nineplan_core.journal import Actor
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.revisions import plan_revision


@attrs.define
class Steering:
    """The handlers of a person's changes, over the pages they come back to when refused."""

    pages: Pages

    async def add(self, request: Request) -> Response:
        """Add the posted plan; a refused one comes back as the session page with the form
        filled in as it was sent and the reason beside the field it names."""
        name = request.path_params["name"]
        form = await self.pages.posted(request)
        if isinstance(form, Response):
            return form
        values = {field: text_of(form, field) for field in (*ADD_FIELDS, "position")}
        try:
            await self.pages.service.add_plan(
                name,
                **{field: values[field] for field in ADD_FIELDS},
                position=values["position"] or "back",
                caller=PERSON,
            )
        except InvalidInputError as exc:
            refused = AddForm(values, exc.field, exc.message, for_people(exc.suggestion))
            return await self.pages.session_page(request, name, refused, status_code=400)
        except NinePlanError as exc:
            return self.pages.error(exc, back=f"/sessions/{name}")
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    async def move(self, request: Request) -> Response:
        """Move a queued plan to the front or back (`position`), or before another (`before`,
        a plan id); a refused move comes back as the session page with the reason beside that
        plan's "move before" field."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self.pages.posted(request)
        if isinstance(form, Response):
            return form
        position = text_of(form, "position") or None
        before = text_of(form, "before").strip() or None
        try:
            await self.pages.service.move_plan(name, plan_id, position, before=before)
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
        status = _steer_status(exc) or STATUS_CODES.get(exc.category, 400)
        return await self.pages.session_page(request, name, status_code=status, move=refused)

    async def edit_page(self, request: Request) -> Response:
        """The edit form of a queued plan: its sections as its file holds them now, and the
        revision they are; the active plan or a finished one is refused with the reason."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        try:
            copy = await self.pages.reads.plan(name, plan_id)
            if copy.plan.status is PlanStatus.ACTIVE:
                raise PlanHeldByAgentError(copy.plan.id)
            if copy.plan.status is not PlanStatus.QUEUED or copy.written is None:
                raise PlanNotFoundError(plan_id, kind="queued")
            written = copy.written
        except NinePlanError as exc:
            return self.pages.error(exc, back=f"/sessions/{name}", status_code=_steer_status(exc))
        values = {field: getattr(written.content, field) for field in ADD_FIELDS}
        edit = EditForm(values, revision=plan_revision(written.content))
        return self._edit_form(name, plan_id, edit)

    async def edit(self, request: Request) -> Response:
        """Save a person's edit of a queued plan; a refused one comes back as the edit form,
        filled in as it was sent, with the reason beside the field it names (or above the
        form: the plan changed since it was opened)."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self.pages.posted(request)
        if isinstance(form, Response):
            return form
        # A browser sends a textarea's line ends as CRLF: the plan keeps LF, as a file does.
        values = {field: text_of(form, field).replace("\r\n", "\n") for field in ADD_FIELDS}
        revision = text_of(form, "revision") or None
        try:
            await self.pages.service.edit_plan(name, plan_id, values, revision=revision)
        except (InvalidInputError, PlanChangedError) as exc:
            field = exc.field if isinstance(exc, InvalidInputError) else None
            refused = EditForm(
                values, field, exc.message, for_people(exc.suggestion), revision=revision or ""
            )
            return self._edit_form(name, plan_id, refused, status_code=400)
        except NinePlanError as exc:
            return self.pages.error(exc, back=f"/sessions/{name}", status_code=_steer_status(exc))
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    def _edit_form(
        self, name: str, plan_id: str, edit: "EditForm", status_code: int = 200
    ) -> HTMLResponse:
        return self.pages.render(
            "edit.html",
            status_code,
            name=name,
            plan_id=plan_id,
            edit=edit,
            csrf=self.pages.security.csrf_token,
        )

    async def drop(self, request: Request) -> Response:
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self.pages.posted(request)
        if isinstance(form, Response):
            return form
        reason = text_of(form, "reason")
        try:
            await self.pages.service.drop_plan(name, plan_id, reason)
        except NinePlanError as exc:
            refused = MoveForm(plan_id, reason, exc.message, for_people(exc.suggestion), "reason")
            return await self._refused(request, name, exc, refused)
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    async def release(self, request: Request) -> Response:
        """A person puts an active plan back at the front of the queue (its file's edits kept)."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self.pages.posted(request)
        if isinstance(form, Response):
            return form
        try:
            await self.pages.service.release_plan(name, plan_id)
        except NinePlanError as exc:
            return self.pages.error(exc, back=f"/sessions/{name}", status_code=_steer_status(exc))
        return RedirectResponse(f"/sessions/{name}", status_code=303)

    async def decide(self, request: Request) -> Response:
        """A person's decision on a criterion that waits for one (`status` met or unmet, an
        optional `note`): back to the board's Needs you, whose address says what was decided
        and the follow-up an unmet added; a refusal is the error page with the reason."""
        name, plan_id = request.path_params["name"], request.path_params["plan_id"]
        form = await self.pages.posted(request)
        if isinstance(form, Response):
            return form
        status = text_of(form, "status")
        note = text_of(form, "note").replace("\r\n", "\n").strip() or None
        try:
            number = _criterion_number(request.path_params["n"])
            done = await self.pages.service.decide_verdict(
                name, plan_id, number, status, note=note, actor=Actor.PERSON
            )
        except NinePlanError as exc:
            return self.pages.error(exc, back=f"/sessions/{name}#needs-you")
        follow_up = done.follow_up.id if done.follow_up else ("capped" if done.capped else None)
        said = Decided(done.plan.id, number, status, follow_up)
        return RedirectResponse(f"/sessions/{name}?{said.query()}#needs-you", status_code=303)


def _criterion_number(text: str) -> int:
    """A criterion's number from the address: 1 to 9 digits.

    Raises:
        InvalidInputError: anything else.
    """
    if not (text.isascii() and text.isdigit() and len(text) <= 9):  # noqa: PLR2004 - as the core's
        raise InvalidInputError("criterion", "must be a criterion's number: 1, 2, …")
    return int(text)


def _steer_status(exc: NinePlanError) -> int | None:
    """The plan the agent holds is a conflict with the session's state; the rest as usual."""
    return 409 if isinstance(exc, PlanHeldByAgentError) else None
