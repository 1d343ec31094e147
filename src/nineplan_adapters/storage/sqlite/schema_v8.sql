-- Version 8: the chart's counts per UTC hour (SessionReader.hourly_counts) read the times of
-- the completions and deferrals from a day ago on. With the time in an index beside the kind,
-- the count reads only that window's index entries, instead of looking up the row of every
-- completion the session ever had (journal_kind holds no time).
CREATE INDEX IF NOT EXISTS journal_kind_at ON journal (kind, at);
