"""Subscriptions in process: an in-memory client of each era on a server over real SQLite
sessions, changed through a second catalog (another connection, as another process would)."""

import logging
import warnings
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.types import ResourceListChangedNotification, ResourceUpdatedNotification

from nineplan_adapters.entrypoints.mcp import build_server
from nineplan_adapters.entrypoints.mcp.changes import Change, JournalChanges
from nineplan_adapters.entrypoints.mcp.uris import session_of
from nineplan_adapters.entrypoints.mcp.wayback import Notifier, Subscribers
from nineplan_core.errors import DatabaseError, SessionNotFoundError
from nineplan_core.model import PlanContent
from nineplan_core.plan_file import PlanText
from nineplan_core.service import NinePlan
from tests.fakes import PLAN, Backend, open_backend

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy verbs


@attrs.define
class Pair:
    """The server's use cases and another writer's, on one sessions folder."""

    ours: Backend
    theirs: NinePlan
    root: Path

    def server(self, **extra: Any) -> Any:
        return build_server(self.ours.service, **extra)


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[Pair]:
    async with (
        open_backend("sqlite", tmp_path) as ours,
        open_backend("sqlite", tmp_path) as theirs,
    ):
        yield Pair(ours, theirs.service, tmp_path)


def state_uri(name: str) -> str:
    return f"nineplan://sessions/{name}/state"


