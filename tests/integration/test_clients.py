"""The client integrations: every config file parses and has what its client's documented schema
requires, and the Claude Code hook, run as the client runs it, prints the way back."""

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from mcp import Client

from tests.fakes import PLAN
from tests.integration.servers import PROJECT, child_env, stdio_server
from tests.mcp_helpers import ok

INTEGRATIONS = PROJECT / "integrations"
PLUGIN = INTEGRATIONS / "claude-code"
KEBAB = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")  # plugin and marketplace names
SERVE = {"command": "nineplan", "args": ["serve"]}


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    assert isinstance(data, dict), path
    return data


def hook_command() -> str:
    [entry] = load(PLUGIN / "hooks" / "hooks.json")["hooks"]["SessionStart"]
    [hook] = entry["hooks"]
    assert hook["type"] == "command"
    command: str = hook["command"]
    return command


#: The SessionStart sources the hook runs for: every one Claude Code has.
MATCHER = "startup|resume|clear|compact|fork"


def test_every_json_file_of_the_integrations_parses():
    """No JSON file under integrations/ is malformed, and the plugin has the three it needs."""
    found = {path.relative_to(INTEGRATIONS).as_posix() for path in INTEGRATIONS.rglob("*.json")}
    for name in found:
        load(INTEGRATIONS / name)
    assert {
        ".claude-plugin/marketplace.json",
        "claude-code/.claude-plugin/plugin.json",
        "claude-code/.mcp.json",
        "claude-code/hooks/hooks.json",
    } <= found


def test_the_plugin_manifest_and_marketplace_have_their_required_fields():
    """plugin.json: a kebab-case `name` (the one required field), a semantic version, and an
    `author` (`claude plugin validate --strict` fails without one); marketplace.json: `name`,
    `owner.name` and `plugins` whose sources hold a plugin."""
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert KEBAB.fullmatch(manifest["name"])
    assert manifest["author"]["name"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    market = load(INTEGRATIONS / ".claude-plugin" / "marketplace.json")
    assert KEBAB.fullmatch(market["name"])
    assert market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == manifest["name"]
    assert (INTEGRATIONS / entry["source"] / ".claude-plugin" / "plugin.json").is_file()


def test_the_plugin_starts_nineplan_serve_and_hooks_every_session_start():
    """.mcp.json starts `nineplan serve` on stdio and sets no NINEPLAN_WORKSPACE (Claude Code
    expands `${CLAUDE_PROJECT_DIR:-}` there to nothing; the server reads CLAUDE_PROJECT_DIR
    itself); hooks.json runs one command on SessionStart for startup, resume, clear, compact
    and fork, through `nineplan prime` for the project folder."""
    server = load(PLUGIN / ".mcp.json")["mcpServers"]["9plan"]
    assert {key: server[key] for key in ("command", "args")} == SERVE
    assert "NINEPLAN_WORKSPACE" not in server["env"]
    [entry] = load(PLUGIN / "hooks" / "hooks.json")["hooks"]["SessionStart"]
    assert entry["matcher"] == MATCHER
    assert 'nineplan prime --workspace "$CLAUDE_PROJECT_DIR"' in hook_command()


def test_the_plugins_version_is_the_packages():
    """plugin.json's version, and the manifest shown in docs/clients.md, follow the version in
    pyproject.toml: a release cannot ship a plugin that names an older package."""
    version = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["version"]
    assert load(PLUGIN / ".claude-plugin" / "plugin.json")["version"] == version
    assert f'"version": "{version}"' in (PROJECT / "docs" / "clients.md").read_text()


def test_the_configs_in_docs_clients_parse_and_start_nineplan():
    """Every JSON and TOML block in docs/clients.md parses; each server entry runs
    `nineplan serve` (or, over HTTP, names the local URL and the token's variable), and each
    hook is the plugin's command on the plugin's matcher."""
    text = (PROJECT / "docs" / "clients.md").read_text()
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL)
    servers = []
    for block in blocks:
        if '"..."' in block or ': ..."' in block:  # the manifest, abridged
            continue
        data = json.loads(block)
        servers += [*data.get("mcpServers", {}).values(), *data.get("servers", {}).values()]
        if "hooks" in data:
            [entry] = data["hooks"]["SessionStart"]
            assert entry["hooks"][0]["command"] == hook_command()
            assert entry["matcher"] == MATCHER
    for toml in re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL):
        servers += tomllib.loads(toml)["mcp_servers"].values()
    assert len(servers) >= 6
    for server in servers:
        if "url" in server:  # over HTTP, with the bearer token
            assert server["url"] == "http://127.0.0.1:8080/mcp"
            assert server["bearer_token_env_var"] == "NINEPLAN_HTTP_TOKEN"
        else:
            assert {key: server[key] for key in ("command", "args")} == SERVE


