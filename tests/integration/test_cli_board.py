"""A person moves a queued plan before another and edits a queued plan from the terminal:
`nineplan move --before` and `nineplan edit`, driven through the real `nineplan` command in
child processes; each bad input is one line with its exit code and changes nothing."""

import json
from pathlib import Path

import anyio
import pytest

from tests.fakes import PLAN, open_backend
from tests.integration.test_cli_steering import nineplan, queue


@pytest.fixture
def session(tmp_path: Path) -> str:
    """A session on disk with an active plan (00001) and three queued ones (00002-00004)."""

    async def build() -> str:
        async with open_backend("sqlite", tmp_path) as backend:
            name = await backend.session("steer me")
            for goal in ["first", "second", "third", "fourth"]:
                await backend.service.add_plan(name, **{**PLAN, "goal": goal})
            await backend.service.pull_plan(name)
        return name

    return anyio.run(build)


def journal_length(tmp_path: Path, name: str) -> int:
    code, out, _ = nineplan(tmp_path, "log", name, "--json")
    assert code == 0
    return len(out.splitlines())


def test_move_before_prints_the_new_queue(tmp_path: Path, session: str):
    """`move --before` puts the plan just before the other and prints the new queue; the
    journal's `plan_moved` names the plan it now precedes."""
    code, out, _ = nineplan(tmp_path, "move", session, "00004", "--before", "00003")
    assert code == 0
    assert out.splitlines() == [
        "Moved 00004 to rank 2.",
        "   1  00002  second",
        "   2  00004  fourth",
        "   3  00003  third",
    ]
    code, out, _ = nineplan(tmp_path, "log", session, "--json", "--limit", "1")
    event = json.loads(out)
    assert (event["kind"], event["detail"]["before"], event["detail"]["rank"]) == (
        "plan_moved", "00003", 2,
    )  # fmt: skip
    code, out, _ = nineplan(tmp_path, "move", session, "00003", "--before", "00002", "--json")
    assert [e["id"] for e in json.loads(out)["queue"]] == ["00003", "00002", "00004"]


@pytest.mark.parametrize(
    ("arguments", "code", "said"),
    [
        (["00003", "--before", "00003"], 1, "before: is the plan being moved"),
        (["00003", "--before", "zzzzz"], 1, "No queued plan with id 'zzzzz'"),
        (["00003", "--before", "00001"], 1, "No queued plan with id '00001'"),
        (["00003", "--before", "nope"], 1, "before: must be a plan id: 5 characters"),
        (["00001", "--before", "00003"], 1, "Plan 00001 is active"),
        (["00003", "--before", "00002", "--front"], 2, "not allowed with argument"),
        (["00003"], 2, "one of the arguments --front --back --before is required"),
    ],
)
def test_a_refused_move_is_one_line_and_changes_nothing(
    tmp_path: Path, session: str, arguments: list[str], code: int, said: str
):
    """Before itself, an unknown, active or malformed id, the active plan moved, --before
    with --front, or no place at all: one line on stderr, exit 1 (refused) or 2 (usage),
    the queue and the journal as they were."""
    events = journal_length(tmp_path, session)
    got, out, err = nineplan(tmp_path, "move", session, *arguments)
    assert (got, out, len(err.splitlines())) == (code, "", 1), err
    assert said in err
    assert queue(tmp_path, session) == ["second", "third", "fourth"]
    assert journal_length(tmp_path, session) == events


def test_edit_prints_the_plan_as_show_does(tmp_path: Path, session: str):
    """`nineplan edit` changes the sections given and prints the plan as `nineplan show`
    prints it (the file with the new text, and the new revision); --json too."""
    code, out, err = nineplan(
        tmp_path,
        "edit",
        session,
        "00003",
        "--goal",
        "third, better",
        "--success-criteria",
        "it works",
    )
    assert code == 0, err
    assert out == nineplan(tmp_path, "show", session, "00003")[1]
    assert "# Goal\n  third, better" in out
    assert "# Success Criteria\n  it works" in out
    shown = json.loads(nineplan(tmp_path, "show", session, "00003", "--json")[1])
    code, out, _ = nineplan(tmp_path, "edit", session, "00003", "--inputs", "logs", "--json")
    edited = json.loads(out)
    assert (edited["goal"], edited["status"]) == ("third, better", "queued")
    assert edited["revision"] != shown["revision"]
    assert queue(tmp_path, session) == ["second", "third, better", "fourth"]


def test_edit_with_the_shown_revision_and_a_stale_one(tmp_path: Path, session: str):
    """The revision `show` prints is accepted; once another edit changed the plan, that
    revision is refused in one line naming the sections changed since, exit 1, nothing
    changed."""
    revision = json.loads(nineplan(tmp_path, "show", session, "00002", "--json")[1])["revision"]
    assert f"revision: {revision}" in nineplan(tmp_path, "show", session, "00002")[1]
    code, _, err = nineplan(
        tmp_path,
        "edit",
        session,
        "00002",
        "--goal",
        "mine",
        "--approach",
        "mine too",
        "--revision",
        revision,
    )
    assert code == 0, err
    events = journal_length(tmp_path, session)
    code, out, err = nineplan(
        tmp_path, "edit", session, "00002", "--goal", "theirs", "--revision", revision
    )
    assert (code, out) == (1, "")
    assert err.splitlines() == ["nineplan: Plan 00002 changed since you opened it: goal, approach."]
    assert queue(tmp_path, session) == ["mine", "third", "fourth"]
    assert journal_length(tmp_path, session) == events


@pytest.mark.parametrize(
    ("arguments", "code", "said"),
    [
        (["00002"], 2, "nothing to edit"),
        (["00002", "--goal", "   "], 1, "goal: must not be blank"),
        (["00002", "--context", ""], 1, "context: must not be blank"),
        (["00002", "--goal", "x", "--revision", "stale"], 1, "revision: is not a plan revision"),
        (["00001", "--goal", "x"], 1, "Plan 00001 is active"),
        (["zzzzz", "--goal", "x"], 1, "No queued plan with id 'zzzzz'"),
    ],
)
def test_a_refused_edit_is_one_line_and_changes_nothing(
    tmp_path: Path, session: str, arguments: list[str], code: int, said: str
):
    """No section, a blank required one, a malformed revision, the active plan, an unknown
    id: one line on stderr with its exit code; the plans and the journal as they were."""
    events = journal_length(tmp_path, session)
    before = nineplan(tmp_path, "export", session, "--format", "json")[1]
    got, out, err = nineplan(tmp_path, "edit", session, *arguments)
    assert (got, out, len(err.splitlines())) == (code, "", 1), err
    assert said in err
    after = nineplan(tmp_path, "export", session, "--format", "json")[1]
    assert json.loads(after)["queue"] == json.loads(before)["queue"]
    assert journal_length(tmp_path, session) == events
