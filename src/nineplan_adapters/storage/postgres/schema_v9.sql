-- Version 9: a request id is remembered per worker, in a column of its own (a worker other
-- than `main` used to record its ids under a key padded with unit separators past the
-- longest id). A row written before is main's, or, when longer than any id can be, such a
-- key: its worker is the name after the last separator, its id what comes before.
ALTER TABLE nineplan_requests ADD COLUMN IF NOT EXISTS worker TEXT NOT NULL DEFAULT 'main';
ALTER TABLE nineplan_requests DROP CONSTRAINT IF EXISTS nineplan_requests_pkey;
UPDATE nineplan_requests
SET worker = regexp_replace(rtrim(request_id, E'\x1f'), E'^.*\x1f', ''),
    request_id = regexp_replace(rtrim(request_id, E'\x1f'), E'\x1f[^\x1f]*$', '')
WHERE length(request_id) > 128;
ALTER TABLE nineplan_requests ADD PRIMARY KEY (session_name, worker, request_id);
