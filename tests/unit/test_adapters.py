"""Settings, ids, logging, the container and the embedding API."""

import datetime as dt
import json
import logging
import re
from pathlib import Path

import pytest

from nineplan_adapters import open_nineplan
from nineplan_adapters.config import ConfigError, Settings, default_sessions_path
from nineplan_adapters.container import build_container, running
from nineplan_adapters.log_setup import configure_logging
from nineplan_adapters.storage.ids import (
    PLAN_ID_ALPHABET,
    SequentialPlanIds,
    ThreeWordNames,
    random_plan_id,
)
from nineplan_adapters.storage.memory.catalog import MemorySessionCatalog
from nineplan_core.callers import Caller
from nineplan_core.model import PlanId
from nineplan_core.service import NinePlan


def test_settings_come_from_the_environment_and_flags_win():
    """Settings are read from NINEPLAN_* variables; a flag overrides its variable and a None flag
    leaves the default."""
    settings = Settings.load(
        {
            "NINEPLAN_SESSIONS_PATH": "/srv/np",
            "NINEPLAN_HTTP_PORT": "9000",
            "NINEPLAN_DURABILITY": "normal",
            "NINEPLAN_HTTP_ALLOWED_HOSTS": "a.example:*, b.example:443",
        },
        http_port="9100",
        log_level=None,
    )
    assert settings.sessions_path == Path("/srv/np")
    assert settings.http_port == 9100
    assert settings.durability == "normal"
    assert settings.log_level == "info"
    assert settings.http_allowed_hosts == ("a.example:*", "b.example:443")


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("NINEPLAN_LOG_LEVEL", "loud"),
        ("NINEPLAN_HTTP_PORT", "eighty"),
        ("NINEPLAN_HTTP_PORT", "70000"),
        ("NINEPLAN_TRANSPORT", "smoke"),
        ("NINEPLAN_DURABILITY", "maybe"),
        ("NINEPLAN_MAX_TEXT_CHARS", "0"),
    ],
)
def test_a_bad_setting_names_its_variable(variable, value):
    """A bad value is a ConfigError that names the variable it came from."""
    with pytest.raises(ConfigError) as caught:
        Settings.load({variable: value})
    assert caught.value.variable == variable
    assert variable in str(caught.value)


