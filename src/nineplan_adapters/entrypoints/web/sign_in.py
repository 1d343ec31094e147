"""Signing in with the token (when the view has one): the form, and the cookie it sets."""

import attrs
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from nineplan_adapters.entrypoints.web.forms import text_of
from nineplan_adapters.entrypoints.web.pages import Pages, local_path


@attrs.define
class SignIn:
    """The sign-in page and its POST."""

    pages: Pages

    async def login_page(self, request: Request) -> Response:
        if self.pages.security.token is None:
            return RedirectResponse("/", status_code=303)
        return self.pages.render(
            "login.html",
            csrf=self.pages.security.csrf_token,
            next=local_path(request.query_params.get("next")),
            wrong=False,
        )

    async def login(self, request: Request) -> Response:
        form = await self.pages.posted(request)
        if isinstance(form, Response):
            return form
        target = local_path(text_of(form, "next"))
        if not self.pages.security.token_ok(form.get("token")):
            return self.pages.render(
                "login.html", 401, csrf=self.pages.security.csrf_token, next=target, wrong=True
            )
        response = RedirectResponse(target, status_code=303)
        self.pages.security.sign_in(response)
        return response
