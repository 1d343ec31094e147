"""The use cases, held to one contract on every storage backend (memory, SQLite, PostgreSQL)."""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from nineplan_core.callers import Caller
from nineplan_core.errors import (
    InvalidInputError,
    NoActivePlanError,
    PlanAlreadyActiveError,
    PlanNotFoundError,
    QueueEmptyError,
    SessionNotFoundError,
)
from nineplan_core.lifecycle import PlanStatus
from nineplan_core.model import PlanContent, SessionName, Tally
from nineplan_core.plan_file import parse, render
from tests.fakes import PLAN, Backend, open_backend


async def add(
    backend: Backend,
    name: str,
    goal: str,
    position: str = "back",
    request_id: str | None = None,
    **extra: Any,
):
    caller = Caller.of(request_id=request_id)  # checked where the call is read
    return await backend.service.add_plan(
        name, **{**PLAN, "goal": goal, **extra}, position=position, caller=caller
    )


async def test_a_new_session_is_empty_and_listed(backend: Backend):
    """create_session gives a three-word name, an empty queue, and a row in the list."""
    state = await backend.service.create_session("  write the report  ")
    assert state.session.name.count("-") == 2
    assert state.session.task_description == "write the report"
    assert (state.queue, state.active_plan, state.completed_count) == ([], None, 0)
    [summary] = await backend.service.list_sessions()
    assert summary.session.name == state.session.name
    assert (summary.queue_length, summary.completed_count, summary.has_active_plan) == (0, 0, False)


async def test_a_blank_task_description_is_stored_as_none(backend: Backend):
    """A task description of only spaces is stored as no task description."""
    state = await backend.service.create_session("   ")
    assert state.session.task_description is None


async def test_front_and_back_give_the_documented_order(backend: Backend):
    """Adding A, B, C at the front gives [C, B, A]; back appends."""
    name = await backend.session()
    for goal in "ABC":
        await add(backend, name, goal, "front")
    placed = await add(backend, name, "D", "back")
    assert placed.rank == 4
    state = await backend.service.session_state(name)
    assert [(e.goal, e.rank) for e in state.queue] == [("C", 1), ("B", 2), ("A", 3), ("D", 4)]


async def test_add_writes_the_plan_file(backend: Backend):
    """The file of a new plan is the rendered content, at the reported path."""
    name = await backend.session()
    placed = await add(backend, name, "G", inputs="from plan X", outputs="a table")
    text = await backend.plan_text(name, placed.plan.id)
    assert text == render(placed.plan.content, "")
    assert placed.path.endswith(f"{placed.plan.id}.txt")
    assert parse(text).content.inputs == "from plan X"


async def test_pull_takes_the_front_and_refuses_a_second(backend: Backend):
    """Pull activates the plan at the front of the queue; a second pull while one is active is
    PLAN_ALREADY_ACTIVE."""
    name = await backend.session()
    await add(backend, name, "first")
    await add(backend, name, "second")
    pulled = await backend.service.pull_plan(name)
    assert pulled.plan.goal == "first"
    assert pulled.plan.status is PlanStatus.ACTIVE
    with pytest.raises(PlanAlreadyActiveError):
        await backend.service.pull_plan(name)


async def test_pull_on_an_empty_queue_says_the_task_is_complete(backend: Backend):
    """An empty queue is "Task complete!" only once a plan was finished; before, it says to add plans."""
    name = await backend.session()
    with pytest.raises(QueueEmptyError) as caught:
        await backend.service.pull_plan(name)
    assert "Task complete" not in caught.value.message
    assert "no plan has been added" in caught.value.message
    assert "add_plan" in caught.value.suggestion_text
    await backend.service.add_plan(name, **PLAN)
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "done")
    with pytest.raises(QueueEmptyError) as caught:
        await backend.service.pull_plan(name)
    assert caught.value.message.endswith("Task complete!")


@pytest.mark.parametrize("operation", ["defer", "complete", "discard"])
async def test_finishing_needs_an_active_plan(backend: Backend, operation: str):
    """Defer, complete and discard without an active plan are NO_ACTIVE_PLAN."""
    name = await backend.session()
    calls: dict[str, Callable[[], Awaitable[object]]] = {
        "defer": lambda: backend.service.defer_plan(name, "why"),
        "complete": lambda: backend.service.complete_plan(name, "done"),
        "discard": lambda: backend.service.discard_plan(name, "why"),
    }
    with pytest.raises(NoActivePlanError):
        await calls[operation]()


