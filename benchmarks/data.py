"""Seeded data sets for the benchmarks: sessions with many queued and completed plans."""

import datetime as dt
import itertools
import random
import sqlite3
from pathlib import Path

from nineplan_adapters.storage.clock import utc_now
from nineplan_adapters.storage.ids import PLAN_ID_ALPHABET
from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
from nineplan_core.journal import Actor, EventKind, NewEvent
from nineplan_core.model import PlanContent, Session, SessionName
from nineplan_core.plan_file import render

WORDS = [
    "auth",
    "login",
    "token",
    "session",
    "user",
    "account",
    "password",
    "hash",
    "schema",
    "table",
    "index",
    "migration",
    "query",
    "cache",
    "api",
    "endpoint",
    "route",
    "handler",
    "request",
    "response",
    "json",
    "parse",
    "render",
    "template",
    "page",
    "form",
    "button",
    "style",
    "test",
    "fixture",
    "mock",
    "benchmark",
    "profile",
    "latency",
    "throughput",
    "memory",
    "disk",
    "file",
    "folder",
    "path",
    "config",
    "deploy",
    "build",
    "release",
    "docker",
    "image",
    "container",
    "server",
    "client",
    "socket",
    "stream",
    "queue",
    "worker",
    "job",
    "retry",
    "timeout",
    "error",
    "log",
    "metric",
    "trace",
    "alert",
    "report",
    "export",
    "import",
    "csv",
    "pdf",
    "chart",
    "graph",
    "search",
    "rank",
    "filter",
    "sort",
    "page",
    "limit",
    "offset",
    "cursor",
    "batch",
    "bulk",
    "sync",
    "async",
    "lock",
    "mutex",
    "thread",
    "process",
]


SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "ta",
    "so",
    "vi",
    "pe",
    "da",
    "gu",
    "ri",
    "mo",
    "za",
    "fe",
    "li",
    "no",
    "bu",
    "sa",
    "te",
]


def vocabulary(size: int = 8_000, seed: int = 3) -> list[str]:
    """The domain words first, then made-up words: a realistic spread of rare terms."""
    rng = random.Random(seed)
    words = dict.fromkeys(WORDS)
    while len(words) < size:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


VOCABULARY = vocabulary()
# Word frequencies follow Zipf's law, as in real text: the n-th word is used about 1/n as often.
ZIPF = list(itertools.accumulate(1 / rank for rank in range(1, len(VOCABULARY) + 1)))


def sentence(rng: random.Random, length: int) -> str:
    return " ".join(rng.choices(VOCABULARY, cum_weights=ZIPF, k=length)).capitalize() + "."


def plan_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        candidate = "".join(rng.choice(PLAN_ID_ALPHABET) for _ in range(5))
        if candidate not in taken:
            taken.add(candidate)
            return candidate


async def create_session(root: Path, name: str) -> None:
    catalog = SqliteSessionCatalog(root, durability="normal")
    try:
        at = utc_now()
        await catalog.create(
            Session(name=SessionName(name), task_description="benchmark", created_at=at),
            NewEvent(kind=EventKind.SESSION_CREATED, at=at, actor=Actor.AGENT),
        )
    finally:
        await catalog.aclose()


