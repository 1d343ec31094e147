"""The `nineplan` command: inspection commands, the demo, the embedding example, bad input."""

import json
import os
import re
import subprocess
from pathlib import Path

import anyio
import pytest

from nineplan_adapters.entrypoints.console import main
from tests.fakes import PLAN, open_backend
from tests.integration.servers import PROJECT, PYTHON, child_env, run_nineplan


@pytest.fixture
def session(tmp_path: Path) -> str:
    """A session on disk with one completed, one active and one queued plan."""

    async def build() -> str:
        async with open_backend("sqlite", tmp_path) as backend:
            name = await backend.session("inspect me")
            for goal in ["first", "second", "third"]:
                await backend.service.add_plan(name, **{**PLAN, "goal": goal})
            await backend.service.pull_plan(name)
            await backend.service.complete_plan(name, "built the penguin importer")
            await backend.service.pull_plan(name)
        return name

    return anyio.run(build)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_sessions_lists_every_session(capsys, tmp_path: Path, session: str):
    """`nineplan sessions` lists each session with its task; with --json it gives the queue length."""
    code, out, _ = run(capsys, "sessions", "--sessions-path", str(tmp_path))
    assert code == 0
    assert session in out
    assert "inspect me" in out
    code, out, _ = run(capsys, "sessions", "--sessions-path", str(tmp_path), "--json")
    assert json.loads(out)[0]["queue_length"] == 1


def test_state_shows_the_queue_and_active_plan(capsys, tmp_path: Path, session: str):
    """`nineplan state` shows the active plan and the queue; with --json the completed count."""
    code, out, _ = run(capsys, "state", session, "--sessions-path", str(tmp_path))
    assert code == 0
    assert "Active: 00002  second" in out
    assert "third" in out
    code, out, _ = run(capsys, "state", session, "--sessions-path", str(tmp_path), "--json")
    assert json.loads(out)["completed_count"] == 1


def test_show_and_search(capsys, tmp_path: Path, session: str):
    """`nineplan search` finds a completed plan by a word of its outcome, and `nineplan show` prints
    a plan (as JSON, or as text with its file)."""
    code, out, _ = run(capsys, "search", session, "penguin", "--sessions-path", str(tmp_path))
    assert (code, "00001" in out) == (0, True)
    code, out, _ = run(capsys, "show", session, "00001", "--sessions-path", str(tmp_path), "--json")
    assert json.loads(out)["outcome"] == "built the penguin importer"
    code, out, _ = run(capsys, "show", session, "00003", "--sessions-path", str(tmp_path))
    assert out.startswith("status: queued\nid: 00003\ngoal: third")
    assert "file:\n  # Context" in out


def test_validate_repairs_a_damaged_session(capsys, tmp_path: Path, session: str):
    """A deleted plan file makes validate exit 1; --repair re-renders it and exits 0."""
    (tmp_path / session / "plans" / "00003.txt").unlink()
    (tmp_path / session / "plans" / "junk.bin").write_bytes(b"x")
    code, out, _ = run(capsys, "validate", session, "--sessions-path", str(tmp_path), "--json")
    assert code == 1
    assert json.loads(out)["invariants"]["files_match_database"] is False
    code, out, _ = run(capsys, "validate", session, "--sessions-path", str(tmp_path), "--repair")
    assert code == 0
    assert "repaired: rendered 00003.txt" in out
    assert "repaired: recovered junk.bin" in out
    assert (tmp_path / session / "recovered" / "junk.bin").exists()


def test_a_missing_session_is_one_line_and_exit_2(capsys, tmp_path: Path):
    """No such session is exit 2 with the error and what to do; a malformed name is exit 1."""
    code, _, err = run(capsys, "state", "no-such-session", "--sessions-path", str(tmp_path))
    assert code == 2
    assert err == (
        "nineplan: SESSION_NOT_FOUND: No session named 'no-such-session' exists.\n"
        "  `nineplan sessions` lists every session.\n"
    )
    code, _, err = run(capsys, "state", "../etc", "--sessions-path", str(tmp_path))
    assert code == 1
    assert "VALIDATION_ERROR" in err


def test_a_bad_setting_exits_2_naming_the_variable(tmp_path: Path):
    """`nineplan serve` with a bad NINEPLAN_LOG_LEVEL exits 2, names the variable on stderr and
    writes nothing to stdout."""
    completed = run_nineplan(tmp_path, "serve", timeout=60, NINEPLAN_LOG_LEVEL="loud")
    assert completed.returncode == 2
    assert "NINEPLAN_LOG_LEVEL" in completed.stderr
    assert completed.stdout == ""


