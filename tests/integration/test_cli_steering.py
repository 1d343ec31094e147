"""A person steers from the terminal: `nineplan add | move | drop | import | export`, driven
through the real `nineplan` command in child processes."""

import json
import re
import subprocess
from pathlib import Path

import anyio
import pytest

from nineplan_adapters.entrypoints.cli.bundle import END_OF_QUEUE, join_plans, split_plans
from nineplan_core.model import PlanContent
from nineplan_core.plan_file import PlanText
from tests.fakes import PLAN, open_backend
from tests.integration.servers import PROJECT, PYTHON, child_env, run_nineplan


@pytest.fixture
def session(tmp_path: Path) -> str:
    """A session on disk with an active plan (00001) and two queued ones (00002, 00003)."""

    async def build() -> str:
        async with open_backend("sqlite", tmp_path) as backend:
            name = await backend.session("steer me")
            for goal in ["first", "second", "third"]:
                await backend.service.add_plan(name, **{**PLAN, "goal": goal})
            await backend.service.pull_plan(name)
        return name

    return anyio.run(build)


def nineplan(tmp_path: Path, *arguments: str) -> tuple[int, str, str]:
    completed = run_nineplan(tmp_path, *arguments)
    return completed.returncode, completed.stdout, completed.stderr


def queue(tmp_path: Path, name: str) -> list[str]:
    code, out, _ = nineplan(tmp_path, "state", name, "--json")
    assert code == 0
    return [entry["goal"] for entry in json.loads(out)["queue"]]


def plan_file(goal: str, **sections: str) -> str:
    content = {**PLAN, "goal": goal, **sections}
    return join_plans([PlanText(PlanContent(**content), "")])


def test_add_prints_the_id_and_rank(tmp_path: Path, session: str):
    """`nineplan add` adds at the back (or with --front at the front), prints the id and rank;
    with --json it prints the 9plan_queue_add shape."""
    texts = ["--context", "c", "--approach", "a", "--success-criteria", "s"]
    code, out, _ = nineplan(tmp_path, "add", session, "--goal", "fourth", *texts)
    assert code == 0
    assert out.split()[1:] == ["rank", "3"]
    code, out, _ = nineplan(
        tmp_path, "add", session, "--goal", "zeroth", *texts, "--inputs", "i", "--front", "--json"
    )
    added = json.loads(out)
    assert (code, added["queue_position"], set(added)) == (
        0, 1, {"plan_id", "plan_path", "queue_position", "waiting_for"},
    )  # fmt: skip
    assert queue(tmp_path, session) == ["zeroth", "second", "third", "fourth"]


def test_move_and_drop_print_the_new_queue(tmp_path: Path, session: str):
    """`nineplan move --front` and `nineplan drop --reason` change the queue and print it."""
    code, out, _ = nineplan(tmp_path, "move", session, "00003", "--front")
    assert code == 0
    assert out.splitlines() == [
        "Moved 00003 to rank 1.",
        "   1  00003  third",
        "   2  00002  second",
    ]
    code, out, _ = nineplan(tmp_path, "move", session, "00003", "--back", "--json")
    assert [e["id"] for e in json.loads(out)["queue"]] == ["00002", "00003"]
    code, out, _ = nineplan(tmp_path, "drop", session, "00002", "--reason", "not needed")
    assert code == 0
    assert out.splitlines() == ["Dropped 00002.", "   1  00003  third"]
    code, out, _ = nineplan(tmp_path, "show", session, "00002", "--json")
    assert json.loads(out)["status"] == "discarded"


@pytest.mark.parametrize(
    "command", [["move", "00001", "--front"], ["drop", "00001", "--reason", "x"]]
)
def test_the_active_plan_is_refused_in_one_line(tmp_path: Path, session: str, command: list[str]):
    """`move` or `drop` of the active plan exits 1 with one line, and changes nothing; with
    --json the error is JSON on stdout."""
    code, out, err = nineplan(tmp_path, command[0], session, *command[1:])
    assert (code, out, len(err.splitlines())) == (1, "", 1)
    assert "00001" in err or "active" in err
    code, out, _ = nineplan(tmp_path, command[0], session, *command[1:], "--json")
    assert code == 1
    assert json.loads(out)["error"]["category"]
    assert queue(tmp_path, session) == ["second", "third"]
    code, out, _ = nineplan(tmp_path, "state", session, "--json")
    assert json.loads(out)["active_plan"]["id"] == "00001"


