"""Workspaces (docs/clients.md): recorded at creation, stored by every backend, shown in the
views."""

import sqlite3
from pathlib import Path

import httpx2
import pytest

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints import views
from nineplan_adapters.entrypoints.web import web_app
from nineplan_adapters.entrypoints.workspace import (
    WorkspaceSources,
    process_workspace,
    root_folder,
    usable_folder,
)
from nineplan_adapters.storage.priming import covers
from nineplan_adapters.storage.sqlite.connection import MIGRATIONS
from nineplan_core.errors import InvalidInputError
from tests.fakes import Backend, open_backend


async def test_a_session_keeps_its_workspace_on_every_backend(backend: Backend):
    """The workspace given at creation comes back from the state and the session list."""
    state = await backend.service.create_session("task", workspace="/work/project")
    assert state.session.workspace == "/work/project"
    name = state.session.name
    backend.service._reconciled.clear()  # read it back from storage, not from the create
    assert (await backend.service.session_state(name)).session.workspace == "/work/project"
    [summary] = await backend.service.list_sessions()
    assert summary.session.workspace == "/work/project"
    assert views.session_state(state)["workspace"] == "/work/project"
    assert views.session_item(summary)["workspace"] == "/work/project"
    if backend.kind.startswith("sqlite"):  # the copy `nineplan prime` reads without the database
        assert (backend.root / name / "workspace").read_text() == "/work/project"


async def test_a_session_without_a_workspace_has_none(backend: Backend):
    """No workspace (HTTP, or `/` and the home folder) is stored and shown as null."""
    name = await backend.session()
    state = await backend.service.session_state(name)
    assert state.session.workspace is None
    assert not (backend.root / name / "workspace").exists()
    assert views.admin_state(state)["workspace"] is None


async def test_a_workspace_with_a_nul_is_refused(backend: Backend):
    """A workspace is checked like any text before it reaches storage."""
    with pytest.raises(InvalidInputError) as caught:
        await backend.service.create_session(workspace="/a\x00b")
    assert caught.value.field == "workspace"
    assert await backend.service.list_sessions() == []


def test_the_root_and_the_home_folder_are_no_workspace(tmp_path: Path):
    """A server started in `/` or in the home folder records no workspace; elsewhere it
    records the resolved folder."""
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    assert process_workspace("/", str(home)) is None
    assert process_workspace(str(home), str(home)) is None
    assert process_workspace(str(project), str(home)) == str(project.resolve())
    assert process_workspace(str(project / ".." / "project"), str(home)) == str(project.resolve())


def test_a_process_without_a_home_folder_still_has_a_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """When the home folder cannot be found (no HOME, no passwd entry: a container run as
    another uid), the server still starts: only `/` is no workspace."""

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert process_workspace(str(tmp_path)) == str(tmp_path.resolve())
    assert process_workspace("/") is None


def test_a_workspace_covers_itself_and_its_subfolders_only():
    """`covers` matches whole path components: /a/bc is not inside /a/b."""
    assert covers("/a/b", "/a/b")
    assert covers("/a/b", "/a/b/c/d")
    assert covers("/a/b/", "/a/b/c")
    assert not covers("/a/b", "/a/bc")
    assert not covers("/a/b", "/a")


async def test_a_session_from_before_workspaces_opens_with_none(tmp_path: Path):
    """A schema-v3 database (no workspace table) is migrated on open and reads as no workspace;
    listing it before opening migrates it too."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = (await backend.service.create_session("old", workspace="/p")).session.name
    with sqlite3.connect(tmp_path / name / "session.db") as db:
        db.execute("DROP TABLE workspace")
        db.execute("PRAGMA user_version = 3")
    async with open_backend("sqlite", tmp_path) as backend:
        [summary] = await backend.service.list_sessions()
        assert (summary.session.task_description, summary.session.workspace) == ("old", None)
        state = await backend.service.session_state(name)
        assert state.session.workspace is None
    with sqlite3.connect(tmp_path / name / "session.db") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


async def test_the_web_view_shows_the_workspace(backend: Backend):
    """The session list has a workspace column, and a session's page names its workspace;
    a session without one shows none."""
    bound = (await backend.service.create_session("bound", workspace="/work/app")).session.name
    loose = await backend.session("loose")
    app = web_app(backend.service, Settings(sessions_path=backend.root))
    transport = httpx2.ASGITransport(app=app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8765") as http:
        listing = (await http.get("/")).text
        assert "<th>Workspace</th>" in listing
        assert '<td data-label="Workspace" class="workspace">/work/app</td>' in listing
        assert '<td data-label="Workspace" class="workspace">-</td>' in listing
        assert "Workspace: <code>/work/app</code>" in (await http.get(f"/sessions/{bound}")).text
        assert 'data-testid="workspace"' not in (await http.get(f"/sessions/{loose}")).text


def test_a_usable_folder_exists_and_is_neither_the_root_nor_home(tmp_path: Path):
    """usable_folder resolves an existing folder; an empty or blank value, a file, a folder
    that does not exist, `/` and the home folder are not usable."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (tmp_path / "file").write_text("x")
    assert usable_folder(str(project / "." / ".." / "project"), str(home)) == str(project)
    for value in ("", "  ", str(tmp_path / "file"), str(tmp_path / "gone"), "/", str(home)):
        assert usable_folder(value, str(home)) is None, value


def test_an_unexpanded_variable_is_no_workspace(tmp_path: Path):
    """NINEPLAN_WORKSPACE holding a variable its client did not expand is passed over, even
    when a folder of that name exists; the working directory is kept as the fallback."""
    (tmp_path / "${CLAUDE_PROJECT_DIR}").mkdir()
    for value in ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR:-}"):
        sources = WorkspaceSources.stdio(str(tmp_path / value), cwd=str(tmp_path))
        assert sources == WorkspaceSources(None, str(tmp_path.resolve())), value
    assert WorkspaceSources.stdio(str(tmp_path), cwd="/").given == str(tmp_path.resolve())


def test_a_root_is_a_local_file_url(tmp_path: Path):
    """A `file://` root gives its folder (percent-encoding decoded); another scheme, another
    host, or a folder that does not exist gives none."""
    spaced = tmp_path / "my project"
    spaced.mkdir()
    assert root_folder(spaced.as_uri()) == str(spaced.resolve())
    assert root_folder(f"file://localhost{spaced}") == str(spaced.resolve())
    for uri in (
        f"https://example.com{spaced}",
        f"file://elsewhere{spaced}",
        (tmp_path / "x").as_uri(),
    ):
        assert root_folder(uri) is None, uri
