"""NINEPLAN_TOOL_PREFIX over a real stdio server and the real CLI: every tool is renamed, and no
text an agent reads (instructions, descriptions, prompts, results, suggestions, resources,
`nineplan prime`) names a `9plan_` tool (DESIGN §4, docs/clients.md)."""

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError
from mcp.types import CallToolResult

from tests.fakes import PLAN
from tests.integration.servers import PROJECT, PYTHON, child_env, run_nineplan, stdio_server
from tests.mcp_helpers import TOOLS

PREFIX = "nineplan_"
RENAMED = {PREFIX + name.removeprefix("9plan_") for name in TOOLS}
#: A tool name under the prefix, as a text would mention it.
MENTION = re.compile(rf"\b{PREFIX}(?:session|queue|plan|history|admin)_[a-z]+")


class Agent:
    """A client under the prefix that keeps every text the server sent it."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.seen: list[str] = [client.instructions or ""]

    def keep(self, *texts: str) -> None:
        self.seen.extend(texts)

    async def call(self, short: str, **arguments: Any) -> CallToolResult:
        result = await self.client.call_tool(PREFIX + short, arguments)
        self.keep(result.model_dump_json(by_alias=True))
        return result

    async def ok(self, short: str, **arguments: Any) -> dict[str, Any]:
        result = await self.call(short, **arguments)
        assert not result.is_error, result
        return dict(result.structured_content or {})

    async def refused(self, short: str, category: str, **arguments: Any) -> str:
        result = await self.call(short, **arguments)
        assert result.is_error, result
        assert (result.structured_content or {})["category"] == category, result
        return str((result.structured_content or {})["suggestion"])


def prime(tmp_path: Path, workspace: Path, *flags: str) -> str:
    done = run_nineplan(
        tmp_path, "prime", "--workspace", str(workspace), *flags, NINEPLAN_TOOL_PREFIX=PREFIX
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    return done.stdout


async def _listings(agent: Agent) -> None:
    """tools/list, the prompts and the bootstrap prompt, kept."""
    tools = (await agent.client.list_tools()).tools
    assert {tool.name for tool in tools} == RENAMED
    prompts = await agent.client.list_prompts()
    bootstrap = await agent.client.get_prompt("bootstrap", {"task": "Add login"})
    agent.keep(
        *(tool.model_dump_json(by_alias=True) for tool in tools),
        prompts.model_dump_json(by_alias=True),
        bootstrap.model_dump_json(by_alias=True),
    )
    assert f"{PREFIX}queue_pull returns the whole plan" in (agent.client.instructions or "")


async def _workflow(agent: Agent, tmp_path: Path, workspace: Path) -> list[str]:
    """create, add, pull, defer, complete, discard, search, get, validate, sessions, state and
    resume, with the errors between; `nineplan prime` twice on the way. Returns prime's output."""
    suggestions = [await agent.refused("queue_pull", "SESSION_NOT_FOUND")]
    name = (await agent.ok("session_create", task_description="Add login"))["session_name"]
    suggestions.append(await agent.refused("queue_pull", "QUEUE_EMPTY"))
    await agent.ok("queue_add", **PLAN)
    await agent.ok("queue_add", **{**PLAN, "goal": "Build the login form"})
    await agent.ok("queue_pull")
    suggestions.append(await agent.refused("queue_pull", "PLAN_ALREADY_ACTIVE"))
    await agent.ok("plan_defer", reason="Waiting for review", position="front")
    primed = [prime(tmp_path, workspace)]  # no active plan: the block says to pull
    stuck = await agent.call("queue_pull")  # deferred once, with NINEPLAN_STUCK_DEFERS=1
    assert "may be stuck" in str(stuck.content[0])
    primed += [prime(tmp_path, workspace), prime(tmp_path, workspace, "--json")]
    done = await agent.ok("plan_complete", outcome="Wrote migrations/0002_users.sql")
    assert done["next_goal"] == "Build the login form"
    suggestions.append(await agent.refused("plan_complete", "NO_ACTIVE_PLAN", outcome="x"))
    await agent.ok("queue_pull")
    await agent.ok("plan_discard", reason="Superseded by single sign-on")
    await agent.ok("history_search", query="users migration")
    await agent.ok("history_get", plan_id=done["plan_id"])
    suggestions.append(await agent.refused("history_get", "PLAN_NOT_FOUND", plan_id="zzzzz"))
    await agent.ok("admin_validate")
    await agent.ok("admin_sessions")
    await agent.ok("admin_state")
    await agent.ok("session_resume", session_name=name)
    await agent.refused("session_resume", "SESSION_NOT_FOUND", session_name="no-such-otter")
    await agent.refused("queue_add", "VALIDATION_ERROR", **PLAN, positon="front")
    await agent.refused("queue_add", "VALIDATION_ERROR", **{**PLAN, "goal": " "})
    await agent.ok("queue_add", **PLAN)
    await _resources_and_resume(agent, name)
    assert all(MENTION.search(said) for said in suggestions[:4]), suggestions
    return primed


