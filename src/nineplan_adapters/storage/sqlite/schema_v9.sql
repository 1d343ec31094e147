-- Version 9: a session remembers that a worker other than `main` was named in it (docs/architecture.md, "Workers and leases":
-- from then on the texts mark stale plans, even once only `main` holds one). A session whose
-- journal already names another worker (pulls carry `detail.worker`) starts with it set.
ALTER TABLE sessions ADD COLUMN workers_named INTEGER NOT NULL DEFAULT 0 CHECK (workers_named IN (0, 1));
UPDATE sessions SET workers_named = 1
WHERE workers_named = 0 AND (
    EXISTS (
        SELECT 1 FROM journal
        WHERE CASE WHEN json_valid(detail) THEN json_extract(detail, '$.worker') END <> 'main'
    )
    OR EXISTS (SELECT 1 FROM plans WHERE status = 'active' AND coalesce(worker, 'main') <> 'main')
);