def run_hook(
    sessions: Path, project: Path, path: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    """The hook's command as Claude Code runs it: a shell, the project in CLAUDE_PROJECT_DIR,
    and the `extra` variables of the environment Claude Code runs in."""
    env = {**child_env(sessions, **extra), "PATH": path, "CLAUDE_PROJECT_DIR": str(project)}
    return subprocess.run(
        ["/bin/sh", "-c", hook_command()],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
    )


async def test_the_hook_prints_the_block_in_a_workspace_and_nothing_without_nineplan(
    tmp_path: Path,
):
    """With the installed `nineplan` on PATH the hook prints the project's block; without it
    on PATH it prints nothing and succeeds, so a session never fails to start."""
    installed = Path(sys.executable).parent / "nineplan"
    assert installed.is_file()
    sessions, project = tmp_path / "sessions", tmp_path / "project"
    project.mkdir()
    params = stdio_server(sessions)
    params.cwd = project
    async with Client(params, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
    system = "/usr/bin:/bin"
    assert shutil.which("nineplan", path=system) is None
    found = run_hook(sessions, project, f"{installed.parent}:{system}")
    assert found.returncode == 0, found.stderr
    assert f"session is {name}." in found.stdout
    assert "Design the users table" in found.stdout
    missing = run_hook(sessions, project, system)
    assert (missing.returncode, missing.stdout, missing.stderr) == (0, "", "")


def expanded(value: str, environ: dict[str, str]) -> str:
    """`value` with `${VAR}` and `${VAR:-default}` expanded from `environ`, as Claude Code expands
    a plugin's .mcp.json."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(3)
        return environ.get(name) or (default if default is not None else match.group())

    return re.sub(r"\$\{(\w+)(:-([^}]*))?\}", one, value)


async def listed_prefixes(sessions: Path, env: dict[str, str]) -> set[str]:
    """What the tool names of a stdio server with `env` start with, up to the first `_`."""
    async with Client(stdio_server(sessions, **env), mode="legacy") as client:
        tools = (await client.list_tools()).tools
    return {tool.name.split("_")[0] + "_" for tool in tools}


async def test_the_plugin_passes_the_tool_prefix_to_the_server_and_the_hook(tmp_path: Path):
    """The plugin's server takes NINEPLAN_TOOL_PREFIX from the environment Claude Code runs in,
    9plan_ when that has none; the hook, run in the same environment, names the renamed resume
    call. A client that leaves the `${...}` unexpanded still starts a server, with the default
    names."""
    template: dict[str, str] = load(PLUGIN / ".mcp.json")["mcpServers"]["9plan"]["env"]
    sessions, project = tmp_path / "sessions", tmp_path / "project"
    project.mkdir()
    user = {"NINEPLAN_TOOL_PREFIX": "nineplan_"}
    renamed = {key: expanded(value, user) for key, value in template.items()}
    assert await listed_prefixes(sessions, renamed) == {"nineplan_"}
    unset = {key: expanded(value, {}) for key, value in template.items()}
    assert await listed_prefixes(sessions, unset) == {"9plan_"}
    assert await listed_prefixes(sessions, template) == {"9plan_"}  # left unexpanded
    params = stdio_server(sessions, **renamed)
    params.cwd = project
    async with Client(params, mode="legacy") as client:
        name = (await ok(client, "nineplan_session_create"))["session_name"]
        await ok(client, "nineplan_queue_add", **PLAN)
    installed = Path(sys.executable).parent
    found = run_hook(sessions, project, f"{installed}:/usr/bin:/bin", **user)
    assert found.returncode == 0, found.stderr
    assert f'nineplan_session_resume(session_name="{name}")' in found.stdout
    assert "9plan_" not in found.stdout