async def seed_session(
    root: Path,
    name: str,
    *,
    completed: int,
    queued: int,
    seed: int = 7,
    history_days: float | None = None,
) -> list[str]:
    """A session with `completed` plans in history and `queued` in the queue (with files).

    Rows go in with one bulk transaction, so the FTS triggers index the history as they
    would have one plan at a time. With `history_days`, the journal gets the events that made
    them (`seed_history`), the completions spread evenly over that many days up to now.
    Returns the queued ids in order.
    """
    await create_session(root, name)
    rng = random.Random(seed)
    taken: set[str] = set()
    now = utc_now().isoformat(timespec="milliseconds")
    rows = []
    queued_ids = []
    for index in range(completed + queued):
        content = PlanContent(
            context=sentence(rng, 20), goal=sentence(rng, 8), approach=sentence(rng, 25),
            success_criteria=sentence(rng, 10), inputs=sentence(rng, 6), outputs=sentence(rng, 8),
        )  # fmt: skip
        done = index < completed
        pid = plan_id(rng, taken)
        rows.append((
            pid, "completed" if done else "queued", None if done else index, content.goal, content.context,
            content.inputs, content.outputs, content.approach, content.success_criteria, "",
            sentence(rng, 15) if done else None, now, now if done else None,
        ))  # fmt: skip
        if not done:
            queued_ids.append(pid)
            (root / name / "plans" / f"{pid}.txt").write_text(render(content, ""))
    with sqlite3.connect(root / name / "session.db") as db:
        db.executemany(
            "INSERT INTO plans (id, status, queue_position, goal, context, inputs, outputs, approach, "
            "success_criteria, notes, outcome, created_at, completed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        if history_days is not None:
            history = [str(row[0]) for row in rows[:completed]]
            seed_history(db, history, queued_ids, dt.timedelta(days=history_days))
    return queued_ids


#: Every this many completed plans, one was deferred once before it was completed.
DEFER_EVERY = 10


def seed_history(
    db: sqlite3.Connection, completed: list[str], queued: list[str], span: dt.timedelta
) -> None:
    """The journal of a session that completed `completed` one after another over `span` up to
    now (each added, pulled, every DEFER_EVERY-th deferred and pulled again, completed), and
    then had `queued` added; each completed plan's `completed_at` is its completion's time.
    Bulk inserts through the driver, in the caller's transaction."""
    now = utc_now()
    step = span / max(1, len(completed))
    (seq,) = db.execute("SELECT coalesce(max(seq), 0) FROM journal").fetchone()
    events: list[tuple[int, str, str, str, str]] = []
    finished: list[tuple[str, str]] = []

    def event(at: dt.datetime, kind: str, plan: str, detail: str = "{}") -> None:
        events.append(
            (seq + len(events) + 1, at.isoformat(timespec="milliseconds"), kind, plan, detail)
        )

    for index, plan in enumerate(completed):
        at = now - span + step * (index + 1)
        event(at - step / 2, "plan_added", plan, '{"position": "back", "rank": 1}')
        event(at - step / 3, "plan_pulled", plan)
        if index % DEFER_EVERY == 0:
            event(
                at - step / 4,
                "plan_deferred",
                plan,
                '{"reason": "blocked", "position": "front", "rank": 1}',
            )
            event(at - step / 5, "plan_pulled", plan)
        event(at, "plan_completed", plan, '{"outcome": "done"}')
        finished.append((at.isoformat(timespec="milliseconds"), plan))
    for rank, plan in enumerate(queued, start=1):
        event(now, "plan_added", plan, f'{{"position": "back", "rank": {rank}}}')
    db.executemany("INSERT INTO journal (seq, at, kind, plan_id, actor, detail) "
                   "VALUES (?, ?, ?, ?, 'agent', ?)", events)  # fmt: skip
    db.executemany("UPDATE plans SET completed_at = ? WHERE id = ?", finished)


def plan_records(completed: int, seed: int = 7) -> list[tuple[object, ...]]:
    """Completed plans as rows for a bulk load: (id, goal, context, inputs, outputs, approach,
    success_criteria, outcome)."""
    rng = random.Random(seed)
    taken: set[str] = set()
    return [
        (plan_id(rng, taken), sentence(rng, 8), sentence(rng, 20), sentence(rng, 6), sentence(rng, 8),
         sentence(rng, 25), sentence(rng, 10), sentence(rng, 15))
        for _ in range(completed)
    ]  # fmt: skip


def queries(count: int, seed: int = 11) -> list[str]:
    """Realistic history searches: three or four words each."""
    rng = random.Random(seed)
    # What an agent searches for: three or four content words, neither the commonest nor unheard of.
    return [" ".join(rng.sample(VOCABULARY[20:2_000], rng.choice([3, 4]))) for _ in range(count)]
