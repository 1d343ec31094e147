"""An error's suggestion is data (an Action); each way in words it in its own terms."""

import json
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.cli.suggestions import COMMAND_WORDS, for_the_terminal
from nineplan_adapters.entrypoints.console import main
from nineplan_adapters.entrypoints.mcp import build_server
from nineplan_adapters.entrypoints.mcp.results import refusal
from nineplan_adapters.entrypoints.mcp.suggestions import TOOL_WORDS, for_agents
from nineplan_adapters.entrypoints.web import web_app
from nineplan_adapters.entrypoints.web.suggestions import CONTROL_WORDS, for_people
from nineplan_core.errors import (
    DatabaseError,
    FileSystemError,
    InvalidInputError,
    InvalidTransitionError,
    NinePlanError,
    NoActivePlanError,
    PlanAlreadyActiveError,
    PlanFileFormatError,
    PlanHeldByAgentError,
    PlanNotFoundError,
    QueueEmptyError,
    QueueFullError,
    SessionExistsError,
    SessionNameRequiredError,
    SessionNotFoundError,
)
from nineplan_core.service import NinePlan
from nineplan_core.suggestions import LIBRARY_WORDS, OPERATOR_ACTIONS, Action, Suggestion, Words
from tests.fakes import PLAN, Backend, open_backend
from tests.mcp_helpers import TOOLS

SESSION = "brave-quiet-otter"
#: The use cases an embedder calls: what the library's wording names, and no other way in.
LIBRARY_CALLS = {name for name in dir(NinePlan) if "_" in name and not name.startswith("_")}
WAYS_IN: dict[str, tuple[Words, Callable[[Suggestion], str]]] = {
    "library": (LIBRARY_WORDS, str),
    "mcp": (TOOL_WORDS, for_agents),
    "cli": (COMMAND_WORDS, lambda suggestion: for_the_terminal(suggestion, SESSION)),
    "web": (CONTROL_WORDS, for_people),
}


def sample(action: Action) -> Suggestion:
    """A suggestion of `action`, with the field or detail the action needs."""
    if action is Action.CORRECT_FIELD:
        return Suggestion(action, field="success_criteria")
    if action in OPERATOR_ACTIONS:
        return Suggestion(action, detail="Free disk space, then retry.")
    if action is Action.TAKE_OVER:
        return Suggestion(action, plan_id="k3v9x")
    return Suggestion(action)


def names_a_library_call(text: str) -> bool:
    return any(re.search(rf"\b{call}\b", text) for call in LIBRARY_CALLS)


@pytest.mark.parametrize("way_in", WAYS_IN)
def test_every_way_in_words_every_action(way_in: str):
    """Each way in's table has words for every Action and for nothing else, so a new action
    cannot reach a surface unworded."""
    words, _ = WAYS_IN[way_in]
    assert set(words) == set(Action)


@pytest.mark.parametrize("action", Action, ids=lambda action: action.value)
@pytest.mark.parametrize("way_in", WAYS_IN)
def test_each_way_in_renders_each_action_in_its_own_terms(way_in: str, action: Action):
    """Every action renders on every way in as a finished sentence with its field or detail
    filled in; the library names library calls only, MCP tools that exist only, and the
    command line and the web view neither."""
    _, render = WAYS_IN[way_in]
    suggestion = sample(action)
    shown = render(suggestion)
    assert shown.endswith(".")
    assert "{" not in shown
    assert "}" not in shown
    if action is Action.CORRECT_FIELD:
        assert "success" in shown
    if action is Action.TAKE_OVER:
        assert "k3v9x" in shown
    if action in OPERATOR_ACTIONS:
        assert shown == suggestion.detail
    tools = set(re.findall(r"9plan_\w+", shown))
    if way_in == "mcp":
        assert tools <= TOOLS
    else:
        assert not tools
    if way_in != "library":
        assert not names_a_library_call(shown)


