"""How journal events look to people and scripts: JSON objects and one-line text.

Kept out of the MCP package so that `nineplan log` starts without loading the MCP SDK.
"""

import json
from typing import Any

from typing_extensions import TypedDict

from nineplan_core.journal import Event, UnreadableEvent
from nineplan_core.model import format_timestamp


class EventView(TypedDict):
    seq: int
    at: str
    kind: str
    plan_id: str | None
    actor: str
    detail: dict[str, Any]


def event_view(event: Event) -> EventView:
    """An event as JSON: what `recent`, `nineplan log --json` and the log resource show."""
    return {
        "seq": event.seq,
        "at": format_timestamp(event.at),
        "kind": event.kind.value,
        "plan_id": event.plan_id,
        "actor": event.actor.value,
        "detail": dict(event.detail),
    }


class UnreadableEventView(TypedDict):
    seq: int
    unreadable: str


def journal_entry(event: Event | UnreadableEvent) -> EventView | UnreadableEventView:
    """A journal row as JSON; a damaged one says so instead of failing the listing."""
    if isinstance(event, UnreadableEvent):
        return {"seq": event.seq, "unreadable": event.problem}
    return event_view(event)


def event_line(event: Event | UnreadableEvent) -> str:
    """One line of `nineplan log`: seq, time, actor, kind, plan and what the detail says."""
    if isinstance(event, UnreadableEvent):
        return f"{event.seq:>5}  (this journal row cannot be read: {event.problem})"
    detail = ", ".join(f"{key}={_short(value)}" for key, value in event.detail.items())
    return (
        f"{event.seq:>5}  {format_timestamp(event.at)}  {event.actor.value:<6}  "
        f"{event.kind.value:<15}  {event.plan_id or '-':<5}  {detail}"
    ).rstrip()


def _short(value: object, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
