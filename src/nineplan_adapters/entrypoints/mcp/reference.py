"""The tool reference (docs/tools.md), generated from a live server's schemas and answers.

python -m nineplan_adapters.entrypoints.mcp.reference > docs/tools.md
"""

import datetime as dt
import json
import sys
from typing import Any

import anyio
from mcp import Client
from mcp.types import TextContent, Tool

from nineplan_adapters.config import Settings
from nineplan_adapters.container import build_container, repeatable, running
from nineplan_adapters.entrypoints.mcp.server import build_server
from nineplan_adapters.entrypoints.tool_names import DEFAULT_NAMES

STORAGE = ["FILE_SYSTEM_ERROR", "DATABASE_ERROR"]
FINISH = ["SESSION_NOT_FOUND", "NO_ACTIVE_PLAN", "VALIDATION_ERROR", *STORAGE]
ERRORS = {
    "session_create": ["VALIDATION_ERROR", *STORAGE],
    "session_resume": ["SESSION_NOT_FOUND", "VALIDATION_ERROR", *STORAGE],
    "queue_add": ["SESSION_NOT_FOUND", "VALIDATION_ERROR", *STORAGE],
    "queue_add_many": ["SESSION_NOT_FOUND", "VALIDATION_ERROR", *STORAGE],
    "queue_pull": [
        "SESSION_NOT_FOUND",
        "PLAN_ALREADY_ACTIVE",
        "QUEUE_BLOCKED",
        "QUEUE_EMPTY",
        "VALIDATION_ERROR",
        *STORAGE,
    ],
    "plan_defer": FINISH,
    "plan_complete": FINISH,
    "plan_discard": FINISH,
    "history_search": ["SESSION_NOT_FOUND", "VALIDATION_ERROR", *STORAGE],
    "history_get": ["SESSION_NOT_FOUND", "PLAN_NOT_FOUND", "VALIDATION_ERROR", *STORAGE],
    "admin_validate": ["SESSION_NOT_FOUND", "VALIDATION_ERROR", *STORAGE],
    "admin_sessions": STORAGE,
    "admin_state": ["SESSION_NOT_FOUND", "VALIDATION_ERROR", *STORAGE],
}
PLAN = {
    "context": "The notekeeper app has no accounts yet.",
    "goal": "Design the users table",
    "approach": "Write the migration; add a unique index on email.",
    "success_criteria": "The migration applies to an empty database.",
    "outputs": "migrations/0002_users.sql",
}
# One scripted session: each tool's example is its call in this sequence.
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("session_create", {"task_description": "Add login to notekeeper"}),
    ("queue_add", {**PLAN, "position": "back"}),
    ("queue_pull", {}),
    ("plan_defer", {"reason": "Waiting for the schema review", "position": "front"}),
    (
        "plan_complete",
        {"outcome": "Created migrations/0002_users.sql (users: id, email, hash)."},
    ),
    ("plan_discard", {"reason": "Superseded by the SSO plan"}),
    ("history_search", {"query": "users migration", "max_results": 5}),
    ("history_get", {"plan_id": "00001"}),
    ("admin_validate", {}),
    ("admin_sessions", {}),
    ("session_resume", {"session_name": "{name}"}),
    ("admin_state", {}),
    (
        "queue_add_many",
        {
            "plans": [
                {**PLAN, "goal": "Add the login route", "key": "route"},
                {**PLAN, "goal": "Test the login route", "after": ["route"]},
            ],
            "position": "front",
        },
    ),
]


def tool_list_tokens(tools: list[Tool]) -> int:
    """What the tool list costs a client's context, roughly: the characters of every tool's
    description and input schema (as JSON), four to a token."""
    return (
        sum(len(tool.description or "") + len(json.dumps(tool.input_schema)) for tool in tools) // 4
    )


def _type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    if "anyOf" in schema:
        return " \\| ".join(_type(option) for option in schema["anyOf"])
    kind = schema.get("type", "object")
    return " \\| ".join(kind) if isinstance(kind, list) else str(kind)


def _arguments(tool: Tool) -> list[str]:
    properties: dict[str, Any] = tool.input_schema.get("properties", {})
    if not properties:
        return ["No arguments."]
    required = set(tool.input_schema.get("required", []))
    rows = ["| argument | type | required | description |", "|---|---|---|---|"]
    for name, schema in properties.items():
        default = (
            f" (default `{schema['default']}`)" if schema.get("default") not in (None, "") else ""
        )
        rows.append(
            f"| `{name}` | {_type(schema)} | {'yes' if name in required else 'no'} | "
            f"{schema.get('description', '')}{default} |"
        )
    return rows


def _result(tool: Tool) -> list[str]:
    success = (tool.output_schema or {}).get("anyOf", [{}])[0]
    properties: dict[str, Any] = success.get("properties", {})
    return ["Structured result fields: " + ", ".join(f"`{name}`" for name in properties) + "."]


async def _examples(client: Client) -> dict[str, tuple[dict[str, Any], str]]:
    examples: dict[str, tuple[dict[str, Any], str]] = {}
    name = ""
    for tool, template in SCRIPT:
        arguments = {
            key: value.format(name=name) if isinstance(value, str) else value
            for key, value in template.items()
        }
        if tool in {"plan_complete", "plan_discard"}:
            await client.call_tool(
                DEFAULT_NAMES["queue_add"], {**PLAN, "goal": "Build the login form"}
            )
            await client.call_tool(DEFAULT_NAMES["queue_pull"], {})
        result = await client.call_tool(DEFAULT_NAMES[tool], arguments)
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        examples[tool] = (arguments, text)
        name = name or (result.structured_content or {}).get("session_name", "")
    return examples