def test_the_command_line_names_the_session_of_the_command():
    """The command line's words name the session the command was given, or NAME when it
    named none."""
    see_queue = Suggestion(Action.SEE_QUEUE)
    assert for_the_terminal(see_queue, SESSION) == (
        f"`nineplan state {SESSION}` shows the queued and active plans."
    )
    assert for_the_terminal(see_queue, None).startswith("`nineplan state NAME`")
    fix = Suggestion(Action.CORRECT_FIELD, field="goal")
    assert for_the_terminal(fix, None) == "Correct goal and run the command again."
    assert for_people(fix) == "Correct the goal and submit the form again."


#: Every error's MCP suggestion, as the tools said it before suggestions became data.
AGENTS_READ = [
    (
        SessionNotFoundError("x"),
        (
            "Create a session with 9plan_session_create or resume one with 9plan_session_resume. "
            "9plan_admin_sessions lists sessions."
        ),
    ),
    (
        SessionNameRequiredError(),
        "Pass session_name on every call (9plan_admin_sessions lists them).",
    ),
    (SessionExistsError("x"), "Resume it with 9plan_session_resume or create another."),
    (PlanNotFoundError("a"), "Use 9plan_history_search to find completed plans and their ids."),
    (
        PlanNotFoundError("a", kind=""),
        "Use 9plan_session_resume to see the queued and active plans.",
    ),
    (NoActivePlanError("main"), "Pull the next plan with 9plan_queue_pull."),
    (
        PlanAlreadyActiveError("a", "main"),
        (
            "Finish it with 9plan_plan_complete, or use 9plan_plan_defer or 9plan_plan_discard, "
            "then pull again."
        ),
    ),
    (QueueEmptyError(), "Add plans with 9plan_queue_add, then 9plan_queue_pull."),
    (QueueEmptyError(completed_count=2), "Add more plans with 9plan_queue_add if work remains."),
    (InvalidInputError("goal", "bad"), "Correct goal and call again."),
    (
        QueueFullError(3),
        (
            "Work the queue down (9plan_queue_pull, then 9plan_plan_complete or 9plan_plan_discard) "
            "before adding more."
        ),
    ),
    (
        InvalidTransitionError("a", "queued", "completed"),
        "Check the session with 9plan_session_resume.",
    ),
    (
        PlanHeldByAgentError("a"),
        "Let the agent defer, complete or discard it; steer the queued plans.",
    ),
    (
        PlanFileFormatError("p"),
        "Keep the '# Section' headers intact when editing a plan file.",
    ),
    (
        FileSystemError("m"),
        "Check free disk space and permissions of the sessions folder, then retry.",
    ),
    (
        DatabaseError("m"),
        "Retry; if it persists, run 9plan_admin_validate or inspect the session database.",
    ),
]


@pytest.mark.parametrize(
    ("error", "said"), AGENTS_READ, ids=[type(error).__name__ for error, _ in AGENTS_READ]
)
def test_agents_read_the_same_suggestions_as_before(error: NinePlanError, said: str):
    """The MCP wording of each error's suggestion is byte for byte what agents read before, in
    the error result's text and its structured content."""
    assert for_agents(error.suggestion) == said
    result = refusal("9plan_queue_pull", SESSION, error)
    assert result.structured_content is not None
    assert result.structured_content["suggestion"] == said
    assert f"\n\nSuggested action: {said}" in result.content[0].text  # type: ignore[union-attr]


def test_the_library_wording_is_str_and_suggestion_text():
    """`str(exc.suggestion)` and `exc.suggestion_text` are the library's wording, naming the
    NinePlan calls an embedder makes; the action is there to switch on."""
    error = QueueEmptyError()
    assert error.suggestion == Suggestion(Action.ADD_PLANS)
    assert error.suggestion.action.value == "add_plans"
    assert str(error.suggestion) == "Add plans with add_plan, then pull_plan."
    assert error.suggestion_text == str(error.suggestion)
    assert InvalidInputError("goal", "bad").suggestion == Suggestion(
        Action.CORRECT_FIELD, field="goal"
    )


@pytest.mark.parametrize("way_in", WAYS_IN)
def test_a_plain_text_suggestion_is_kept_as_advice_on_every_way_in(way_in: str):
    """An error raised with `suggestion="..."` (an adapter written before suggestions were
    data) carries that text as advice, which every way in shows as it was given."""
    error = DatabaseError("The disk is read-only.", suggestion="Remount the disk read-write.")
    assert error.suggestion == Suggestion(Action.ADVICE, detail="Remount the disk read-write.")
    _, render = WAYS_IN[way_in]
    assert render(error.suggestion) == "Remount the disk read-write."


