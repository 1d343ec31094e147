"""Server-Sent Events for an open session page (or its graph page): re-rendered fragments
whenever it changes.

Three things wake the stream: the session's change ticks (the watch port: any process's
commit), the active plan's file (watchfiles: the agent's notes as it writes them), and the
moment the earliest live lease among the active plans lapses (staleness is judged when someone
looks, so it writes nothing and sends no tick: the stream looks then, docs/architecture.md, "Workers and leases"). Each wake
re-renders the page's fragments and sends those that differ from what the page has.
"""

import contextlib
import datetime as dt
import json
import logging
import math
from collections.abc import AsyncIterator, Iterable
from pathlib import Path

import anyio
import attrs
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.types import Receive, Scope, Send

from nineplan_adapters.entrypoints.file_watch import content_changes
from nineplan_adapters.entrypoints.web.pages import Pages, SessionView, listed
from nineplan_core.errors import NinePlanError, SessionNotFoundError
from nineplan_core.model import SessionName
from nineplan_core.ports import SessionWatch
from nineplan_core.results import SessionState, SessionSummary, UnreadableSession

log = logging.getLogger("nineplan.web")

#: A comment line this often keeps proxies from closing an idle stream, and finds gone clients.
KEEP_ALIVE = 15.0
#: How long after a lease lapses the stream looks again (a plan is stale only once its lease
#: is strictly past, and another process's clock may be a little ahead of this one's).
LAPSE_MARGIN = 0.25
#: Where a stream puts its events for the response to send.
Events = MemoryObjectSendStream[ServerSentEvent]


def until_a_lease_lapses(state: SessionState, now: dt.datetime, lease_minutes: float) -> float:
    """Seconds from `now` until the earliest live lease among the active plans has lapsed
    (its `last_seen` plus the lease, and LAPSE_MARGIN after), or infinity when no lease is
    live: then the plan turns stale, and the page must look again to show it."""
    lease = dt.timedelta(minutes=lease_minutes)
    lapses = [
        (lapses_at - now).total_seconds()
        for hold in state.active_plans
        if (lapses_at := hold.hold.lapses_at(lease)) is not None and not hold.hold.stale(now, lease)
    ]
    return max(min(lapses), 0.0) + LAPSE_MARGIN if lapses else math.inf


def _wake(wakes: MemoryObjectSendStream[None]) -> None:
    """Ask for a re-render; one pending wake is enough (changes coalesce)."""
    with contextlib.suppress(anyio.WouldBlock):
        wakes.send_nowait(None)


async def _forward(ticks: AsyncIterator[None], wakes: MemoryObjectSendStream[None]) -> None:
    async for _ in ticks:
        _wake(wakes)


@attrs.define
class FileFollower:
    """Watches the active plans' files, one watch per folder, and wakes the stream when the
    content of one of them changes (every worker's notes grow live on the board)."""

    tasks: TaskGroup
    wakes: MemoryObjectSendStream[None]
    paths: frozenset[str] = frozenset()
    _stops: list[anyio.Event] = attrs.field(factory=list)

    def follow(self, paths: Iterable[str]) -> None:
        wanted = frozenset(paths)
        if wanted == self.paths:
            return
        for stop in self._stops:
            stop.set()  # each watcher's thread sees it within a step
        self._stops = []
        self.paths = wanted
        folders: dict[Path, list[Path]] = {}
        for path in map(Path, wanted):
            folders.setdefault(path.parent, []).append(path)
        for folder, files in folders.items():
            if folder.is_dir():
                stop = anyio.Event()
                self._stops.append(stop)
                self.tasks.start_soon(self._watch, files, stop)

    async def _watch(self, paths: list[Path], stop: anyio.Event) -> None:
        async for _ in content_changes(paths, stop):
            _wake(self.wakes)

    def close(self) -> None:
        self.follow(())


def _still_here() -> ServerSentEvent:
    return ServerSentEvent(comment="still here", sep="\n")