def test_import_adds_at_the_back_or_front_in_file_order(tmp_path: Path, session: str):
    """`nineplan import` adds the file's plans after the queue in file order; with --front
    before it, still in file order."""
    plans = tmp_path / "plans.md"
    plans.write_text(plan_file("A") + "\n---\n\n" + plan_file("B"), encoding="utf-8")
    code, out, _ = nineplan(tmp_path, "import", session, str(plans))
    assert (code, out.splitlines()[0]) == (0, "Imported 2 plans:")
    assert queue(tmp_path, session) == ["second", "third", "A", "B"]
    code, out, _ = nineplan(tmp_path, "import", session, str(plans), "--front", "--json")
    assert [p["queue_position"] for p in json.loads(out)["plans"]] == [1, 2]
    assert queue(tmp_path, session) == ["A", "B", "second", "third", "A", "B"]


def test_import_reads_stdin(tmp_path: Path, session: str):
    """`nineplan import NAME -` reads the plans from standard input."""
    completed = subprocess.run(
        [PYTHON, "-m", "nineplan_adapters", "import", session, "-"],
        input=plan_file("from stdin"),
        env=child_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=PROJECT,
    )
    assert completed.returncode == 0, completed.stderr
    assert queue(tmp_path, session) == ["second", "third", "from stdin"]


def test_import_is_all_or_none(tmp_path: Path, session: str):
    """A file whose middle plan is bad (no Goal section, or an empty approach) adds nothing,
    exits 1 and says which plan."""
    good = plan_file("good")
    broken = good.replace("# Goal\ngood\n", "")
    plans = tmp_path / "plans.md"
    plans.write_text("\n---\n".join([good, broken, good]), encoding="utf-8")
    code, _, err = nineplan(tmp_path, "import", session, str(plans))
    assert (code, "plan 2 of 3" in err) == (1, True)
    blank = good.replace(f"# Approach\n{PLAN['approach']}\n", "# Approach\n\n")
    plans.write_text("\n---\n".join([good, blank, good]), encoding="utf-8")
    code, out, _ = nineplan(tmp_path, "import", session, str(plans), "--json")
    assert code == 1
    assert "plan 2 of 3" in json.loads(out)["error"]["message"]
    assert queue(tmp_path, session) == ["second", "third"]


def test_export_md_of_the_queue_reimports_to_the_same_plans(tmp_path: Path, session: str):
    """`export --format md` of a queue whose text holds `---` lines and headings, imported into
    another session, gives the same plans in the same order."""
    tricky = plan_file("tricky", context="above\n---\nbelow\n\\---\n# Goal\nend")
    plans = tmp_path / "plans.md"
    plans.write_text(tricky, encoding="utf-8")
    assert nineplan(tmp_path, "import", session, str(plans))[0] == 0
    code, exported, _ = nineplan(tmp_path, "export", session, "--format", "md")
    assert code == 0
    assert "first" in exported  # the active plan is in the export, after the queue
    (tmp_path / "export.md").write_text(exported, encoding="utf-8")
    other = anyio.run(_empty_session, tmp_path)
    assert nineplan(tmp_path, "import", other, str(tmp_path / "export.md"))[0] == 0

    def contents(name: str) -> list[dict[str, str]]:
        data = json.loads(nineplan(tmp_path, "export", name, "--format", "json")[1])
        return [
            {k: v for k, v in p.items() if k not in ("id", "created_at")} for p in data["queue"]
        ]

    assert contents(other) == contents(session)
    assert [p["context"] for p in contents(other)][-1] == "above\n---\nbelow\n\\---\n# Goal\nend"


async def _empty_session(tmp_path: Path) -> str:
    async with open_backend("sqlite", tmp_path) as backend:
        return await backend.session("the copy")


