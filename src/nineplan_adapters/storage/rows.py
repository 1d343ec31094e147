"""The cattrs converters between domain objects and storage rows (flat dicts of SQL values)."""

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any, TypeVar

import cattrs
from cattrs import ClassValidationError, transform_error
from cattrs.gen import make_dict_structure_fn

from nineplan_core.errors import DatabaseError, NinePlanError
from nineplan_core.model import Plan, Session
from nineplan_core.results import Completion, Discarded

T = TypeVar("T")

#: The columns of a stored plan, in the order both SQL schemas declare them.
PLAN_COLUMNS = (
    "id", "status", "queue_position", "goal", "context", "inputs", "outputs", "approach",
    "success_criteria", "notes", "outcome", "created_at", "completed_at", "worker", "last_seen",
    "after_ids", "verdicts", "follow_up_of", "follow_ups", "evidence",
)  # fmt: skip
#: Written from the plan, never read back into it: the search indexes' copy.
SEARCH_ONLY = frozenset({"evidence"})
#: What saving a stored plan may change: all but its id and creation time.
CHANGEABLE_COLUMNS = tuple(column for column in PLAN_COLUMNS if column not in {"id", "created_at"})
_CONTENT = ("context", "goal", "approach", "success_criteria", "inputs", "outputs")


def _timestamp(value: object, _: object = None) -> dt.datetime:
    """A stored time: a driver's datetime (PostgreSQL) or ISO-8601 text (SQLite, JSON)."""
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, str):
        parsed = dt.datetime.fromisoformat(value)
    else:
        raise TypeError(f"expected a datetime or an ISO-8601 string, got {type(value).__name__}")
    return parsed.astimezone(dt.UTC) if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


#: Domain <-> JSON and SQLite rows: times as ISO-8601 text to the millisecond.
converter = cattrs.Converter(forbid_extra_keys=True)
converter.register_unstructure_hook(
    dt.datetime, lambda value: value.isoformat(timespec="milliseconds")
)
converter.register_structure_hook(dt.datetime, _timestamp)

#: Domain -> PostgreSQL rows: the driver takes datetime objects as they are.
native = converter.copy()
native.register_unstructure_hook(dt.datetime, lambda value: value)

# Results recorded before they carried a Tally had its fields at the top level.
_LEGACY_TALLY = {"queue_length": "queued", "completed_count": "completed", "next_goal": "next_goal"}


def _result_hook(cls: type[T]) -> Any:
    structure = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=True)

    def structure_result(data: Any, _: object) -> T:
        if isinstance(data, dict) and "tally" not in data:
            tally = {new: data.pop(old) for old, new in _LEGACY_TALLY.items() if old in data}
            data = data | {"tally": tally}
        return structure(data, cls)

    return structure_result


for _result in (Completion, Discarded):
    converter.register_structure_hook(_result, _result_hook(_result))


def plan_to_row(plan: Plan, rows: cattrs.Converter = converter) -> dict[str, Any]:
    """A plan as the flat row the plans table stores (PLAN_COLUMNS, as `rows` writes values)."""
    data: dict[str, Any] = rows.unstructure(plan)
    content: dict[str, Any] = data.pop("content")
    data["queue_position"] = data.pop("position")
    data["after_ids"] = json.dumps(data.pop("after"))
    data["evidence"] = "\n".join(verdict["evidence"] for verdict in data["verdicts"])
    data["verdicts"] = json.dumps(data["verdicts"], ensure_ascii=False)
    data["follow_ups"] = json.dumps(data["follow_ups"])
    return data | content


def plan_values(plan: Plan) -> tuple[Any, ...]:
    """A plan's row as positional values in PLAN_COLUMNS order, for PostgreSQL."""
    row = plan_to_row(plan, native)
    return tuple(row[column] for column in PLAN_COLUMNS)


def row_to_plan(row: Mapping[str, Any]) -> Plan:
    """A stored row as a Plan. Raises DatabaseError for a row that is not a valid plan."""
    data = dict(row)
    data.pop("seq", None)
    data["content"] = {field: data.pop(field) for field in _CONTENT}
    data["position"] = data.pop("queue_position")
    for column in SEARCH_ONLY:
        data.pop(column, None)
    data["after"] = _ids(data.pop("after_ids", None))
    data["verdicts"] = _ids(data.get("verdicts"))
    data["follow_ups"] = _ids(data.get("follow_ups"))
    return _structure(data, Plan)


def _ids(stored: object) -> object:
    """A stored JSON array (prerequisites, verdicts, follow-ups; NULL for none) as a list, or
    as it is when it is not JSON (the plan is then reported invalid)."""
    if stored is None:
        return []
    try:
        return json.loads(stored) if isinstance(stored, str | bytes) else stored
    except ValueError:
        return stored


def row_to_session(row: Mapping[str, Any]) -> Session:
    """The session row as a Session. Raises DatabaseError for an invalid row."""
    return _structure(dict(row), Session)


def dump_result(result: object) -> str:
    """A use case's result as JSON, to replay a retried request."""
    return json.dumps(converter.unstructure(result), ensure_ascii=False)


def load_result(text: str, kind: type[T]) -> T | None:
    """A recorded result read back as `kind`, or None if it is not one."""
    try:
        return converter.structure(json.loads(text), kind)
    except (ClassValidationError, NinePlanError, ValueError, TypeError, KeyError):
        return None


def _structure(data: dict[str, Any], cls: type[T]) -> T:
    try:
        return converter.structure(data, cls)
    except ClassValidationError as exc:
        raise DatabaseError(
            f"A stored {cls.__name__} is invalid: {'; '.join(transform_error(exc))}."
        ) from exc
    except (NinePlanError, ValueError, TypeError, KeyError) as exc:
        raise DatabaseError(f"A stored {cls.__name__} is invalid: {exc}.") from exc
