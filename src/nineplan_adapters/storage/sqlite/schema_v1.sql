-- nineplan session database, version 1. One database per session.
-- The reference schema made STRICT; the database itself guards the queue invariants
-- (one active plan, distinct positions, a position exactly when queued), and the
-- full-text index holds completed plans only, stemmed.

CREATE TABLE IF NOT EXISTS sessions (
    name             TEXT PRIMARY KEY,
    task_description TEXT,
    created_at       TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS plans (
    seq              INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    status           TEXT NOT NULL CHECK (status IN ('queued', 'active', 'completed', 'discarded')),
    queue_position   INTEGER,
    goal             TEXT NOT NULL,
    context          TEXT NOT NULL,
    inputs           TEXT NOT NULL DEFAULT '',
    outputs          TEXT NOT NULL DEFAULT '',
    approach         TEXT NOT NULL,
    success_criteria TEXT NOT NULL,
    notes            TEXT NOT NULL DEFAULT '',
    outcome          TEXT,
    created_at       TEXT NOT NULL,
    completed_at     TEXT,
    CHECK ((status = 'queued') = (queue_position IS NOT NULL))
) STRICT;

CREATE UNIQUE INDEX IF NOT EXISTS plans_queue ON plans (queue_position) WHERE status = 'queued';
CREATE UNIQUE INDEX IF NOT EXISTS plans_active ON plans (status) WHERE status = 'active';
CREATE INDEX IF NOT EXISTS plans_status ON plans (status);

CREATE VIRTUAL TABLE IF NOT EXISTS history_fts USING fts5 (
    goal, context, inputs, outputs, outcome,
    content = 'plans', content_rowid = 'seq', tokenize = 'porter unicode61'
);

CREATE TRIGGER IF NOT EXISTS plans_history_insert AFTER INSERT ON plans
WHEN new.status = 'completed' BEGIN
    INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome)
    VALUES (new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome);
END;

CREATE TRIGGER IF NOT EXISTS plans_history_delete AFTER DELETE ON plans
WHEN old.status = 'completed' BEGIN
    INSERT INTO history_fts (history_fts, rowid, goal, context, inputs, outputs, outcome)
    VALUES ('delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome);
END;

CREATE TRIGGER IF NOT EXISTS plans_history_update AFTER UPDATE ON plans
WHEN old.status = 'completed' OR new.status = 'completed' BEGIN
    INSERT INTO history_fts (history_fts, rowid, goal, context, inputs, outputs, outcome)
    SELECT 'delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome
    WHERE old.status = 'completed';
    INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome)
    SELECT new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome
    WHERE new.status = 'completed';
END;
