"""The web view's move-before field and edit form over the real use cases, in process (HTTP
through the ASGI app): what succeeds, and refusals that come back with the reason beside the
field and change nothing."""

import html

import httpx2

from nineplan_core.revisions import plan_revision
from tests.fakes import PLAN, Backend
from tests.unit.test_steering import queue_of, session_with
from tests.unit.test_web import ORIGIN, client, csrf_of

__all__ = ["client"]  # the fixture, used by name
HEADERS = {"origin": ORIGIN}


async def test_move_before_through_the_form(backend: Backend, client: httpx2.AsyncClient):
    """The move route takes `before` (a plan id) instead of `position`; each queued entry has
    a labelled "Move before" field and an Edit link."""
    name, ids = await session_with(backend, "A", "B", "C")
    page = (await client.get(f"/sessions/{name}")).text
    assert page.count('data-testid="move-before"') == 3
    assert f'href="/sessions/{name}/plans/{ids["C"]}/edit"' in page
    moved = await client.post(
        f"/sessions/{name}/plans/{ids['C']}/move",
        data={"before": ids["A"], "csrf": csrf_of(page)},
        headers=HEADERS,
    )
    assert (moved.status_code, moved.headers["location"]) == (303, f"/sessions/{name}")
    assert await queue_of(backend, name) == ["C", "A", "B"]


async def test_a_refused_move_is_the_session_page_with_the_reason_beside_the_field(
    backend: Backend, client: httpx2.AsyncClient
):
    """Before itself or an unknown id: the session page comes back (400 or 404) with what
    was typed in that plan's field and the reason beside it; the queue is unchanged."""
    name, ids = await session_with(backend, "A", "B")
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    for before, status, reason in [
        (ids["B"], 400, "before: is the plan being moved"),
        ("zzzzz", 404, "No queued plan with id &#39;zzzzz&#39;"),
    ]:
        refused = await client.post(
            f"/sessions/{name}/plans/{ids['B']}/move",
            data={"before": before, "csrf": csrf},
            headers=HEADERS,
        )
        assert refused.status_code == status
        assert f'<h1 data-session="{name}">' in refused.text
        assert f'id="move-{ids["B"]}-error"' in refused.text
        assert reason in refused.text
        assert f'value="{before}" aria-invalid="true"' in refused.text
    assert await queue_of(backend, name) == ["A", "B"]


async def test_the_edit_form_saves_and_refuses(backend: Backend, client: httpx2.AsyncClient):
    """The edit page holds the plan's sections and revision; a saved edit redirects to the
    session page (CRLF line ends from the browser stored as LF); a blank goal or a stale
    revision comes back as the form with the typed text and the reason."""
    name, ids = await session_with(backend, "A")
    form = (await client.get(f"/sessions/{name}/plans/{ids['A']}/edit")).text
    plan = await backend.service.get_plan(name, ids["A"])
    revision = plan_revision(plan.content)
    assert f'name="revision" value="{revision}"' in form
    assert html.escape(PLAN["approach"]) in form
    sent = {**PLAN, "goal": "A, edited", "approach": "one\r\ntwo", "csrf": csrf_of(form)}
    saved = await client.post(
        f"/sessions/{name}/plans/{ids['A']}/edit", data={**sent, "revision": revision},
        headers=HEADERS,
    )  # fmt: skip
    assert (saved.status_code, saved.headers["location"]) == (303, f"/sessions/{name}")
    edited = await backend.service.get_plan(name, ids["A"])
    assert (edited.goal, edited.content.approach) == ("A, edited", "one\ntwo")
    stale = await client.post(
        f"/sessions/{name}/plans/{ids['A']}/edit",
        data={**sent, "goal": "mine", "revision": revision},
        headers=HEADERS,
    )
    assert stale.status_code == 400
    assert "changed since you opened it: goal, approach." in stale.text
    assert 'value="mine"' in stale.text
    blank = await client.post(
        f"/sessions/{name}/plans/{ids['A']}/edit",
        data={**sent, "goal": " ", "context": "kept <b>text</b>"},
        headers=HEADERS,
    )
    assert blank.status_code == 400
    assert 'id="edit-goal-error"' in blank.text
    assert "kept &lt;b&gt;text&lt;/b&gt;" in blank.text
    assert (await backend.service.get_plan(name, ids["A"])).goal == "A, edited"


