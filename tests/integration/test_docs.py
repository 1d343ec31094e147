"""Every shell command shown in the README and docs/ is run here (or named as covered elsewhere)."""

import json
import re
import shlex
import subprocess
from pathlib import Path

import anyio
import pytest
from dependency_injector import providers

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, repeatable, running
from nineplan_adapters.entrypoints.cli.demo import free_port
from nineplan_adapters.storage.clock import FixedClock
from nineplan_core.journal import Actor, EventKind, NewEvent
from nineplan_core.model import Session, SessionName
from tests.fakes import PLAN
from tests.integration.servers import PROJECT, PYTHON, child_env, wait_until_listening

DOCUMENTS = [PROJECT / "README.md", *sorted((PROJECT / "docs").glob("*.md"))]
# Commands that are not nineplan's to run here, and where they are covered instead.
ELSEWHERE = {
    "make demo": "test_cli.py::test_the_demo_shows_a_whole_session runs the same demo",
    "make test": "CI runs it (.ci/run)",
    "make conformance": "CI runs it (.ci/run)",
    "claude mcp add 9plan -- nineplan serve": "a client's own command; it spawns `nineplan serve`",
    "python3 -m pip install .": "the Makefile installs the same way (pip install -e)",
    "pipx install .": "the same package install as above",
    "claude plugin marketplace add ./integrations": "a client's own command; test_clients.py checks the marketplace it reads",
    "claude plugin install nineplan@nineplan": "a client's own command; test_clients.py checks the plugin it installs",
    "claude mcp add 9plan -e NINEPLAN_WORKSPACE=/path/to/project -- nineplan serve": "a client's own command; `make clients` runs it with the real client",
    "gemini mcp add --scope user --trust 9plan nineplan serve": "a client's own command; `make clients` runs it with the real client",
    'claude mcp add --transport http 9plan http://127.0.0.1:8080/mcp --header "Authorization: Bearer $NINEPLAN_HTTP_TOKEN"': "a client's own command; `make clients` runs it with the real client",
    'gemini mcp add --scope user --trust --transport http 9plan http://127.0.0.1:8080/mcp --header "Authorization: Bearer $NINEPLAN_HTTP_TOKEN"': "a client's own command; `make clients` runs it with the real client",
    "python3 -m venv ~/.local/nineplan && ~/.local/nineplan/bin/pip install . && mkdir -p ~/.local/bin && ln -sf ~/.local/nineplan/bin/nineplan ~/.local/bin/nineplan": "it installs into the home folder; the wheel check (make wheel-check) installs into a fresh venv the same way",
    "nineplan release brave-quiet-otter k3v9x": "needs a plan an agent holds; test_takeover.py::test_a_person_releases_a_plan_from_the_command_line runs it",
    "nineplan move brave-quiet-otter b4y0l --before k3v9x": "needs a second queued plan of a known id; test_cli_board.py::test_move_before_prints_the_new_queue runs it",
    "nineplan delete brave-quiet-otter --yes": "it would remove the session the other commands read; test_catalogue.py runs delete",
}


