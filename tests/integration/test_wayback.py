"""MCP beyond tools: the resume prompt, completions (docs/clients.md) and resource links on the
server `nineplan serve` builds (the SDK's in-memory client); resource subscriptions fed by
changes another process makes (docs/architecture.md) over real stdio and HTTP servers."""

import json
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp.types import (
    PromptReference,
    ResourceLink,
    ResourceListChangedNotification,
    ResourceTemplateReference,
    ResourceUpdatedNotification,
)

from nineplan_adapters.entrypoints.cli.demo import spawned_http_server
from tests.fakes import PLAN, postgres_schema
from tests.integration.servers import memory_client, stdio_server
from tests.mcp_helpers import both_eras, ok

STATE = "nineplan://sessions/{}/state"
PLAN_TEMPLATE = "nineplan://sessions/{session}/plans/{plan_id}"


async def session_with_plans(client: Client, *goals: str, pull: bool = True) -> str:
    name: str = (await ok(client, "9plan_session_create", task_description="the task"))[
        "session_name"
    ]
    for goal in goals:
        await ok(client, "9plan_queue_add", **{**PLAN, "goal": goal})
    if pull:
        await ok(client, "9plan_queue_pull")
    return name


@both_eras
async def test_the_resume_prompt_holds_the_state_and_the_active_plan(tmp_path: Path, mode: str):
    """resume(session_name) returns one message with the queue, the task and the active plan's
    text as its file holds it, and says to call 9plan_session_resume."""
    async with memory_client(tmp_path, mode=mode) as client:
        name = await session_with_plans(client, "write the parser", "test it")
        plan_file = Path((await ok(client, "9plan_admin_state"))["active_plan"]["file_path"])
        plan_file.write_text(plan_file.read_text() + "half of the grammar is done\n")
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        assert [a.name for a in prompts["resume"].arguments or []] == ["session_name", "worker"]
        result = await client.get_prompt("resume", {"session_name": name})
        [message] = result.messages
        body = message.content.text  # type: ignore[union-attr]
        assert f'9plan_session_resume(session_name="{name}")' in body
        assert "Task: the task" in body
        assert "1. " in body
        assert "test it" in body
        assert "# Goal\nwrite the parser" in body
        assert "half of the grammar is done" in body
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("resume", {"session_name": "no-such-session"})
        assert "SESSION_NOT_FOUND" in caught.value.error.message


@both_eras
async def test_the_resume_prompt_takes_a_worker(tmp_path: Path, mode: str):
    """resume(session_name, worker) shows that worker's active plan (not main's) and its call
    line passes the worker; a worker name of the wrong shape is refused naming `worker`."""
    async with memory_client(tmp_path, mode=mode) as client:
        name = await session_with_plans(client, "main's work", "the docs")
        await ok(client, "9plan_queue_pull", session_name=name, worker="docs")
        result = await client.get_prompt("resume", {"session_name": name, "worker": "docs"})
        body = result.messages[0].content.text  # type: ignore[union-attr]
        assert f'9plan_session_resume(session_name="{name}", worker="docs")' in body
        assert "# Goal\nthe docs" in body
        assert "# Goal\nmain's work" not in body
        with pytest.raises(MCPError) as caught:
            await client.get_prompt("resume", {"session_name": name, "worker": "Not A Name"})
        assert "worker" in caught.value.error.message


@both_eras
async def test_completions_offer_session_names_and_plan_ids(tmp_path: Path, mode: str):
    """The first letters of a session name complete to it, for the prompt argument and the
    resource templates' session variable; plan ids complete within the named session."""
    async with memory_client(tmp_path, mode=mode) as client:
        name = await session_with_plans(client, "one", "two")
        other = (await ok(client, "9plan_session_create"))["session_name"]
        state = await ok(client, "9plan_admin_state", session_name=name)
        by_prompt = await client.complete(
            PromptReference(name="resume"), {"name": "session_name", "value": name[:3]}
        )
        assert name in by_prompt.completion.values
        assert all(value.startswith(name[:3]) for value in by_prompt.completion.values)
        for template in (PLAN_TEMPLATE, "nineplan://sessions/{session}/state"):
            by_template = await client.complete(
                ResourceTemplateReference(uri=template), {"name": "session", "value": other[:4]}
            )
            assert other in by_template.completion.values
        everything = await client.complete(
            PromptReference(name="resume"), {"name": "session_name", "value": ""}
        )
        assert sorted(everything.completion.values) == sorted([name, other])
        assert everything.completion.total == 2
        queued = state["queue"][0]["id"]
        ids = await client.complete(
            ResourceTemplateReference(uri=PLAN_TEMPLATE),
            {"name": "plan_id", "value": queued[:2]},
            context_arguments={"session": name},
        )
        assert queued in ids.completion.values
        nothing = await client.complete(
            PromptReference(name="bootstrap"), {"name": "task", "value": "a"}
        )
        assert nothing.completion.values == []


