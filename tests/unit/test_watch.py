"""The watch port: a tick after each change of a session, whichever process made it."""

from pathlib import Path

import anyio
import pytest
from mcp import Client

from nineplan_core.errors import SessionNotFoundError
from nineplan_core.model import SessionName
from nineplan_core.ports import SessionWatch
from tests.fakes import PLAN, Backend
from tests.integration.servers import stdio_server


def watch_of(backend: Backend) -> SessionWatch:
    return backend.catalog.watch()


async def test_a_commit_in_this_process_ticks(backend: Backend):
    """Adding a plan through the use cases wakes a watcher of that session."""
    name = await backend.session()
    async with watch_of(backend).changes(SessionName(name)) as ticks:
        await backend.service.add_plan(name, **PLAN)
        with anyio.fail_after(5):
            await anext(ticks)
        await backend.service.pull_plan(name)
        with anyio.fail_after(5):
            await anext(ticks)


@pytest.mark.parametrize("backend_kind", ["memory", "sqlite"], indirect=True)
async def test_an_unknown_session_cannot_be_watched(backend: Backend):
    """Watching a session that does not exist is SESSION_NOT_FOUND."""
    with pytest.raises(SessionNotFoundError):
        async with watch_of(backend).changes(SessionName("no-such-session")):
            pass


@pytest.mark.parametrize("backend_kind", ["sqlite"], indirect=True)
async def test_a_commit_by_another_process_ticks(backend: Backend, tmp_path: Path):
    """An MCP call served by another process (a real stdio server) wakes the watcher."""
    name = await backend.session()
    async with (
        watch_of(backend).changes(SessionName(name)) as ticks,
        Client(stdio_server(backend.root)) as agent,
    ):
        result = await agent.call_tool("9plan_queue_add", {**PLAN, "session_name": name})
        assert not result.is_error
        with anyio.fail_after(5):
            await anext(ticks)
    assert [entry.goal for entry in (await backend.service.session_state(name)).queue] == [
        PLAN["goal"]
    ]


async def test_the_session_list_watch_names_what_changed(backend: Backend):
    """On every backend, the list's watch names a session that changed, and a new one."""
    first = await backend.session()
    async with watch_of(backend).sessions() as changes:
        await backend.service.add_plan(first, **PLAN)
        with anyio.fail_after(5):
            assert first in await anext(changes)
        second = await backend.session()
        with anyio.fail_after(5):
            seen = await anext(changes)
            while second not in seen:  # the first's later ticks may come before it
                seen = await anext(changes)


@pytest.mark.parametrize("backend_kind", ["sqlite"], indirect=True)
async def test_the_session_list_watch_sees_another_process(backend: Backend):
    """A session created and changed by another process (a real stdio server) is named."""
    async with (
        watch_of(backend).sessions() as changes,
        Client(stdio_server(backend.root)) as agent,
    ):
        created = await agent.call_tool("9plan_session_create", {"task_description": "t"})
        assert not created.is_error
        names = [name for name in backend.root.iterdir() if name.is_dir()]
        assert len(names) == 1
        with anyio.fail_after(5):
            seen = await anext(changes)
            while names[0].name not in seen:
                seen = await anext(changes)


async def test_the_session_list_watch_names_an_archived_session(backend: Backend):
    """Archiving or unarchiving a session changes the session lists, so the list's watch
    names it (the web list then drops or brings back its row)."""
    name = await backend.session()
    async with watch_of(backend).sessions() as changes:
        for archived in (True, False):
            if archived:
                await backend.service.archive_session(name)
            else:
                await backend.service.unarchive_session(name)
            with anyio.fail_after(5):
                assert name in await anext(changes)
