-- Version 7: many agents on one queue (docs/architecture.md, "Workers and leases"). One active plan per worker instead of one
-- per session: `worker` names the active plan's worker (`main` for the plan that was active
-- before), `last_seen` is when that worker was last heard from. Both are null for a plan that
-- is not active. The runner skips an ADD COLUMN whose column is there already, so the
-- migration stays idempotent for two processes racing to apply it.
ALTER TABLE plans ADD COLUMN worker TEXT;
ALTER TABLE plans ADD COLUMN last_seen TEXT;
UPDATE plans SET worker = 'main', last_seen = strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now')
WHERE status = 'active' AND worker IS NULL;
DROP INDEX IF EXISTS plans_active;
-- An active plan without a worker (a writer that knows none) counts as main's.
CREATE UNIQUE INDEX IF NOT EXISTS plans_active_worker ON plans (coalesce(worker, 'main'))
WHERE status = 'active';
