"""The in-memory event store behind resumable HTTP streams: bounded, and per MCP session."""

from mcp.server.streamable_http import GET_STREAM_KEY, EventMessage
from mcp.types import JSONRPCMessage, JSONRPCNotification

from nineplan_adapters.entrypoints.mcp.resumable import SessionEventStore, StreamOwner, sent_by


def note(number: int) -> JSONRPCMessage:
    return JSONRPCNotification(jsonrpc="2.0", method="notifications/message", params={"n": number})


async def replayed(store: SessionEventStore, after: str) -> tuple[str | None, list[int]]:
    """What the store replays after `after`: the stream and the notes' numbers."""
    sent: list[EventMessage] = []

    async def collect(event: EventMessage) -> None:
        sent.append(event)

    stream = await store.replay_events_after(after, collect)
    return stream, [event.message.params["n"] for event in sent]  # type: ignore[union-attr,index]


async def test_a_stream_replays_what_came_after_an_event_to_its_own_session_only():
    """Events after the given id come back in order, without the priming event. Another
    session resuming after that id replays none of them (its GET stream goes on live, with
    nothing replayed); a request of no known session and a malformed id get nothing at all."""
    store = SessionEventStore()
    mine, theirs = StreamOwner(), StreamOwner()
    with sent_by(mine):
        first = await store.store_event(GET_STREAM_KEY, None)
        for number in (1, 2, 3):
            await store.store_event(GET_STREAM_KEY, note(number))
        posted = await store.store_event("7", None)
        await store.store_event("7", note(70))
    with sent_by(theirs):
        await store.store_event(GET_STREAM_KEY, note(99))
        assert await replayed(store, first) == (GET_STREAM_KEY, [])
        assert await replayed(store, posted) == (None, [])
    with sent_by(mine):
        assert await replayed(store, first) == (GET_STREAM_KEY, [1, 2, 3])
        assert await replayed(store, posted) == ("7", [70])
        assert await replayed(store, "not-an-id") == (None, [])
    with sent_by(None):
        assert await replayed(store, first) == (None, [])
        unowned = await store.store_event(GET_STREAM_KEY, note(4))
        assert await replayed(store, unowned) == (None, [])


async def test_the_store_keeps_the_last_events_of_the_most_recent_streams():
    """Each stream keeps its last `per_stream` events; past `streams` streams, the least
    recently written one is forgotten: its ids replay nothing, and a forgotten GET stream
    goes on live instead of ending (which would have the client ask again, for ever)."""
    store = SessionEventStore(per_stream=2, streams=2)
    owner = StreamOwner()
    with sent_by(owner):
        oldest = await store.store_event("1", None)
        listened = await store.store_event(GET_STREAM_KEY, note(0))
        start = await store.store_event("2", None)
        for number in (1, 2, 3):
            await store.store_event("2", note(number))
        assert await replayed(store, start) == ("2", [2, 3])
        await store.store_event("3", None)
        assert await replayed(store, oldest) == (None, [])
        assert await replayed(store, listened) == (GET_STREAM_KEY, [])
        assert await replayed(store, start) == ("2", [2, 3])