async def test_defer_notes_the_reason_and_requeues(backend: Backend):
    """Deferring to the front makes the plan next again, with a timestamped note."""
    name = await backend.session()
    first = await add(backend, name, "first")
    await add(backend, name, "second")
    await backend.service.pull_plan(name)
    deferred = await backend.service.defer_plan(name, "  blocked on review ", "front")
    assert deferred.rank == 1
    assert deferred.plan.notes == "- 2026-01-02T03:04:05Z Deferred: blocked on review"
    assert parse(await backend.plan_text(name, first.plan.id) or "").notes == deferred.plan.notes
    assert (await backend.service.pull_plan(name)).plan.id == first.plan.id


async def test_defer_defaults_to_the_back(backend: Backend):
    """Deferring without a position puts the plan at the back of the queue."""
    name = await backend.session()
    await add(backend, name, "first")
    await add(backend, name, "second")
    await backend.service.pull_plan(name)
    assert (await backend.service.defer_plan(name, "later")).rank == 2


async def test_complete_reports_what_remains(backend: Backend):
    """Completing returns counts and the next goal, and removes the file."""
    name = await backend.session()
    first = await add(backend, name, "first")
    await add(backend, name, "second")
    await backend.service.pull_plan(name)
    done = await backend.service.complete_plan(name, "built migrations/0002.sql")
    assert (done.completed_count, done.queue_length, done.next_goal) == (1, 1, "second")
    assert await backend.plan_text(name, first.plan.id) is None
    await backend.service.pull_plan(name)
    last = await backend.service.complete_plan(name, "done")
    assert (last.queue_length, last.next_goal) == (0, None)


async def test_history_has_completed_plans_only(backend: Backend):
    """Search and get find completed plans; discarded and queued ones never appear."""
    name = await backend.session()
    await add(backend, name, "kept", outputs="the zebra report")
    await add(backend, name, "dropped", outputs="the zebra draft")
    await add(backend, name, "waiting", outputs="zebra notes")
    await backend.service.pull_plan(name)
    kept = await backend.service.complete_plan(name, "wrote zebra.md")
    await backend.service.pull_plan(name)
    dropped = await backend.service.discard_plan(name, "obsolete")
    assert dropped.queue_length == 1
    matches = await backend.service.search_history(name, "zebra")
    assert [(m.id, m.rank) for m in matches] == [(kept.plan.id, 1)]
    plan = await backend.service.get_history(name, kept.plan.id)
    assert plan.outcome == "wrote zebra.md"
    assert plan.completed_at is not None
    with pytest.raises(PlanNotFoundError):
        await backend.service.get_history(name, dropped.plan.id)
    with pytest.raises(PlanNotFoundError):
        await backend.service.get_history(name, "zzzzz")


async def test_search_ranks_outputs_and_outcome_above_context(backend: Backend):
    """A word in the outcome ranks above the same word only in the context."""
    name = await backend.session()
    for index in range(6):
        await add(backend, name, f"filler {index}", context="unrelated words here")
    await add(backend, name, "ctx", context="mentions kangaroo once")
    await add(backend, name, "out")
    for outcome in [
        *(f"filler done {i}" for i in range(6)),
        "nothing special",
        "produced the kangaroo export",
    ]:
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, outcome)
    matches = await backend.service.search_history(name, "kangaroo")
    assert [m.goal for m in matches] == ["out", "ctx"]


async def test_notes_are_searchable_and_rank_below_the_outcome(backend: Backend):
    """A word in the notes (file edits or the notes argument) finds the plan; the same word
    in another plan's outcome ranks first."""
    name = await backend.session()
    for index in range(6):
        await add(backend, name, f"filler {index}")
    await add(backend, name, "in notes")
    await add(backend, name, "in outcome")
    for index in range(6):
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, f"filler done {index}")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "nothing special", notes="- the wombat cache")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "built the wombat importer")
    matches = await backend.service.search_history(name, "wombat")
    assert [m.goal for m in matches] == ["in outcome", "in notes"]
    assert [m.goal for m in await backend.service.search_history(name, "cache")] == ["in notes"]