def test_version_and_help(capsys):
    """--version prints `nineplan VERSION` and exits 0; --help shows examples."""
    with pytest.raises(SystemExit) as caught:
        main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.startswith("nineplan ")
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "examples:" in capsys.readouterr().out


def test_the_demo_shows_a_whole_session(tmp_path: Path):
    """The demo drives every step, resumes in a fresh server process, shows a plan file and a
    discard, and the README's uncut run has the same shape as this one."""
    completed = run_nineplan(tmp_path, "demo", check=True)
    out = completed.stdout
    for tool in [
        "9plan_session_create",
        "9plan_queue_add",
        "9plan_queue_pull",
        "9plan_plan_defer",
        "9plan_plan_complete",
        "9plan_history_search",
        "9plan_history_get",
        "9plan_admin_validate",
        "9plan_admin_state",
    ]:
        assert f"> {tool}(" in out, tool
    assert "Session is valid." in out
    assert "- Used a UUID primary key" in out  # the agent's note reached history
    assert "Error" not in out
    assert "> 9plan_session_resume(" in out.split("a fresh one starts")[1]
    assert "> 9plan_plan_discard(" in out
    assert "  | # Notes" in out  # the plan file's text
    readme = (PROJECT / "README.md").read_text()
    shown = re.search(r"```text\n(Connected to 9plan.*?)\n```", readme, flags=re.DOTALL)
    assert shown is not None
    assert _normalised(shown[1]) == _normalised(out.rstrip("\n"))


def _normalised(demo: str) -> str:
    """A demo run with what differs between runs (names, ids, folders, times) made generic."""
    session = re.search(r"\[Session: ([a-z-]+)\]", demo)
    assert session is not None
    demo = demo.replace(session[1], "SESSION")
    for number, plan_id in enumerate(dict.fromkeys(re.findall(r"Added plan (\w{5})", demo))):
        demo = re.sub(rf"\b{plan_id}\b", f"ID{number}", demo)
    demo = re.sub(r"(?:/|\$TMPDIR/)\S*?nineplan-demo-[^/]+/", "FOLDER/", demo)
    demo = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", demo)
    return re.sub(r"9plan \d+\.\d+\.\d+", "9plan VERSION", demo)


def test_the_embedding_example_runs(tmp_path: Path):
    """examples/embedding.py runs to the end: it adds, completes, finds the plan in history and
    reports the session valid."""
    completed = subprocess.run(
        [PYTHON, "examples/embedding.py", str(tmp_path)],
        env=child_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=PROJECT,
    )
    lines = completed.stdout.splitlines()
    assert "added" in lines[1]
    assert "completed" in lines[4]
    assert "history: 1." in completed.stdout
    assert lines[-1] == "valid"


def test_the_embedding_doc_shows_the_tested_example():
    """docs/embedding.md carries examples/embedding.py verbatim, so the doc runs too."""
    doc = (PROJECT / "docs" / "embedding.md").read_text()
    assert (PROJECT / "examples" / "embedding.py").read_text() in doc


def test_the_demo_runs_over_http(tmp_path: Path):
    """`nineplan demo --transport http` plays a whole session over HTTP and ends valid."""
    completed = run_nineplan(tmp_path, "demo", "--transport", "http", check=True)
    assert "over http" in completed.stdout
    assert "Session is valid." in completed.stdout


def test_search_highlights_the_matched_words(capsys, tmp_path: Path, session: str):
    """Search marks the matched word in brackets, in text and in JSON, and uses no colour when
    stdout is not a terminal."""
    code, out, _ = run(capsys, "search", session, "penguin", "--sessions-path", str(tmp_path))
    assert code == 0
    assert "built the [penguin] importer" in out
    assert "\x1b[" not in out  # not a terminal: no colour
    _, out, _ = run(
        capsys, "search", session, "penguin", "--sessions-path", str(tmp_path), "--json"
    )
    assert json.loads(out)[0]["snippet"] == "built the [penguin] importer"


