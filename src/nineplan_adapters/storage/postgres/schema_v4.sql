-- Version 4: the folder a session was created in (its workspace, docs/clients.md), so that
-- `nineplan prime` finds a project's session; null for sessions made by earlier versions.
ALTER TABLE nineplan_sessions ADD COLUMN IF NOT EXISTS workspace TEXT;
