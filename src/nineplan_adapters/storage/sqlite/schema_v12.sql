-- Version 12: done with evidence (docs/architecture.md, "Criteria and verdicts"). A completed
-- plan keeps its verdicts (a JSON array: each criterion's number, text, status, evidence, who
-- gave it and their note); a follow-up plan names the plan whose unmet criteria it meets
-- (`follow_up_of`), and that plan names its follow-ups (`follow_ups`, a JSON array of ids).
ALTER TABLE plans ADD COLUMN verdicts TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(verdicts));
ALTER TABLE plans ADD COLUMN follow_up_of TEXT;
ALTER TABLE plans ADD COLUMN follow_ups TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(follow_ups));
