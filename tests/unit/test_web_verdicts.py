"""The board's Needs you and the criteria's marks over the real use cases, in process (HTTP
through the ASGI app): a person's decision through the form, what it says after, and the
refusals (a criterion that waits for no one, a bad status or number, no CSRF token) that
change nothing."""

import re

import httpx2

from nineplan_core.verdicts import VerdictStatus
from tests.fakes import PLAN, Backend
from tests.unit.test_web import ORIGIN, client, csrf_of

__all__ = ["client"]  # the fixture, used by name
HEADERS = {"origin": ORIGIN}
CRITERIA = "- passwords are hashed\n- the form has a label\n- the page reads well"
PERSON = {"status": "needs_person", "evidence": "look at the <b>login</b> page's contrast"}


async def completed(backend: Backend, *verdicts: dict[str, object]) -> tuple[str, str]:
    """A session with one plan completed with `verdicts` (the first criterion met); its name
    and the plan's id."""
    name = await backend.session()
    await backend.service.add_plan(
        name, **{**PLAN, "goal": "Add login", "success_criteria": CRITERIA}
    )
    plan_id = (await backend.service.pull_plan(name)).plan.id
    met = {"criterion": 1, "status": "met", "evidence": "pytest tests/test_hash.py passed"}
    await backend.service.complete_plan(name, "login works", verdicts=[met, *verdicts])
    return name, plan_id


def needs_you(page: str) -> str:
    """The Needs you list of a session page ('' when the page has none)."""
    found = re.search(r'<ul data-testid="needs-you".*?</ul>', page, re.DOTALL)
    return found.group(0) if found else ""


async def test_needs_you_lists_what_waits_for_a_person_and_nothing_else(
    backend: Backend, client: httpx2.AsyncClient
):
    """A plan with criteria waiting for a person is listed under Needs you with each such
    criterion's text, its evidence (escaped) and a form posting to its criterion's address;
    the met criterion is not there; the Done card marks the criteria ✔??; with nothing
    waiting there is no heading at all."""
    name, plan_id = await completed(backend, {"criterion": 2, **PERSON}, {"criterion": 3, **PERSON})
    page = (await client.get(f"/sessions/{name}")).text
    listed = needs_you(page)
    assert "Needs you" in page
    assert f'action="/sessions/{name}/plans/{plan_id}/verdicts/2"' in listed
    assert f'action="/sessions/{name}/plans/{plan_id}/verdicts/3"' in listed
    assert "verdicts/1" not in listed
    assert "the form has a label" in listed
    assert "look at the &lt;b&gt;login&lt;/b&gt; page" in listed
    assert 'title="Criteria: 1 met, 2 needs a person, 3 needs a person"' in page
    assert ">✔??</span>" in page
    empty_name = await backend.session()
    empty = (await client.get(f"/sessions/{empty_name}")).text
    assert "Needs you" not in empty
    assert 'data-testid="needs-you"' not in empty


async def test_a_persons_unmet_through_the_form_adds_a_follow_up_and_says_so(
    backend: Backend, client: httpx2.AsyncClient
):
    """Unmet with a note: the decision is stored by a person with the note, a follow-up is
    queued at the front, and the board comes back at Needs you saying what was decided and
    naming the follow-up; the plan page shows the person's note and links the follow-up."""
    name, plan_id = await completed(backend, {"criterion": 2, **PERSON})
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    decided = await client.post(
        f"/sessions/{name}/plans/{plan_id}/verdicts/2",
        data={"status": "unmet", "note": "the label is missing", "csrf": csrf},
        headers=HEADERS,
    )
    assert decided.status_code == 303
    stored = await backend.service.get_plan(name, plan_id)
    second = stored.verdicts[1]
    assert (second.status, second.by, second.note) == (
        VerdictStatus.UNMET,
        "person",
        "the label is missing",
    )
    (follow_up,) = stored.follow_ups
    location = decided.headers["location"]
    assert location == f"/sessions/{name}?decided={plan_id}.2.unmet.{follow_up}#needs-you"
    board = (await client.get(location)).text
    assert (
        f"Criterion 2 of plan {plan_id} marked unmet: its follow-up {follow_up} is at the front"
        in board
    )
    assert needs_you(board) == ""
    plan_page = (await client.get(f"/sessions/{name}/plans/{plan_id}")).text
    assert "Marked unmet by a person" in plan_page
    assert "the label is missing" in plan_page
    assert f'href="/sessions/{name}/plans/{follow_up}" data-testid="follow-up"' in plan_page
    assert "Verdict: <strong>partial</strong>" in plan_page


async def test_a_criterion_that_waits_for_no_one_is_refused_with_the_reason(
    backend: Backend, client: httpx2.AsyncClient
):
    """The met criterion (an agent's met stands), an unknown criterion, a criterion number
    that is no number, a status other than met or unmet, an unknown plan: each is the error
    page with the reason (400, or 404 for the plan) and the verdicts stay as they were."""
    name, plan_id = await completed(backend, {"criterion": 2, **PERSON})
    csrf = csrf_of((await client.get(f"/sessions/{name}")).text)
    for path, status, code, reason in [
        (
            f"{plan_id}/verdicts/1",
            "unmet",
            400,
            f"criterion 1 of plan {plan_id} waits for no person",
        ),
        (f"{plan_id}/verdicts/9", "met", 400, f"criterion 9 of plan {plan_id} waits for no person"),
        (f"{plan_id}/verdicts/two", "met", 400, "must be a criterion&#39;s number"),
        (f"{plan_id}/verdicts/2", "maybe", 400, "must be &#39;met&#39; or &#39;unmet&#39;"),
        ("zzzzz/verdicts/2", "met", 404, "zzzzz"),
    ]:
        refused = await client.post(
            f"/sessions/{name}/plans/{path}",
            data={"status": status, "csrf": csrf},
            headers=HEADERS,
        )
        assert refused.status_code == code, path
        assert 'data-testid="error"' in refused.text
        assert reason in refused.text, path
    stored = await backend.service.get_plan(name, plan_id)
    assert [v.status for v in stored.verdicts] == [VerdictStatus.MET, VerdictStatus.NEEDS_PERSON]
    assert stored.follow_ups == ()


async def test_a_decision_without_the_csrf_token_changes_nothing(
    backend: Backend, client: httpx2.AsyncClient
):
    """A decision posted without this server's CSRF token, or with another, is refused (403)
    and the criterion still waits for a person."""
    name, plan_id = await completed(backend, {"criterion": 2, **PERSON})
    for data in ({"status": "met"}, {"status": "met", "csrf": "0" * 64}):
        refused = await client.post(
            f"/sessions/{name}/plans/{plan_id}/verdicts/2", data=data, headers=HEADERS
        )
        assert refused.status_code == 403
    stored = await backend.service.get_plan(name, plan_id)
    assert stored.verdicts[1].status is VerdictStatus.NEEDS_PERSON
