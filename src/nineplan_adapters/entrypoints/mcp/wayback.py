"""MCP beyond tools: the resume prompt, completions (docs/clients.md), and resource
subscriptions (docs/architecture.md).

Subscriptions reach clients of both protocol eras:

- 2026-07-28 clients open `subscriptions/listen`; the SDK's ListenHandler serves it, fed by the
  server's SubscriptionBus, on which this module publishes.
- Legacy clients send `resources/subscribe`, which mcp 2.3.0's MCPServer does not serve: the
  pair is registered on its low-level server, and each subscriber is notified on its own
  connection (`ServerSession.send_resource_updated`).

What to publish comes from a SessionChanges source (changes.py), so a change made by any
process reaches every subscriber. Sessions are followed only while someone listens.
"""

import logging
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import attrs
from anyio.abc import TaskGroup, TaskStatus
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.session import ServerSession
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated, SubscriptionBus
from mcp.types import (
    INVALID_PARAMS,
    Completion,
    CompletionArgument,
    CompletionContext,
    EmptyResult,
    PromptReference,
    ResourceTemplateReference,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    UnsubscribeRequestParams,
)

from nineplan_adapters.entrypoints.mcp.changes import Change, SessionChanges
from nineplan_adapters.entrypoints.mcp.clients import client_key
from nineplan_adapters.entrypoints.mcp.results import error_text
from nineplan_adapters.entrypoints.mcp.suggestions import for_agents
from nineplan_adapters.entrypoints.mcp.tools import state_text
from nineplan_adapters.entrypoints.mcp.uris import PLAN_URI, SESSION_TEMPLATES, session_of
from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES, ToolNames
from nineplan_core.callers import Caller
from nineplan_core.errors import NinePlanError
from nineplan_core.model import SESSION_NAME
from nineplan_core.service import NinePlan

log = logging.getLogger("nineplan.mcp")

#: How often the set of followed sessions is brought in line with the current sessions.
REFRESH_SECONDS = 1.0
MAX_COMPLETIONS = 100


@attrs.define
class Subscribers:
    """Who listens to which resources: legacy connections, and 2026-07-28 listen streams."""

    capacity: int = 10_000
    #: client key -> (the connection's latest ServerSession, the URIs it subscribed to)
    legacy: "OrderedDict[str, tuple[ServerSession, set[str]]]" = attrs.field(factory=OrderedDict)
    listened: Counter[str] = attrs.field(factory=Counter)
    list_listeners: int = 0

    def subscribe(self, client: str, session: ServerSession, uri: str) -> None:
        _, uris = self.legacy.pop(client, (session, set()))
        self.legacy[client] = (session, uris | {uri})
        while len(self.legacy) > self.capacity:  # connections that left without unsubscribing
            self.legacy.popitem(last=False)

    def unsubscribe(self, client: str, uri: str) -> None:
        if (entry := self.legacy.get(client)) is not None:
            entry[1].discard(uri)
            if not entry[1]:
                del self.legacy[client]

    def forget(self, client: str) -> None:
        self.legacy.pop(client, None)

    def uris(self) -> set[str]:
        return set(self.listened) | {uri for _, uris in self.legacy.values() for uri in uris}

    def sessions(self) -> set[str]:
        return {name for uri in self.uris() if (name := session_of(uri)) is not None}

    def want_list_changes(self) -> bool:
        return bool(self.legacy) or self.list_listeners > 0


