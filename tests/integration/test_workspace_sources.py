"""Where a session's workspace comes from (DESIGN §9), through real server processes and the
SDK client: on stdio NINEPLAN_WORKSPACE, then the client's MCP roots, then the server's working
directory; over HTTP the roots alone. A value that is not usable is passed over."""

from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.types import ListRootsResult, Root

from nineplan_adapters.entrypoints.cli.demo import spawned_http_server
from tests.fakes import PLAN
from tests.integration.servers import run_nineplan, stdio_server
from tests.mcp_helpers import error, ok


def offering(*uris: str) -> "RootsCallback":
    """A client's roots callback that lists `uris`."""
    return RootsCallback(list(uris))


class RootsCallback:
    """What a client that declares the roots capability answers to roots/list."""

    def __init__(self, uris: list[str], delay: float = 0) -> None:
        self.uris = uris
        self.delay = delay
        self.asked = 0

    async def __call__(self, context: ClientRequestContext) -> ListRootsResult:
        del context  # the answer is the same for every request
        self.asked += 1
        await anyio.sleep(self.delay)
        return ListRootsResult(roots=[Root(uri=uri) for uri in self.uris])  # type: ignore[arg-type]


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """The project the client works in, and the folder a plugin's server may start in."""
    project, cache = tmp_path / "project", tmp_path / "plugin-cache"
    project.mkdir()
    cache.mkdir()
    return project, cache


async def created_over_stdio(
    sessions: Path, cwd: Path, *, roots: RootsCallback | None = None, **env: str
) -> str | None:
    """The workspace a stdio server started in `cwd` with `env` records for a new session
    created by a client offering `roots` (none when None)."""
    params = stdio_server(sessions, **env)
    params.cwd = cwd
    async with Client(params, mode="legacy", list_roots_callback=roots) as client:
        return await created(client)


async def created(client: Client) -> str | None:
    """The workspace of a session `client` creates, as admin_state and admin_sessions show it."""
    name = (await ok(client, "9plan_session_create"))["session_name"]
    workspace: str | None = (await ok(client, "9plan_admin_state", session_name=name))["workspace"]
    sessions = (await ok(client, "9plan_admin_sessions"))["sessions"]
    assert {s["name"]: s["workspace"] for s in sessions}[name] == workspace
    return workspace


async def test_nineplan_workspace_comes_first_on_stdio(tmp_path: Path, folders: tuple[Path, Path]):
    """A server started in the plugin's cache folder with NINEPLAN_WORKSPACE set records that
    folder, before the client's roots; `nineplan prime` then finds the session from it."""
    project, cache = folders
    sessions = tmp_path / "sessions"
    other = tmp_path / "other"
    other.mkdir()
    roots = offering(other.as_uri())
    workspace = await created_over_stdio(
        sessions, cache, roots=roots, NINEPLAN_WORKSPACE=str(project)
    )
    assert workspace == str(project.resolve())
    assert roots.asked == 0  # NINEPLAN_WORKSPACE was usable: the client was not asked
    params = stdio_server(sessions, NINEPLAN_WORKSPACE=str(project))
    params.cwd = cache
    async with Client(params, mode="legacy") as client:
        name = (await ok(client, "9plan_session_create"))["session_name"]
        await ok(client, "9plan_queue_add", **PLAN)
    found = run_nineplan(sessions, "prime", "--workspace", str(project), check=True)
    assert f"session is {name}." in found.stdout


async def test_the_clients_first_file_root_comes_next_on_stdio(
    tmp_path: Path, folders: tuple[Path, Path]
):
    """Without NINEPLAN_WORKSPACE, a client that offers roots gives the first one; a root
    folder that does not exist, a client that does not answer within the server's short wait,
    or no roots and a variable left unexpanded, leave the working directory."""
    project, cache = folders
    sessions = tmp_path / "sessions"
    roots = offering(project.as_uri(), cache.as_uri())
    assert await created_over_stdio(sessions, cache, roots=roots) == str(project.resolve())
    assert roots.asked == 1
    missing = offering((tmp_path / "gone").as_uri())
    assert await created_over_stdio(sessions, cache, roots=missing) == str(cache.resolve())
    slow = RootsCallback([project.as_uri()], delay=30)
    with anyio.fail_after(20):  # the server waits ROOTS_TIMEOUT, not for the client
        assert await created_over_stdio(sessions, cache, roots=slow) == str(cache.resolve())
    assert slow.asked == 1
    unexpanded = await created_over_stdio(
        sessions, cache, NINEPLAN_WORKSPACE="${CLAUDE_PROJECT_DIR}"
    )
    assert unexpanded == str(cache.resolve())


