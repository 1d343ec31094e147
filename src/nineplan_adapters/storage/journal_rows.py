"""The session journal's storage, shared by every store: seq assignment, `detail` as JSON,
and stored rows read back into events (a damaged row into an UnreadableEvent). A store adds
only its database half: the last seq, an insert and a select (`EventRows`). The change feed
that follows a session is the core's (`NinePlan.follow`), over the store's watch."""

import datetime as dt
import json
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from cattrs import ClassValidationError, transform_error

from nineplan_adapters.storage.rows import converter
from nineplan_core.errors import NinePlanError
from nineplan_core.journal import Actor, Event, EventKind, EventQuery, NewEvent, UnreadableEvent

_KINDS = frozenset(kind.value for kind in EventKind)
_ACTORS = frozenset(actor.value for actor in Actor)

#: The columns of a stored event, in the order both SQL schemas declare them.
EVENT_COLUMNS = ("seq", "at", "kind", "plan_id", "actor", "detail")


def event_row(event: NewEvent, seq: int) -> dict[str, Any]:
    """An event as the row a journal table stores; `at` stays a datetime for the driver."""
    return {
        "seq": seq,
        "at": event.at,
        "kind": event.kind.value,
        "plan_id": event.plan_id,
        "actor": event.actor.value,
        # Details are plain JSON values already; the converter serves anything else.
        "detail": json.dumps(event.detail, ensure_ascii=False, default=converter.unstructure),
    }


def timestamp_text(at: dt.datetime) -> str:
    """A time as the journal stores it in text (SQLite, memory): what the converter writes."""
    text: str = converter.unstructure(at)
    return text


def row_event(row: Mapping[str, Any]) -> Event | UnreadableEvent:
    """A stored row as an Event; a row that is not one (edited by hand) as an UnreadableEvent."""
    seq = int(row["seq"])
    if row["kind"] not in _KINDS:
        return UnreadableEvent(seq, f"unknown kind {row['kind']!r}")
    if row["actor"] not in _ACTORS:
        return UnreadableEvent(seq, f"unknown actor {row['actor']!r}")
    try:
        detail = json.loads(row["detail"])
        if not isinstance(detail, dict):
            return UnreadableEvent(seq, "its detail is not a JSON object")
        at = row["at"]
        return converter.structure(
            {
                "seq": seq,
                "at": timestamp_text(at) if isinstance(at, dt.datetime) else at,
                "kind": row["kind"],
                "plan_id": row["plan_id"],
                "actor": row["actor"],
                "detail": detail,
            },
            Event,
        )
    except ClassValidationError as exc:
        return UnreadableEvent(seq, "; ".join(transform_error(exc)))
    except (NinePlanError, ValueError, TypeError, KeyError, OverflowError) as exc:
        return UnreadableEvent(seq, f"{type(exc).__name__}: {exc}")


@attrs.frozen
class Dialect:
    """How one SQL backend writes what `event_select` needs."""

    #: The n-th placeholder (1-based).
    mark: Callable[[int], str]
    #: "is one of the ids in this one parameter", for a placeholder.
    one_of: Callable[[str], str]
    #: The parameter value for a set of ids.
    ids: Callable[[list[str]], Any]
    #: The table, and the equality conditions that scope it (PostgreSQL's session_name).
    table: str
    scope: Mapping[str, Any] = attrs.field(factory=dict)


#: SQLite: `?` placeholders; an id set is one JSON array, read back with json_each.
SQLITE = Dialect(
    mark=lambda _: "?",
    one_of="IN (SELECT value FROM json_each({}))".format,
    ids=json.dumps,
    table="journal",
)


def postgres_dialect(session_name: str) -> Dialect:
    """PostgreSQL: `$n` placeholders, an id set as one text[]; one session's rows of the
    shared journal table."""
    return Dialect(
        mark=lambda n: f"${n}",
        one_of=lambda placeholder: f"= ANY({placeholder}::text[])",
        ids=list,
        table="nineplan_journal",
        scope={"session_name": session_name},
    )


