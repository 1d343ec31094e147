"""Claude Code (the pinned @anthropic-ai/claude-code) against `nineplan serve` and a stand-in for
the Anthropic API: it hands the model each result's structured content, so the session's name,
the plan and the notices must be there."""

import json
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.clients.harness import (
    PROMPT,
    TOKEN,
    World,
    check_structured_content,
    check_what_the_model_read,
    client_command,
    documented,
    documented_shell,
    final_answer_printed,
    http_server,
    nineplan_on_path,
    structured_of,
    walked,
)
from tests.clients.standin import Anthropic, StandIn, serving, steps
from tests.integration.servers import PROJECT

#: The server's tools as Claude Code names them, added by hand and by the plugin.
ALLOWED = "mcp__9plan,mcp__plugin_nineplan_9plan"


def claude_env(world: World, url: str) -> dict[str, str]:
    """Claude Code on the stand-in with a dummy key, no traffic of its own, and every MCP
    tool in the request (not deferred behind its tool search)."""
    return world.env(
        ANTHROPIC_BASE_URL=url,
        ANTHROPIC_API_KEY="sk-ant-stand-in",
        NINEPLAN_HTTP_TOKEN=TOKEN,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        ENABLE_TOOL_SEARCH="false",
    )


def claude_p(world: World, env: dict[str, str], prompt: str = PROMPT, *extra: str) -> str:
    """`claude -p PROMPT EXTRA` in the project with nineplan's tools allowed; checks it printed
    the model's final answer, and returns the conversation's id."""
    claude = client_command("claude")
    argv: list[str | Path] = [
        claude,
        "-p",
        prompt,
        "--allowedTools",
        ALLOWED,
        "--output-format",
        "json",
        *extra,
    ]
    done = world.run(argv, env)
    final_answer_printed(done)
    return str(json.loads(done.stdout)["session_id"])


@pytest.mark.parametrize("setup", ["stdio", "stdio-workspace", "http"])
def test_claude_code_hands_the_model_the_structured_content(world: World, setup: str):
    """With the server added as docs/clients.md shows (`claude mcp add 9plan -- nineplan
    serve`; with `-e NINEPLAN_WORKSPACE=/path/to/project`; or over HTTP with the bearer token,
    against `nineplan serve --transport http`), `claude -p` walks a whole session (create, two
    adds, pull, complete, resume by name; over the sessionless HTTP protocol every call names
    the session) and after every call its model read the structured content: the session's
    name, the pulled plan's text and the notices. On stdio the session records the project
    Claude Code ran in (CLAUDE_PROJECT_DIR), or the folder NINEPLAN_WORKSPACE names; over
    HTTP none, as the docs say."""
    claude = client_command("claude")
    nineplan_on_path(world)
    elsewhere = world.root / "elsewhere"
    elsewhere.mkdir()
    workspace = {"stdio": str(world.project), "stdio-workspace": str(elsewhere), "http": None}
    add: list[str | Path]
    with ExitStack() as stack:
        if setup == "http":
            url = stack.enter_context(http_server(world))
            add = [*documented_shell("claude mcp add --transport http 9plan ", url)]
        elif setup == "stdio":
            add = [claude, *documented("claude mcp add 9plan -- ")[1:]]
        else:
            named = {"NINEPLAN_WORKSPACE=/path/to/project": f"NINEPLAN_WORKSPACE={elsewhere}"}
            add = [claude, *documented("claude mcp add 9plan -e ", **named)[1:]]
        script = steps(named=setup == "http")
        stand_in, api = stack.enter_context(serving(Anthropic(), script))
        env = claude_env(world, api)
        world.run(add, env)
        claude_p(world, env)
    session = walked(stand_in)
    check_what_the_model_read(session)
    check_structured_content(session)
    [resumed] = session.of("session_resume")
    assert (structured_of(resumed) or {})["workspace"] == workspace[setup]


def test_the_plugin_serves_nineplan_and_its_hook_primes_the_next_conversation(world: World):
    """Installed as docs/clients.md shows (`claude plugin marketplace add ./integrations`
    from the repository, `claude plugin install nineplan@nineplan`), the plugin's server walks
    the session with the structured content reaching the model; in the next conversation in
    the project, the SessionStart hook's `nineplan prime` block (the session's name and the
    queued plan) is in the first request the model gets; and a fork of that conversation
    (`--resume ID --fork-session`) runs the hook again (its `fork` matcher): a plan added in
    between is in the fork's first request, which no earlier block could have shown."""
    claude = client_command("claude")
    with serving(Anthropic()) as (stand_in, url):
        env = claude_env(world, url)
        world.run([claude, *documented("claude plugin marketplace add ")[1:]], env, cwd=PROJECT)
        world.run([claude, *documented("claude plugin install ")[1:]], env)
        claude_p(world, env)
        session = walked(stand_in)
        check_what_the_model_read(session)
        check_structured_content(session)
        stand_in.script = ()  # from here on the model only answers
        primed = first_request(stand_in, lambda: claude_p(world, env, "What was I doing?"))
        assert f"This folder's session is {session.name}." in primed, primed[:3000]
        assert "Document the greeting module" in primed
        conversation = claude_p(world, env, "Where was I?")
        add = [
            "add",
            session.name,
            "--goal",
            "Ship the greeting module",
            "--context",
            "The module works.",
        ]
        world.run([world.root / "bin" / "nineplan", *add, *APPROACH], env)
        forked = first_request(
            stand_in,
            lambda: claude_p(world, env, "Go on.", "--resume", conversation, "--fork-session"),
        )
    assert "Ship the greeting module" in forked, forked[-3000:]


#: The rest of the arguments of `nineplan add`.
APPROACH = ["--approach", "Release it.", "--success-criteria", "It is released."]


def first_request(stand_in: StandIn, run: Callable[[], object]) -> str:
    """The first request with messages that `run` made the client send, as JSON text."""
    before = len(stand_in.exchanges)
    run()
    later = [ex.body for ex in stand_in.exchanges[before:] if ex.body.get("messages")]
    assert later, "the conversation sent no request"
    return json.dumps(later[0])
