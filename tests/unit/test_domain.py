"""The pure domain: lifecycle, queue arithmetic, validation rules, invariants, search words."""

import datetime as dt

import pytest

from nineplan_core.errors import InvalidInputError, InvalidTransitionError
from nineplan_core.history import MAX_TERMS, excerpt, search_terms, substring_terms
from nineplan_core.invariants import check
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import (
    Plan,
    PlanContent,
    PlanId,
    PlanRow,
    Position,
    QueueEntry,
    Session,
    SessionName,
    Tally,
    check_plan_id,
    check_position,
    check_session_name,
    check_text,
    format_timestamp,
)
from nineplan_core.queue import insert_position, insert_rank, ranks
from nineplan_core.results import ActivePlan, SessionState
from nineplan_core.workers import MAIN

AT = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)
CONTENT = PlanContent(context="c", goal="g", approach="a", success_criteria="s")


def make_plan(status=PlanStatus.QUEUED, position: int | None = 1) -> Plan:
    return Plan(
        id=PlanId("abcde"), content=CONTENT, status=status, position=position, created_at=AT
    )


def test_front_inserts_before_the_minimum_and_back_after_the_maximum():
    """Positions are O(1): min - 1 for front, max + 1 for back, 1 when empty."""
    assert insert_position(Tally(), Position.FRONT) == 1
    assert insert_position(Tally(), Position.BACK) == 1
    assert insert_position(Tally(queued=4, low=-3, high=7), Position.FRONT) == -4
    assert insert_position(Tally(queued=4, low=-3, high=7), Position.BACK) == 8


def test_an_inserted_plan_is_first_at_the_front_and_last_at_the_back():
    """The rank of an added plan is 1 at the front and one past the queue at the back."""
    assert insert_rank(Tally(queued=4, low=-3, high=7), Position.FRONT) == 1
    assert insert_rank(Tally(queued=4, low=-3, high=7), Position.BACK) == 5


def test_ranks_are_one_based_in_position_order():
    """The reported rank is 1 for the lowest position."""
    assert ranks([5, -2, 9]) == {-2: 1, 5: 2, 9: 3}


def test_a_plan_goes_through_its_lifecycle():
    """Pull, defer and complete move the plan and keep a note of the deferral."""
    active = make_plan().pull(worker=MAIN, at=AT)
    assert active.status is PlanStatus.ACTIVE
    assert active.position is None
    deferred = active.defer(reason="blocked", position=0, at=AT)
    assert deferred.status is PlanStatus.QUEUED
    assert deferred.notes == "- 2026-03-04T05:06:07Z Deferred: blocked"
    done = deferred.pull(worker=MAIN, at=AT).complete(outcome="made it", at=AT)
    assert (done.status, done.outcome, done.completed_at) == (PlanStatus.COMPLETED, "made it", AT)


def test_notes_accumulate_on_new_lines():
    """A second deferral appends below the first."""
    plan = (
        make_plan()
        .pull(worker=MAIN, at=AT)
        .defer(reason="one", position=1, at=AT)
        .pull(worker=MAIN, at=AT)
        .discard(reason="two", at=AT)
    )
    assert plan.notes.split("\n") == [
        "- 2026-03-04T05:06:07Z Deferred: one",
        "- 2026-03-04T05:06:07Z Discarded: two",
    ]


@pytest.mark.parametrize("status", [PlanStatus.COMPLETED, PlanStatus.DISCARDED])
def test_finished_plans_cannot_move(status):
    """Completed and discarded are final states."""
    with pytest.raises(InvalidTransitionError):
        make_plan(status, None).pull(worker=MAIN, at=AT)


def test_a_queued_plan_cannot_be_completed():
    """Only the active plan can be completed."""
    with pytest.raises(InvalidTransitionError):
        make_plan().complete(outcome="x", at=AT)


@pytest.mark.parametrize("field", ["context", "goal", "approach", "success_criteria"])
def test_required_content_must_not_be_blank(field):
    """Blank required fields are refused, naming the field."""
    values = {"context": "c", "goal": "g", "approach": "a", "success_criteria": "s", field: " \n\t"}
    with pytest.raises(InvalidInputError) as caught:
        PlanContent(**values)
    assert caught.value.field == field


def test_nul_characters_are_refused():
    """NUL never reaches storage."""
    with pytest.raises(InvalidInputError, match="NUL"):
        PlanContent(context="c", goal="g", approach="a", success_criteria="s", inputs="a\x00b")
    with pytest.raises(InvalidInputError):
        check_text("reason", "x\x00", max_chars=10)


def test_text_longer_than_the_limit_is_refused():
    """The length limit names the field and the limit."""
    with pytest.raises(InvalidInputError) as caught:
        check_text("outcome", "x" * 11, max_chars=10)
    assert caught.value.field == "outcome"
    assert "10" in caught.value.message


@pytest.mark.parametrize("name", ["brave-quiet-otter", "a-b-c"])
def test_three_word_names_are_accepted(name):
    """Three lowercase words joined by '-' are valid session names."""
    assert check_session_name(name) == name


@pytest.mark.parametrize(
    "name",
    [
        "",
        "../etc/passwd",
        "brave-quiet",
        "Brave-quiet-otter",
        "a-b-c-d",
        "a-b-c/",
        "/tmp/a-b-c",
        "a-b-c\n",
        "ä-b-c",
    ],
)
def test_other_session_names_are_refused(name):
    """Anything but three lowercase ASCII words is a VALIDATION_ERROR before any path is built."""
    with pytest.raises(InvalidInputError) as caught:
        check_session_name(name)
    assert caught.value.category == "VALIDATION_ERROR"