#: What docs/tools.md says after a tool's description, for its readers (tools/list has none).
NOTES = {
    "admin_state": (
        "It is annotated read-only although a call naming a worker renews that worker's lease "
        "(its `last_seen`): the renewal is bookkeeping the caller did not ask for, as an HTTP "
        "GET may update an access time and stay safe. It never repairs files."
    ),
}

#: What the reference says about workers (docs/architecture.md, "Workers and leases").
_WORKERS = (
    "Agents working beside others on one session pass their own `worker` name (1-40 characters of",
    "`a-z0-9._-`, a letter or digit first; default `main`) to pull, defer, complete, discard,",
    "resume and state, and to add, search and get, whose `Active plan:` reminder is then about",
    "their own plan (never another worker's): each worker holds one active plan, and",
    "`single_active_plan` in `9plan_admin_validate` means at most one active plan per worker.",
    "Once a worker other than `main` has been named in a session (by a pull, a take-over or a",
    "resume), a pull, defer, complete or discard that names no worker is a `VALIDATION_ERROR`",
    'naming `worker` (the lead agent passes `worker="main"`); defer, complete and discard take',
    "an optional `plan_id`, and refuse one that is not the caller's active plan (`NO_ACTIVE_PLAN`",
    "saying who holds it, or `PLAN_NOT_FOUND`).",
)


#: What the reference says about prerequisites (docs/architecture.md, "Prerequisites").
_PREREQUISITES = (
    "A plan added with `after` (plan ids, at most 20) waits until each of those plans is",
    "completed or discarded; a pull takes the first *ready* plan in queue order and passes over",
    "waiting ones, which keep their places. Plans queued but none ready is `QUEUE_BLOCKED`, naming",
    "what the front plans wait for and who holds it; `QUEUE_EMPTY` means nothing is queued. A pull",
    "of a plan that waited hands over each prerequisite's outcome (`prerequisites`, and a notice",
    "each, cut at 1,000 characters).",
)


async def render() -> str:
    """The whole tools.md, from a server the container builds over memory storage."""
    app = build_container(Settings(storage="memory"))
    clock = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    async with (
        running(repeatable(app, clock, seed=9)) as service,
        Client(build_server(service), mode="legacy") as client,
    ):
        examples = await _examples(client)
        tools = (await client.list_tools()).tools
    lines = [
        "# MCP tools",
        "",
        "Generated from the live server by `python -m nineplan_adapters.entrypoints.mcp.reference > docs/tools.md`;",
        "a test fails when this file is stale. Every result is a text block starting `[Session: NAME]`",
        "plus `structuredContent` matching the tool's output schema. A session-scoped tool's",
        "structured content also carries `session_name` and `notices`, each line its text says beyond",
        "the fields (next step, notes hint, stale plans, take-overs), in the same words: the text is the",
        "breadcrumb, the fields, then the notices, so a client that hands the model only the structured",
        "content (Claude Code, Codex) loses nothing. Errors are results with `isError`",
        "and the text `[Session: NAME] Error: CATEGORY`, a message, and `Suggested action: ...`,",
        "and `structuredContent` `{category, message, suggestion, session_name}`: each output schema",
        "is `anyOf` the success fields below or that error object. Unknown arguments are refused.",
        "An optional argument is listed as its plain type (not required, no null branch, no null",
        "default), which is all a model needs to read; omitting it and sending null mean the same.",
        "Session-scoped tools act on the client's current session (set by create and resume) unless",
        "`session_name` names another; mutating tools take an optional `request_id` for safe retries.",
        *_WORKERS,
        *_PREREQUISITES,
        "The names are the default ones: `NINEPLAN_TOOL_PREFIX` (default `9plan_`) renames every tool",
        "and every text that names one ([clients.md](clients.md#tool-names)).",
        "",
    ]
    for tool in tools:
        short = tool.name.removeprefix(DEFAULT_NAMES.prefix)
        lines += _section(tool, short, *examples[short])
    return "\n".join(lines)


def _section(tool: Tool, short: str, arguments: dict[str, Any], text: str) -> list[str]:
    """One tool's part of the reference: its description and kind, a note, its arguments,
    result fields and errors, and its example call and answer."""
    hints = tool.annotations
    kind = (
        "read-only"
        if hints and hints.read_only_hint
        else "destructive"
        if hints and hints.destructive_hint
        else "changes state"
    )
    return [
        f"## `{tool.name}`",
        "",
        f"{tool.description} *({kind})*",
        "",
        *([NOTES[short], ""] if short in NOTES else []),
        *_arguments(tool),
        "",
        *_result(tool),
        "",
        "Errors: " + ", ".join(f"`{category}`" for category in ERRORS[short]) + ".",
        "",
        "Example call and answer:",
        "",
        "```json",
        json.dumps(arguments, ensure_ascii=False),
        "```",
        "",
        "```",
        text,
        "```",
        "",
    ]


if __name__ == "__main__":
    sys.stdout.write(anyio.run(render))  # this module's output is the document
