"""The use cases' input checks: what a caller sent, checked before anything touches storage.

Field rules that belong to one value (a name, an id, a position, a text's length) live in the
model; these are the checks that combine them with the installation's limits.
"""

from collections.abc import Mapping

import attrs

from nineplan_core.errors import InvalidInputError
from nineplan_core.history import search_terms
from nineplan_core.model import SECTION_FIELDS, Limits, check_text, check_type
from nineplan_core.plan_file import MAX_NOTES_CHARS, PlanText

#: A workspace is a folder path; beyond this it is not one a file system gives.
MAX_WORKSPACE_CHARS = 4096
#: The sections a plan may leave empty.
OPTIONAL_SECTIONS = ("inputs", "outputs")


def check_notes(notes: str | None) -> None:
    """Notes sent with a defer, complete or discard: optional, at most MAX_NOTES_CHARS.

    Raises:
        InvalidInputError: too long, or containing NUL.
    """
    if notes is not None:
        check_text("notes", notes, max_chars=MAX_NOTES_CHARS, required=False)


def check_task_description(task_description: str | None, limits: Limits) -> str | None:
    """A session's task description, stripped (None when there is none or it is blank).

    Raises:
        InvalidInputError: too long, or containing NUL.
    """
    if task_description is None:
        return None
    check_text(
        "task_description", task_description, max_chars=limits.max_task_chars, required=False
    )
    return task_description.strip() or None


def check_sections(sections: dict[str, str], limits: Limits) -> None:
    """A plan's sections: the required ones not blank, every one within the text limit.

    Raises:
        InvalidInputError: the first section that breaks a rule.
    """
    for field, value in sections.items():
        check_text(
            field,
            value,
            max_chars=limits.max_text_chars,
            required=field not in OPTIONAL_SECTIONS,
        )


def check_changes(changes: Mapping[str, str], limits: Limits) -> dict[str, str]:
    """The sections a person's edit of a plan changes, checked like an added plan's.

    Raises:
        InvalidInputError: no section, a name that is not a section's, a blank required
            section, a text over the limit.
    """
    if not changes:
        raise InvalidInputError(
            "changes", f"name at least one section to change: {', '.join(SECTION_FIELDS)}"
        )
    for field in changes:
        if field not in SECTION_FIELDS:
            raise InvalidInputError(
                str(field), f"is not a plan section; the sections are {', '.join(SECTION_FIELDS)}"
            )
    sections = dict(changes)
    check_sections(sections, limits)
    return sections


def check_imported(text: PlanText, which: str, limits: Limits) -> None:
    """One imported plan's sections; the error says which plan it was (`which`).

    Raises:
        InvalidInputError: a section breaks a rule.
    """
    for field, value in attrs.asdict(text.content).items():
        try:
            check_sections({field: value}, limits)
        except InvalidInputError as exc:
            raise InvalidInputError(exc.field, f"{which} {exc.problem}") from exc


def check_search(query: str, max_results: int, limits: Limits) -> list[str]:
    """The searchable words of a history query, with its result count checked.

    Raises:
        InvalidInputError: the query is blank or too long, has no searchable word, or
            max_results is out of range.
    """
    check_text("query", query, max_chars=limits.max_text_chars)
    if not 1 <= check_type("max_results", max_results, int) <= limits.max_results:
        raise InvalidInputError("max_results", f"must be between 1 and {limits.max_results}")
    if not (terms := search_terms(query)):
        raise InvalidInputError("query", "has no searchable word (only punctuation or spaces)")
    return terms