def test_export_json_holds_the_whole_session(tmp_path: Path, session: str):
    """`export --format json` holds the queue, the active plan, the history and the counts;
    `--format md` holds the history too, with outcomes."""
    code, out, _ = nineplan(tmp_path, "export", session, "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert [p["goal"] for p in data["queue"]] == ["second", "third"]
    assert data["active_plan"]["goal"] == "first"
    assert data["session_name"] == session
    assert data["history"] == []

    async def finish() -> None:
        async with open_backend("sqlite", tmp_path) as backend:
            await backend.service.complete_plan(session, "built the penguin importer")

    anyio.run(finish)
    data = json.loads(nineplan(tmp_path, "export", session, "--format", "json")[1])
    assert [(p["goal"], p["outcome"]) for p in data["history"]] == [
        ("first", "built the penguin importer")
    ]
    code, out, _ = nineplan(tmp_path, "export", session)
    assert "## Completed plan 00001" in out
    assert "Outcome: built the penguin importer" in out


@pytest.mark.parametrize("command", ["add", "move", "drop", "import", "export"])
def test_a_missing_session_exits_2(tmp_path: Path, command: str):
    """Every steering command on a session that does not exist exits 2, as JSON with --json."""
    plans = tmp_path / "plans.md"
    plans.write_text(plan_file("A"), encoding="utf-8")
    extra = {
        "add": ["--goal", "g", "--context", "c", "--approach", "a", "--success-criteria", "s"],
        "move": ["00001", "--front"],
        "drop": ["00001", "--reason", "r"],
        "import": [str(plans)],
        "export": [],
    }[command]
    code, out, _ = nineplan(tmp_path, command, "no-such-session", *extra, "--json")
    assert code == 2
    assert json.loads(out)["error"]["category"] == "SESSION_NOT_FOUND"


def test_help_shows_examples(tmp_path: Path):
    """Each steering command's --help exits 0 with examples naming it."""
    for command in ["add", "move", "drop", "import", "export"]:
        code, out, _ = nineplan(tmp_path, command, "--help")
        assert (code, "examples:" in out, f"nineplan {command}" in out) == (0, True, True)


def test_the_bundle_format_escapes_separator_lines():
    """A plan text line `---` is written `\\---` and read back as `---`; a file ending with a
    separator and plans without a Notes section still read."""
    plan = PlanText(PlanContent(**{**PLAN, "context": "x\n---\ny"}), "")
    text = join_plans([plan, plan])
    assert "\\---" in text
    assert split_plans(text + "\n---\n") == [plan, plan]
    assert split_plans(text.replace("# Notes\n", "")) == [plan, plan]
    bare = text.replace("# Inputs\n\n\n", "").replace("# Outputs\n\n\n", "")
    assert "# Inputs" not in bare
    assert split_plans(bare) == [plan, plan]
    noted = PlanText(plan.content, "kept\n# not a heading")
    assert split_plans(join_plans([noted]).replace("# Inputs\n\n\n", "")) == [noted]


def test_export_holds_what_the_agent_wrote_in_the_plan_files(tmp_path: Path, session: str):
    """The export is the session as the agent left it: notes appended to the active plan's
    file and edits to a queued plan's file are in the Markdown and the JSON export."""
    folder = tmp_path / session / "plans"
    with (folder / "00001.txt").open("a", encoding="utf-8") as active:
        active.write("halfway there\n")
    queued = (folder / "00002.txt").read_text(encoding="utf-8")
    (folder / "00002.txt").write_text(
        queued.replace("# Goal\nsecond\n", "# Goal\nsecond, edited\n")
    )
    code, md, _ = nineplan(tmp_path, "export", session)
    assert code == 0
    assert "halfway there" in md
    assert "second, edited" in md
    code, out, _ = nineplan(tmp_path, "export", session, "--format", "json")
    exported = json.loads(out)
    assert "halfway there" in exported["active_plan"]["notes"]
    assert exported["queue"][0]["goal"] == "second, edited"


def test_import_reads_a_bom_and_loose_headings_and_names_the_file(tmp_path: Path, session: str):
    """A file saved with a BOM and headings in another case imports; a file that is not plans
    is refused as bad input naming `file` (exit 1, one message), nothing added."""
    loose = plan_file("from a loose file").replace("# Success Criteria", "# success criteria ")
    (tmp_path / "loose.md").write_text("\ufeff" + loose, encoding="utf-8")
    code, _, err = nineplan(tmp_path, "import", session, str(tmp_path / "loose.md"))
    assert code == 0, err
    assert queue(tmp_path, session)[-1] == "from a loose file"
    (tmp_path / "bad.md").write_text("# Goal\n\nonly a goal\n", encoding="utf-8")
    code, out, _ = nineplan(tmp_path, "import", session, str(tmp_path / "bad.md"), "--json")
    assert code == 1
    error = json.loads(out)["error"]
    assert error["category"] == "VALIDATION_ERROR"
    assert "file: plan 1 of 1, missing sections" in error["message"]


def test_text_that_is_not_utf8_is_refused_in_one_message(tmp_path: Path, session: str):
    """Bytes that are not UTF-8 on the command line are bad input named by its option, not a
    traceback, and nothing is added."""
    before = queue(tmp_path, session)
    code, _, err = nineplan(
        tmp_path, "add", session, "--goal", "bad\udcff", "--context", "c", "--approach", "a",
        "--success-criteria", "s",
    )  # fmt: skip
    assert code == 1
    assert "Traceback" not in err
    assert "goal: is not valid UTF-8 text" in err
    assert "run the command again" in err
    assert queue(tmp_path, session) == before


def test_the_end_of_queue_line_inside_a_plan_survives_the_round_trip():
    """A plan whose text holds the export's end-of-queue line is escaped like `---`, so
    export then import gives the same plan."""
    text = PlanText(PlanContent(**{**PLAN, "context": f"x\n{END_OF_QUEUE}\ny"}), "")
    assert split_plans(join_plans([text, text])) == [text, text]


def test_import_of_one_plan_says_plan(tmp_path: Path, session: str):
    """Importing a file of one plan says "Imported 1 plan:", not "1 plans"."""
    plans = tmp_path / "one.md"
    plans.write_text(plan_file("A"), encoding="utf-8")
    code, out, _ = nineplan(tmp_path, "import", session, str(plans))
    assert (code, out.splitlines()[0]) == (0, "Imported 1 plan:")


def test_export_asks_for_one_format_and_writes_z_times_and_a_fenced_journal(
    tmp_path: Path, session: str
):
    """`export --json --format md` is a usage error (one line, exit 2) rather than JSON in
    silence; the Markdown export's journal is a fenced JSON block, and its times, like the
    JSON export's, end in `Z` as every other view's do."""
    done = run_nineplan(tmp_path, "export", session, "--json", "--format", "md")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "nineplan: --json and --format md ask for two formats; give one"
    ]

    async def finish() -> None:
        async with open_backend("sqlite", tmp_path) as backend:
            await backend.service.complete_plan(session, "done")

    anyio.run(finish)
    markdown = run_nineplan(tmp_path, "export", session, check=True).stdout
    assert re.search(r"## Completed plan 00001 \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)", markdown)
    journal = markdown.split("\n## Journal\n\n", 1)[1]
    assert journal.startswith("```json\n")
    assert journal.rstrip().endswith("```")
    assert json.loads(journal.strip().removeprefix("```json").removesuffix("```"))[0]["seq"] == 1
    data = json.loads(run_nineplan(tmp_path, "export", session, "--json", check=True).stdout)
    assert data["history"][0]["completed_at"].endswith("Z")
    assert data["history"][0]["created_at"].endswith("Z")
    assert "+00:00" not in json.dumps(data)