def test_search_matches_short_words_whole_and_marks_cjk_parts(tmp_path: Path, session: str):
    """Through the real `nineplan search`: `zebra a` does not find the penguin plan (its `a`s
    are inside words) and `AND OR NOT` does not match `importer`, while a part of CJK text is
    found with the matched text marked in the snippet."""

    async def finish() -> None:
        async with open_backend("sqlite", tmp_path) as backend:
            await backend.service.complete_plan(session, "東京の日本語版を作った")

    anyio.run(finish)
    for query in ["zebra a", "AND OR NOT"]:
        done = run_nineplan(tmp_path, "search", session, query)
        assert (done.returncode, done.stdout) == (0, "No matches.\n")
    done = run_nineplan(tmp_path, "search", session, "penguin a", "--json")
    assert [m["id"] for m in json.loads(done.stdout)] == ["00001"]
    done = run_nineplan(tmp_path, "search", session, "東京", "--json")
    [match] = json.loads(done.stdout)
    assert (match["id"], match["snippet"]) == ("00002", "[東京]の日本語版を作った")


def on_a_terminal(sessions: Path, *arguments: str, **variables: str) -> str:
    """What `nineplan ARGUMENTS` writes to a terminal (a pty); it must exit 0."""
    import pty

    leader, follower = pty.openpty()
    subprocess.run(
        [PYTHON, "-m", "nineplan_adapters", *arguments],
        env=child_env(sessions, **variables),
        stdout=follower,
        stderr=subprocess.PIPE,
        timeout=60,
        check=True,
        cwd=PROJECT,
    )
    os.close(follower)
    out = os.read(leader, 65536).decode()
    os.close(leader)
    return out


@pytest.mark.parametrize(("no_color", "coloured"), [("", True), ("1", False)])
def test_colour_on_a_terminal_unless_no_color(
    tmp_path: Path, session: str, no_color: str, coloured: bool
):
    """A terminal gets colour; NO_COLOR turns it off."""
    variables = {"NO_COLOR": no_color} if no_color else {}
    out = on_a_terminal(tmp_path, "search", session, "penguin", **variables)
    assert ("\x1b[1;33mpenguin\x1b[0m" in out) is coloured
    assert ("[penguin]" in out) is not coloured