@both_eras
async def test_pull_and_resume_results_link_the_active_plan(tmp_path: Path, mode: str):
    """9plan_queue_pull and 9plan_session_resume carry a resource_link to the active plan's
    resource, which reads as the plan file."""
    async with memory_client(tmp_path, mode=mode) as client:
        name = await session_with_plans(client, "linked", pull=False)
        pulled = await client.call_tool("9plan_queue_pull", {})
        [link] = [block for block in pulled.content if isinstance(block, ResourceLink)]
        plan_id = pulled.structured_content["plan_id"]
        assert str(link.uri) == f"nineplan://sessions/{name}/plans/{plan_id}"
        assert link.mime_type == "text/plain"  # as the resource it links to
        read = await client.read_resource(str(link.uri))
        assert "# Goal\nlinked" in read.contents[0].text  # type: ignore[union-attr]
        resumed = await client.call_tool("9plan_session_resume", {"session_name": name})
        assert [str(b.uri) for b in resumed.content if isinstance(b, ResourceLink)] == [
            str(link.uri)
        ]
        await ok(client, "9plan_plan_complete", outcome="done")
        idle = await client.call_tool("9plan_session_resume", {"session_name": name})
        assert not [b for b in idle.content if isinstance(b, ResourceLink)]


@asynccontextmanager
async def another_process(sessions: Path, **env: str) -> AsyncIterator[Client]:
    """A second stdio server on `sessions` (and the database `env` names, if any): the change
    comes from elsewhere."""
    async with Client(stdio_server(sessions, **env), mode="legacy") as client:
        yield client


