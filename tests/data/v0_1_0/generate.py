"""Write the session that tests/integration/test_upgrade.py opens, with nineplan 0.1.0.

Run it from a checkout of 0.1.0 (commit cdb924d), in that checkout's own venv:

    git worktree add /tmp/np010 cdb924d && cd /tmp/np010 && make .venv/.installed
    .venv/bin/python <this repo>/tests/data/v0_1_0/generate.py <this repo>/tests/data/v0_1_0 [PG_URL]

With PG_URL it also fills an empty PostgreSQL database with the same plans, for a plain
`pg_dump --no-owner` into postgres.sql. The session's plans: a completed one with notes, a
discarded one, an active one and two queued ones.
"""

import asyncio
import datetime as dt
import itertools
import shutil
import sys
from pathlib import Path

from nineplan_adapters.embedding import open_nineplan

SESSION = "amber-quiet-otter"
_IDS = itertools.chain(["cmp01", "dsc01", "act01", "que01", "que02"])


async def fill(nineplan) -> None:
    nineplan.session_names = lambda: SESSION
    nineplan.plan_ids = lambda: next(_IDS)
    start = dt.datetime(2026, 11, 1, 9, 0, tzinfo=dt.UTC)
    ticks = itertools.count()
    nineplan.clock = lambda: start + dt.timedelta(minutes=next(ticks))
    await nineplan.create_session("upgrade fixture from 0.1.0")

    async def add(goal: str, **extra: str) -> None:
        await nineplan.add_plan(
            SESSION,
            context=f"Context of {goal}.",
            goal=goal,
            approach="Do it step by step.",
            success_criteria="It works.",
            **extra,
        )

    await add("Cache the price lookups", outputs="cache.py")
    await add("Try the old importer")
    await add("Write the report")
    await add("Review the report")
    await add("Publish the report")
    await nineplan.pull_plan(SESSION)
    store = await nineplan.catalog.open(SESSION)
    path = Path(store.plan_path("cmp01"))
    path.write_text(path.read_text("utf-8").rstrip("\n") + "\n- root cause is the cache TTL\n")
    await nineplan.complete_plan(SESSION, "Cached lookups for an hour; latency down 80%.")
    await nineplan.pull_plan(SESSION)
    await nineplan.discard_plan(SESSION, "the importer is retired")
    await nineplan.pull_plan(SESSION)


async def main(target: Path, pg_url: str | None) -> None:
    sessions = target / "sessions"
    shutil.rmtree(sessions, ignore_errors=True)
    async with open_nineplan(sessions) as nineplan:
        await fill(nineplan)
    for extra in sessions.glob(f"{SESSION}/session.db-*"):
        extra.unlink()
    if pg_url:
        global _IDS  # noqa: PLW0603 - a second, identical run
        _IDS = itertools.chain(["cmp01", "dsc01", "act01", "que01", "que02"])
        mirror = target / "pg-mirror"
        async with open_nineplan(mirror, database_url=pg_url) as nineplan:
            await fill(nineplan)
        shutil.rmtree(mirror)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None))
