"""A plan's criteria as the pages mark them: ✔ met, ✘ unmet, ? waiting for a person, — no
verdict, each with the words a screen reader says and the verdict that answered it; and what a
person's decision on one was, said on the board after the form (docs/ui.md, "Needs you and
the marks")."""

import re
from collections.abc import Sequence

import attrs

from nineplan_core.criteria import criteria, plan_verdict
from nineplan_core.model import Plan
from nineplan_core.verdicts import PlanVerdict, Verdict, VerdictStatus

#: Each status's mark and its words; None is a criterion without a verdict.
MARKS: dict[VerdictStatus | None, tuple[str, str]] = {
    VerdictStatus.MET: ("✔", "met"),
    VerdictStatus.UNMET: ("✘", "unmet"),
    VerdictStatus.NEEDS_PERSON: ("?", "needs a person"),
    None: ("—", "no verdict"),
}

#: The plan's derived verdict in words.
VERDICT_WORDS = {
    PlanVerdict.MET: "every criterion met",
    PlanVerdict.PARTIAL: "some criteria unmet",
    PlanVerdict.UNCHECKED: "some criteria without a verdict",
    PlanVerdict.NEEDS_PERSON: "some criteria wait for a person",
}


@attrs.frozen
class Mark:
    """One criterion, numbered as verdicts name it, with the verdict that answers it."""

    n: int
    text: str
    verdict: Verdict | None = None

    @property
    def status(self) -> str:
        """`met`, `unmet`, `needs_person` or `none` (a hook for tests and styles)."""
        return self.verdict.status.value if self.verdict else "none"

    @property
    def symbol(self) -> str:
        return MARKS[self.verdict.status if self.verdict else None][0]

    @property
    def words(self) -> str:
        return MARKS[self.verdict.status if self.verdict else None][1]


@attrs.frozen
class Marks:
    """A plan's criteria marked, and its verdict derived from them."""

    items: Sequence[Mark]
    verdict: PlanVerdict

    @property
    def symbols(self) -> str:
        """One mark per criterion, in order: `✔✔✘`."""
        return "".join(item.symbol for item in self.items)

    @property
    def label(self) -> str:
        """The marks in words: `Criteria: 1 met, 2 met, 3 unmet`."""
        return "Criteria: " + ", ".join(f"{item.n} {item.words}" for item in self.items)

    @property
    def verdict_name(self) -> str:
        """The verdict's name for people: `met`, `partial`, `unchecked`, `needs person`."""
        return self.verdict.value.replace("_", " ")

    @property
    def verdict_words(self) -> str:
        return VERDICT_WORDS[self.verdict]


def marks(plan: Plan) -> Marks:
    """The plan's criteria (its Success Criteria section as stored), each with its verdict;
    a verdict on a criterion the section no longer has is shown with the text it judged."""
    given = {verdict.n: verdict for verdict in plan.verdicts}
    items = criteria(plan.content.success_criteria)
    numbers = {item.n for item in items}
    marked = [Mark(item.n, item.text, given.get(item.n)) for item in items]
    marked += [Mark(v.n, v.text, v) for v in plan.verdicts if v.n not in numbers]
    return Marks(sorted(marked, key=lambda mark: mark.n), plan_verdict(items, plan.verdicts))


#: A decision as the board's address carries it: plan, criterion, status, and the follow-up
#: an unmet added (or `capped` when the chain's limit added none).
_DECIDED = re.compile(r"([0-9a-z]{5})\.([0-9]{1,9})\.(met|unmet)(?:\.([0-9a-z]{5}|capped))?")


@attrs.frozen
class Decided:
    """A person's decision on a criterion, said on the board after the form has gone (the
    board's address carries it as `?decided=`, so a page without JavaScript says it too)."""

    plan_id: str
    n: int
    status: str
    #: The follow-up plan an unmet added; `capped` when the chain's limit added none.
    follow_up: str | None = None

    @classmethod
    def parse(cls, text: str) -> "Decided | None":
        """The decision `text` names, or None for anything else (nothing is said)."""
        if (found := _DECIDED.fullmatch(text)) is None:
            return None
        return cls(found[1], int(found[2]), found[3], found[4])

    def query(self) -> str:
        """`decided=PLAN.N.STATUS[.FOLLOW_UP]`, for the board's address."""
        parts = [self.plan_id, str(self.n), self.status]
        return "decided=" + ".".join([*parts, *([self.follow_up] if self.follow_up else [])])

    @property
    def words(self) -> str:
        said = f"Criterion {self.n} of plan {self.plan_id} marked {self.status}"
        if self.follow_up == "capped":
            return f"{said}: its chain of follow-ups is at its limit, so no plan was added."
        if self.follow_up:
            return f"{said}: its follow-up {self.follow_up} is at the front of the queue."
        return f"{said}."
