-- Version 11: done with evidence (docs/architecture.md, "Criteria and verdicts"). A completed
-- plan keeps its verdicts (a JSON array: each criterion's number, text, status, evidence, who
-- gave it and their note); a follow-up plan names the plan whose unmet criteria it meets
-- (`follow_up_of`), and that plan names its follow-ups (`follow_ups`, a JSON array of ids).
-- The verdicts' evidence, one line each (`evidence`), is searchable: the generated search
-- columns are added again with it, which recomputes them for every stored plan.
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS verdicts TEXT NOT NULL DEFAULT '[]';
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS follow_up_of TEXT;
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS follow_ups TEXT NOT NULL DEFAULT '[]';
ALTER TABLE nineplan_plans ADD COLUMN IF NOT EXISTS evidence TEXT NOT NULL DEFAULT '';

DROP INDEX IF EXISTS nineplan_plans_search;
DROP INDEX IF EXISTS nineplan_plans_text;
ALTER TABLE nineplan_plans DROP COLUMN IF EXISTS search;
ALTER TABLE nineplan_plans ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
    CASE WHEN status = 'completed' THEN
        setweight(to_tsvector('english', goal), 'B') ||
        setweight(to_tsvector('english', context), 'C') ||
        setweight(to_tsvector('english', inputs), 'C') ||
        setweight(to_tsvector('english', outputs), 'A') ||
        setweight(to_tsvector('english', coalesce(outcome, '')), 'A') ||
        setweight(to_tsvector('english', notes), 'D') ||
        setweight(to_tsvector('english', evidence), 'C')
    END
) STORED;
CREATE INDEX nineplan_plans_search ON nineplan_plans USING GIN (search);

ALTER TABLE nineplan_plans DROP COLUMN IF EXISTS search_text;
ALTER TABLE nineplan_plans ADD COLUMN search_text TEXT GENERATED ALWAYS AS (
    CASE WHEN status = 'completed' THEN
        lower(goal || E'\n' || context || E'\n' || inputs || E'\n' || outputs || E'\n' ||
              coalesce(outcome, '') || E'\n' || notes || E'\n' || evidence)
    END
) STORED;

-- The substring index again, where pg_trgm is installed (version 2 tried to create it).
DO $$
DECLARE
    trgm_schema TEXT;
BEGIN
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