async def _resources_and_resume(agent: Agent, name: str) -> None:
    """The resume prompt, the resource list, a state and a plan resource, an unknown one."""
    client = agent.client
    resume = await client.get_prompt("resume", {"session_name": name})
    listed = await client.list_resources()
    agent.keep(resume.model_dump_json(by_alias=True), listed.model_dump_json(by_alias=True))
    for resource in listed.resources:
        agent.keep((await client.read_resource(resource.uri)).model_dump_json(by_alias=True))
    with pytest.raises(MCPError) as unknown:
        await client.read_resource("nineplan://sessions/no-such-otter/state")
    agent.keep(str(unknown.value.error.model_dump_json()))
    with pytest.raises(MCPError) as no_session:
        await client.get_prompt("resume", {"session_name": "no-such-otter"})
    agent.keep(no_session.value.error.message)


async def test_a_whole_workflow_under_another_tool_prefix_names_no_9plan_tool(tmp_path: Path):
    """With NINEPLAN_TOOL_PREFIX=nineplan_ every tool is listed as nineplan_*, a whole workflow
    with its errors works under those names, and nothing the server sends (instructions,
    descriptions, prompts, result texts, structured suggestions, resources) nor `nineplan
    prime` names a 9plan_ tool; every tool a text names is one tools/list lists."""
    workspace = tmp_path / "project"
    workspace.mkdir()
    server = stdio_server(
        tmp_path / "sessions", NINEPLAN_TOOL_PREFIX=PREFIX, NINEPLAN_STUCK_DEFERS="1"
    )
    server.cwd = workspace  # the session's workspace, where prime looks
    async with Client(server, mode="legacy") as client:
        agent = Agent(client)
        await _listings(agent)
        primed = await _workflow(agent, tmp_path / "sessions", workspace)
        old = await client.call_tool("9plan_queue_pull", {})
        assert old.is_error  # the old names are gone
    everything = [*agent.seen, *primed]
    assert not [text for text in everything if "9plan_" in text]
    mentioned = {match for text in everything for match in MENTION.findall(text)}
    assert mentioned <= RENAMED
    assert {f"{PREFIX}{short}" for short in ("session_create", "queue_add", "queue_pull")} <= (
        mentioned
    )
    assert "pull the next one with nineplan_queue_pull" in primed[0]
    assert json.loads(primed[2])["resume_call"].startswith("nineplan_session_resume(")


@pytest.mark.parametrize("command", [["serve"], ["prime"]])
@pytest.mark.parametrize("value", ["9plan", "Bad_", "a" * 17 + "_", "-x_"])
def test_a_tool_prefix_outside_the_pattern_is_a_configuration_error(
    tmp_path: Path, command: list[str], value: str
):
    """A NINEPLAN_TOOL_PREFIX that does not match ^[a-z0-9][a-z0-9_]{0,15}_$ (no trailing _, a
    capital, 18 characters, a leading -) stops `nineplan serve` and `nineplan prime` with one
    line naming the variable, exit code 2, and nothing on stdout."""
    done = subprocess.run(
        [PYTHON, "-m", "nineplan_adapters", *command],
        env=child_env(tmp_path, NINEPLAN_TOOL_PREFIX=value),
        stdin=subprocess.DEVNULL,  # without the check, serve would end at once, exit 0
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=PROJECT,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("nineplan: NINEPLAN_TOOL_PREFIX: must match")
    assert repr(value) in line