@pytest.mark.parametrize(
    "value",
    ["", "${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR:-}", "missing"],
)
async def test_an_unusable_nineplan_workspace_falls_through_to_the_roots(
    tmp_path: Path, folders: tuple[Path, Path], value: str
):
    """NINEPLAN_WORKSPACE empty, a variable the client left unexpanded, or a folder that does
    not exist is passed over: the client's root is the workspace."""
    project, cache = folders
    if value == "missing":
        value = str(tmp_path / "no-such-folder")
    roots = offering(project.as_uri())
    workspace = await created_over_stdio(
        tmp_path / "s", cache, roots=roots, NINEPLAN_WORKSPACE=value
    )
    assert workspace == str(project.resolve())


async def test_over_http_only_the_clients_roots_give_a_workspace(
    tmp_path: Path, folders: tuple[Path, Path]
):
    """Over HTTP a client that offers roots gets its first `file://` root as the workspace,
    whatever NINEPLAN_WORKSPACE or CLAUDE_PROJECT_DIR the server has; a client without roots
    gets none, and the create's notices tell the agent to name its folder (a 2026-07-28 client,
    which the server cannot ask for roots, likewise)."""
    project, cache = folders
    env = {"NINEPLAN_WORKSPACE": str(cache), "CLAUDE_PROJECT_DIR": str(cache)}
    async with spawned_http_server(tmp_path / "http", env=env) as url:
        roots = offering(project.as_uri())
        async with Client(url, mode="legacy", list_roots_callback=roots) as client:
            with_roots = await created(client)
        async with Client(url, mode="legacy") as client:
            without = await created(client)
    assert with_roots == str(project.resolve())
    assert roots.asked == 1
    assert without is None
    async with spawned_http_server(tmp_path / "told", env=env) as url, Client(url) as client:
        answer = await ok(client, "9plan_session_create")
    assert answer["workspace"] is None
    [hint] = [line for line in answer["notices"] if "workspace=" in line]
    assert hint.endswith('9plan_session_create(workspace="/absolute/path").')


async def test_a_plugin_server_with_an_empty_nineplan_workspace_takes_claude_project_dir(
    tmp_path: Path, folders: tuple[Path, Path]
):
    """As Claude Code starts the plugin's server: NINEPLAN_WORKSPACE empty (it expands
    `${CLAUDE_PROJECT_DIR:-}` to nothing), CLAUDE_PROJECT_DIR the project and the working
    directory the plugin's cache folder. The session binds the project, before the client's
    roots (not asked); a CLAUDE_PROJECT_DIR that is not usable is passed over."""
    project, cache = folders
    other = tmp_path / "other"
    other.mkdir()
    roots = offering(other.as_uri())
    workspace = await created_over_stdio(
        tmp_path / "s", cache, roots=roots, NINEPLAN_WORKSPACE="", CLAUDE_PROJECT_DIR=str(project)
    )
    assert workspace == str(project.resolve())
    assert roots.asked == 0
    missing = str(tmp_path / "no-such-folder")
    passed_over = await created_over_stdio(
        tmp_path / "s", cache, roots=offering(other.as_uri()), CLAUDE_PROJECT_DIR=missing
    )
    assert passed_over == str(other.resolve())


async def test_session_create_names_its_workspace_on_every_transport(
    tmp_path: Path, folders: tuple[Path, Path]
):
    """`9plan_session_create(workspace=...)` wins over NINEPLAN_WORKSPACE and the roots on
    stdio, and over HTTP where a 2026-07-28 client gives the server no way to ask for roots;
    a folder that does not exist, `/` or a relative name (even of a folder that exists where
    the server runs) is a VALIDATION_ERROR naming `workspace`, and no session is created."""
    project, cache = folders
    params = stdio_server(tmp_path / "stdio", NINEPLAN_WORKSPACE=str(cache))
    async with Client(
        params, mode="legacy", list_roots_callback=offering(cache.as_uri())
    ) as client:
        named = await ok(client, "9plan_session_create", workspace=str(project))
        state = await ok(client, "9plan_admin_state", session_name=named["session_name"])
        assert state["workspace"] == str(project.resolve())
    async with spawned_http_server(tmp_path / "http") as url, Client(url, mode="auto") as client:
        named = await ok(client, "9plan_session_create", workspace=str(project))
        assert named["workspace"] == str(project.resolve())
        state = await ok(client, "9plan_admin_state", session_name=named["session_name"])
        assert state["workspace"] == str(project.resolve())
        for bad in (str(tmp_path / "gone"), "/", "not-a-folder", "."):
            kind, body = await error(client, "9plan_session_create", workspace=bad)
            assert kind == "VALIDATION_ERROR"
            assert "workspace: " in body
        assert len((await ok(client, "9plan_admin_sessions"))["sessions"]) == 1