@pytest.mark.parametrize(
    ("query", "found"), [("日本語", True), ("東京", True), ("東", True), ("大阪", False)]
)
async def test_text_without_spaces_is_found_by_a_part(backend: Backend, query: str, found: bool):
    """CJK words have no spaces between them: a three-character part is found through the
    trigram index, a one- or two-character part by a substring scan, on every backend."""
    name = await backend.session()
    await add(backend, name, "translate")
    await add(backend, name, "other")
    await backend.service.pull_plan(name)
    done = await backend.service.complete_plan(name, "東京の日本語版を作った")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "wrote the English version")
    matches = await backend.service.search_history(name, query)
    assert [m.id for m in matches] == ([done.plan.id] if found else [])


async def test_a_short_word_matches_whole_words_only(backend: Backend):
    """In a script written with spaces a one- or two-letter word matches whole words, never a
    part of one: `zebra a` finds the zebra plan and not the one with `a` inside its words,
    `AND OR NOT` (plain words, not operators) does not match `work`, `ui` finds the word ui
    but not `build`; on every backend."""
    name = await backend.session()
    for goal in ["zebra", "work", "ui"]:
        await add(backend, name, goal)
    zebra = await finish(backend, name, "fed the zebra")
    await finish(backend, name, "the network work went fine; cannot build the database")
    ui = await finish(backend, name, "the ui shows it")
    assert [m.id for m in await backend.service.search_history(name, "zebra a")] == [zebra]
    assert await backend.service.search_history(name, "AND OR NOT") == []
    assert [m.id for m in await backend.service.search_history(name, "zebra NOT")] == [zebra]
    assert [m.id for m in await backend.service.search_history(name, "ui")] == [ui]
    assert await backend.service.search_history(name, "ta") == []


@pytest.mark.parametrize("query", ["東京", "日本語", "版"])
async def test_a_part_of_text_without_spaces_comes_with_its_snippet(backend: Backend, query):
    """A CJK match found as a part of a run of text carries a snippet showing the matched text
    marked, on every backend (PostgreSQL's word headline cannot see it)."""
    name = await backend.session()
    await add(backend, name, "translate")
    await finish(backend, name, "東京の日本語版を作った")
    [match] = await backend.service.search_history(name, query, snippets=True)
    assert f"\x02{query}\x03" in match.snippet
    assert match.snippet.replace("\x02", "").replace("\x03", "") == "東京の日本語版を作った"


async def finish(backend: Backend, name: str, outcome: str) -> str:
    """Pull the next plan and complete it with `outcome`; its id."""
    await backend.service.pull_plan(name)
    return (await backend.service.complete_plan(name, outcome)).plan.id


async def test_search_never_chokes_on_syntax(backend: Backend):
    """FTS operators and quotes in a query are plain text."""
    name = await backend.session()
    await add(backend, name, "g")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "auth module NEAR done")
    for query in [
        "auth AND (",
        '"unterminated',
        "NEAR(auth done)",
        "col:auth",
        "auth*",
        "- ^ $ auth",
    ]:
        await backend.service.search_history(name, query)
    assert len(await backend.service.search_history(name, 'auth" OR "x')) == 1


@pytest.mark.parametrize(
    ("query", "max_results", "field"),
    [("", 10, "query"), ("?!", 10, "query"), ("x", 0, "max_results"), ("x", 101, "max_results")],
)
async def test_search_arguments_are_validated(backend: Backend, query, max_results, field):
    """A bad search query or result limit is invalid input naming the argument."""
    name = await backend.session()
    with pytest.raises(InvalidInputError) as caught:
        await backend.service.search_history(name, query, max_results)
    assert caught.value.field == field


async def test_search_limits_results(backend: Backend):
    """Search returns at most max_results matches."""
    name = await backend.session()
    for index in range(5):
        await add(backend, name, f"g{index}")
        await backend.service.pull_plan(name)
        await backend.service.complete_plan(name, "common word")
    assert len(await backend.service.search_history(name, "common", 3)) == 3


async def test_agent_edits_to_the_plan_file_reach_history(backend: Backend):
    """Notes the agent writes into the active plan's file are stored on complete."""
    name = await backend.session()
    await add(backend, name, "g")
    pulled = await backend.service.pull_plan(name)
    text = await backend.plan_text(name, pulled.plan.id) or ""
    await backend.write_plan_text(name, pulled.plan.id, text + "- found the bug in parser.py\n")
    await backend.service.complete_plan(name, "fixed")
    plan = await backend.service.get_history(name, pulled.plan.id)
    assert plan.notes == "- found the bug in parser.py"


