"""The steering forms as a page shows them: empty, or as a person sent them, refused, with
the reason beside the field it names."""

from collections.abc import Mapping

import attrs
from starlette.datastructures import FormData

#: The add form's text fields, in the order the use case takes them.
ADD_FIELDS = ("context", "goal", "approach", "success_criteria", "inputs", "outputs")


@attrs.frozen
class AddForm:
    """The add form as the page shows it: empty, or as a person sent it with the reason it
    was refused and the field that reason names (None when it names none of the form's)."""

    values: Mapping[str, str] = attrs.field(factory=dict)
    field: str | None = None
    message: str | None = None
    #: What to do about it, in the words of the page's controls.
    suggestion: str | None = None

    def value(self, field: str) -> str:
        return self.values.get(field, "")

    def refuses(self, field: str) -> bool:
        """Whether the refusal is about `field` (its reason is shown beside it)."""
        return self.message is not None and self.field == field

    @property
    def general(self) -> str | None:
        """A refusal about none of the form's fields (a full queue): shown above them."""
        named = self.field in {*ADD_FIELDS, "position"}
        return None if self.message is None or named else self.message


@attrs.frozen
class MoveForm:
    """A queued card's form as a person sent it, refused: which plan, which field (`before`,
    `reason` for a drop, `position` for to front or back) and what was typed in it, why, and
    what to do about it."""

    plan_id: str
    before: str
    message: str
    suggestion: str | None = None
    field: str = "before"


@attrs.frozen
class EditForm(AddForm):
    """The edit form of a queued plan: its sections (as the file holds them, or as a person
    sent them), the `revision` they were opened at, and, when refused, the reason."""

    revision: str = ""


def text_of(form: FormData, field: str) -> str:
    value = form.get(field)
    return value if isinstance(value, str) else ""
