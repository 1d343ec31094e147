"""The statements a SQLite session database is read and written with, shared by its store
and its primer (which reads with the standard library's sqlite3, without aiosqlite)."""

from nineplan_adapters.storage.rows import CHANGEABLE_COLUMNS, PLAN_COLUMNS

#: The session row with its workspace (schema v6), as row_to_session reads it.
_SESSION = "name, task_description, created_at, (SELECT path FROM workspace) AS workspace"
# What the read-only primer reads of a session row: it opens databases of older schemas too.
SESSION_ROW = f"SELECT {_SESSION} FROM sessions"  # noqa: S608 - constants only
# The session as the store reads it (its database is migrated to the newest schema).
STORED_SESSION = f"SELECT {_SESSION}, workers_named = 1 AS workers_named FROM sessions"  # noqa: S608
NAME_WORKERS = "UPDATE sessions SET workers_named = ? WHERE workers_named <> ?"
WORKERS_NAMED = "SELECT workers_named FROM sessions"
# Counts come from the trigger-kept plan_counts; the ends of the queue from its index.
_QUEUED = "(SELECT n FROM plan_counts WHERE status = 'queued')"
_COMPLETED = "(SELECT n FROM plan_counts WHERE status = 'completed')"
_FRONT_OF = "(SELECT {} FROM plans WHERE status = 'queued' ORDER BY queue_position LIMIT 1)"
#: The first ready plan (nothing it waits for unsettled), from the partial index plans_ready.
_READY = "FROM plans WHERE status = 'queued' AND waiting = 0 ORDER BY queue_position LIMIT 1"
_BACK = "(SELECT queue_position FROM plans WHERE status = 'queued' ORDER BY queue_position DESC LIMIT 1)"
_PLAN_COLUMNS = ", ".join(PLAN_COLUMNS)
_PLACEHOLDERS = ", ".join(f":{column}" for column in PLAN_COLUMNS)
_UPDATED = ", ".join(f"{column} = excluded.{column}" for column in CHANGEABLE_COLUMNS)
# The statements of an add -> pull -> complete cycle (benchmark row 11 runs them directly).
INSERT_PLAN = f"INSERT INTO plans ({_PLAN_COLUMNS}) VALUES ({_PLACEHOLDERS})"  # noqa: S608 - constants only
SAVE_PLAN = f"{INSERT_PLAN} ON CONFLICT (id) DO UPDATE SET {_UPDATED}"
#: The position just ahead of :position in the queue and how many plans are ahead of it (the
#: plan :leaving left out): walks of the queue's index (the count reads no table row).
_AHEAD = "FROM plans WHERE status = 'queued' AND queue_position < :position"
AHEAD_OF = (
    f"SELECT (SELECT queue_position {_AHEAD} AND id != :leaving "
    "ORDER BY queue_position DESC LIMIT 1), "
    f"(SELECT count(*) {_AHEAD}) - (SELECT count(*) {_AHEAD} AND id = :leaving)"
)
#: New queue positions for queued plans, from a JSON object of id -> position (a renumber).
RENUMBER = (
    "UPDATE plans SET queue_position = fresh.value FROM json_each(?) AS fresh "
    "WHERE plans.id = fresh.key AND plans.status = 'queued'"
)
FINISHED = f"SELECT {_PLAN_COLUMNS} FROM plans WHERE status IN ('completed', 'discarded') ORDER BY completed_at, id"  # noqa: S608 - constants only
#: The completed plans with a verdict waiting for a person, the earliest completed first.
WAITING_FOR_PERSON = (
    f"SELECT {_PLAN_COLUMNS} FROM plans WHERE status = 'completed' "  # noqa: S608 - constants only
    # The substring passes few rows on to json_each, which then reads the status exactly.
    "AND verdicts LIKE '%needs_person%' AND EXISTS ("
    "SELECT 1 FROM json_each(plans.verdicts) "
    "WHERE json_extract(json_each.value, '$.status') = 'needs_person') "
    "ORDER BY completed_at, id LIMIT ?"
)
BY_ID = f"SELECT {_PLAN_COLUMNS} FROM plans WHERE id = ?"  # noqa: S608 - constants only
#: The active plan of the worker `main` (a lone agent's).
# The read-only primer opens databases of older schemas too: it reads the columns of v10.
_PRIMED = ", ".join(
    column
    for column in PLAN_COLUMNS
    if column not in {"after_ids", "verdicts", "follow_up_of", "follow_ups", "evidence"}
)
ACTIVE = f"SELECT {_PRIMED} FROM plans WHERE status = 'active' AND worker = 'main'"  # noqa: S608 - constants only
#: Every active plan as the primer reads it.
PRIMED_ACTIVE = f"SELECT {_PRIMED} FROM plans WHERE status = 'active' ORDER BY +id"  # noqa: S608 - constants only
#: Every active plan (by id: the service orders them by when they were pulled).
# `+id`: sort the few active rows found through the partial index plans_active_worker; a bare
# `ORDER BY id` has SQLite walk the whole table in id order instead (200 ms at 100,000 plans).
ACTIVE_ALL = f"SELECT {_PLAN_COLUMNS} FROM plans WHERE status = 'active' ORDER BY +id"  # noqa: S608 - constants only
#: The plan a pull takes: the first ready one in queue order.
FRONT = f"SELECT {_PLAN_COLUMNS} {_READY}"
TALLY = (
    f"SELECT {_QUEUED}, {_COMPLETED}, {_FRONT_OF.format('queue_position')}, {_BACK}, "
    f"(SELECT goal {_READY})"
)
INSERT_EVENT = (
    "INSERT INTO journal (seq, at, kind, plan_id, actor, detail) "
    "VALUES (:seq, :at, :kind, :plan_id, :actor, :detail)"
)
#: The UTC hour of a stored time ('2026-03-04T10'): its first 13 characters when it is written
#: as nineplan writes it (to the millisecond, '+00:00'), else what strftime makes of it in UTC
#: (NULL for a time it cannot read).
_HOUR = (
    "CASE WHEN substr(at, 24) = '+00:00' THEN substr(at, 1, 13) "
    "ELSE strftime('%Y-%m-%dT%H', at) END"
)
#: Events of the kinds in a JSON array at or after a time, counted per UTC hour: (hour, kind,
#: count) rows. Parameters: the kinds, that time as stored ('...+00:00'), the same less a day
#: (a range on the stored text that journal_kind_at can walk, wide enough for any offset a
#: hand-edited time has), and the time in strftime's '%Y-%m-%dT%H:%M:%f' (for such a time).
HOURLY_COUNTS = (
    f"SELECT {_HOUR} AS hour, kind, count(*) FROM journal "  # noqa: S608 - constants only
    "WHERE kind IN (SELECT value FROM json_each(?1)) AND at >= ?3 "
    "AND CASE WHEN substr(at, 24) = '+00:00' THEN at >= ?2 "
    "ELSE strftime('%Y-%m-%dT%H:%M:%f', at) >= ?4 END "
    "GROUP BY hour, kind"
)

