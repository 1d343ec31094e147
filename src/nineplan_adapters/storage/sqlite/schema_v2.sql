-- Version 2: recently applied request ids, so a retried mutation is applied once.
CREATE TABLE IF NOT EXISTS requests (
    seq         INTEGER PRIMARY KEY,
    request_id  TEXT NOT NULL UNIQUE,
    fingerprint TEXT NOT NULL,
    result      TEXT NOT NULL
) STRICT;