async def test_a_legacy_in_memory_client_hears_of_another_writer(pair: Pair):
    """resources/subscribe, then a change through another connection: resources/updated for
    the URI and resources/list_changed; unsubscribing stops the updates."""
    updated: list[str] = []
    arrived, listed = anyio.Event(), anyio.Event()

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()
        elif isinstance(message, ResourceListChangedNotification):
            listed.set()

    name = await pair.ours.session()
    async with Client(pair.server(), mode="legacy", message_handler=handler) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource(state_uri(name))
        await pair.theirs.add_plan(name, **PLAN)
        with anyio.fail_after(5):
            await arrived.wait()
            await listed.wait()
        assert updated == [state_uri(name)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.unsubscribe_resource(state_uri(name))
            await client.unsubscribe_resource(state_uri(name))  # twice is harmless
            with pytest.raises(MCPError) as caught:
                await client.subscribe_resource("nineplan://sessions/../state")
        assert caught.value.error.data == {"uri": "nineplan://sessions/../state"}


async def test_a_listen_stream_in_memory_hears_of_another_writer(pair: Pair):
    """subscriptions/listen on the 2026-07-28 era: ResourceUpdated and ResourcesListChanged
    arrive after another connection adds a plan; closing the stream stops the follower."""
    name = await pair.ours.session()
    server = pair.server()
    async with Client(server, mode="auto") as client:
        uri = state_uri(name)
        async with client.listen(resource_subscriptions=[uri], resources_list_changed=True) as sub:
            await pair.theirs.add_plan(name, **PLAN)
            seen: list[Any] = []
            with anyio.fail_after(5):
                async for event in sub:
                    seen.append(event)
                    if ResourceUpdated(uri=uri) in seen and ResourcesListChanged() in seen:
                        break
        with anyio.fail_after(5):  # the stream's end is noted: nobody listens any more
            while server.notifier.subscribers.uris():
                await anyio.sleep(0.01)
        assert server.notifier.subscribers.list_listeners == 0


async def test_an_import_of_several_plans_is_heard_once(pair: Pair):
    """Another writer imports three plans in one transaction (three journal events): the
    subscriber hears one resources/updated and one list_changed for it, not three of each.
    A later add is heard on its own, so the count is taken after everything has arrived."""
    updated: list[str] = []
    listed: list[str] = []
    heard_twice = anyio.Event()

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
        elif isinstance(message, ResourceListChangedNotification):
            listed.append("list")
        if len(updated) >= 2 and len(listed) >= 2:
            heard_twice.set()

    name = await pair.ours.session()
    async with Client(pair.server(), mode="legacy", message_handler=handler) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource(state_uri(name))
        three = [PlanText(PlanContent(**{**PLAN, "goal": goal}), "") for goal in "ABC"]
        await pair.theirs.import_plans(name, three)
        with anyio.fail_after(5):
            while not updated:
                await anyio.sleep(0.01)
        await pair.theirs.add_plan(name, **PLAN)
        with anyio.fail_after(5):
            await heard_twice.wait()
        await anyio.sleep(0.3)  # anything more would have come by now
    assert updated == [state_uri(name)] * 2
    assert listed == ["list"] * 2


async def test_a_current_session_is_followed_for_list_changes(pair: Pair):
    """A listener for list changes hears of plans coming to the client's current session,
    without naming any resource."""
    server = pair.server()
    async with Client(server, mode="auto") as client:
        name = (await client.call_tool("9plan_session_create", {})).structured_content[
            "session_name"
        ]
        async with client.listen(resources_list_changed=True) as sub:
            await pair.theirs.add_plan(name, **PLAN)
            with anyio.fail_after(5):
                assert await anext(sub) == ResourcesListChanged()


async def test_the_change_feed_tells_which_changes_alter_the_resource_list(backend: Backend):
    """Following a session through the journal's change feed, on every backend: an add, a
    completion and a discard change the resource list, a pull, a defer and a move do not;
    what happened before following is not reported."""
    changes = JournalChanges(backend.service)
    service = backend.service
    name = await backend.session()
    await service.add_plan(name, **PLAN)
    async with changes.follow(name) as stream:

        async def listed_after(step: Awaitable[object]) -> bool:
            await step
            with anyio.fail_after(5):
                change = await anext(stream)
            assert change.session == name
            return change.plans_came_or_went

        assert not await listed_after(service.pull_plan(name))
        assert await listed_after(service.complete_plan(name, "done"))
        assert await listed_after(service.add_plan(name, **PLAN))
        later = (await service.session_state(name)).queue[0].id
        assert await listed_after(service.add_plan(name, **PLAN))
        assert not await listed_after(service.move_plan(name, later, "back"))
        assert not await listed_after(service.pull_plan(name))
        assert not await listed_after(service.defer_plan(name, "later"))
        assert not await listed_after(service.pull_plan(name))
        assert await listed_after(service.discard_plan(name, "not needed"))
    with pytest.raises(SessionNotFoundError):
        async with changes.follow("no-such-session"):
            pass


@attrs.define
class GoneSession:
    """A legacy subscriber whose connection has closed."""

    async def send_resource_updated(self, uri: str) -> None:
        raise anyio.ClosedResourceError

    async def send_resource_list_changed(self) -> None:
        raise anyio.ClosedResourceError


class NoBus:
    async def publish(self, event: object) -> None:
        pass

    def subscribe(self, listener: object) -> Any:
        return lambda: None


async def test_a_subscriber_that_has_gone_is_forgotten():
    """A legacy connection that closed is dropped at the next change, not retried forever."""
    subscribers = Subscribers()
    subscribers.subscribe("gone", GoneSession(), state_uri("brave-quiet-otter"))  # type: ignore[arg-type]
    notifier = Notifier(None, NoBus(), subscribers, set)
    await notifier.announce(Change("brave-quiet-otter", plans_came_or_went=True))
    assert subscribers.legacy == {}
    await notifier.refresh()  # without a source there is nothing to follow


def test_subscribers_are_bounded_and_uris_name_their_session():
    """The least recently subscribing connection is forgotten beyond the capacity; only
    nineplan session URIs name a session."""
    subscribers = Subscribers(capacity=2)
    for client in ("a", "b", "c"):
        subscribers.subscribe(client, GoneSession(), state_uri("brave-quiet-otter"))  # type: ignore[arg-type]
    assert list(subscribers.legacy) == ["b", "c"]
    assert subscribers.sessions() == {"brave-quiet-otter"}
    assert session_of("nineplan://sessions/brave-quiet-otter/plans/a3x9k") == "brave-quiet-otter"
    assert session_of("nineplan://sessions/brave-quiet-otter/log") == "brave-quiet-otter"
    assert session_of("nineplan://sessions/brave/state") is None
    assert session_of("file:///etc/passwd") is None


class BrokenChanges:
    """A change source that cannot follow anything (a session that went away, say)."""

    @asynccontextmanager
    async def follow(self, name: str) -> AsyncIterator[AsyncIterator[Change]]:
        raise SessionNotFoundError(name)
        yield  # pragma: no cover - never reached


async def test_a_session_that_cannot_be_followed_does_not_end_the_server(tmp_path: Path):
    """A subscription whose session cannot be followed is still accepted, and the server goes
    on answering."""
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        server = build_server(backend.service, changes=BrokenChanges())
        async with Client(server, mode="legacy") as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(state_uri(name))
            state = await client.call_tool("9plan_admin_state", {"session_name": name})
            assert not state.is_error


class VanishingChanges:
    """A change source whose session goes away after one change (deleted under the server)."""

    @asynccontextmanager
    async def follow(self, name: str) -> AsyncIterator[AsyncIterator[Change]]:
        async def feed() -> AsyncIterator[Change]:
            yield Change(name, plans_came_or_went=True)
            raise SessionNotFoundError(name)

        yield feed()


def quiet(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if "not following session" in record.getMessage()]


async def test_a_session_that_goes_away_while_followed_is_let_go_quietly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    """A feed that fails with a domain error after its first change (inside the announcer's
    task group) ends the follow with an info line naming the session, not a warning with a
    traceback; the change before it was announced, and the server goes on answering."""
    listed = anyio.Event()

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceListChangedNotification):
            listed.set()

    caplog.set_level("INFO", logger="nineplan")
    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        server = build_server(backend.service, changes=VanishingChanges())
        async with Client(server, mode="legacy", message_handler=handler) as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(state_uri(name))
            with anyio.fail_after(5):
                await listed.wait()
                while not quiet(caplog):
                    await anyio.sleep(0.01)
            assert not (
                await client.call_tool("9plan_admin_state", {"session_name": name})
            ).is_error
    assert name in quiet(caplog)[0].getMessage()
    assert not [record for record in caplog.records if record.levelname == "WARNING"]


@attrs.define
class FlakyChanges:
    """A change source whose first follow breaks off with a storage error; later ones hold."""

    follows: int = 0

    @asynccontextmanager
    async def follow(self, name: str) -> AsyncIterator[AsyncIterator[Change]]:
        self.follows += 1
        first = self.follows == 1

        async def feed() -> AsyncIterator[Change]:
            if first:
                raise DatabaseError("the session is busy in another process")
            await anyio.sleep_forever()
            yield Change(name, plans_came_or_went=False)  # pragma: no cover - never reached

        yield feed()


async def test_a_follow_that_broke_off_announces_the_gap_when_it_resumes(tmp_path: Path):
    """What changed while a session went unfollowed (its follow broke off on a storage error,
    until the next refresh followed it again) cannot be known: the new follow announces one
    change, so a subscriber re-reads rather than missing it."""
    updated = anyio.Event()

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.set()

    async with open_backend("sqlite", tmp_path) as backend:
        name = await backend.session()
        changes = FlakyChanges()
        server = build_server(backend.service, changes=changes)
        async with Client(server, mode="legacy", message_handler=handler) as client:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(state_uri(name))
            with anyio.fail_after(5):
                await updated.wait()
        assert changes.follows >= 2