async def test_a_file_without_headings_is_kept_in_the_notes(backend: Backend, caplog):
    """complete keeps the stored sections when the agent overwrote the file with prose, puts
    the prose in the notes, says so in one line and logs it."""
    name = await backend.session()
    await add(backend, name, "g")
    pulled = await backend.service.pull_plan(name)
    await backend.write_plan_text(name, pulled.plan.id, "garbage without headers")
    done = await backend.service.complete_plan(name, "ok")
    assert done.plan.content == pulled.plan.content
    assert done.plan.notes == "garbage without headers"
    assert done.salvage is not None
    assert "no plan headings" in done.salvage
    assert "plan file salvaged" in caplog.text


async def test_a_deleted_plan_file_falls_back_to_the_stored_copy(backend: Backend):
    """When the active plan's file was deleted, defer keeps the stored content and writes the file
    again."""
    name = await backend.session()
    await add(backend, name, "g")
    pulled = await backend.service.pull_plan(name)
    await backend.delete_plan_file(name, pulled.plan.id)
    deferred = await backend.service.defer_plan(name, "later")
    assert deferred.plan.content == pulled.plan.content
    assert await backend.plan_text(name, pulled.plan.id)


async def test_edits_beyond_a_limit_are_cut_and_the_file_kept(backend: Backend):
    """Notes over 1,000,000 characters or a section over the text limit are read as far as
    the limit; the whole file is copied to recovered/ first and the result says where."""
    from nineplan_core.plan_file import MAX_NOTES_CHARS

    name = await backend.session()
    await add(backend, name, "g")
    pulled = await backend.service.pull_plan(name)
    text = await backend.plan_text(name, pulled.plan.id) or ""
    limit = backend.service.limits.max_text_chars
    edited = text.replace("# Inputs\n", "# Inputs\n" + "i" * (limit + 5)) + "n" * (
        MAX_NOTES_CHARS + 7
    )
    await backend.write_plan_text(name, pulled.plan.id, edited)
    done = await backend.service.complete_plan(name, "ok")
    assert done.plan.notes == "n" * MAX_NOTES_CHARS
    assert done.plan.content.inputs == "i" * limit
    assert done.salvage is not None
    assert "recovered" in done.salvage
    assert list((await backend.recovered(name)).values()) == [edited.encode()]


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"goal": "  "}, "goal"),
        ({"context": ""}, "context"),
        ({"approach": "a\x00"}, "approach"),
        ({"inputs": "x" * 100_001}, "inputs"),
        ({"position": "middle"}, "position"),
    ],
)
async def test_bad_plans_are_refused_before_storage(backend: Backend, changes, field):
    """Each bad argument is a VALIDATION_ERROR naming the field; nothing is stored."""
    name = await backend.session()
    with pytest.raises(InvalidInputError) as caught:
        await backend.service.add_plan(name, **{**PLAN, "position": "back", **changes})
    assert caught.value.field == field
    assert (await backend.service.session_state(name)).queue == []


@pytest.mark.parametrize("name", ["../../etc", "nope", "a-b-c/../x", ""])
async def test_session_names_are_checked_before_use(backend: Backend, name):
    """Session names that are not three hyphenated words (path escapes, one word, blank) are invalid input."""
    with pytest.raises(InvalidInputError):
        await backend.service.session_state(name)


async def test_unknown_sessions_are_not_found(backend: Backend):
    """A well-formed name of a session that does not exist is SESSION_NOT_FOUND."""
    with pytest.raises(SessionNotFoundError):
        await backend.service.pull_plan("never-was-here")


@pytest.mark.parametrize(("argument", "value"), [("reason", " "), ("outcome", "")])
async def test_blank_reasons_and_outcomes_are_refused(backend: Backend, argument, value):
    """A blank defer reason or completion outcome is invalid input naming the argument."""
    name = await backend.session()
    await add(backend, name, "g")
    await backend.service.pull_plan(name)
    call = (
        backend.service.defer_plan(name, value)
        if argument == "reason"
        else backend.service.complete_plan(name, value)
    )
    with pytest.raises(InvalidInputError) as caught:
        await call
    assert caught.value.field == argument


