-- Version 7: the chart's counts per UTC hour (SessionReader.hourly_counts) read the times of
-- a session's completions and deferrals from a day ago on. With the time in an index beside
-- the kind, the count reads only that window's index entries, instead of every completion's
-- row (nineplan_journal_kind holds no time).
CREATE INDEX IF NOT EXISTS nineplan_journal_kind_at ON nineplan_journal (session_name, kind, at);
