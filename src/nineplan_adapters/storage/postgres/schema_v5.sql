-- Version 5: when a person archived the session (`nineplan archive`), null while it is not;
-- the session lists leave archived sessions out unless asked.
ALTER TABLE nineplan_sessions ADD COLUMN IF NOT EXISTS archived_at TIMESTAMPTZ;
