-- Version 10: a request id is remembered per worker, in a column of its own (a worker other
-- than `main` used to record its ids under a key padded with unit separators past the
-- longest id, char(31)). A row written before is main's, or, when longer than any id can be,
-- such a key: its worker is the run of name characters after the last separator. SQLite
-- cannot change a table's UNIQUE constraint, so the table is copied; run again, the copy
-- keeps the worker column it finds.
ALTER TABLE requests ADD COLUMN worker TEXT NOT NULL DEFAULT 'main';
CREATE TABLE IF NOT EXISTS requests_by_worker (
    seq         INTEGER PRIMARY KEY,
    worker      TEXT NOT NULL,
    request_id  TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result      TEXT NOT NULL,
    UNIQUE (worker, request_id)
) STRICT;
INSERT INTO requests_by_worker (seq, worker, request_id, fingerprint, result)
SELECT seq,
       CASE WHEN length(request_id) > 128 THEN substr(key, length(head) + 1) ELSE worker END,
       CASE WHEN length(request_id) > 128 THEN substr(head, 1, length(head) - 1) ELSE request_id END,
       fingerprint, result
FROM (
    SELECT *, rtrim(rtrim(request_id, char(31)), 'abcdefghijklmnopqrstuvwxyz0123456789._-') AS head,
           rtrim(request_id, char(31)) AS key
    FROM requests
);
DROP TABLE requests;
ALTER TABLE requests_by_worker RENAME TO requests;