def test_the_default_sessions_path_is_the_platform_data_folder(monkeypatch, tmp_path):
    """Without NINEPLAN_SESSIONS_PATH, sessions live in the platform's user data folder under
    9plan/sessions."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_sessions_path() == tmp_path / "9plan" / "sessions"


def test_plan_ids_are_five_lowercase_alphanumerics():
    """Ids are five of [0-9a-z], every character of the alphabet anywhere, never 0, o, 1 or l."""
    assert set(PLAN_ID_ALPHABET).isdisjoint("01ol")
    assert len(PLAN_ID_ALPHABET) == 32
    ids = {random_plan_id() for _ in range(2000)}
    assert all(re.fullmatch(r"[0-9a-z]{5}", plan_id) for plan_id in ids)
    assert len(ids) > 1990
    for position in range(5):  # every character can appear anywhere
        assert {plan_id[position] for plan_id in ids} == set(PLAN_ID_ALPHABET)
    assert [SequentialPlanIds()() for _ in range(1)] == ["00001"]


def test_session_names_are_exactly_three_words_from_a_large_space():
    """Session names are three lowercase words, 500 draws do not repeat, the space has at least 10
    million names, and a seed repeats them."""
    names = ThreeWordNames()
    drawn = {names() for _ in range(500)}
    assert all(re.fullmatch(r"[a-z]+-[a-z]+-[a-z]+", name) for name in drawn)
    assert len(drawn) == 500
    assert names.combinations >= 10**7
    assert ThreeWordNames(seed=5)() == ThreeWordNames(seed=5)()


def test_logs_are_json_lines_on_stderr(capsys):
    """Logs are JSON lines on stderr carrying the event, level, session and plan id; stdout stays
    empty."""
    configure_logging("debug")
    try:
        logging.getLogger("nineplan.test").warning(
            "hello", extra={"session": "a-b-c", "plan_id": "abcde"}
        )
        captured = capsys.readouterr()
    finally:
        configure_logging("warn")
    assert captured.out == ""
    line = json.loads(captured.err.strip().splitlines()[-1])
    assert (line["event"], line["session"], line["plan_id"], line["level"]) == (
        "hello",
        "a-b-c",
        "abcde",
        "warning",
    )


async def test_the_container_builds_the_sqlite_default(tmp_path: Path):
    """The container with default settings stores a new session in a SQLite database under the
    sessions path."""
    async with running(build_container(Settings(sessions_path=tmp_path))) as service:
        state = await service.create_session()
    assert (tmp_path / state.session.name / "session.db").is_file()


async def test_the_container_builds_memory_storage_and_takes_overrides(tmp_path: Path):
    """Tests swap providers (here: sequential ids) through the container."""
    app = build_container(Settings(sessions_path=tmp_path, storage="memory"))
    with app.plan_ids.override(SequentialPlanIds()):
        async with running(app) as service:
            assert isinstance(service.catalog, MemorySessionCatalog)
            name = (await service.create_session()).session.name
            placed = await service.add_plan(
                name, context="c", goal="g", approach="a", success_criteria="s"
            )
    assert placed.plan.id == "00001"
    assert list(tmp_path.iterdir()) == []


async def test_open_nineplan_runs_a_session_in_a_few_lines(tmp_path: Path):
    """open_nineplan yields the use cases; a session created in one opening is there in the next."""
    async with open_nineplan(tmp_path, durability="normal") as nineplan:
        assert isinstance(nineplan, NinePlan)
        name = (await nineplan.create_session("embed")).session.name
    async with open_nineplan(tmp_path) as nineplan:
        assert (await nineplan.session_state(name)).session.task_description == "embed"


def test_an_unreadable_recorded_result_reads_as_none():
    """A retried request whose stored answer cannot be read back is not replayed as garbage."""
    from nineplan_adapters.storage.rows import dump_result, load_result
    from nineplan_core.model import Tally
    from nineplan_core.results import Discarded

    assert load_result("not json", Tally) is None
    assert load_result('{"unexpected": 1}', Tally) is None
    tally = Tally(queued=2, completed=1, next_goal="next")
    assert load_result(dump_result(tally), Tally) == tally
    assert load_result(dump_result(Tally(queued=2, completed=1)), Discarded) is None


async def test_the_bearer_check_answers_401_without_the_token():
    """The ASGI wrapper lets the right token through and stops every other request."""
    from nineplan_adapters.entrypoints.asgi import BearerAuth

    reached: list[str] = []

    async def app(scope, receive, send):
        reached.append(scope["type"])

    sent: list[dict[str, object]] = []

    async def send(message):
        sent.append(message)

    async def receive():
        return {"type": "http.request"}

    guard = BearerAuth(app, "s3cret")
    await guard({"type": "http", "headers": [(b"authorization", b"Bearer wrong")]}, receive, send)
    assert sent[0]["status"] == 401
    assert reached == []
    await guard({"type": "http", "headers": [(b"authorization", b"Bearer s3cret")]}, receive, send)
    await guard({"type": "lifespan"}, receive, send)
    assert reached == ["http", "lifespan"]


def test_results_recorded_before_the_tally_still_replay():
    """A Completion or Discarded recorded with its counts at the top level loads as today's."""

    from nineplan_adapters.storage.rows import converter, load_result
    from nineplan_core.model import Plan, PlanContent, Tally
    from nineplan_core.results import Completion, Discarded

    plan = Plan(
        id=PlanId("abcde"),
        content=PlanContent(context="c", goal="g", approach="a", success_criteria="s"),
        created_at=dt.datetime(2026, 1, 2, tzinfo=dt.UTC),
    )
    stored = converter.unstructure(plan)
    old_completion = {"plan": stored, "completed_count": 3, "queue_length": 2, "next_goal": "n"}
    completion = load_result(json.dumps(old_completion), Completion)
    assert completion == Completion(plan=plan, tally=Tally(queued=2, completed=3, next_goal="n"))
    assert (completion.completed_count, completion.queue_length, completion.next_goal) == (
        3,
        2,
        "n",
    )
    discarded = load_result(json.dumps({"plan": stored, "queue_length": 4}), Discarded)
    assert discarded == Discarded(plan=plan, tally=Tally(queued=4))
    assert discarded.queue_length == 4


def test_stored_times_load_from_text_and_from_driver_datetimes():
    """The row mapping takes SQLite's ISO-8601 text and PostgreSQL's datetime objects alike."""
    from nineplan_adapters.storage.rows import row_to_session

    at = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    for created_at in (at, "2026-01-02T03:04:05.000+00:00", at.replace(tzinfo=None)):
        session = row_to_session(
            {"name": "a-b-c", "task_description": None, "created_at": created_at}
        )
        assert session.created_at == at


def test_settings_hold_the_limits_set_by_variables_and_flags():
    """NINEPLAN_MAX_TEXT_CHARS and max_queue set the Limits the use cases enforce."""
    settings = Settings.load({"NINEPLAN_MAX_TEXT_CHARS": "500"}, max_queue="7")
    assert (settings.limits.max_text_chars, settings.limits.max_queue) == (500, 7)
    assert settings.limits.remembered_requests == Settings().limits.remembered_requests


async def test_a_creation_recorded_by_an_older_version_still_replays(tmp_path: Path):
    """A `.requests` record that holds the bare session name returns that session again."""
    import hashlib

    from nineplan_adapters.storage.clock import FixedClock
    from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
    from nineplan_core.retries import fingerprint
    from tests.fakes import make_service

    catalog = SqliteSessionCatalog(tmp_path)
    try:
        service = make_service(catalog, FixedClock())
        name = (await service.create_session("t")).session.name
        record = tmp_path / ".requests" / f"{hashlib.sha256(b'old-1').hexdigest()}.json"
        record.parent.mkdir()
        call = fingerprint("create_session", task_description="t")
        record.write_text(json.dumps({"fingerprint": call, "session": name}))
        again = await service.create_session("t", caller=Caller.of(request_id="old-1"))
        assert again.session.name == name
        assert len(await service.list_sessions()) == 1
    finally:
        await catalog.aclose()
