-- Version 2: notes are searchable (weighted lowest), and completed plans keep their text in
-- one lower-cased column for a substring match, which finds words in text without spaces
-- (Chinese, Japanese, Korean) when the word search finds nothing. Re-adding the generated
-- columns recomputes them for every stored plan.
DROP INDEX IF EXISTS nineplan_plans_search;
ALTER TABLE nineplan_plans DROP COLUMN IF EXISTS search;
ALTER TABLE nineplan_plans ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
    CASE WHEN status = 'completed' THEN
        setweight(to_tsvector('english', goal), 'B') ||
        setweight(to_tsvector('english', context), 'C') ||
        setweight(to_tsvector('english', inputs), 'C') ||
        setweight(to_tsvector('english', outputs), 'A') ||
        setweight(to_tsvector('english', coalesce(outcome, '')), 'A') ||
        setweight(to_tsvector('english', notes), 'D')
    END
) STORED;
CREATE INDEX nineplan_plans_search ON nineplan_plans USING GIN (search);

ALTER TABLE nineplan_plans DROP COLUMN IF EXISTS search_text;
ALTER TABLE nineplan_plans ADD COLUMN search_text TEXT GENERATED ALWAYS AS (
    CASE WHEN status = 'completed' THEN
        lower(goal || E'\n' || context || E'\n' || inputs || E'\n' || outputs || E'\n' ||
              coalesce(outcome, '') || E'\n' || notes)
    END
) STORED;

-- A trigram index makes the substring match fast where the pg_trgm extension is available
-- (it needs the right to create it, or an administrator who did); without it the match scans.
DO $$
DECLARE
    trgm_schema TEXT;
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm is not available (%); substring search will scan', SQLERRM;
    END;
    SELECT extnamespace::regnamespace::text INTO trgm_schema FROM pg_extension WHERE extname = 'pg_trgm';
    IF trgm_schema IS NOT NULL THEN
        EXECUTE format(
            'CREATE INDEX IF NOT EXISTS nineplan_plans_text ON nineplan_plans '
            'USING GIN (search_text %s.gin_trgm_ops) WHERE status = ''completed''',
            trgm_schema
        );
    END IF;
END
$$;