@pytest.mark.parametrize("plan_id", ["abc", "ABCDE", "ab/de", "../..", "abcdef", "ab de"])
def test_malformed_plan_ids_are_refused(plan_id):
    """Anything but five characters of [0-9a-z] is refused as a plan id."""
    with pytest.raises(InvalidInputError):
        check_plan_id(plan_id)


def test_position_is_front_or_back_only():
    """Only 'front' and 'back' are positions; anything else is an error naming the field."""
    assert check_position("front") is Position.FRONT
    with pytest.raises(InvalidInputError) as caught:
        check_position("middle")
    assert caught.value.field == "position"


def test_search_terms_are_plain_words():
    """Operators, quotes and punctuation are separators; words are lower-cased and distinct."""
    assert search_terms('Auth AND (login OR "token*") NOT auth') == [
        "auth",
        "and",
        "login",
        "or",
        "token",
        "not",
    ]
    assert search_terms("!!! ... ()") == []
    assert search_terms("Café résumé_x") == ["café", "résumé", "x"]
    assert len(search_terms(" ".join(f"w{i}" for i in range(100)))) == MAX_TERMS


def test_only_words_of_scripts_without_spaces_are_searched_as_parts():
    """CJK, kana, Hangul and Thai words are the ones the substring fallback looks for; Latin,
    Cyrillic and Greek words, however short, are not."""
    terms = ["東京", "カタカナ", "한국어", "ไทย", "a", "or", "да", "αβ", "zebra", "v2"]
    assert substring_terms(terms) == ["東京", "カタカナ", "한국어", "ไทย"]


def test_an_excerpt_shows_the_line_of_the_first_match_marked():
    """The excerpt is the line where a term first occurs, every occurrence marked, cut to a
    window at word boundaries with an ellipsis; nothing when no term occurs."""
    text = "goal\nwe went to 東京 and back to 東京\nnotes"
    assert excerpt(text, ["東京"]) == "we went to \x02東京\x03 and back to \x02東京\x03"
    long = "word " * 30 + "東京 " + "word " * 30
    shown = excerpt(long, ["東京"])
    assert shown.startswith("…word ")
    assert shown.endswith("word…")
    assert "\x02東京\x03" in shown
    assert len(shown) < 100
    assert excerpt(text, ["大阪"]) == ""


def test_timestamps_are_utc_with_z():
    """Timestamps are shown in UTC with a Z, whatever zone they were made in."""
    assert (
        format_timestamp(dt.datetime(2026, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))))
        == "2026-01-01T00:00:00Z"
    )


def test_a_consistent_snapshot_is_valid():
    """Distinct positions, one active plan and matching files satisfy every invariant."""
    rows = [
        PlanRow(PlanId("aaaaa"), PlanStatus.QUEUED, 1),
        PlanRow(PlanId("bbbbb"), PlanStatus.QUEUED, 2),
        PlanRow(PlanId("ccccc"), PlanStatus.ACTIVE, None),
    ]
    report = check(rows, ["aaaaa.txt", "bbbbb.txt", "ccccc.txt"])
    assert report.valid
    assert report.issues == []


def test_each_invariant_reports_its_violation():
    """Two active plans, shared positions, missing and orphaned files are each named."""
    rows = [
        PlanRow(PlanId("aaaaa"), PlanStatus.ACTIVE, None),
        PlanRow(PlanId("bbbbb"), PlanStatus.ACTIVE, None),
        PlanRow(PlanId("ccccc"), PlanStatus.QUEUED, 3),
        PlanRow(PlanId("ddddd"), PlanStatus.QUEUED, 3),
        PlanRow(PlanId("eeeee"), PlanStatus.QUEUED, None),
        PlanRow(PlanId("fffff"), PlanStatus.COMPLETED, 4),
    ]
    report = check(
        rows, ["aaaaa.txt", "bbbbb.txt", "ccccc.txt", "ddddd.txt", "eeeee.txt", "stray.txt"]
    )
    assert not report.valid
    assert not report.single_active_plan
    assert not report.queue_order_preserved
    assert report.files_match_database
    assert not report.no_orphaned_files
    assert any("more than one active" in issue for issue in report.issues)
    assert any("shared by 2 plans" in issue for issue in report.issues)
    assert any("eeeee has no queue position" in issue for issue in report.issues)
    assert any("completed plan fffff holds" in issue for issue in report.issues)
    assert "orphaned file: stray.txt" in report.issues
    missing = check([PlanRow(PlanId("aaaaa"), PlanStatus.QUEUED, 1)], [])
    assert not missing.files_match_database
    assert missing.issues == ["missing plan file: aaaaa.txt"]


def test_state_knows_whether_files_match():
    """file_db_match compares the files with the queued and active plans."""
    session = Session(name=SessionName("a-b-c"), task_description=None, created_at=AT)
    active = make_plan(PlanStatus.ACTIVE, None)
    state = SessionState(
        session=session,
        path="p",
        queue=[QueueEntry(PlanId("zzzzz"), "g", 1)],
        active_plans=[ActivePlan(plan=active, path="p/abcde.txt")],
        completed_count=0,
        plan_files=["abcde.txt", "zzzzz.txt"],
    )
    assert state.file_db_match
    state2 = SessionState(
        session=session,
        path="p",
        queue=[],
        completed_count=0,
        plan_files=["x.txt"],
    )
    assert not state2.file_db_match
