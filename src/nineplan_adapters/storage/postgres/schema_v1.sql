-- nineplan in PostgreSQL, version 1: every session in one database.
CREATE TABLE IF NOT EXISTS nineplan_sessions (
    name             TEXT PRIMARY KEY,
    task_description TEXT,
    created_at       TIMESTAMPTZ NOT NULL
);

CREATE TABLE IF NOT EXISTS nineplan_plans (
    session_name     TEXT NOT NULL REFERENCES nineplan_sessions (name) ON DELETE CASCADE,
    id               TEXT NOT NULL,
    seq              BIGSERIAL,
    status           TEXT NOT NULL CHECK (status IN ('queued', 'active', 'completed', 'discarded')),
    queue_position   BIGINT,
    goal             TEXT NOT NULL,
    context          TEXT NOT NULL,
    inputs           TEXT NOT NULL DEFAULT '',
    outputs          TEXT NOT NULL DEFAULT '',
    approach         TEXT NOT NULL,
    success_criteria TEXT NOT NULL,
    notes            TEXT NOT NULL DEFAULT '',
    outcome          TEXT,
    created_at       TIMESTAMPTZ NOT NULL,
    completed_at     TIMESTAMPTZ,
    -- Only completed plans are searchable; outputs and outcome weigh most, as in SQLite.
    search           TSVECTOR GENERATED ALWAYS AS (
        CASE WHEN status = 'completed' THEN
            setweight(to_tsvector('english', goal), 'B') ||
            setweight(to_tsvector('english', context), 'C') ||
            setweight(to_tsvector('english', inputs), 'C') ||
            setweight(to_tsvector('english', outputs), 'A') ||
            setweight(to_tsvector('english', coalesce(outcome, '')), 'A')
        END
    ) STORED,
    PRIMARY KEY (session_name, id),
    CHECK ((status = 'queued') = (queue_position IS NOT NULL))
);

CREATE UNIQUE INDEX IF NOT EXISTS nineplan_plans_queue ON nineplan_plans (session_name, queue_position) WHERE status = 'queued';
CREATE UNIQUE INDEX IF NOT EXISTS nineplan_plans_active ON nineplan_plans (session_name) WHERE status = 'active';
CREATE INDEX IF NOT EXISTS nineplan_plans_status ON nineplan_plans (session_name, status);
CREATE INDEX IF NOT EXISTS nineplan_plans_search ON nineplan_plans USING GIN (search);

CREATE TABLE IF NOT EXISTS nineplan_requests (
    session_name TEXT NOT NULL REFERENCES nineplan_sessions (name) ON DELETE CASCADE,
    request_id   TEXT NOT NULL,
    seq          BIGSERIAL,
    fingerprint  TEXT NOT NULL,
    result       TEXT NOT NULL,
    PRIMARY KEY (session_name, request_id)
);

CREATE TABLE IF NOT EXISTS nineplan_creations (
    request_id   TEXT PRIMARY KEY,
    seq          BIGSERIAL,
    fingerprint  TEXT NOT NULL,
    session_name TEXT NOT NULL
);
