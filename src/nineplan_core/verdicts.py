"""What a verdict is: an answer to one success criterion, and a plan's verdict derived from
them (docs/architecture.md, "Criteria and verdicts"). Values only, so a stored plan can carry
its verdicts; the rules that read and check them are in `criteria`."""

import enum

import attrs


class VerdictStatus(enum.StrEnum):
    """An answer to one criterion."""

    MET = "met"
    UNMET = "unmet"
    NEEDS_PERSON = "needs_person"


class PlanVerdict(enum.StrEnum):
    """A plan's verdict, derived from its criteria and their verdicts (`plan_verdict`)."""

    PARTIAL = "partial"
    UNCHECKED = "unchecked"
    NEEDS_PERSON = "needs_person"
    MET = "met"


@attrs.frozen(kw_only=True)
class Verdict:
    """The answer to criterion `n`: its status and the evidence for it, with the criterion's
    text as judged, so a verdict is never separated from what it judged. `by` is who gave the
    status (`agent`, or `person` for a decision on a needs_person criterion) with their `note`.
    """

    n: int
    text: str
    status: VerdictStatus
    evidence: str
    by: str = "agent"
    note: str | None = None
