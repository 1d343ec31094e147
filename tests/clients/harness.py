"""Running a real MCP client (installed by `make clients` into build/clients) headless, with a
home folder of its own, dummy keys, the installed `nineplan` first on PATH, and every request
that is not for loopback sent to a proxy that is not there; then checking what it handed its
model (the stand-in's records) after each call of the session."""

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import attrs
import pytest

from nineplan_adapters.entrypoints.cli.demo import free_port
from tests.clients.standin import (
    FINAL,
    OUTCOME,
    PLAN_ONE,
    PLAN_TWO,
    STEPS,
    StandIn,
    dump,
    session_name,
    structured,
)
from tests.integration.servers import PROJECT

#: Where `make clients` installs the clients (`npm ci` of tests/clients/package.json).
CLIENTS = PROJECT / "build" / "clients" / "node_modules" / ".bin"
CLIENTS_DOC = PROJECT / "docs" / "clients.md"
#: A proxy on a port nothing listens on: a client's request to anywhere but loopback fails.
NO_PROXY_THERE = "http://127.0.0.1:9"
PROMPT = "Plan the greeting module with nineplan, do the first plan, then resume the session."


def client_command(name: str) -> Path:
    """The installed client `name`; the test skips without it, with the reason shown, but under
    CI (CI=true) a missing client fails."""
    command = CLIENTS / name
    if command.exists():
        return command
    reason = f"{command.relative_to(PROJECT)} is not installed: `make clients` installs it"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


def nineplan_command() -> Path:
    """The `nineplan` the clients start: NINEPLAN_CLIENTS_SERVER (`make clients` names the
    wheel's, installed into build/wheel-venv), else the one beside this Python."""
    named = os.environ.get("NINEPLAN_CLIENTS_SERVER")
    command = Path(named) if named else Path(sys.executable).parent / "nineplan"
    assert command.is_file(), f"no nineplan command at {command}"
    return command


def documented(start: str, **replace: str) -> list[str]:
    """The command line of docs/clients.md that starts with `start`, as its words, with each
    word of `replace` (by its text) replaced: the test runs what the docs show."""
    for line in CLIENTS_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith(start):
            words = shlex.split(line)
            return [replace.get(word, word) for word in words]
    raise AssertionError(f"docs/clients.md shows no command starting {start!r}")


def documented_block(language: str, after: str, *, within: bool = False) -> str:
    """The first ```LANGUAGE block of docs/clients.md after the line `after` (`within`: after
    a line ending with `after`)."""
    text = CLIENTS_DOC.read_text(encoding="utf-8")
    start = text.index(f"{after}\n" if within else f"\n{after}\n")
    found = re.search(rf"```{language}\n(.*?)```", text[start:], flags=re.DOTALL)
    assert found, f"docs/clients.md has no {language} block after {after!r}"
    return found.group(1)


@attrs.frozen
class World:
    """A client's world: its home, the project it runs in, a folder of commands first on
    PATH (the installed `nineplan` alone), the sessions, and its environment."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def sessions(self) -> Path:
        return self.root / "sessions"

    @classmethod
    def make(cls, root: Path) -> "World":
        world = cls(root)
        for folder in (world.home, world.project, root / "bin", root / "tmp"):
            folder.mkdir(parents=True)
        (root / "bin" / "nineplan").symlink_to(nineplan_command())
        return world

    def env(self, **extra: str) -> dict[str, str]:
        """A fresh environment: nothing of the test's but the system's PATH and a locale."""
        path = os.pathsep.join([str(self.root / "bin"), str(CLIENTS), os.environ["PATH"]])
        proxies = dict.fromkeys(
            ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"), NO_PROXY_THERE
        )
        return {
            "HOME": str(self.home),
            "PATH": path,
            "TMPDIR": str(self.root / "tmp"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NINEPLAN_SESSIONS_PATH": str(self.sessions),
            **proxies,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            **extra,
        }

    def run(
        self,
        argv: Sequence[str | Path],
        env: Mapping[str, str],
        *,
        cwd: Path | None = None,
        timeout: float = 180,
    ) -> subprocess.CompletedProcess[str]:
        """`argv` in `cwd` (the project), its output captured and logged to stderr; fails
        unless it exits 0."""
        words = [str(word) for word in argv]
        started = time.monotonic()
        done = subprocess.run(
            words,
            env=dict(env),
            cwd=cwd or self.project,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        took = time.monotonic() - started
        sys.stderr.write(f"$ {shlex.join(words)}  # {took:.1f} s, exit {done.returncode}\n")
        sys.stderr.write(f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}\n")
        assert done.returncode == 0, f"{words[0]} exited {done.returncode}: {done.stderr[-2000:]}"
        return done


#: The bearer token of `nineplan serve --transport http` in the tests.
TOKEN = "stand-in-token"
#: The URL docs/clients.md's HTTP commands name.
DOCUMENTED_URL = "http://127.0.0.1:8080/mcp"


@contextmanager
def http_server(world: World) -> Iterator[str]:
    """`nineplan serve --transport http` (the installed command, NINEPLAN_HTTP_TOKEN set) on a
    free port while the block runs; yields its MCP URL."""
    port = free_port()
    env = world.env(NINEPLAN_HTTP_TOKEN=TOKEN)
    command = [str(world.root / "bin" / "nineplan"), "serve", "--transport", "http"]
    process = subprocess.Popen([*command, "--port", str(port)], env=env, cwd=world.project)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, "nineplan serve --transport http exited at start"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nineplan serve did not listen in 30 s"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def documented_shell(start: str, url: str) -> list[str]:
    """The command of docs/clients.md that starts with `start` (its continued lines joined) as
    `sh -c` runs it, so that `$NINEPLAN_HTTP_TOKEN` is the environment's; with the documented
    URL made `url`."""
    text = CLIENTS_DOC.read_text(encoding="utf-8").replace("\\\n", "")
    for command in text.splitlines():
        if command.startswith(start):
            assert DOCUMENTED_URL in command, command
            return ["sh", "-c", command.replace(DOCUMENTED_URL, url)]
    raise AssertionError(f"docs/clients.md shows no command starting {start!r}")


def nineplan_on_path(world: World) -> None:
    """The `nineplan` a client finds first is the installed one the world links."""
    found = shutil.which("nineplan", path=world.env()["PATH"])
    assert found == str(world.root / "bin" / "nineplan")


@attrs.frozen
class Session:
    """What the client handed its model after each call of the script, in order."""

    handed: list[str]

    @property
    def name(self) -> str:
        return session_name(self.handed)

    def of(self, tool: str) -> list[str]:
        """What was handed back after each call of `tool`."""
        return [
            text for (called, _), text in zip(STEPS, self.handed, strict=True) if called == tool
        ]


def walked(stand_in: StandIn) -> Session:
    """The session the client walked: each conversation request came once the previous call's
    result was handed back (request N carries N results), every call of the script was made,
    and the model's last answer was the final text."""
    conversation = stand_in.conversation()
    records = dump(stand_in.exchanges, limit=1500)
    counts = [len(stand_in.handed(ex.body)) for ex in conversation]
    assert counts[-1:] == [len(STEPS)], f"the script did not get through:\n{records}"
    assert counts == sorted(counts), records
    assert set(counts) == set(range(len(STEPS) + 1)), records
    return Session(stand_in.handed(conversation[-1].body))


