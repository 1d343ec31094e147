"""Driving an MCP client in tests: the tool names, calls that expect success or an error."""

from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

both_eras = pytest.mark.parametrize("mode", ["legacy", "auto"])

TOOLS = {
    "9plan_session_create",
    "9plan_session_resume",
    "9plan_queue_add",
    "9plan_queue_add_many",
    "9plan_queue_pull",
    "9plan_plan_defer",
    "9plan_plan_complete",
    "9plan_plan_discard",
    "9plan_history_search",
    "9plan_history_get",
    "9plan_admin_validate",
    "9plan_admin_sessions",
    "9plan_admin_state",
}
READ_ONLY = {
    "9plan_history_search",
    "9plan_history_get",
    "9plan_admin_validate",
    "9plan_admin_sessions",
    "9plan_admin_state",
}


def text(result: CallToolResult) -> str:
    """The text blocks of a tool result, joined by newlines."""
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call `tool`, assert it succeeded, and return its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return dict(result.structured_content)


def parsed_error(result: CallToolResult) -> tuple[str, str]:
    """The category and the whole text of an error result, checked for the reference format."""
    assert result.is_error
    body = text(result)
    first = body.split("\n")[0]
    assert first.startswith("[Session: ")
    assert "] Error: " in first
    assert "\n\nSuggested action: " in body
    return first.split("Error: ")[1], body


async def error(client: Client, tool: str, **arguments: Any) -> tuple[str, str]:
    """Call `tool`, assert it failed, and return the category and the whole text."""
    return parsed_error(await client.call_tool(tool, arguments))


async def category(client: Client, tool: str, **arguments: Any) -> str:
    """Call `tool`, assert it failed, and return the error's category."""
    return (await error(client, tool, **arguments))[0]