def test_a_dropped_plan_shows_who_dropped_it_and_why(tmp_path: Path, session: str):
    """A plan a person dropped shows, in `nineplan show`, its reason and that a person dropped
    it (JSON `discard_reason`, `discarded_by`), and its time as `discarded_at`, never as
    `completed_at`; a plan the agent discarded says "agent"."""
    assert nineplan(tmp_path, "drop", session, "00002", "--reason", "not needed now")[0] == 0
    code, out, _ = nineplan(tmp_path, "show", session, "00002", "--json")
    shown = json.loads(out)
    assert (code, shown["discard_reason"], shown["discarded_by"]) == (0, "not needed now", "person")
    text = nineplan(tmp_path, "show", session, "00002")[1]
    assert "discarded_by: person" in text
    assert "discard_reason: not needed now" in text
    assert "discarded_at: " in text
    assert "completed_at" not in text

    async def discard() -> None:
        async with open_backend("sqlite", tmp_path) as backend:
            await backend.service.discard_plan(session, "the agent gave up")

    anyio.run(discard)
    shown = json.loads(nineplan(tmp_path, "show", session, "00001", "--json")[1])
    assert (shown["discard_reason"], shown["discarded_by"]) == ("the agent gave up", "agent")


def test_import_refusals_say_what_to_change(tmp_path: Path, session: str):
    """A file with an unknown heading (`# Risks`) is refused saying the text is not a plan
    section and how to fix it, never that it "was kept"; `## Goal` headings get the hint that
    plan sections are level-1 headings; a file of no plan says what one looks like. Exit 1 and
    nothing added, each time."""
    before = queue(tmp_path, session)
    risky = plan_file("risky").replace("# Notes", "# Risks\nthe cache may be stale\n\n# Notes")
    (tmp_path / "risky.md").write_text(risky, encoding="utf-8")
    done = run_nineplan(tmp_path, "import", session, str(tmp_path / "risky.md"))
    assert done.returncode == 1
    assert "text under '# Risks' is not a plan section; rename the heading to one of" in done.stderr
    assert "or move the text under # Notes" in done.stderr
    assert "was kept" not in done.stderr
    deep = plan_file("deep").replace("# ", "## ")
    (tmp_path / "deep.md").write_text(deep, encoding="utf-8")
    done = run_nineplan(tmp_path, "import", session, str(tmp_path / "deep.md"))
    assert done.returncode == 1
    assert "missing sections: Context, Goal, Approach, Success Criteria" in done.stderr
    assert "plan sections are level-1 headings ('# Goal'), and the file has '## Context'" in (
        done.stderr
    )
    (tmp_path / "empty.md").write_text("\n\n", encoding="utf-8")
    done = run_nineplan(tmp_path, "import", session, str(tmp_path / "empty.md"))
    assert done.returncode == 1
    assert "holds no plan; write plans in the plan format (# Context, # Goal," in done.stderr
    assert queue(tmp_path, session) == before


