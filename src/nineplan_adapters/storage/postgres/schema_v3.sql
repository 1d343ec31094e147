-- Version 3: the session journal, one row per change, appended in the change's transaction.
-- `seq` counts 1, 2, 3 ... per session with no gaps: writers of a session hold its row lock,
-- and each event takes the session's last seq + 1. `detail` is a JSON object kept as text,
-- so that a damaged row reads back as damaged.
CREATE TABLE IF NOT EXISTS nineplan_journal (
    session_name TEXT NOT NULL REFERENCES nineplan_sessions (name) ON DELETE CASCADE,
    seq          BIGINT NOT NULL,
    at           TIMESTAMPTZ NOT NULL,
    kind         TEXT NOT NULL,
    plan_id      TEXT,
    actor        TEXT NOT NULL,
    detail       TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (session_name, seq)
);

CREATE INDEX IF NOT EXISTS nineplan_journal_kind ON nineplan_journal (session_name, kind, plan_id, seq);

-- Every session made by an earlier version starts its journal with the state it is in.
INSERT INTO nineplan_journal (session_name, seq, at, kind, plan_id, actor, detail)
SELECT s.name, 1, now(), 'journal_started', NULL, 'system',
       jsonb_build_object(
           'queue', coalesce((SELECT jsonb_agg(p.id ORDER BY p.queue_position) FROM nineplan_plans p
                              WHERE p.session_name = s.name AND p.status = 'queued'), '[]'::jsonb),
           'active_plan', (SELECT p.id FROM nineplan_plans p
                           WHERE p.session_name = s.name AND p.status = 'active')
       )::text
FROM nineplan_sessions s
WHERE NOT EXISTS (SELECT 1 FROM nineplan_journal j WHERE j.session_name = s.name);
