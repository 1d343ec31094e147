"""A plan's revision: which version of its sections a person's edit was made on, so an edit
made on a stale copy is refused naming what changed meanwhile (docs/ui.md)."""

import hashlib
import re

from nineplan_core.errors import InvalidInputError
from nineplan_core.model import SECTION_FIELDS, PlanContent, check_type

#: Hex digits of each section's hash in a revision: a stale form is told apart from a fresh
#: one, not defended against forgery (a person can send any text anyway).
_REVISION_DIGITS = 8
_REVISION = re.compile(rf"[0-9a-f]{{{_REVISION_DIGITS}}}(?:\.[0-9a-f]{{{_REVISION_DIGITS}}}){{5}}")


def plan_revision(content: PlanContent) -> str:
    """A plan's revision: a short hash of each section, joined by dots, in SECTION_FIELDS
    order. Two revisions differ exactly where the sections differ (`changed_since` says
    which), so an edit made on a stale copy is refused naming what changed meanwhile."""
    return ".".join(
        hashlib.sha256(getattr(content, field).encode("utf-8", "surrogatepass")).hexdigest()[
            :_REVISION_DIGITS
        ]
        for field in SECTION_FIELDS
    )


def check_revision(revision: str, field: str = "revision") -> str:
    """Return `revision` if it has the shape `plan_revision` gives.

    Raises:
        InvalidInputError: any other text.
    """
    if not _REVISION.fullmatch(check_type(field, revision, str)):
        raise InvalidInputError(
            field, "is not a plan revision; take it from `nineplan show` or the edit form"
        )
    return revision


def changed_since(revision: str, content: PlanContent, field: str = "revision") -> list[str]:
    """The sections of `content` that differ from the plan of `revision`, in file order
    (empty when it is the current revision).

    Raises:
        InvalidInputError: `revision` is not one `plan_revision` makes.
    """
    then, now = check_revision(revision, field).split("."), plan_revision(content).split(".")
    return [name for name, old, new in zip(SECTION_FIELDS, then, now, strict=True) if old != new]
