"""The cattrs converter between domain objects and storage rows (flat dicts of SQL values)."""

import datetime as dt
import json
from typing import Any, TypeVar

import cattrs
from cattrs import ClassValidationError, transform_error

from nineplan_core.errors import DatabaseError, NinePlanError
from nineplan_core.model import Plan, Session

converter = cattrs.Converter(forbid_extra_keys=True)
converter.register_unstructure_hook(
    dt.datetime, lambda value: value.isoformat(timespec="milliseconds")
)
converter.register_structure_hook(dt.datetime, lambda value, _: _timestamp(value))

T = TypeVar("T")

_CONTENT = ("context", "goal", "approach", "success_criteria", "inputs", "outputs")


def _timestamp(value: object) -> dt.datetime:
    if not isinstance(value, str):
        raise TypeError(f"expected an ISO-8601 string, got {type(value).__name__}")
    parsed = dt.datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def plan_to_row(plan: Plan) -> dict[str, Any]:
    """A plan as the flat row the `plans` table stores."""
    data: dict[str, Any] = converter.unstructure(plan)
    content: dict[str, Any] = data.pop("content")
    data["queue_position"] = data.pop("position")
    return data | content


def row_to_plan(row: dict[str, Any]) -> Plan:
    """A stored row as a Plan. Raises DatabaseError for a row that is not a valid plan."""
    data = dict(row)
    data.pop("seq", None)
    data["content"] = {field: data.pop(field) for field in _CONTENT}
    data["position"] = data.pop("queue_position")
    return _structure(data, Plan)


def dump_result(result: object) -> str:
    """A use case's result as JSON, to replay a retried request."""
    return json.dumps(converter.unstructure(result), ensure_ascii=False)


def load_result(text: str, kind: type[T]) -> T | None:
    """A recorded result read back as `kind`, or None if it is not one."""
    try:
        return converter.structure(json.loads(text), kind)
    except (ClassValidationError, NinePlanError, ValueError, TypeError, KeyError):
        return None


def row_to_session(row: dict[str, Any]) -> Session:
    """The session row as a Session. Raises DatabaseError for an invalid row."""
    return _structure(dict(row), Session)


def _structure(data: dict[str, Any], cls: type[T]) -> T:
    try:
        return converter.structure(data, cls)
    except ClassValidationError as exc:
        raise DatabaseError(
            f"A stored {cls.__name__} is invalid: {'; '.join(transform_error(exc))}."
        ) from exc
    except (NinePlanError, ValueError, TypeError, KeyError) as exc:
        raise DatabaseError(f"A stored {cls.__name__} is invalid: {exc}.") from exc