def read(line: str, tool: str, handed: str) -> None:
    """The model read `line` in what the client handed back after `tool`."""
    assert line in as_text(handed), f"after {tool} the model read no {line!r}, only: {handed}"


def check_what_the_model_read(session: Session) -> None:
    """After every nineplan call the model read the session's name; after the pull the plan's
    text; and each result's notices: the name to remember after the create, the notes hint
    after the pull, the next step after the complete and after the resume."""
    name = session.name
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", name), session.handed[0]
    for (tool, _), text in zip(STEPS, session.handed, strict=True):
        read(name, tool, text)
        assert "Error:" not in text, f"{tool} failed: {text}"
    [created] = session.of("session_create")
    read("Remember this name.", "session_create", created)
    [pulled] = session.of("queue_pull")
    for line in (PLAN_ONE["goal"], "# Approach", PLAN_ONE["approach"], "# Success Criteria"):
        read(line, "queue_pull", pulled)
    read("Keep notes in its # Notes section", "queue_pull", pulled)
    [completed] = session.of("plan_complete")
    read(f"Next: {PLAN_TWO['goal']}", "plan_complete", completed)
    [resumed] = session.of("session_resume")
    read("Pull the next plan with", "session_resume", resumed)
    read(OUTCOME, "session_resume", resumed)


def as_text(handed: str) -> str:
    """`handed` with the JSON strings in it unescaped (a structured result's plan text holds
    its newlines as `\\n`)."""
    found = structured_of(handed)
    return handed if found is None else handed + "\n" + json.dumps(found, ensure_ascii=False)


def structured_of(handed: str) -> dict[str, object] | None:
    """The JSON object on a line of `handed` (the structured content a client passed as text,
    maybe after a resource link or a preamble of the client's), or None."""
    for line in handed.splitlines():
        found = structured(line)
        if found is not None:
            return dict(found)
    return None


def check_structured_content(session: Session) -> None:
    """The model read each result's structured content, not its text: a JSON object with
    `session_name` and `notices`, and no `[Session: NAME]` breadcrumb (the text's)."""
    for (tool, _), handed in zip(STEPS, session.handed, strict=True):
        found = structured_of(handed)
        assert found is not None, f"{tool}: no structured content handed back: {handed}"
        assert found.get("session_name") == session.name, f"{tool}: no session_name: {handed}"
        assert isinstance(found.get("notices"), list), f"{tool}: no notices: {handed}"
        assert "[Session: " not in handed, f"{tool}: the text was handed back: {handed}"
    notices = [structured_of(handed)["notices"] for handed in session.handed]  # type: ignore[index]
    assert any("Keep notes in its # Notes section" in str(said) for said in notices)


def check_text(session: Session) -> None:
    """The model read each result's text: the `[Session: NAME]` breadcrumb first."""
    for (tool, _), handed in zip(STEPS, session.handed, strict=True):
        assert f"[Session: {session.name}]" in handed, f"{tool}: not the text: {handed}"


def final_answer_printed(done: subprocess.CompletedProcess[str]) -> None:
    """The client printed the model's final answer: it got to the end of the conversation."""
    assert FINAL in done.stdout, done.stdout[-2000:]
