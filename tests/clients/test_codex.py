"""Codex CLI (the pinned @openai/codex) against `nineplan serve` and a stand-in for OpenAI's
Responses API: it hands the model each result's structured content, so the session's name,
the plan and the notices must be there."""

from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.clients.harness import (
    DOCUMENTED_URL,
    PROMPT,
    TOKEN,
    World,
    check_structured_content,
    check_what_the_model_read,
    client_command,
    documented_block,
    final_answer_printed,
    http_server,
    nineplan_on_path,
    structured_of,
    walked,
)
from tests.clients.standin import OpenAIResponses, serving, steps


def codex_config(url: str, server: str) -> str:
    """A model provider on the stand-in (the Responses API), then `server`: a block of
    docs/clients.md for Codex."""
    return (
        'model = "gpt-5.1-codex"\n'
        'model_provider = "stand-in"\n\n'
        "[model_providers.stand-in]\n"
        'name = "stand-in"\n'
        f'base_url = "{url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "OPENAI_API_KEY"\n\n' + server
    )


#: Where each set-up's sessions go: Codex hands the server no NINEPLAN_* variable unless the
#: config names it in `env_vars` (docs/clients.md); the HTTP server is the test's own.
SESSIONS = {"stdio": "home", "stdio-env-vars": "sessions", "http": "sessions"}


@pytest.mark.parametrize("transport", list(SESSIONS))
def test_codex_hands_the_model_the_structured_content(world: World, transport: str):
    """With docs/clients.md's TOML block for Codex (`required = true`; then the one with
    `env_vars`; over HTTP the one with `bearer_token_env_var`, against `nineplan serve
    --transport http`) in its config, `codex exec` offers nineplan's tools in its first
    request, walks a whole session (create, two adds, pull, complete, resume by name; over
    HTTP every call names the session), and after every call its model read the structured
    content: the session's name, the pulled plan's text and the notices, never the text. The
    first block's server does not see NINEPLAN_SESSIONS_PATH (its sessions are in the home
    folder's default), the `env_vars` one does, as the docs say."""
    codex = client_command("codex")
    nineplan_on_path(world)
    codex_home = world.root / "codex"
    codex_home.mkdir()
    with ExitStack() as stack:
        if transport == "http":
            url = stack.enter_context(http_server(world))
            block = documented_block("toml", "Codex reads the token from the variable it names:")
            server = block.replace(DOCUMENTED_URL, url)
        elif transport == "stdio":
            server = documented_block("toml", "## Codex")
        else:
            server = documented_block("toml", "or set them in an `env` table:", within=True)
        script = steps(named=transport == "http")
        stand_in, api = stack.enter_context(serving(OpenAIResponses(), script))
        (codex_home / "config.toml").write_text(codex_config(api, server), encoding="utf-8")
        env = world.env(
            CODEX_HOME=str(codex_home), OPENAI_API_KEY="sk-stand-in", NINEPLAN_HTTP_TOKEN=TOKEN
        )
        done = world.run([codex, "exec", "--skip-git-repo-check", PROMPT], env)
    final_answer_printed(done)
    first = next(ex for ex in stand_in.exchanges if ex.path == "/v1/responses")
    offered = stand_in.names(first.body).get("session_create")
    server = "9plan_http" if transport == "http" else "9plan"  # Codex's name for `9plan-http`
    assert offered == f"mcp__{server}__9plan_session_create", "the first request: no nineplan"
    session = walked(stand_in)
    check_what_the_model_read(session)
    check_structured_content(session)
    [created] = session.of("session_create")
    path = Path(str((structured_of(created) or {})["session_path"]))
    assert path.is_relative_to(getattr(world, SESSIONS[transport])), path
