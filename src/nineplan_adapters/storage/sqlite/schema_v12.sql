-- Version 12: done with evidence (docs/architecture.md, "Criteria and verdicts"). A completed
-- plan keeps its verdicts (a JSON array: each criterion's number, text, status, evidence, who
-- gave it and their note); a follow-up plan names the plan whose unmet criteria it meets
-- (`follow_up_of`), and that plan names its follow-ups (`follow_ups`, a JSON array of ids).
-- The verdicts' evidence, one line each (`evidence`), is searchable: both full-text indexes
-- get the column and are rebuilt from the completed plans already stored.
ALTER TABLE plans ADD COLUMN verdicts TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(verdicts));
ALTER TABLE plans ADD COLUMN follow_up_of TEXT;
ALTER TABLE plans ADD COLUMN follow_ups TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(follow_ups));
ALTER TABLE plans ADD COLUMN evidence TEXT NOT NULL DEFAULT '';

DROP TRIGGER IF EXISTS plans_history_insert;
DROP TRIGGER IF EXISTS plans_history_delete;
DROP TRIGGER IF EXISTS plans_history_update;
DROP TABLE IF EXISTS history_fts;
DROP TABLE IF EXISTS history_trigram;

CREATE VIRTUAL TABLE history_fts USING fts5 (
    goal, context, inputs, outputs, outcome, notes, evidence,
    content = 'plans', content_rowid = 'seq', tokenize = 'porter unicode61'
);

CREATE VIRTUAL TABLE history_trigram USING fts5 (
    goal, context, inputs, outputs, outcome, notes, evidence,
    content = 'plans', content_rowid = 'seq', tokenize = 'trigram'
);

CREATE TRIGGER plans_history_insert AFTER INSERT ON plans
WHEN new.status = 'completed' BEGIN
    INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    VALUES (new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes, new.evidence);
    INSERT INTO history_trigram (rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    VALUES (new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes, new.evidence);
END;

CREATE TRIGGER plans_history_delete AFTER DELETE ON plans
WHEN old.status = 'completed' BEGIN
    INSERT INTO history_fts (history_fts, rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    VALUES ('delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes, old.evidence);
    INSERT INTO history_trigram (history_trigram, rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    VALUES ('delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes, old.evidence);
END;

CREATE TRIGGER plans_history_update AFTER UPDATE ON plans
WHEN old.status = 'completed' OR new.status = 'completed' BEGIN
    INSERT INTO history_fts (history_fts, rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    SELECT 'delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes, old.evidence
    WHERE old.status = 'completed';
    INSERT INTO history_trigram (history_trigram, rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    SELECT 'delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes, old.evidence
    WHERE old.status = 'completed';
    INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    SELECT new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes, new.evidence
    WHERE new.status = 'completed';
    INSERT INTO history_trigram (rowid, goal, context, inputs, outputs, outcome, notes, evidence)
    SELECT new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes, new.evidence
    WHERE new.status = 'completed';
END;

INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome, notes, evidence)
SELECT seq, goal, context, inputs, outputs, outcome, notes, evidence FROM plans WHERE status = 'completed';
INSERT INTO history_trigram (rowid, goal, context, inputs, outputs, outcome, notes, evidence)
SELECT seq, goal, context, inputs, outputs, outcome, notes, evidence FROM plans WHERE status = 'completed';