def event_select(query: EventQuery, dialect: Dialect) -> tuple[str, list[Any]]:
    """The SELECT for `query`, oldest first, and its parameters. Thousands of plan ids still
    make one parameter."""
    parameters: list[Any] = []

    def parameter(value: Any) -> str:
        parameters.append(value)
        return dialect.mark(len(parameters))

    conditions = [f"{column} = {parameter(value)}" for column, value in dialect.scope.items()]
    conditions.append(f"seq > {parameter(query.after_seq)}")
    if query.before_seq is not None:
        conditions.append(f"seq < {parameter(query.before_seq)}")
    if query.kinds:
        kinds = ", ".join(parameter(kind.value) for kind in sorted(query.kinds))
        conditions.append(f"kind IN ({kinds})")
    if query.plan_id is not None:
        conditions.append(f"plan_id = {parameter(query.plan_id)}")
    if query.plan_ids is not None:
        ids = parameter(dialect.ids(sorted(query.plan_ids)))
        conditions.append(f"plan_id {dialect.one_of(ids)}")
    columns = ", ".join(EVENT_COLUMNS)
    where = " AND ".join(conditions)
    table = dialect.table
    if query.last is None:
        return f"SELECT {columns} FROM {table} WHERE {where} ORDER BY seq", parameters  # noqa: S608 - constants and placeholders only
    newest = f"SELECT {columns} FROM {table} WHERE {where} ORDER BY seq DESC LIMIT {parameter(query.last)}"  # noqa: S608
    return f"SELECT {columns} FROM ({newest}) AS newest ORDER BY seq", parameters  # noqa: S608


class EventRows:
    """The journal half of a SessionTx, shared by every store's transaction class.

    A store supplies `_last_seq`, `_insert_event` and `_select_events`; `append` and
    `events` (the two journal methods of the port) are the same code everywhere.
    """

    __slots__ = ()

    async def _last_seq(self) -> int:
        raise NotImplementedError

    async def _insert_event(self, row: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _select_events(self, query: EventQuery) -> list[Mapping[str, Any]]:
        raise NotImplementedError

    async def _count_hourly(
        self, kinds: list[str], since: dt.datetime
    ) -> list[tuple[dt.datetime, str, int]]:
        raise NotImplementedError

    async def append(self, event: NewEvent) -> Event:
        seq = await self._last_seq() + 1
        await self._insert_event(event_row(event, seq))
        return Event.appended(event, seq)

    async def events(self, query: EventQuery) -> list[Event | UnreadableEvent]:
        return [row_event(row) for row in await self._select_events(query)]

    async def hourly_counts(
        self, kinds: frozenset[EventKind], since: dt.datetime
    ) -> dict[tuple[dt.datetime, EventKind], int]:
        if not kinds:
            return {}
        rows = await self._count_hourly(sorted(kind.value for kind in kinds), since)
        return {(hour.astimezone(dt.UTC), EventKind(kind)): count for hour, kind, count in rows}


def hour_start(text: str) -> dt.datetime:
    """An hour as SQLite's count names it ('2026-03-04T10'), as the UTC time it starts at."""
    return dt.datetime.strptime(text, "%Y-%m-%dT%H").replace(tzinfo=dt.UTC)


def readable_time(text: str) -> dt.datetime | None:
    """A stored time (text) in UTC, or None when it is not one (a row edited by hand)."""
    try:
        return converter.structure(text, dt.datetime)
    except (ValueError, TypeError, OverflowError):
        return None


def millisecond_text(at: dt.datetime) -> str:
    """A time in UTC as SQLite's strftime('%Y-%m-%dT%H:%M:%f') writes it, to compare with."""
    return at.astimezone(dt.UTC).isoformat(timespec="milliseconds").removesuffix("+00:00")