class EventStream(EventSourceResponse):
    """A `text/event-stream` response: `stream` sends its events until it returns or the
    client goes, and a `: still here` comment every KEEP_ALIVE seconds keeps the line open."""

    def __init__(self) -> None:
        self._events, self._pending = anyio.create_memory_object_stream[ServerSentEvent]()
        super().__init__(
            self._pending,
            data_sender_callable=self._send_all,
            sep="\n",
            ping=KEEP_ALIVE,
            ping_message_factory=_still_here,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:  # a HEAD request never starts the stream: nothing else closes these
            self._events.close()
            self._pending.close()

    async def _send_all(self) -> None:
        async with self._events:
            await self.stream(self._events)

    async def stream(self, events: Events) -> None:
        raise NotImplementedError


class LiveResponse(EventStream):
    """`fragments` events for one session page: the parts that changed, at each change."""

    #: Whether the active plans' files wake the stream (the board shows their notes).
    follows_files = True

    def __init__(
        self, pages: Pages, watch: SessionWatch, name: SessionName, view: SessionView
    ) -> None:
        super().__init__()
        self.pages = pages
        self.watch = watch
        self.name = name
        self.view = view

    async def fragments(self) -> tuple[dict[str, str], SessionState]:
        """The page's parts that change, rendered as the page renders them, and the state
        they show."""
        return await self.pages.fragments(self.name, self.view)

    async def stream(self, events: Events) -> None:
        wakes, woken = anyio.create_memory_object_stream[None](1)
        async with (
            wakes,
            woken,
            self.watch.changes(self.name) as ticks,
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(_forward, ticks, wakes)
            follower = FileFollower(tasks, wakes)
            try:
                await self._stream(events, woken, follower)
            finally:
                follower.close()
                tasks.cancel_scope.cancel()

    async def _stream(
        self, events: Events, woken: MemoryObjectReceiveStream[None], follower: FileFollower
    ) -> None:
        shown: dict[str, str] = {}
        while True:
            try:
                fragments, state = await self.fragments()
            except SessionNotFoundError:
                return  # the session went away: the page's next reload says so
            except NinePlanError as exc:  # busy or failing storage: try again at the next wake
                log.warning("could not re-render a live page: %s", exc.message)
                fragments, state = {}, None
            lapse = math.inf
            if state is not None:
                if self.follows_files:
                    follower.follow(hold.path for hold in state.active_plans)
                lapse = self._until_a_lease_lapses(state)
            changed = {key: html for key, html in fragments.items() if shown.get(key) != html}
            if changed:
                await events.send(_event("fragments", changed))
                shown.update(changed)
            with anyio.move_on_after(lapse):  # a lapse is a wake with no change behind it
                await woken.receive()

    def _until_a_lease_lapses(self, state: SessionState) -> float:
        lease_minutes = self.pages.service.lease_minutes
        return until_a_lease_lapses(state, self.pages.clock(), lease_minutes)


class GraphLiveResponse(LiveResponse):
    """`fragments` events for a session's graph page: the drawing when a plan changes or a
    lease lapses (a box turns stale); a plan's notes do not show there."""

    follows_files = False

    async def fragments(self) -> tuple[dict[str, str], SessionState]:
        return await self.pages.graph_fragments(self.name)


class SessionsLiveResponse(EventStream):
    """Live updates for the session list: at each change, only the changed sessions are read.

    The first event (and any change to which sessions are listed, or to their order: the
    newest activity first) brings the whole table body as the `sessions` fragment; after that
    a `rows` event brings each changed row by name.
    """

    def __init__(
        self, pages: Pages, watch: SessionWatch, *, archived: bool = False, query: str = ""
    ) -> None:
        super().__init__()
        self.pages = pages
        self.watch = watch
        #: Archived sessions are shown too (the list's `?archived=1`).
        self.archived = archived
        #: Only the sessions whose name or task holds this (the list's `?q=`).
        self.query = query

    async def stream(self, events: Events) -> None:
        async with self.watch.sessions() as changes:
            rows = await self._read(None) or {}
            lines = self._lines(rows)
            shown = {line.name: self.pages.row_html(line) for line in lines}
            body = self.pages.rows_html(lines, self.query)
            await events.send(_event("fragments", {"sessions": body}))
            async for changed in changes:
                if (fresh := await self._read(sorted(changed))) is None:
                    continue  # the rows stay as they were until the next change
                names = (rows.keys() - changed) | fresh.keys()
                rows = {name: fresh.get(name) or rows[name] for name in names}
                shown = await self._send(events, shown, self._lines(rows), fresh.keys())

    def _lines(
        self, rows: dict[str, SessionSummary | UnreadableSession]
    ) -> list[SessionSummary | UnreadableSession]:
        return listed(rows.values(), self.query)

    async def _send(
        self,
        events: Events,
        shown: dict[str, str],
        lines: list[SessionSummary | UnreadableSession],
        fresh: Iterable[str],
    ) -> dict[str, str]:
        """Send what changed from `shown` (the rows the page has, in order) to `lines`: the
        whole body when the listed sessions or their order changed, else the changed rows."""
        redrawn = set(fresh)
        html = {
            line.name: self.pages.row_html(line)
            if line.name in redrawn or line.name not in shown
            else shown[line.name]
            for line in lines
        }
        if list(html) != list(shown):
            body = "\n".join(html.values()) or self.pages.rows_html([], self.query)
            await events.send(_event("fragments", {"sessions": body}))
        elif moved := {name: row for name, row in html.items() if shown[name] != row}:
            await events.send(_event("rows", moved))
        return html

    async def _read(
        self, names: list[str] | None
    ) -> dict[str, SessionSummary | UnreadableSession] | None:
        """The lines of `names` (every session for None); None when storage fails."""
        try:
            return await self.pages.session_rows(names, archived=self.archived)
        except NinePlanError as exc:  # busy or failing storage: try again at the next change
            log.warning("could not read the session list: %s", exc.message)
            return None


def _event(kind: str, data: dict[str, str]) -> ServerSentEvent:
    """`event: KIND` and one `data:` line of JSON (which holds no line break)."""
    return ServerSentEvent(json.dumps(data, ensure_ascii=False), event=kind, sep="\n")
