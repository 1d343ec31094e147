"""Resumable streams on legacy-era streamable HTTP: the SDK's `EventStore`, kept in memory.

With an event store the SDK gives every server-sent event an id, opens each POST's stream with
a priming event, and answers a GET carrying `Last-Event-ID` with what the stream sent after that
event (docs/deployment.md). The SDK's sessionless 2026-07-28 path takes no store.

The store is bounded, per server process, and lost when it stops: the last `PER_STREAM` events
of each of the `STREAMS` most recently written streams. A client that was away longer, or
reconnects to a restarted server, gets what is left (or nothing) and re-reads state as usual.

The SDK names a stream by its request id, or `_GET_stream` for a session's standalone stream,
so two MCP sessions use the same names. Each event is therefore kept under the MCP session it
was sent on, and only that session may replay it: `SessionStreams` (in front of the SDK's app)
marks each request with its session's `StreamOwner`, which the tasks the SDK starts for a new
session inherit as context.

A GET stream resumed after an event the store no longer has (forgotten, or another session's)
replays nothing and goes on live: were it closed, the client would ask again with the same id,
and never hear a notification again.
"""

import itertools
import re
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import attrs
from mcp.server.streamable_http import (
    GET_STREAM_KEY,
    MCP_SESSION_ID_HEADER,
    EventCallback,
    EventId,
    EventMessage,
    EventStore,
    StreamId,
)
from mcp.types import JSONRPCMessage
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Events kept per stream: a GET stream carries resource notifications, a POST's stream its
#: priming event, its response and what the request sent meanwhile.
PER_STREAM = 100
#: Streams kept per server process (each POST is one); the least recently written goes first.
STREAMS = 1_000
#: MCP sessions whose requests can be told apart (the SDK's own default session limit).
SESSIONS = 10_000
#: An event id: the stream's number, the event's, and `-get` on a session's GET stream.
EVENT_ID = re.compile(r"(\d+)-(\d+)(-get)?")


class StreamOwner:
    """One MCP session, as the store knows it: only its identity matters."""


_owner: ContextVar[StreamOwner | None] = ContextVar("nineplan_stream_owner", default=None)


@contextmanager
def sent_by(owner: StreamOwner | None) -> Iterator[None]:
    """Events stored (and replays asked for) in this block, and in the tasks it starts, belong
    to `owner`; with None they are never replayed."""
    token = _owner.set(owner)
    try:
        yield
    finally:
        _owner.reset(token)


@attrs.define
class _Stream:
    owner: StreamOwner
    stream_id: StreamId
    events: "deque[tuple[int, JSONRPCMessage | None]]"


@attrs.define
class SessionEventStore(EventStore):
    """The last `per_stream` events of the `streams` most recently written streams; an event
    replays only to the session that stored it."""

    per_stream: int = PER_STREAM
    streams: int = STREAMS
    _kept: "OrderedDict[int, _Stream]" = attrs.field(factory=OrderedDict)
    _numbers: "dict[tuple[StreamOwner, StreamId], int]" = attrs.field(factory=dict)
    _next: "itertools.count[int]" = attrs.field(factory=lambda: itertools.count(1))

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        owner = _owner.get()
        if owner is None:  # no session to replay it to: an id, and nothing kept
            return _event_id(0, next(self._next), stream_id)
        key = (owner, stream_id)
        number = self._numbers.get(key)
        if number is None or number not in self._kept:
            number = next(self._next)
            self._numbers[key] = number
            self._kept[number] = _Stream(owner, stream_id, deque(maxlen=self.per_stream))
        stream = self._kept[number]
        self._kept.move_to_end(number)
        while len(self._kept) > self.streams:
            _, gone = self._kept.popitem(last=False)
            self._numbers.pop((gone.owner, gone.stream_id), None)
        sequence = next(self._next)
        stream.events.append((sequence, message))
        return _event_id(number, sequence, stream_id)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        parsed = EVENT_ID.fullmatch(last_event_id)
        owner = _owner.get()
        stream = self._kept.get(int(parsed.group(1))) if parsed else None
        if parsed is None or owner is None:
            return None
        if stream is None or stream.owner is not owner:  # forgotten, or another session's
            return GET_STREAM_KEY if parsed.group(3) else None  # a GET stream goes on live
        after = int(parsed.group(2))
        for sequence, message in list(stream.events):
            if sequence > after and message is not None:
                event_id = _event_id(int(parsed.group(1)), sequence, stream.stream_id)
                await send_callback(EventMessage(message, event_id))
        return stream.stream_id


def _event_id(stream: int, sequence: int, stream_id: StreamId) -> EventId:
    return f"{stream}-{sequence}{'-get' if stream_id == GET_STREAM_KEY else ''}"


@attrs.define
class SessionStreams:
    """ASGI middleware in front of the SDK's streamable HTTP app: each request runs with its
    MCP session's StreamOwner in context (a new one for a request that opens a session, learnt
    from the `Mcp-Session-Id` its answer carries)."""

    app: ASGIApp
    capacity: int = SESSIONS
    _owners: "OrderedDict[str, StreamOwner]" = attrs.field(factory=OrderedDict)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = Headers(scope=scope).get(MCP_SESSION_ID_HEADER)
        if session is not None:
            owner = self._owners.get(session)
            if owner is not None:
                self._owners.move_to_end(session)
            with sent_by(owner):
                await self.app(scope, receive, send)
            return
        opened = StreamOwner()

        async def learn_session(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = Headers(raw=message.get("headers", [])).get(MCP_SESSION_ID_HEADER)
                if given is not None:
                    self._remember(given, opened)
            await send(message)

        with sent_by(opened):
            await self.app(scope, receive, learn_session)

    def _remember(self, session: str, owner: StreamOwner) -> None:
        self._owners[session] = owner
        while len(self._owners) > self.capacity:
            self._owners.popitem(last=False)