@attrs.define
class Notifier:
    """Follows the sessions someone listens to and tells the listeners when they change."""

    changes: SessionChanges | None
    bus: SubscriptionBus
    subscribers: Subscribers
    #: The sessions that are some client's current one: their plans are in resources/list.
    in_use: Callable[[], set[str]]
    _group: TaskGroup | None = None
    _followed: dict[str, anyio.CancelScope] = attrs.field(factory=dict)
    #: Sessions whose follow broke off: whatever changed until the next follow began is
    #: unseen, so that one announces a change as soon as it has its baseline.
    _interrupted: set[str] = attrs.field(factory=set)
    _refreshing: anyio.Lock = attrs.field(factory=anyio.Lock)  # one refresh at a time

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Follow sessions until cancelled (the server's lifespan runs this)."""
        async with anyio.create_task_group() as group:
            self._group = group
            task_status.started()
            try:
                while True:
                    await self.refresh()
                    await anyio.sleep(REFRESH_SECONDS)
            finally:
                self._group = None

    async def refresh(self) -> None:
        """Follow exactly the sessions that are wanted now; a new one's baseline is taken
        before this returns, so no change after a subscription is missed."""
        if self.changes is None or self._group is None:
            return
        async with self._refreshing:
            wanted = self.subscribers.sessions()
            if self.subscribers.want_list_changes():
                wanted |= self.in_use()
            for name in set(self._followed) - wanted:
                self._followed.pop(name).cancel()
            for name in sorted(wanted - set(self._followed)):
                await self._group.start(self._follow, self.changes, name)

    async def _follow(
        self, changes: SessionChanges, name: str, *, task_status: TaskStatus[None]
    ) -> None:
        started = False
        with anyio.CancelScope() as scope:
            self._followed[name] = scope
            try:
                async with changes.follow(name) as stream:
                    task_status.started()
                    started = True
                    if name in self._interrupted:
                        self._interrupted.discard(name)
                        await self.announce(Change(name, plans_came_or_went=True))
                    await self._announce_together(stream)
            except* NinePlanError as caught:  # no such session (yet), or it cannot be watched
                log.info("not following session %s: %s", name, _messages(caught))
                self._broke_off(name, started=started)
            except* Exception:  # one session's watch must never end the server
                log.warning("stopped following session %s", name, exc_info=True)
                self._broke_off(name, started=started)
            finally:
                if self._followed.get(name) is scope:
                    del self._followed[name]
                if not started:
                    task_status.started()

    def _broke_off(self, name: str, *, started: bool) -> None:
        if started:  # the next follow (the refresh takes it up again) announces the gap
            self._interrupted.add(name)

    async def _announce_together(self, stream: AsyncIterator[Change]) -> None:
        """Announce the changes of `stream`, the ones that come together as one.

        The feed yields a commit's events one after another without waiting (an import of
        N plans is N events), and the announcer runs when the feed waits for the next
        commit: whatever has come by then is one change, so a subscriber hears once. At most
        one change waits (the others are merged into it), however slow the listeners are.
        """
        waiting: Change | None = None
        ended = False
        wake, announced = anyio.Event(), anyio.Event()

        async def announcer() -> None:
            nonlocal waiting, wake
            while waiting is not None or not ended:
                if waiting is None:
                    await wake.wait()
                    wake = anyio.Event()
                    continue
                change, waiting = waiting, None
                await self.announce(change)
            announced.set()

        def end() -> None:
            nonlocal ended
            ended = True
            wake.set()

        async with anyio.create_task_group() as group:
            group.start_soon(announcer)
            try:
                async for change in stream:
                    waiting = change if waiting is None else _merged(waiting, change)
                    wake.set()
            except Exception:  # what came before the error is announced, then it goes on
                end()
                await announced.wait()
                raise
            end()

    async def announce(self, change: Change) -> None:
        """Publish `change` to the listen streams and notify the legacy subscribers."""
        uris = sorted(uri for uri in self.subscribers.uris() if session_of(uri) == change.session)
        log.debug("session %s changed; notifying %s", change.session, uris)
        for uri in uris:
            await self.bus.publish(ResourceUpdated(uri=uri))
        if change.plans_came_or_went:
            await self.bus.publish(ResourcesListChanged())
        for client, (session, subscribed) in list(self.subscribers.legacy.items()):
            try:
                for uri in sorted(subscribed & set(uris)):
                    await session.send_resource_updated(uri)
                if change.plans_came_or_went:
                    await session.send_resource_list_changed()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.info("a subscribed client has gone; forgetting its subscriptions")
                self.subscribers.forget(client)


def install(
    server: MCPServer[Any],
    service: NinePlan,
    notifier: Notifier,
    names: ToolNames = DEFAULT_NAMES,
) -> None:
    """Add the resume prompt (naming the tools as `names` does), completions and the legacy
    subscribe pair to `server`, and watch its listen streams; the server's lifespan must run
    `notifier.run`."""
    _add_resume_prompt(server, service, names)
    _add_completions(server, service)
    _add_subscriptions(server, notifier)


def _add_resume_prompt(server: MCPServer[Any], service: NinePlan, names: ToolNames) -> None:
    @server.prompt(
        name="resume",
        title="Resume a 9plan session",
        description="Pick a 9plan session back up after compaction or in a new conversation: "
        "its queue, task and the active plan in full.",
    )
    async def resume(session_name: str, worker: str | None = None) -> str:
        try:
            state = await service.session_state(session_name, caller=Caller.of(worker))
            active = state.active_plan
            plan = await service.plan_file_text(session_name, active.id) if active else None
        except NinePlanError as exc:
            label = session_name if SESSION_NAME.fullmatch(session_name) else "none"
            raise MCPError(
                INVALID_PARAMS,
                error_text(label, exc.category, exc.message, for_agents(exc.suggestion, names)),
            ) from exc
        name = state.session.name
        call = names.resume_call(name, worker)
        parts = [
            f"Continue the 9plan session {name}. First call {call} to make it current.",
            state_text(state, "State of", service.clock(), names),
        ]
        if active is not None and plan is not None:
            parts.append(f"The active plan {active.id} (file {state.active_plan_path}):\n\n{plan}")
        return "\n\n".join(parts)


def _add_completions(server: MCPServer[Any], service: NinePlan) -> None:
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        """Session names for a session argument; a session's live plan ids for `plan_id`.
        A prompt or resource template that does not exist is an invalid-params error (-32602),
        as for prompts/get."""
        if isinstance(ref, PromptReference) and ref.name not in {
            prompt.name for prompt in await server.list_prompts()
        }:
            log.warning("completion refused: unknown prompt %r", ref.name)
            raise MCPError(INVALID_PARAMS, f"Unknown prompt {ref.name!r}: nothing to complete.")
        if isinstance(ref, ResourceTemplateReference) and ref.uri not in {
            template.uri_template for template in await server.list_resource_templates()
        }:
            log.warning("completion refused: unknown resource template %r", ref.uri)
            raise MCPError(
                INVALID_PARAMS, f"Unknown resource template {ref.uri!r}: nothing to complete."
            )
        if _names_a_session(ref, argument.name):
            return _completion(await service.names(), argument.value)
        if not (
            isinstance(ref, ResourceTemplateReference)
            and ref.uri == PLAN_URI
            and argument.name == "plan_id"
        ):
            return None
        name = ((context.arguments if context else None) or {}).get("session", "")
        if not SESSION_NAME.fullmatch(name):
            return None
        try:
            state = await service.session_state(name)
        except NinePlanError:
            return None
        ids = [entry.id for entry in state.queue]
        if state.active_plan is not None:
            ids.insert(0, state.active_plan.id)
        return _completion(ids, argument.value)

    register = server.completion()  # type: ignore[no-untyped-call] # the SDK leaves it unannotated
    register(complete)


def _add_subscriptions(server: MCPServer[Any], notifier: Notifier) -> None:
    subscribers = notifier.subscribers

    async def subscribe(
        ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        subscribers.subscribe(_client(ctx), ctx.session, _checked(params.uri))
        await notifier.refresh()
        return EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        subscribers.unsubscribe(_client(ctx), params.uri)
        await notifier.refresh()
        return EmptyResult()

    async def listen_streams(
        ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Note what each subscriptions/listen stream asks for, for as long as it is open."""
        if ctx.method != "subscriptions/listen" or ctx.request_id is None:
            return await call_next(ctx)
        try:
            wanted = SubscriptionsListenRequestParams.model_validate(ctx.params or {}).notifications
        except ValueError:
            return await call_next(ctx)  # the SDK answers the malformed request
        uris = list(wanted.resource_subscriptions or ())
        subscribers.listened.update(uris)
        subscribers.list_listeners += bool(wanted.resources_list_changed)
        try:
            await notifier.refresh()
            return await call_next(ctx)
        finally:
            subscribers.listened.subtract(uris)
            subscribers.listened = +subscribers.listened  # drop the zero counts
            subscribers.list_listeners -= bool(wanted.resources_list_changed)
            with anyio.CancelScope(shield=True):
                await notifier.refresh()

    # MCPServer has no public way to add these yet; the SDK's migration guide and its own
    # example server register them on the low-level server like this.
    low = server._lowlevel_server
    low.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
    low.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, unsubscribe)
    server.middleware.append(listen_streams)


@asynccontextmanager
async def following(notifier: Notifier) -> AsyncIterator[None]:
    """The notifier running, for as long as the server's lifespan holds this open."""
    async with anyio.create_task_group() as group:
        await group.start(notifier.run)
        try:
            yield
        finally:
            group.cancel_scope.cancel()


def _names_a_session(ref: PromptReference | ResourceTemplateReference, argument: str) -> bool:
    if isinstance(ref, PromptReference):
        return ref.name == "resume" and argument == "session_name"
    return ref.uri in SESSION_TEMPLATES and argument == "session"


def _completion(candidates: Sequence[str], typed: str) -> Completion:
    found = sorted(value for value in candidates if value.startswith(typed))
    return Completion(
        values=found[:MAX_COMPLETIONS], total=len(found), has_more=len(found) > MAX_COMPLETIONS
    )


def _client(ctx: ServerRequestContext[Any, Any]) -> str:
    """The subscribing connection: the process on stdio, the Mcp-Session-Id on legacy HTTP."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    return client_key(headers) or "unidentified"


def _checked(uri: str) -> str:
    if session_of(uri) is None:
        raise MCPError(
            INVALID_PARAMS,
            f"{uri} is not a 9plan session resource; subscribe to "
            "nineplan://sessions/NAME/state, /log or /plans/ID.",
            data={"uri": uri},
        )
    return uri


__all__ = ["Notifier", "Subscribers", "following", "install"]


def _merged(first: Change, then: Change) -> Change:
    """One change for two of the same session: the list changed if either changed it."""
    return Change(
        first.session, plans_came_or_went=first.plans_came_or_went or then.plans_came_or_went
    )


def _messages(caught: BaseExceptionGroup[NinePlanError]) -> str:
    """The messages of the NinePlanErrors in `caught`, however deeply grouped."""
    found: list[str] = []
    pending: list[BaseException] = [caught]
    while pending:
        error = pending.pop(0)
        if isinstance(error, BaseExceptionGroup):
            pending.extend(error.exceptions)
        elif isinstance(error, NinePlanError):
            found.append(error.message)
    return "; ".join(found)
