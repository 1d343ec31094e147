-- Version 4: notes are searchable (weighted lowest), and a trigram index finds words in text
-- without spaces (Chinese, Japanese, Korean) when the word index finds nothing. Both indexes
-- are rebuilt from the completed plans already stored.
DROP TRIGGER IF EXISTS plans_history_insert;
DROP TRIGGER IF EXISTS plans_history_delete;
DROP TRIGGER IF EXISTS plans_history_update;
DROP TABLE IF EXISTS history_fts;
DROP TABLE IF EXISTS history_trigram;

CREATE VIRTUAL TABLE history_fts USING fts5 (
    goal, context, inputs, outputs, outcome, notes,
    content = 'plans', content_rowid = 'seq', tokenize = 'porter unicode61'
);

CREATE VIRTUAL TABLE history_trigram USING fts5 (
    goal, context, inputs, outputs, outcome, notes,
    content = 'plans', content_rowid = 'seq', tokenize = 'trigram'
);

CREATE TRIGGER plans_history_insert AFTER INSERT ON plans
WHEN new.status = 'completed' BEGIN
    INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome, notes)
    VALUES (new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes);
    INSERT INTO history_trigram (rowid, goal, context, inputs, outputs, outcome, notes)
    VALUES (new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes);
END;

CREATE TRIGGER plans_history_delete AFTER DELETE ON plans
WHEN old.status = 'completed' BEGIN
    INSERT INTO history_fts (history_fts, rowid, goal, context, inputs, outputs, outcome, notes)
    VALUES ('delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes);
    INSERT INTO history_trigram (history_trigram, rowid, goal, context, inputs, outputs, outcome, notes)
    VALUES ('delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes);
END;

CREATE TRIGGER plans_history_update AFTER UPDATE ON plans
WHEN old.status = 'completed' OR new.status = 'completed' BEGIN
    INSERT INTO history_fts (history_fts, rowid, goal, context, inputs, outputs, outcome, notes)
    SELECT 'delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes
    WHERE old.status = 'completed';
    INSERT INTO history_trigram (history_trigram, rowid, goal, context, inputs, outputs, outcome, notes)
    SELECT 'delete', old.seq, old.goal, old.context, old.inputs, old.outputs, old.outcome, old.notes
    WHERE old.status = 'completed';
    INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome, notes)
    SELECT new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes
    WHERE new.status = 'completed';
    INSERT INTO history_trigram (rowid, goal, context, inputs, outputs, outcome, notes)
    SELECT new.seq, new.goal, new.context, new.inputs, new.outputs, new.outcome, new.notes
    WHERE new.status = 'completed';
END;

INSERT INTO history_fts (rowid, goal, context, inputs, outputs, outcome, notes)
SELECT seq, goal, context, inputs, outputs, outcome, notes FROM plans WHERE status = 'completed';
INSERT INTO history_trigram (rowid, goal, context, inputs, outputs, outcome, notes)
SELECT seq, goal, context, inputs, outputs, outcome, notes FROM plans WHERE status = 'completed';