async def test_the_active_or_a_finished_plan_has_no_edit_form(
    backend: Backend, client: httpx2.AsyncClient
):
    """The edit page of the active plan is refused (409, the agent's), of an unknown or a
    finished plan 404; a post to it changes nothing."""
    name, ids = await session_with(backend, "A", "B")
    await backend.service.pull_plan(name)
    await backend.service.drop_plan(name, ids["B"], "no")
    assert (await client.get(f"/sessions/{name}/plans/{ids['A']}/edit")).status_code == 409
    assert (await client.get(f"/sessions/{name}/plans/{ids['B']}/edit")).status_code == 404
    assert (await client.get(f"/sessions/{name}/plans/zzzzz/edit")).status_code == 404
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    posted = await client.post(
        f"/sessions/{name}/plans/{ids['A']}/edit",
        data={**PLAN, "goal": "no", "csrf": csrf},
        headers=HEADERS,
    )
    assert posted.status_code == 409
    assert (await backend.service.get_plan(name, ids["A"])).goal == "A"


async def test_a_refused_move_of_a_plan_off_the_first_page_says_why_above_the_queue(
    backend: Backend, client: httpx2.AsyncClient
):
    """A refused move of a plan the returned page does not list (past its first 200) is
    said above the queue, with the plan, what was typed and the reason."""
    name, ids = await session_with(backend, *(f"P{i}" for i in range(201)))
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    refused = await client.post(
        f"/sessions/{name}/plans/{ids['P200']}/move",
        data={"before": "zzzzz", "csrf": csrf},
        headers=HEADERS,
    )
    assert refused.status_code == 404
    assert (
        f"Moving <code>{ids['P200']}</code> before <code>zzzzz</code> was refused" in refused.text
    )


async def test_a_refused_drop_keeps_the_typed_reason_beside_the_field(
    backend: Backend, client: httpx2.AsyncClient
):
    """A drop whose reason is blank (spaces get past the browser's `required`) comes back as
    the session page, 400, the card's reason field holding what was typed and the reason
    beside it; nothing is dropped."""
    name, ids = await session_with(backend, "A", "B")
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    refused = await client.post(
        f"/sessions/{name}/plans/{ids['B']}/drop",
        data={"reason": "   ", "csrf": csrf},
        headers=HEADERS,
    )
    assert refused.status_code == 400
    assert 'data-testid="board"' in refused.text
    assert f'id="drop-{ids["B"]}-error" data-testid="field-error" data-field="reason"' in (
        refused.text
    )
    assert 'value="   " aria-invalid="true"' in refused.text
    assert "reason: must not be blank" in refused.text
    assert await queue_of(backend, name) == ["A", "B"]


async def test_a_card_moved_or_dropped_after_the_agent_pulled_it_says_why_above_the_queue(
    backend: Backend, client: httpx2.AsyncClient
):
    """The agent pulls a plan while a person's page still shows it queued: the person's To
    front, then Drop, come back as the session page (409) with one line above the queue
    naming the plan, what was asked and why; the reason typed for the drop is not lost
    silently (the line says it was refused), and the plan stays the agent's."""
    name, ids = await session_with(backend, "A", "B")
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    await backend.service.pull_plan(name)
    moved = await client.post(
        f"/sessions/{name}/plans/{ids['A']}/move",
        data={"position": "front", "csrf": csrf},
        headers=HEADERS,
    )
    assert moved.status_code == 409
    assert f"Moving <code>{ids['A']}</code> to the front was refused" in moved.text
    assert 'data-testid="board"' in moved.text
    dropped = await client.post(
        f"/sessions/{name}/plans/{ids['A']}/drop",
        data={"reason": "not needed", "csrf": csrf},
        headers=HEADERS,
    )
    assert dropped.status_code == 409
    assert f"Dropping <code>{ids['A']}</code> was refused" in dropped.text
    state = await backend.service.session_state(name)
    assert state.active_plan is not None
    assert state.active_plan.id == ids["A"]
    assert await queue_of(backend, name) == ["B"]