#: The queue, front first: (id, goal, what it waits for as a JSON array or NULL) rows (the
#: store's queue()); the unsettled prerequisites are looked up only for a waiting plan.
QUEUE = (
    "SELECT id, goal, CASE WHEN waiting > 0 THEN (SELECT json_group_array(id) FROM ("
    "SELECT named.id FROM json_each(plans.after_ids) AS p JOIN plans AS named "
    "ON named.id = p.value WHERE named.status IN ('queued', 'active') ORDER BY p.key)) END "
    "FROM plans WHERE status = 'queued' ORDER BY queue_position LIMIT ?"
)
#: The plans that name a plan in `after`, whatever their status, by id.
NEEDED_BY = "SELECT plan_id FROM prerequisites WHERE prerequisite_id = ? ORDER BY plan_id"
#: The first `?` goals of the queue (what prime shows of the queue).
QUEUE_GOALS = "SELECT goal FROM plans WHERE status = 'queued' ORDER BY queue_position LIMIT ?"
#: The queued and active plans, (id, goal).
LIVE_GOALS = "SELECT id, goal FROM plans WHERE status IN ('queued', 'active')"
#: Each status's count (the trigger-kept plan_counts).
COUNTS = "SELECT status, n FROM plan_counts"
#: When the newest journal event happened.
LAST_EVENT_AT = "SELECT at FROM journal ORDER BY seq DESC LIMIT 1"
