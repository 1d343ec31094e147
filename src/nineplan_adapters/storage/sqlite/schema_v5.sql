-- Version 5: the session journal, one row per change, appended in the change's transaction.
-- `seq` counts 1, 2, 3 ... with no gaps (the store gives each event the last seq + 1).
-- `detail` is a JSON object, kept as text so that a damaged row reads back as damaged.
CREATE TABLE IF NOT EXISTS journal (
    seq     INTEGER PRIMARY KEY,
    at      TEXT NOT NULL,
    kind    TEXT NOT NULL,
    plan_id TEXT,
    actor   TEXT NOT NULL,
    detail  TEXT NOT NULL DEFAULT '{}'
) STRICT;

-- Serves the derived facts: a plan's deferrals, its latest pull.
CREATE INDEX IF NOT EXISTS journal_kind ON journal (kind, plan_id, seq);

-- A session made by an earlier version starts its journal with the state it is in: the
-- queue in pull order and the active plan. A new database has no session row yet, so it
-- gets nothing here (its first event is session_created).
INSERT INTO journal (seq, at, kind, plan_id, actor, detail)
SELECT 1, strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now'), 'journal_started', NULL, 'system',
       json_object(
           'queue', json((SELECT json_group_array(id) FROM
                          (SELECT id FROM plans WHERE status = 'queued' ORDER BY queue_position))),
           'active_plan', (SELECT id FROM plans WHERE status = 'active')
       )
FROM sessions
WHERE NOT EXISTS (SELECT 1 FROM journal)
LIMIT 1;