def shell_commands() -> list[tuple[str, str]]:
    found = []
    for document in DOCUMENTS:
        for block in re.findall(r"```sh\n(.*?)```", document.read_text(), flags=re.DOTALL):
            # A line ending in a backslash goes on in the next one, as in a shell.
            for line in re.sub(r"\\\n\s*", "", block).splitlines():
                command = line.split("  #")[0].strip()
                if command:
                    found.append((document.name, command))
    return found


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A sessions folder holding brave-quiet-otter, whose plan a3x9k is completed."""
    root = tmp_path_factory.mktemp("docs") / "sessions"

    async def build() -> None:
        ids = iter(["a3x9k", "b4y0l", "c5z1m"])
        app = repeatable(build_container(Settings(sessions_path=root)), FixedClock(), seed=3)
        app.plan_ids.override(providers.Object(lambda: next(ids)))
        async with running(app) as service:
            at = FixedClock()()
            await service.catalog.create(
                Session(
                    name=SessionName("brave-quiet-otter"), task_description="docs", created_at=at
                ),
                NewEvent(kind=EventKind.SESSION_CREATED, at=at, actor=Actor.AGENT),
            )
            await service.add_plan(
                "brave-quiet-otter", **{**PLAN, "goal": "Build the users table and auth"}
            )
            await service.add_plan("brave-quiet-otter", **{**PLAN, "goal": "Build the login form"})
            await service.pull_plan("brave-quiet-otter")
            await service.complete_plan(
                "brave-quiet-otter", "users table and login form; auth works"
            )

    anyio.run(build)
    return root


def test_the_docs_show_commands():
    """shell_commands finds at least eight shell commands in the README and docs/."""
    assert len(shell_commands()) >= 8


@pytest.mark.parametrize(("document", "command"), shell_commands())
def test_each_documented_command_runs(sessions: Path, document: str, command: str):
    """Each shell command in the README and docs/ runs and exits 0 (a `serve` starts listening and
    stops cleanly), or is named as covered elsewhere."""
    if command in ELSEWHERE:
        return
    words = shlex.split(command)
    env = child_env(sessions)
    while "=" in words[0]:
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    assert words[0] == "nineplan", f"{document}: no rule to run {command!r}"
    argv = [PYTHON, "-m", "nineplan_adapters", *words[1:]]
    if words[1] in {"serve", "ui"}:
        run_server(argv, env)
        return
    completed = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=120, cwd=PROJECT, check=False
    )
    assert completed.returncode == 0, f"{document}: {command}\n{completed.stderr}"


def run_server(argv: list[str], env: dict[str, str]) -> None:
    """Start a documented `nineplan serve`; it must come up and stop cleanly."""
    if argv[3] == "serve" and "--transport" not in argv:  # stdio: a closed stdin ends it at once
        completed = subprocess.run(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
            cwd=PROJECT,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        return
    port = free_port()
    argv = (
        [*argv[: argv.index("--port")], "--port", str(port)]
        if "--port" in argv
        else [*argv, "--port", str(port)]
    )
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=PROJECT
    )
    try:
        anyio.run(wait_until_listening, port, process)
        process.terminate()
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert out == b""


@pytest.mark.parametrize("document", ["README.md", "docs/configuration.md"])
def test_every_setting_is_documented(document: str):
    """The settings tables of the README and docs/configuration.md name every NINEPLAN_*
    variable Settings reads, NINEPLAN_MAX_QUEUE included."""
    from nineplan_adapters.config import setting_names

    rows = [line for line in (PROJECT / document).read_text().splitlines() if line.startswith("|")]
    table = "\n".join(rows)
    missing = [
        f"NINEPLAN_{name.upper()}"
        for name in setting_names()
        if f"`NINEPLAN_{name.upper()}`" not in table
    ]
    assert missing == []


def code_blocks(language: str) -> list[tuple[str, str]]:
    """`(page:N, text)` of every ```language block in the README and docs/, N counted from 1."""
    return [
        (f"{document.name}:{number}", block)
        for document in DOCUMENTS
        for number, block in enumerate(
            re.findall(
                rf"^```{language}\n(.*?)^```$",
                document.read_text(encoding="utf-8"),
                re.DOTALL | re.MULTILINE,
            ),
            start=1,
        )
    ]


def test_the_docs_show_python():
    """code_blocks finds the embedding guide's library example and its conformance kit, so the
    snippet test below cannot pass by finding nothing."""
    assert [where for where, _ in code_blocks("python")][:2] == ["embedding.md:1", "embedding.md:2"]


@pytest.mark.parametrize(
    ("where", "block"),
    code_blocks("python"),
    ids=lambda value: value if re.fullmatch(r"[\w.]+:\d+", value) else "",
)
def test_every_python_snippet_runs_as_written(tmp_path: Path, where: str, block: str):
    """Each Python block of the README and docs/ runs as written, in a process of its own and a
    fresh folder: a test file (one with `def test_`) under pytest, with fewer hypothesis
    examples, every test passing; any other block as a script given a sessions folder, to its end."""
    if "def test_" in block:
        test_file = tmp_path / "test_snippet.py"
        test_file.write_text(re.sub(r"max_examples=\d+", "max_examples=10", block), "utf-8")
        argv = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)]
    else:
        script = tmp_path / "snippet.py"
        script.write_text(block, encoding="utf-8")
        argv = [PYTHON, str(script), str(tmp_path / "sessions")]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path
    )
    assert done.returncode == 0, f"{where}\n{done.stdout}{done.stderr}"
    if "def test_" in block:
        assert re.search(r"^\d+ passed", done.stdout, re.MULTILINE), done.stdout
        assert "failed" not in done.stdout, done.stdout
        assert "skipped" not in done.stdout, done.stdout


def test_the_library_example_ends_valid(tmp_path: Path):
    """The embedding guide's library example ends by printing what validate found: valid."""
    script = tmp_path / "example.py"
    script.write_text(dict(code_blocks("python"))["embedding.md:1"], encoding="utf-8")
    done = subprocess.run(
        [PYTHON, str(script), str(tmp_path / "sessions")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("valid")


@pytest.mark.parametrize(
    ("where", "block"),
    code_blocks("json"),
    ids=lambda value: value if re.fullmatch(r"[\w.]+:\d+", value) else "",
)
def test_every_json_block_is_json(where: str, block: str):
    """Each JSON block the docs show (client configurations, result shapes) parses as JSON, so a
    person who copies one gets no syntax error."""
    try:
        json.loads(block)
    except json.JSONDecodeError as error:
        pytest.fail(f"{where}: {error}")


def test_deployment_names_every_postgresql_table():
    """docs/deployment.md lists every table nineplan creates in a PostgreSQL database: the
    schema files' and the migration bookkeeping's."""
    folder = PROJECT / "src" / "nineplan_adapters" / "storage" / "postgres"
    sql = "\n".join(path.read_text() for path in folder.glob("*.sql"))
    sql += (folder / "catalog.py").read_text()
    tables = set(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", sql))
    page = (PROJECT / "docs" / "deployment.md").read_text(encoding="utf-8")
    assert "nineplan_journal" in tables
    assert {table for table in tables if f"`{table}`" not in page} == set()