def test_import_respects_fenced_code(tmp_path: Path, session: str):
    """A `---` and a `# Goal` line inside a fenced code block are the plan's text: the file
    imports as one plan holding the whole block."""
    fenced = "the config:\n```yaml\na: 1\n---\n# Goal\nb: 2\n```"
    text = plan_file("fenced", context="c").replace("# Context\nc\n", f"# Context\n{fenced}\n")
    (tmp_path / "fenced.md").write_text(text, encoding="utf-8")
    code, out, err = nineplan(tmp_path, "import", session, str(tmp_path / "fenced.md"), "--json")
    assert code == 0, err
    [added] = json.loads(out)["plans"]
    code, out, _ = nineplan(tmp_path, "show", session, added["plan_id"], "--json")
    assert json.loads(out)["context"] == fenced
    assert queue(tmp_path, session)[-1] == "fenced"


def test_a_person_says_what_a_plan_waits_for(tmp_path: Path, session: str):
    """`nineplan add --after` makes the new plan wait (it says for what); `nineplan state`
    marks it; `nineplan edit --after` changes it, refuses a cycle naming it (exit 1, nothing
    changed) and clears it with ''; `nineplan show` lists what it waits for."""
    texts = ["--context", "c", "--approach", "a", "--success-criteria", "s"]
    code, out, _ = nineplan(
        tmp_path, "add", session, "--goal", "fourth", *texts, "--after", "00002"
    )
    assert code == 0, out
    fourth = out.split()[0]
    assert out.split()[1:] == ["rank", "3", "waits", "for", "00002"]
    code, out, _ = nineplan(tmp_path, "state", session)
    assert f"{fourth}" in out
    assert "[waits for 00002]" in out
    code, out, err = nineplan(tmp_path, "edit", session, "00002", "--after", fourth)
    assert code == 1, out
    assert f"would make plans wait for each other: 00002 -> {fourth} -> 00002" in err
    code, out, _ = nineplan(tmp_path, "show", session, fourth)
    assert "after: 00002" in out
    code, out, _ = nineplan(tmp_path, "edit", session, fourth, "--after", "00003")
    assert (code, "after: 00003" in out) == (0, True)
    code, out, _ = nineplan(tmp_path, "edit", session, fourth, "--after", "")
    assert code == 0
    assert "after:" not in out
    code, out, _ = nineplan(tmp_path, "validate", session)
    assert code == 0, out
