-- Version 6: the folder a session was created in (its workspace, docs/clients.md), so that
-- `nineplan prime` finds a project's session. At most one row; a session made by an earlier
-- version has none. A table rather than a column: CREATE TABLE IF NOT EXISTS keeps the
-- migration idempotent for two processes racing to apply it.
CREATE TABLE IF NOT EXISTS workspace (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    path     TEXT NOT NULL
) STRICT;
