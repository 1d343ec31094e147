-- Version 8: a session remembers that a worker other than `main` was named in it (docs/architecture.md, "Workers and leases":
-- from then on the texts mark stale plans, even once only `main` holds one). A session whose
-- journal already names another worker (pulls carry `detail.worker`, written as nineplan
-- writes JSON; a damaged detail is text, never cast) or whose active plans do starts with it set.
ALTER TABLE nineplan_sessions ADD COLUMN IF NOT EXISTS workers_named BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE nineplan_sessions s SET workers_named = TRUE
WHERE NOT s.workers_named AND (
    EXISTS (
        SELECT 1 FROM nineplan_journal j
        WHERE j.session_name = s.name
          AND j.detail LIKE '%"worker": "%' AND j.detail NOT LIKE '%"worker": "main"%'
    )
    OR EXISTS (
        SELECT 1 FROM nineplan_plans p
        WHERE p.session_name = s.name AND p.status = 'active'
          AND coalesce(p.worker, 'main') <> 'main'
    )
);
