-- Version 6: many agents on one queue (docs/architecture.md, "Workers and leases"). One active plan per (session, worker)
-- instead of one per session: `worker` names the active plan's worker (`main` for the plan
-- that was active before), `last_seen` is when that worker was last heard from. Both are null
-- for a plan that is not active. An active plan without a worker (a writer that knows none)
-- counts as main's.
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS worker TEXT;
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS last_seen TIMESTAMPTZ;
UPDATE nineplan_plans SET worker = 'main', last_seen = now()
WHERE status = 'active' AND worker IS NULL;
DROP INDEX IF EXISTS nineplan_plans_active;
CREATE UNIQUE INDEX IF NOT EXISTS nineplan_plans_active_worker
    ON nineplan_plans (session_name, coalesce(worker, 'main')) WHERE status = 'active';