async def test_task_descriptions_have_a_limit(backend: Backend):
    """A task description over 10,000 characters is invalid input."""
    with pytest.raises(InvalidInputError):
        await backend.service.create_session("x" * 10_001)


async def test_state_lists_the_active_plan_and_files(backend: Backend):
    """Session state shows the active plan and its path, both plan files, files matching the
    database, and the session list counts one queued plan and an active one."""
    name = await backend.session()
    await add(backend, name, "a")
    await add(backend, name, "b")
    pulled = await backend.service.pull_plan(name)
    state = await backend.service.session_state(name)
    assert state.active_plan is not None
    assert state.active_plan.id == pulled.plan.id
    assert state.active_plan_path == pulled.path
    assert sorted(state.plan_files) == sorted(f"{i}.txt" for i in ["00001", "00002"])
    assert state.file_db_match
    [summary] = await backend.service.list_sessions()
    assert (summary.queue_length, summary.has_active_plan) == (1, True)


async def test_validate_reports_damage_without_repairing(backend: Backend):
    """A deleted plan file makes the session invalid until a repair re-renders it; validating
    writes nothing, even where the files are a mirror of a shared database (PostgreSQL)."""
    name = await backend.session()
    placed = await add(backend, name, "a")
    await backend.delete_plan_file(name, placed.plan.id)
    report = await backend.service.validate_session(name)
    assert not report.files_match_database
    assert report.issues == [f"missing plan file: {placed.plan.id}.txt"]
    assert not (await backend.service.validate_session(name)).valid
    repairs = await backend.service.repair_session(name)
    assert [(r.action, r.file_name) for r in repairs] == [("rendered", f"{placed.plan.id}.txt")]
    assert (await backend.service.validate_session(name)).valid


async def test_plan_file_text_serves_live_plans_only(backend: Backend):
    """A live plan's file text is served (from the stored copy if the file is gone); a completed
    plan's is PLAN_NOT_FOUND."""
    name = await backend.session()
    placed = await add(backend, name, "a")
    assert "# Goal\na\n" in await backend.service.plan_file_text(name, placed.plan.id)
    await backend.delete_plan_file(name, placed.plan.id)
    assert "# Goal\na\n" in await backend.service.plan_file_text(name, placed.plan.id)
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "done")
    with pytest.raises(PlanNotFoundError):
        await backend.service.plan_file_text(name, placed.plan.id)


async def test_a_retried_add_applies_once(backend: Backend):
    """The same request_id returns the first result and adds nothing more."""
    name = await backend.session()
    first = await backend.service.add_plan(name, **PLAN, caller=Caller.of(request_id="req-1"))
    again = await backend.service.add_plan(name, **PLAN, caller=Caller.of(request_id="req-1"))
    assert again == first
    assert len((await backend.service.session_state(name)).queue) == 1


async def test_a_retried_complete_returns_the_first_completion(backend: Backend):
    """Pull, complete, defer and discard retried with the same request_id return the first answer
    and happen once."""
    name = await backend.session()
    await add(backend, name, "a")
    await add(backend, name, "b")
    pulled = await backend.service.pull_plan(name, caller=Caller.of(request_id="pull-1"))
    assert await backend.service.pull_plan(name, caller=Caller.of(request_id="pull-1")) == pulled
    done = await backend.service.complete_plan(
        name, "made it", caller=Caller.of(request_id="done-1")
    )
    assert (
        await backend.service.complete_plan(name, "made it", caller=Caller.of(request_id="done-1"))
        == done
    )
    assert (await backend.service.session_state(name)).completed_count == 1
    await backend.service.pull_plan(name)
    deferred = await backend.service.defer_plan(
        name, "later", "front", caller=Caller.of(request_id="defer-1")
    )
    assert (
        await backend.service.defer_plan(
            name, "later", "front", caller=Caller.of(request_id="defer-1")
        )
        == deferred
    )
    await backend.service.pull_plan(name)
    gone = await backend.service.discard_plan(name, "no", caller=Caller.of(request_id="drop-1"))
    assert (
        await backend.service.discard_plan(name, "no", caller=Caller.of(request_id="drop-1"))
        == gone
    )


