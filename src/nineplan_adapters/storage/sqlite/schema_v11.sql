-- Version 11: plans that wait for other plans (docs/architecture.md, "Prerequisites"). A plan
-- names its prerequisites in `after_ids` (a JSON array of plan ids, in the order named); the
-- triggers below keep the table `prerequisites` (who waits for whom, to find a plan's
-- dependents) and each plan's `waiting`, the count of its prerequisites not yet settled, in
-- the transaction that changes them. A pull reads the first queued plan whose count is 0
-- from the partial index plans_ready, however many waiting plans stand ahead of it.
ALTER TABLE plans ADD COLUMN after_ids TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(after_ids));
ALTER TABLE plans ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS prerequisites (
    plan_id         TEXT NOT NULL,
    prerequisite_id TEXT NOT NULL,
    PRIMARY KEY (plan_id, prerequisite_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS prerequisites_needed_by ON prerequisites (prerequisite_id);
CREATE INDEX IF NOT EXISTS plans_ready ON plans (queue_position)
WHERE status = 'queued' AND waiting = 0;

-- A new plan: its prerequisites recorded, its count set.
CREATE TRIGGER IF NOT EXISTS plans_after_insert AFTER INSERT ON plans
WHEN new.after_ids <> '[]' BEGIN
    INSERT OR IGNORE INTO prerequisites (plan_id, prerequisite_id)
    SELECT new.id, value FROM json_each(new.after_ids);
    UPDATE plans SET waiting = (
        SELECT count(*) FROM prerequisites AS p JOIN plans AS named ON named.id = p.prerequisite_id
        WHERE p.plan_id = new.id AND named.status IN ('queued', 'active')
    ) WHERE id = new.id;
END;

-- A person's change of what a plan waits for.
CREATE TRIGGER IF NOT EXISTS plans_after_update AFTER UPDATE OF after_ids ON plans
WHEN old.after_ids IS NOT new.after_ids BEGIN
    DELETE FROM prerequisites WHERE plan_id = new.id;
    INSERT OR IGNORE INTO prerequisites (plan_id, prerequisite_id)
    SELECT new.id, value FROM json_each(new.after_ids);
    UPDATE plans SET waiting = (
        SELECT count(*) FROM prerequisites AS p JOIN plans AS named ON named.id = p.prerequisite_id
        WHERE p.plan_id = new.id AND named.status IN ('queued', 'active')
    ) WHERE id = new.id;
END;

-- A plan settled (completed, discarded, dropped) or unsettled again (a person's restore):
-- the counts of the plans that wait for it.
CREATE TRIGGER IF NOT EXISTS plans_settled AFTER UPDATE OF status ON plans
WHEN (old.status IN ('queued', 'active')) <> (new.status IN ('queued', 'active')) BEGIN
    UPDATE plans SET waiting = waiting + CASE WHEN new.status IN ('queued', 'active') THEN 1 ELSE -1 END
    WHERE id IN (SELECT plan_id FROM prerequisites WHERE prerequisite_id = new.id);
END;
