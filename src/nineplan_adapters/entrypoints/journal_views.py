"""How journal events look to people and scripts: JSON objects and one-line text.

Kept out of the MCP package so that `nineplan log` starts without loading the MCP SDK.
"""

import json
from collections.abc import Mapping
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
    return entry_line(journal_entry(event))


def entry_line(entry: Mapping[str, Any]) -> str:
    """`event_line` of a journal row as JSON (`journal_entry`): what a tool result's text
    shows of the `recent` events its structured content carries."""
    if "unreadable" in entry:
        return f"{entry['seq']:>5}  (this journal row cannot be read: {entry['unreadable']})"
    detail = ", ".join(f"{key}={_short(value)}" for key, value in entry["detail"].items())
    return (
        f"{entry['seq']:>5}  {entry['at']}  {entry['actor']:<6}  "
        f"{entry['kind']:<15}  {entry['plan_id'] or '-':<5}  {detail}"
    ).rstrip()


def _short(value: object, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