async def test_a_request_id_reused_for_another_call_is_refused(backend: Backend):
    """A request_id reused with other arguments or for another operation is invalid input naming
    request_id."""
    name = await backend.session()
    await add(backend, name, "a", request_id="same")
    with pytest.raises(InvalidInputError) as caught:
        await add(backend, name, "b", request_id="same")
    assert caught.value.field == "request_id"
    with pytest.raises(InvalidInputError) as caught:
        await backend.service.pull_plan(name, caller=Caller.of(request_id="same"))
    assert caught.value.field == "request_id"


@pytest.mark.parametrize("request_id", ["", "x" * 129, "a\x00b"])
async def test_request_ids_are_validated(backend: Backend, request_id: str):
    """An empty, over-long or control-character request_id is invalid input naming request_id."""
    name = await backend.session()
    with pytest.raises(InvalidInputError) as caught:
        await add(backend, name, "a", request_id=request_id)
    assert caught.value.field == "request_id"


async def test_a_retried_create_returns_the_same_session(backend: Backend):
    """A create retried with its request_id returns the same session and creates one; other
    arguments with that id are refused."""
    first = await backend.service.create_session("t", caller=Caller.of(request_id="make-1"))
    again = await backend.service.create_session("t", caller=Caller.of(request_id="make-1"))
    assert again.session.name == first.session.name
    assert len(await backend.service.list_sessions()) == 1
    with pytest.raises(InvalidInputError):
        await backend.service.create_session("other", caller=Caller.of(request_id="make-1"))


async def test_only_recent_request_ids_are_kept(backend_kind: str, tmp_path: Path):
    """The record is bounded: the oldest ids are forgotten."""
    async with open_backend(backend_kind, tmp_path, remembered=2) as backend:
        name = await backend.session()
        for index in range(3):
            await add(backend, name, f"g{index}", request_id=f"r{index}")
        await add(backend, name, "g0", request_id="r0")  # forgotten, so applied again
        assert len((await backend.service.session_state(name)).queue) == 4
        await add(backend, name, "g2", request_id="r2")  # still remembered
        assert len((await backend.service.session_state(name)).queue) == 4


async def test_search_can_say_where_the_words_matched(backend: Backend):
    """With snippets, each match carries a window of its text with the matched words marked."""
    name = await backend.session()
    await add(backend, name, "g")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "exported the walrus inventory to csv")
    [plain] = await backend.service.search_history(name, "walrus")
    [marked] = await backend.service.search_history(name, "walrus", snippets=True)
    assert plain.snippet == ""
    assert "\x02walrus\x03" in marked.snippet


async def test_the_tally_counts_the_queue_its_ends_and_the_history(backend: Backend):
    """One read gives the queued and completed counts, the queue's ends and the next goal."""
    name = await backend.session()
    store = await backend.catalog.open(SessionName(name))
    async with store.reading() as reader:
        assert await reader.tally() == Tally()
    await add(backend, name, "middle")
    await add(backend, name, "front", position="front")
    await add(backend, name, "back")
    await backend.service.pull_plan(name)
    await backend.service.complete_plan(name, "done")
    async with store.reading() as reader:
        assert await reader.tally() == Tally(
            queued=2, completed=1, low=1, high=2, next_goal="middle"
        )


async def test_a_rolled_back_transaction_keeps_its_request_unrecorded(backend: Backend):
    """The retry log is written in the transaction: a call that fails leaves no record."""
    name = await backend.session()
    store = await backend.catalog.open(SessionName(name))

    async def remember_then_fail() -> None:
        async with store.transaction() as tx:
            await tx.requests.remember("main", "r-1", "fingerprint", Tally(queued=1))
            raise RuntimeError("fail before commit")

    with pytest.raises(RuntimeError):
        await remember_then_fail()
    async with store.transaction() as tx:
        assert await tx.requests.recall("main", "r-1", Tally) is None
        await tx.requests.remember("main", "r-1", "fingerprint", Tally(queued=1))
    async with store.transaction() as tx:
        assert await tx.requests.recall("main", "r-1", Tally) == ("fingerprint", Tally(queued=1))
        assert await tx.requests.recall("main", "r-1", PlanContent) == ("fingerprint", None)
        assert await tx.requests.recall("alice", "r-1", Tally) is None  # each worker's own
