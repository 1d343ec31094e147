"""Gemini CLI (the pinned @google/gemini-cli) against `nineplan serve` and a stand-in for the
Gemini API: it hands the model each result's text, so the breadcrumb, the plan and the
notices must be there."""

import json
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.clients.harness import (
    PROMPT,
    TOKEN,
    World,
    check_text,
    check_what_the_model_read,
    client_command,
    documented,
    documented_shell,
    final_answer_printed,
    http_server,
    nineplan_on_path,
    walked,
)
from tests.clients.standin import Gemini, serving, steps

#: An API key's sign-in (Gemini CLI has no other that reaches a base URL of one's choosing in
#: a headless run) and nothing sent anywhere but the model's API.
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_gemini_cli_hands_the_model_the_text(world: World, transport: str):
    """With the server added as docs/clients.md shows (`gemini mcp add --scope user --trust
    9plan nineplan serve`, or over HTTP with the bearer token against `nineplan serve
    --transport http`) and the project folder trusted, `gemini -p` walks a whole session
    (create, two adds, pull, complete, resume by name; over HTTP every call names the session)
    calling the tools as `mcp_9plan_9plan_...`, and after every call its model read the text:
    the `[Session: NAME]` breadcrumb, the pulled plan and the notices."""
    gemini = client_command("gemini")
    nineplan_on_path(world)
    settings = world.home / ".gemini"
    settings.mkdir()
    (settings / "settings.json").write_text(json.dumps(SETTINGS), encoding="utf-8")
    trusted = {str(world.project): "TRUST_FOLDER"}
    (settings / "trustedFolders.json").write_text(json.dumps(trusted), encoding="utf-8")
    add: list[str | Path]
    with ExitStack() as stack:
        if transport == "http":
            url = stack.enter_context(http_server(world))
            add = [*documented_shell("gemini mcp add --scope user --trust --transport http ", url)]
        else:
            add = [gemini, *documented("gemini mcp add --scope user --trust 9plan ")[1:]]
        script = steps(named=transport == "http")
        stand_in, api = stack.enter_context(serving(Gemini(), script))
        env = world.env(
            GOOGLE_GEMINI_BASE_URL=api, GEMINI_API_KEY="stand-in-key", NINEPLAN_HTTP_TOKEN=TOKEN
        )
        world.run(add, env)
        done = world.run([gemini, "-p", PROMPT], env)
    final_answer_printed(done)
    names = stand_in.names(stand_in.conversation()[0].body)
    assert names["session_create"] == "mcp_9plan_9plan_session_create"
    session = walked(stand_in)
    check_what_the_model_read(session)
    check_text(session)