@pytest.mark.parametrize(
    "command", ["serve", "demo", "sessions", "state", "show", "search", "validate", "release"]
)
def test_every_command_has_help_with_examples(capsys, command: str):
    """Every CLI command's --help exits 0 and shows examples that name the command."""
    with pytest.raises(SystemExit) as caught:
        main([command, "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert "examples:" in out
    assert f"nineplan {command}" in out


async def test_the_tool_reference_is_current():
    """docs/tools.md is what the live server says; regenerate it when this fails:
    python -m nineplan_adapters.entrypoints.mcp.reference > docs/tools.md"""
    from nineplan_adapters.entrypoints.mcp.reference import render

    assert (PROJECT / "docs" / "tools.md").read_text() == await render()


HOSTILE_GOAL = "Rename \x1b]0;PWNED\x07 the \x1b[2K\x1b[31mtable\x9b\u202eevil\u2066 now"


def hostile_session(root: Path) -> tuple[str, str]:
    """A session whose task, plans (completed, active, queued), a deferral's reason and a
    completed plan's outcome hold terminal controls; its name and the id of its active plan."""

    async def build() -> tuple[str, str]:
        async with open_backend("sqlite", root) as backend:
            workspace = str(root / "project")
            created = await backend.service.create_session("escape \x1b[2J me", workspace=workspace)
            name = created.session.name
            await backend.service.add_plan(name, **{**PLAN, "goal": HOSTILE_GOAL})
            await backend.service.pull_plan(name)
            await backend.service.defer_plan(name, "blocked \x1b[2K by \u202ethe table")
            await backend.service.pull_plan(name)
            await backend.service.complete_plan(name, "the table \x1b[31mrenamed\x07")
            placed = await backend.service.add_plan(name, **{**PLAN, "goal": HOSTILE_GOAL})
            await backend.service.pull_plan(name)
            await backend.service.add_plan(name, **{**PLAN, "goal": f"queued: {HOSTILE_GOAL}"})
            return name, placed.plan.id

    return anyio.run(build)


@pytest.mark.parametrize("command", ["sessions", "state", "show", "log", "search", "prime"])
def test_stored_terminal_controls_are_shown_escaped(tmp_path: Path, command: str):
    """Text an agent stored reaches the terminal with its control characters escaped (C0 but
    newline and tab, C1, the bidi controls), so it cannot set the window title, erase lines,
    recolour the text or reorder it; the commands run as a person runs them."""
    name, plan_id = hostile_session(tmp_path)
    arguments = {
        "sessions": [],
        "state": [name],
        "show": [name, plan_id],
        "log": [name],
        "search": [name, "table"],
        "prime": ["--workspace", str(tmp_path / "project")],
    }[command]
    done = run_nineplan(tmp_path, command, *arguments)
    shown = done.stdout + done.stderr
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", shown), shown
    if command in {"state", "show", "prime"}:
        assert "Rename \\x1b]0;PWNED\\x07 the \\x1b[2K" in done.stdout
        assert "\\x9b\\u202eevil\\u2066" in done.stdout
    if command == "sessions":
        assert "escape \\x1b[2J me" in done.stdout
    if command == "log":
        assert "blocked \\x1b[2K by \\u202ethe table" in done.stdout
    if command == "search":
        assert "Rename \\x1b]0;PWNED\\x07" in done.stdout


def test_json_and_export_keep_stored_text_as_it_is(tmp_path: Path):
    """`--json` escapes as JSON does (the goal reads back whole) and `export` writes the plans
    byte for byte, so that they import back to the same plans."""
    name, plan_id = hostile_session(tmp_path)
    shown = run_nineplan(tmp_path, "show", name, plan_id, "--json", check=True)
    assert json.loads(shown.stdout)["goal"] == HOSTILE_GOAL
    exported = run_nineplan(tmp_path, "export", name, check=True)
    assert HOSTILE_GOAL in exported.stdout


def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path):
    """`nineplan log NAME | head -1`: once the reader has gone, the command stops without a
    traceback, with the exit code a shell gives a command that a closed pipe ended (141)."""

    async def build() -> str:
        async with open_backend("sqlite", tmp_path) as backend:
            name = await backend.session("long")
            for number in range(1_500):
                await backend.service.add_plan(name, **{**PLAN, "goal": f"plan {number}"})
            return name

    name = anyio.run(build)
    reader = subprocess.Popen(
        [PYTHON, "-m", "nineplan_adapters", "log", name, "--limit", "10000"],
        env=child_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=PROJECT,
    )
    assert reader.stdout is not None
    assert reader.stdout.readline()
    reader.stdout.close()  # the reader goes, as `head -1` does
    _, errors = reader.communicate(timeout=60)
    assert errors == b""
    assert reader.returncode == 141


@pytest.mark.parametrize("command", ["state", "search", "sessions"])
def test_on_a_terminal_only_nineplan_colours_the_text(tmp_path: Path, command: str):
    """On a terminal the tables' bold headers and search's highlights stay colour, while the
    controls in stored text are escaped around them."""
    name, _ = hostile_session(tmp_path)
    arguments = {"state": [name], "search": [name, "table"], "sessions": []}[command]
    out = on_a_terminal(tmp_path, command, *arguments)
    assert "\x1b[1m" in out
    assert "\x1b]0;" not in out
    assert "\x1b[2K" not in out
    assert "\x1b[2J" not in out
    if command == "search":
        assert "\x1b[1;33mtable\x1b[0m" in out


@pytest.mark.parametrize(
    ("arguments", "variables", "named"),
    [
        (["serve", "--transport", "http", "--port", "99999"], {}, "--port"),
        (["ui", "--port", "70000"], {}, "--port"),
        (["serve", "--transport", "http"], {"NINEPLAN_HTTP_PORT": "99999"}, "NINEPLAN_HTTP_PORT"),
        (["state", "x"], {"NINEPLAN_LOG_LEVEL": "loud"}, "NINEPLAN_LOG_LEVEL"),
    ],
)
def test_a_bad_value_names_what_set_it(
    tmp_path: Path, arguments: list[str], variables: dict[str, str], named: str
):
    """A bad setting is one line naming the flag when the flag gave it and the variable when
    the variable did, with exit code 2."""
    done = subprocess.run(
        [PYTHON, "-m", "nineplan_adapters", *arguments],
        env=child_env(tmp_path, **variables),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=PROJECT,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"nineplan: {named}: ")
    assert len(done.stderr.strip().splitlines()) == 1


def test_validate_repair_says_each_repair_once(tmp_path: Path):
    """`nineplan validate NAME --repair` reports each repair in one line of its output, and no
    log line repeats it on stderr."""

    async def build() -> str:
        async with open_backend("sqlite", tmp_path) as backend:
            return await backend.session("repair me")

    name = anyio.run(build)
    (tmp_path / name / "plans" / "stray.txt").write_text("left here")
    done = run_nineplan(tmp_path, "validate", name, "--repair")
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["repaired: recovered stray.txt", "valid"]
    assert "stray.txt" not in done.stderr
