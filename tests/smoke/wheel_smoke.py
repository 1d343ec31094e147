"""What a user gets from `pip install nineplan`: run with the Python of a venv that has the wheel.

`make wheel-check` builds the wheel, installs it (not editable) into a scratch venv and runs this
script there, from outside the source tree, so that only the installed package is importable.
It checks `nineplan --version`, `nineplan demo`, a stdio session through the SDK client, the
web view (`nineplan ui` serving `/`, a session page and its script) and,
when NINEPLAN_TEST_DATABASE_URL names a test PostgreSQL server, a session kept there.
Exit code 0 when everything worked; otherwise the first failure is printed.
"""

import os
import subprocess
import sys
import tempfile
import uuid
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

BIN = Path(sys.executable).parent
NINEPLAN = str(BIN / "nineplan")
SOURCE = Path(__file__).resolve().parents[2] / "src"
PLAN = {
    "context": "A smoke test of the installed wheel.",
    "goal": "Prove the installed package works",
    "approach": "Add, pull and complete one plan.",
    "success_criteria": "The plan is found in history.",
}


def check_package_data(source: Path, installed: Path) -> None:
    """Every non-Python file of the source packages is installed too."""
    missing = [
        str(path.relative_to(source))
        for package in ("nineplan_core", "nineplan_adapters")
        for path in sorted((source / package).rglob("*"))
        if path.is_file()
        and path.suffix not in {".py", ".pyc"}
        and not installed.joinpath(path.relative_to(source)).is_file()
    ]
    if missing:
        fail("package data", "not in the wheel: " + ", ".join(missing))


def fail(what: str, detail: str) -> None:
    sys.exit(f"wheel smoke test FAILED: {what}\n{detail}")


def environment(sessions: Path, **extra: str) -> dict[str, str]:
    keep = {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}
    return {**keep, "NINEPLAN_SESSIONS_PATH": str(sessions), "NINEPLAN_LOG_LEVEL": "warn", **extra}


def run(sessions: Path, *arguments: str, **extra: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [NINEPLAN, *arguments],
        env=environment(sessions, **extra),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        fail(f"nineplan {' '.join(arguments)} exited {done.returncode}", done.stdout + done.stderr)
    return done


async def session(sessions: Path, **extra: str) -> str:
    """A whole plan lifecycle through `nineplan serve` on stdio; returns the session name."""
    params = StdioServerParameters(
        command=NINEPLAN, args=["serve"], env=environment(sessions, **extra)
    )
    async with Client(params, mode="legacy") as client:

        async def call(tool: str, **arguments: Any) -> dict[str, Any]:
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                fail(f"{tool} returned an error", str(result.content))
            return result.structured_content or {}

        name = str((await call("9plan_session_create", task_description="smoke"))["session_name"])
        await call("9plan_queue_add", **PLAN)
        await call("9plan_queue_pull")
        await call("9plan_plan_complete", outcome="The installed package works.")
        if len((await call("9plan_history_search", query="installed"))["matches"]) != 1:
            fail("history_search", "the completed plan was not found")
        if not (await call("9plan_admin_validate"))["valid"]:
            fail("admin_validate", "the session is not valid")
    return name


async def postgres_session(url: str, sessions: Path) -> None:
    """The same session kept in PostgreSQL (a fresh schema, dropped after)."""
    import asyncpg  # type: ignore[import-not-found,unused-ignore] # a runtime dependency of nineplan

    schema = f"smoke_{uuid.uuid4().hex[:12]}"
    connection = await asyncpg.connect(url)
    try:
        await connection.execute(f"CREATE SCHEMA {schema}")
        database = f"{url}{'&' if '?' in url else '?'}search_path={schema}"
        name = await session(sessions, NINEPLAN_DATABASE_URL=database)
        listed = run(sessions, "sessions", NINEPLAN_DATABASE_URL=database).stdout
        if name not in listed:
            fail("nineplan sessions on PostgreSQL", listed)
    finally:
        await connection.execute(f"DROP SCHEMA {schema} CASCADE")
        await connection.close()


async def web_view(sessions: Path, name: str) -> None:
    """`nineplan ui` serves its pages, templates and script from the installed package."""
    import socket
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    process = subprocess.Popen(
        [NINEPLAN, "ui", "--port", str(port)],
        env=environment(sessions),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        with anyio.fail_after(30):
            while True:
                try:
                    await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                    break
                except OSError:
                    if process.poll() is not None:
                        fail("nineplan ui", process.communicate()[1].decode())
                    await anyio.sleep(0.05)
        for path, expected in [
            ("/", f'data-session="{name}"'),
            (f"/sessions/{name}", 'data-testid="search"'),
            ("/static/live.js", "EventSource"),
        ]:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
                body = response.read().decode()
            if expected not in body:
                fail(f"nineplan ui: GET {path}", body[:500])
    finally:
        process.terminate()
        process.communicate(timeout=30)


async def main() -> None:
    import nineplan_adapters  # only to see where it was installed

    if not Path(nineplan_adapters.__file__).is_relative_to(sys.prefix):
        fail("setup", f"nineplan_adapters comes from {nineplan_adapters.__file__}, not the venv")
    check_package_data(SOURCE, Path(nineplan_adapters.__file__).parents[1])
    with tempfile.TemporaryDirectory(prefix="nineplan-smoke-") as folder:
        sessions = Path(folder) / "sessions"
        shown = run(sessions, "--version").stdout.strip()
        if shown != f"nineplan {version('nineplan')}":
            fail("nineplan --version", shown)
        demo = run(sessions, "demo").stdout
        if "Demo finished" not in demo:
            fail("nineplan demo", demo)
        name = await session(sessions)
        await web_view(sessions, name)
        print(f"wheel smoke: --version, demo, a stdio session ({name}) and the web view passed")
        if url := os.environ.get("NINEPLAN_TEST_DATABASE_URL"):
            await postgres_session(url, Path(folder) / "pg-sessions")
            print("wheel smoke: a session on PostgreSQL passed")


if __name__ == "__main__":
    if "nineplan_adapters" in sys.modules or Path.cwd().joinpath("src").is_dir():
        fail("setup", "run this from outside the source tree, with the wheel's Python")
    anyio.run(main)