def test_a_field_belongs_to_correct_field_and_a_detail_to_an_operators_action():
    """A suggestion cannot carry a field unless it is to correct one, nor free text unless
    it is an operator's action (the text no way in can word for itself)."""
    with pytest.raises(ValueError, match="field"):
        Suggestion(Action.CORRECT_FIELD)
    with pytest.raises(ValueError, match="field"):
        Suggestion(Action.RETRY, field="goal")
    with pytest.raises(ValueError, match="detail"):
        Suggestion(Action.FIX_STORAGE)
    with pytest.raises(ValueError, match="detail"):
        Suggestion(Action.PULL_PLAN, detail="Pull it.")


# -- the ways in, end to end --------------------------------------------------------------


async def test_the_resume_prompt_refuses_in_the_tools_words(backend: Backend):
    """The resume prompt for a missing session names the tools to call, as tool errors do
    (it used to pass on the library's wording)."""
    async with Client(build_server(backend.service)) as client:
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("resume", {"session_name": "no-such-session"})
    said = caught.value.error.message
    assert f"Suggested action: {for_agents(Suggestion(Action.START_SESSION))}" in said
    assert not names_a_library_call(said)


@pytest.fixture
def on_disk(tmp_path: Path) -> str:
    """A session on disk with one active plan and one queued plan."""

    async def build() -> str:
        async with open_backend("sqlite", tmp_path) as backend:
            name = await backend.session("steer me")
            await backend.service.add_plan(name, **{**PLAN, "goal": "first"})
            await backend.service.pull_plan(name)
            await backend.service.add_plan(name, **{**PLAN, "goal": "second"})
        return name

    return anyio.run(build)


def test_the_command_line_suggests_commands_not_library_calls(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    on_disk: str,
    monkeypatch: pytest.MonkeyPatch,
):
    """A full queue on `nineplan add` suggests `nineplan drop`, not pull_plan; moving the
    agent's plan (--json) suggests the steering commands."""
    monkeypatch.setenv("NINEPLAN_MAX_QUEUE", "1")
    path = ["--sessions-path", str(tmp_path)]
    flags = ["--goal", "g", "--context", "c", "--approach", "a", "--success-criteria", "s"]
    assert main(["add", on_disk, *flags, *path]) == 1
    err = capsys.readouterr().err
    assert f"`nineplan drop {on_disk} PLAN_ID`" in err
    assert not names_a_library_call(err)
    active = anyio.run(_active_id, tmp_path, on_disk)
    assert main(["move", on_disk, active, "--front", "--json", *path]) == 1
    suggestion = json.loads(capsys.readouterr().out)["error"]["suggestion"]
    assert suggestion == COMMAND_WORDS[Action.LEAVE_TO_AGENT]


async def _active_id(root: Path, name: str) -> str:
    async with open_backend("sqlite", root) as backend:
        active = (await backend.service.session_state(name)).active_plan
    assert active is not None
    return active.id


@pytest.fixture
async def web(backend: Backend) -> AsyncIterator[httpx2.AsyncClient]:
    app = web_app(backend.service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        yield http


async def test_the_web_view_suggests_its_pages_and_controls(
    backend: Backend, web: httpx2.AsyncClient
):
    """A missing plan's page points to the session page, and a blank goal in the form says to
    correct it and submit again; neither names a library call."""
    name = await backend.session()
    missing = (await web.get(f"/sessions/{name}/plans/zzzzz")).text
    assert CONTROL_WORDS[Action.SEE_QUEUE] in missing
    page = (await web.get(f"/sessions/{name}")).text
    csrf = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
    assert csrf is not None
    refused = await web.post(
        f"/sessions/{name}/plans",
        data={**PLAN, "goal": " ", "csrf": csrf.group(1)},
        headers={"origin": "http://127.0.0.1:8765"},
    )
    assert refused.status_code == 400
    assert "Correct the goal and submit the form again." in refused.text
    assert not names_a_library_call(missing + refused.text)