async def test_a_legacy_subscriber_hears_of_a_change_made_by_another_process(tmp_path: Path):
    """resources/subscribe on a session's state: a second server process adding a plan brings
    notifications/resources/updated for that URI, then resources/list_changed; after
    unsubscribing, further changes bring no update."""
    updated: list[str] = []
    listed = anyio.Event()
    arrived = anyio.Event()

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()
        elif isinstance(message, ResourceListChangedNotification):
            listed.set()

    async with Client(stdio_server(tmp_path), mode="legacy", message_handler=handler) as client:
        assert client.server_capabilities.resources.subscribe  # type: ignore[union-attr]
        assert client.server_capabilities.resources.list_changed  # type: ignore[union-attr]
        name = await session_with_plans(client, "first")
        with warnings.catch_warnings():  # the SDK marks the legacy verbs deprecated
            warnings.simplefilter("ignore")
            await client.subscribe_resource(STATE.format(name))
        async with another_process(tmp_path) as other:
            await ok(other, "9plan_queue_add", **PLAN, session_name=name)
            with anyio.fail_after(5):
                await arrived.wait()
                await listed.wait()
        assert set(updated) == {STATE.format(name)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.unsubscribe_resource(STATE.format(name))
            with pytest.raises(MCPError):
                await client.subscribe_resource("file:///etc/passwd")
        arrived = anyio.Event()
        updated.clear()
        async with another_process(tmp_path) as other:
            await ok(other, "9plan_queue_add", **PLAN, session_name=name)
        # The server still answers, and nothing came for the URI no longer subscribed: a
        # round trip after the other process is done lets any notification arrive first.
        await ok(client, "9plan_admin_state", session_name=name)
        assert updated == []


async def test_a_listen_stream_hears_of_a_change_made_by_another_process(tmp_path: Path):
    """2026-07-28: subscriptions/listen naming a session's state brings a ResourceUpdated for
    it, and ResourcesListChanged, when a second server process completes a plan."""
    async with Client(stdio_server(tmp_path), mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        name = await session_with_plans(client, "first", "second")
        uri = STATE.format(name)
        seen: list[Any] = []
        async with client.listen(resource_subscriptions=[uri], resources_list_changed=True) as sub:
            assert sub.honored.resource_subscriptions == [uri]
            async with another_process(tmp_path) as other:
                await ok(other, "9plan_plan_complete", outcome="done elsewhere", session_name=name)
                with anyio.fail_after(5):
                    async for event in sub:
                        seen.append(event)
                        if ResourceUpdated(uri=uri) in seen and ResourcesListChanged() in seen:
                            break
        state = await client.read_resource(uri)
        assert '"completed_count": 1' in state.contents[0].text  # type: ignore[union-attr]


async def test_a_plan_resource_subscriber_hears_when_its_session_changes(tmp_path: Path):
    """A subscription to a plan's resource fires when another process changes its session."""
    arrived = anyio.Event()
    updated: list[str] = []

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    async with Client(stdio_server(tmp_path), mode="legacy", message_handler=handler) as client:
        name = await session_with_plans(client, "watched")
        plan_id = (await ok(client, "9plan_admin_state"))["active_plan"]["id"]
        uri = f"nineplan://sessions/{name}/plans/{plan_id}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource(uri)
        async with another_process(tmp_path) as other:
            await ok(other, "9plan_plan_defer", reason="elsewhere", session_name=name)
            with anyio.fail_after(5):
                await arrived.wait()
        assert updated == [uri]


async def test_subscriptions_work_over_http_in_both_eras(tmp_path: Path):
    """Over streamable HTTP, a legacy client's resources/subscribe (notified on its standalone
    stream) and a 2026-07-28 client's listen stream both hear of another client's change."""
    arrived = anyio.Event()

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            arrived.set()

    async with spawned_http_server(tmp_path) as url:
        async with Client(url, mode="legacy", message_handler=handler) as client:
            name = (await ok(client, "9plan_session_create"))["session_name"]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(STATE.format(name))
            async with Client(url, mode="legacy") as other:
                await ok(other, "9plan_queue_add", **PLAN, session_name=name)
            with anyio.fail_after(5):
                await arrived.wait()
        async with Client(url, mode="auto") as client:
            uri = STATE.format(name)
            async with client.listen(resource_subscriptions=[uri]) as sub:
                async with Client(url, mode="legacy") as other:
                    await ok(other, "9plan_queue_add", **PLAN, session_name=name)
                with anyio.fail_after(5):
                    assert await anext(sub) == ResourceUpdated(uri=uri)


@pytest.mark.postgres
@both_eras
async def test_a_subscriber_on_postgresql_hears_of_another_server_process(
    tmp_path: Path, mode: str
):
    """On PostgreSQL, two server processes with their own sessions folders (two machines, one
    database): a client of the first subscribed to a session's state and log resources
    (resources/subscribe in the legacy era, subscriptions/listen on 2026-07-28) receives
    resources/updated for both, and list_changed, after the second process adds a plan; the
    change feed is LISTEN/NOTIFY."""
    heard: set[str] = set()
    wanted: set[str] = set()
    complete = anyio.Event()

    def hear(what: str) -> None:
        heard.add(what)
        if wanted and wanted <= heard:
            complete.set()

    async def handler(message: IncomingMessage) -> None:
        if isinstance(message, ResourceUpdatedNotification):
            hear(str(message.params.uri))
        elif isinstance(message, ResourceListChangedNotification):
            hear("list_changed")

    async with postgres_schema() as database:
        env = {"NINEPLAN_DATABASE_URL": database}
        async with Client(
            stdio_server(tmp_path / "a", **env), mode=mode, message_handler=handler
        ) as client:
            name = await session_with_plans(client, "first")
            uris = [STATE.format(name), f"nineplan://sessions/{name}/log"]
            wanted.update([*uris, "list_changed"])
            if mode == "legacy":
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    for uri in uris:
                        await client.subscribe_resource(uri)
                async with another_process(tmp_path / "b", **env) as other:
                    await ok(other, "9plan_queue_add", **PLAN, session_name=name)
                with anyio.fail_after(5):
                    await complete.wait()
            else:
                assert client.protocol_version == "2026-07-28"
                async with client.listen(
                    resource_subscriptions=uris, resources_list_changed=True
                ) as sub:
                    async with another_process(tmp_path / "b", **env) as other:
                        await ok(other, "9plan_queue_add", **PLAN, session_name=name)
                    with anyio.fail_after(5):
                        async for event in sub:
                            if isinstance(event, ResourceUpdated):
                                hear(str(event.uri))
                            elif event == ResourcesListChanged():
                                hear("list_changed")
                            if complete.is_set():
                                break
            assert heard == wanted
            read = await client.read_resource(uris[0])
            state = json.loads(read.contents[0].text)  # type: ignore[union-attr]
            assert [entry["goal"] for entry in state["queue"]] == [PLAN["goal"]]
