-- Version 3: plan counts per status, kept by triggers, so that counting the queue or the
-- history costs the same at 100,000 plans as at 10.
CREATE TABLE IF NOT EXISTS plan_counts (
    status TEXT PRIMARY KEY,
    n      INTEGER NOT NULL
) STRICT;

INSERT OR IGNORE INTO plan_counts (status, n)
VALUES ('queued', 0), ('active', 0), ('completed', 0), ('discarded', 0);
UPDATE plan_counts SET n = (SELECT count(*) FROM plans WHERE plans.status = plan_counts.status);

CREATE TRIGGER IF NOT EXISTS plan_counts_insert AFTER INSERT ON plans BEGIN
    UPDATE plan_counts SET n = n + 1 WHERE status = new.status;
END;

CREATE TRIGGER IF NOT EXISTS plan_counts_delete AFTER DELETE ON plans BEGIN
    UPDATE plan_counts SET n = n - 1 WHERE status = old.status;
END;

CREATE TRIGGER IF NOT EXISTS plan_counts_update AFTER UPDATE OF status ON plans
WHEN old.status <> new.status BEGIN
    UPDATE plan_counts SET n = n - 1 WHERE status = old.status;
    UPDATE plan_counts SET n = n + 1 WHERE status = new.status;
END;

-- With counts kept above, a plain status index only misleads the planner into sorting the
-- whole queue; the partial indexes serve every query (plans_queue for the queue's order and
-- ends, plans_active for the active plan, plans_positioned for the invariant check).
DROP INDEX IF EXISTS plans_status;
CREATE INDEX IF NOT EXISTS plans_positioned ON plans (queue_position) WHERE queue_position IS NOT NULL;
