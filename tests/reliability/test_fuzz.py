"""Hostile-input fuzzing: hypothesis drives every tool through the MCP layer with arbitrary JSON.

CI makes 2,000 calls; `make fuzz` (NINEPLAN_FUZZ_CALLS=50000) many more. Every answer must be a
result or a categorized error, the server must keep answering, nothing may appear outside the
sessions folder, and every session must still validate.
"""

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio.from_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from nineplan_adapters.entrypoints.mcp import build_server
from nineplan_adapters.storage.clock import FixedClock
from nineplan_adapters.storage.sqlite.catalog import SqliteSessionCatalog
from tests.fakes import make_service
from tests.mcp_helpers import text as result_text

CALLS = int(os.environ.get("NINEPLAN_FUZZ_CALLS", "2000"))
CATEGORIES = (
    "SESSION_NOT_FOUND",
    "PLAN_NOT_FOUND",
    "NO_ACTIVE_PLAN",
    "PLAN_ALREADY_ACTIVE",
    "QUEUE_EMPTY",
    "VALIDATION_ERROR",
    "FILE_SYSTEM_ERROR",
    "DATABASE_ERROR",
)
ERROR_LINE = re.compile(r"\[Session: [^\]\n]+\] Error: (" + "|".join(CATEGORIES) + ")")
PARAMETERS = {
    "9plan_session_create": ["task_description", "request_id"],
    "9plan_session_resume": ["session_name"],
    "9plan_queue_add": [
        "context",
        "goal",
        "approach",
        "success_criteria",
        "inputs",
        "outputs",
        "position",
        "session_name",
        "request_id",
    ],
    "9plan_queue_pull": ["session_name", "request_id"],
    "9plan_plan_defer": ["reason", "position", "session_name", "request_id"],
    "9plan_plan_complete": ["outcome", "session_name", "request_id"],
    "9plan_plan_discard": ["reason", "session_name", "request_id"],
    "9plan_history_search": ["query", "max_results", "session_name"],
    "9plan_history_get": ["plan_id", "session_name"],
    "9plan_admin_validate": ["session_name"],
    "9plan_admin_sessions": [],
    "9plan_admin_state": ["session_name"],
}
NASTY = [
    "",
    " ",
    "\n",
    "../",
    "../../etc/passwd",
    "/etc/passwd",
    "/tmp/x-y-z",
    "..",
    "a\x00b",
    "\x00",
    "NEAR(a b)",
    '"',
    '"unterminated',
    "auth AND (",
    "col:term",
    "*",
    "^",
    "a-b-c",
    "A-B-C",
    "front",
    "back",
    "FRONT",
    "00001",
    "zzzzz",
    "ZZZZZ",
    "abcd",
    "abcdef",
    "\u202e\u0000",
    "😀",
    "\ud7ff",
    "x" * 100_001,
    "%2e%2e%2f",
    "C:\\Windows",
    "\\\\server\\share",
    "~/.ssh/id_rsa",
    "file:///etc",
]

text = st.one_of(st.text(max_size=40), st.sampled_from(NASTY))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | text,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


@asynccontextmanager
async def served(root: Path) -> AsyncIterator[tuple[Client, str]]:
    catalog = SqliteSessionCatalog(root, durability="normal")
    try:
        async with Client(build_server(make_service(catalog, FixedClock()))) as client:
            created = await client.call_tool("9plan_session_create", {"task_description": "fuzz"})
            name = (created.structured_content or {})["session_name"]
            await client.call_tool(
                "9plan_queue_add",
                {"context": "c", "goal": "g", "approach": "a", "success_criteria": "s"},
            )
            yield client, name
    finally:
        await catalog.aclose()


def arguments_for(tool: str, name: str) -> st.SearchStrategy[dict[str, Any]]:
    good = {
        "session_name": st.sampled_from([name, "no-such-session"]),
        "plan_id": st.sampled_from(["00001", "00002"]),
        "position": st.sampled_from(["front", "back"]),
        "max_results": st.integers(-5, 200),
    }
    optional = {key: json_values | good.get(key, text) for key in PARAMETERS.get(tool, [])}
    return st.fixed_dictionaries({}, optional=optional) | st.dictionaries(
        st.text(max_size=12), json_values, max_size=4
    )


def test_hostile_arguments_through_mcp(tmp_path: Path):
    """Hostile arguments through MCP never crash the server nor write outside the sessions folder."""
    root = tmp_path / "root"
    before_outside = sorted(tmp_path.iterdir())
    with anyio.from_thread.start_blocking_portal() as portal:
        context = portal.wrap_async_context_manager(served(root / "sessions"))
        client, name = context.__enter__()
        try:
            calls = {"count": 0, "errors": 0}

            @settings(
                max_examples=CALLS,
                deadline=None,
                database=None,
                suppress_health_check=[
                    HealthCheck.too_slow,
                    HealthCheck.data_too_large,
                    HealthCheck.large_base_example,
                ],
            )
            @given(data=st.data())
            def one_call(data: st.DataObject) -> None:
                tool = data.draw(
                    st.sampled_from([*PARAMETERS, "9plan_unknown", "", "../9plan_queue_add"])
                )
                arguments = data.draw(arguments_for(tool, name))
                result = portal.call(client.call_tool, tool, arguments)
                calls["count"] += 1
                body = result_text(result)
                if result.is_error:
                    calls["errors"] += 1
                    category = ERROR_LINE.fullmatch(body.split("\n")[0])
                    assert category, body[:300]
                    # No fault is injected here: a storage error would be a bug in input handling.
                    assert category.group(1) not in {"DATABASE_ERROR", "FILE_SYSTEM_ERROR"}, body[
                        :300
                    ]
                    assert "Suggested action: " in body
                    assert "Traceback" not in body
                else:
                    assert result.structured_content is not None
                    assert body.startswith("[Session: ")

            one_call()
            assert calls["count"] >= CALLS
            still = portal.call(client.call_tool, "9plan_admin_sessions", {})
            assert not still.is_error
            for session in (still.structured_content or {})["sessions"]:
                report = portal.call(
                    client.call_tool, "9plan_admin_validate", {"session_name": session["name"]}
                )
                assert (report.structured_content or {})["valid"], report.structured_content
        finally:
            context.__exit__(None, None, None)
    assert sorted(tmp_path.iterdir()) == sorted([*before_outside, root])
    assert [path.name for path in root.iterdir()] == ["sessions"]
    strays = [
        path
        for path in (root / "sessions").rglob("*")
        if not _inside_a_session(path, root / "sessions")
    ]
    assert strays == []


def _inside_a_session(path: Path, sessions: Path) -> bool:
    relative = path.relative_to(sessions).parts
    return bool(re.fullmatch(r"[a-z]+-[a-z]+-[a-z]+|\.requests", relative[0]))
