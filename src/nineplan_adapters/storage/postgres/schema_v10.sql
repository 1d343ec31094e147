-- Version 10: plans that wait for other plans (docs/architecture.md, "Prerequisites"). A plan
-- names its prerequisites in `after_ids` (a JSON array of plan ids, in the order named); the
-- triggers below keep nineplan_prerequisites (who waits for whom, to find a plan's
-- dependents) and each plan's `waiting`, the count of its prerequisites not yet settled, in
-- the transaction that changes them. A pull reads the first queued plan whose count is 0
-- from the partial index nineplan_plans_ready, however many waiting plans stand ahead of it.
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS after_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS waiting INTEGER NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS nineplan_prerequisites (
    session_name    TEXT NOT NULL,
    plan_id         TEXT NOT NULL,
    prerequisite_id TEXT NOT NULL,
    PRIMARY KEY (session_name, plan_id, prerequisite_id),
    FOREIGN KEY (session_name, plan_id) REFERENCES nineplan_plans (session_name, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS nineplan_prerequisites_needed_by
    ON nineplan_prerequisites (session_name, prerequisite_id);
CREATE INDEX IF NOT EXISTS nineplan_plans_ready ON nineplan_plans (session_name, queue_position)
    WHERE status = 'queued' AND waiting = 0;

-- A plan's prerequisites recorded and its count set (a new plan, or a person's change).
CREATE OR REPLACE FUNCTION nineplan_plan_after() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM nineplan_prerequisites WHERE session_name = NEW.session_name AND plan_id = NEW.id;
    INSERT INTO nineplan_prerequisites (session_name, plan_id, prerequisite_id)
    SELECT NEW.session_name, NEW.id, value FROM jsonb_array_elements_text(NEW.after_ids::jsonb)
    ON CONFLICT DO NOTHING;
    UPDATE nineplan_plans SET waiting = (
        SELECT count(*) FROM nineplan_prerequisites AS p
        JOIN nineplan_plans AS named
          ON named.session_name = p.session_name AND named.id = p.prerequisite_id
        WHERE p.session_name = NEW.session_name AND p.plan_id = NEW.id
          AND named.status IN ('queued', 'active')
    ) WHERE session_name = NEW.session_name AND id = NEW.id;
    RETURN NULL;
END $$;

-- A plan settled (completed, discarded, dropped) or unsettled again (a person's restore):
-- the counts of the plans that wait for it.
CREATE OR REPLACE FUNCTION nineplan_plan_settled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE nineplan_plans
    SET waiting = waiting + CASE WHEN NEW.status IN ('queued', 'active') THEN 1 ELSE -1 END
    WHERE session_name = NEW.session_name AND id IN (
        SELECT plan_id FROM nineplan_prerequisites
        WHERE session_name = NEW.session_name AND prerequisite_id = NEW.id
    );
    RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS nineplan_plans_after_insert ON nineplan_plans;
CREATE TRIGGER nineplan_plans_after_insert AFTER INSERT ON nineplan_plans
    FOR EACH ROW WHEN (NEW.after_ids <> '[]') EXECUTE FUNCTION nineplan_plan_after();
DROP TRIGGER IF EXISTS nineplan_plans_after_update ON nineplan_plans;
CREATE TRIGGER nineplan_plans_after_update AFTER UPDATE OF after_ids ON nineplan_plans
    FOR EACH ROW WHEN (OLD.after_ids IS DISTINCT FROM NEW.after_ids)
    EXECUTE FUNCTION nineplan_plan_after();
DROP TRIGGER IF EXISTS nineplan_plans_settled ON nineplan_plans;
CREATE TRIGGER nineplan_plans_settled AFTER UPDATE OF status ON nineplan_plans
    FOR EACH ROW WHEN ((OLD.status IN ('queued', 'active')) IS DISTINCT FROM (NEW.status IN ('queued', 'active')))
    EXECUTE FUNCTION nineplan_plan_settled();
