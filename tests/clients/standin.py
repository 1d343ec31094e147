"""A scripted stand-in for a model API (Anthropic's Messages, OpenAI's Responses, Gemini's
generateContent), on 127.0.0.1: it records every request and answers each request of the
conversation with the next tool call of one nineplan session (`STEPS`), made once the client has
handed back the previous call's result, then with a short text. A request that offers no
nineplan tool (a title, a summary, a token count) gets a short text."""

import itertools
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import attrs
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from nineplan_adapters.entrypoints.cli.demo import free_port

log = logging.getLogger("tests.clients")

Json = dict[str, Any]

#: A session's name as a result names it (`"session_name": "a-b-c"`, `[Session: a-b-c]`).
SESSION_NAME = re.compile(r"(?:session_name\W{1,5}|\[Session: )([a-z0-9]+(?:-[a-z0-9]+)+)")

PLAN_ONE = {
    "context": "A client test drives nineplan through a real MCP client.",
    "goal": "Write the greeting module",
    "approach": "Create greet.py with a function hello() that returns 'hi'.",
    "success_criteria": "hello() returns 'hi'.",
}
PLAN_TWO = {
    "context": "A client test drives nineplan through a real MCP client.",
    "goal": "Document the greeting module",
    "approach": "Add a README line for greet.py.",
    "success_criteria": "The README names hello().",
}
TASK = "Exercise nineplan through a real client"
OUTCOME = "Created greet.py with hello() returning 'hi'."
FINAL = "All done: the session is resumed."
#: Claude Code's tool that waits for MCP servers still connecting, offered instead of their
#: tools when the conversation starts before they are (2.1.328, `claude -p`).
WAIT = "WaitForMcpServers"
MAX_WAITS = 3
SIDE = "Nineplan session"


def session_name(handed: Sequence[str]) -> str:
    """The session's name, from the first result the client handed back (the create's)."""
    found = SESSION_NAME.search(handed[0]) if handed else None
    return found.group(1) if found else "no-session-name-handed-back"


Step = tuple[str, Callable[[Sequence[str]], Json]]


def steps(*, named: bool = False) -> tuple[Step, ...]:
    """One nineplan session, call by call: the tool (its name after the client's prefix and
    `9plan_`) and its arguments, from the results handed back before it. `named`: every call
    after the create names the session (over the sessionless HTTP protocol a call has no
    current session); else only the resume does, the others act on the current one."""

    def scoped(arguments: Json) -> Callable[[Sequence[str]], Json]:
        if not named:
            return lambda _: arguments
        return lambda handed: {**arguments, "session_name": session_name(handed)}

    return (
        ("session_create", lambda _: {"task_description": TASK}),
        ("queue_add", scoped(PLAN_ONE)),
        ("queue_add", scoped(PLAN_TWO)),
        ("queue_pull", scoped({})),
        ("plan_complete", scoped({"outcome": OUTCOME})),
        ("session_resume", lambda handed: {"session_name": session_name(handed)}),
    )


STEPS = steps()


class Dialect(Protocol):
    """One model API: what a request offers and hands back, and how to answer it."""

    def tools(self, body: Json) -> list[str]:
        """The names of the functions the request offers the model."""
        ...

    def results(self, body: Json) -> list[tuple[str, str]]:
        """Every tool result in the conversation, in order: its call's id (the stand-in's,
        where the API hands it back) or else its function's name, and what the model reads."""
        ...

    def call(self, body: Json, name: str, arguments: Json, call_id: str) -> Response:
        """An answer calling `name` with `arguments`."""
        ...

    def text(self, body: Json, text: str) -> Response:
        """An answer that is `text` alone."""
        ...


def sse(events: Sequence[Json], *, named: bool = True) -> StreamingResponse:
    """`events` as Server-Sent Events, each `event:` its `type` when `named`."""

    async def lines() -> AsyncIterator[bytes]:
        for event in events:
            head = f"event: {event['type']}\n" if named else ""
            yield f"{head}data: {json.dumps(event)}\n\n".encode()

    return StreamingResponse(lines(), media_type="text/event-stream")


def text_of_blocks(content: object) -> str:
    """A content field as text: a string as it is, a list of blocks their texts (anything else
    as JSON), one per line."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            block["text"]
            if isinstance(block, dict) and isinstance(block.get("text"), str)
            else json.dumps(block)
            for block in content
        )
    return json.dumps(content)


class Anthropic:
    """`POST /v1/messages`, streamed (Claude Code streams) or not."""

    def tools(self, body: Json) -> list[str]:
        return [tool["name"] for tool in body.get("tools") or [] if "name" in tool]

    def results(self, body: Json) -> list[tuple[str, str]]:
        return [
            (block.get("tool_use_id", ""), text_of_blocks(block.get("content", "")))
            for message in body.get("messages", [])
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]

    def call(self, body: Json, name: str, arguments: Json, call_id: str) -> Response:
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        if not body.get("stream"):
            return JSONResponse(self._message(body, [{**block, "input": arguments}], "tool_use"))
        delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
        return self._stream(body, block, delta, "tool_use")

    def text(self, body: Json, text: str) -> Response:
        if not body.get("stream"):
            return JSONResponse(self._message(body, [{"type": "text", "text": text}], "end_turn"))
        block = {"type": "text", "text": ""}
        return self._stream(body, block, {"type": "text_delta", "text": text}, "end_turn")

    @staticmethod
    def _message(body: Json, content: list[Json], stop: str | None) -> Json:
        return {
            "id": f"msg_{time.monotonic_ns()}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude"),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }

    def _stream(self, body: Json, block: Json, delta: Json, stop: str) -> Response:
        return sse(
            [
                {"type": "message_start", "message": self._message(body, [], None)},
                {"type": "content_block_start", "index": 0, "content_block": block},
                {"type": "content_block_delta", "index": 0, "delta": delta},
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
                {"type": "message_stop"},
            ]
        )


class OpenAIResponses:
    """`POST /v1/responses`, streamed, as Codex reads it."""

    def tools(self, body: Json) -> list[str]:
        """Each function's name, a namespaced one (Codex offers each MCP server's tools in a
        namespace `mcp__SERVER`) as `NAMESPACE__NAME`."""
        names: list[str] = []
        for tool in body.get("tools") or []:
            if tool.get("type") == "namespace":
                names += [f"{tool['name']}__{inner['name']}" for inner in tool.get("tools") or []]
            elif "name" in tool:
                names.append(tool["name"])
        return names

    @staticmethod
    def _split(body: Json, name: str) -> Json:
        """The call's `name` and, for a function in a namespace, its `namespace`."""
        for tool in body.get("tools") or []:
            if tool.get("type") == "namespace" and name.startswith(f"{tool['name']}__"):
                return {"namespace": tool["name"], "name": name.removeprefix(f"{tool['name']}__")}
        return {"name": name}

    def results(self, body: Json) -> list[tuple[str, str]]:
        return [
            (item.get("call_id", ""), text_of_blocks(item.get("output", "")))
            for item in body.get("input") or []
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]

    def call(self, body: Json, name: str, arguments: Json, call_id: str) -> Response:
        item = {
            "type": "function_call",
            "id": f"fc_{call_id}",
            "call_id": call_id,
            **self._split(body, name),
            "arguments": "",
            "status": "in_progress",
        }
        done = {**item, "arguments": json.dumps(arguments), "status": "completed"}
        return self._stream(
            item,
            done,
            [
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "delta": done["arguments"],
                },
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": item["id"],
                    "output_index": 0,
                    "arguments": done["arguments"],
                },
            ],
        )

    def text(self, body: Json, text: str) -> Response:
        item = {
            "type": "message",
            "id": f"msg_{time.monotonic_ns()}",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        part = {"type": "output_text", "text": text, "annotations": []}
        done = {**item, "status": "completed", "content": [part]}
        return self._stream(
            item,
            done,
            [
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": text,
                }
            ],
        )

    @staticmethod
    def _stream(item: Json, done: Json, middle: list[Json]) -> Response:
        response = {"id": f"resp_{time.monotonic_ns()}", "object": "response", "output": []}
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 20,
        }
        return sse(
            [
                {"type": "response.created", "response": {**response, "status": "in_progress"}},
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                *middle,
                {"type": "response.output_item.done", "output_index": 0, "item": done},
                {
                    "type": "response.completed",
                    "response": {
                        **response,
                        "status": "completed",
                        "output": [done],
                        "usage": usage,
                    },
                },
            ]
        )


def instance_of(schema: Json) -> object:
    """A small value matching a JSON schema (Gemini's upper-case type names too)."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: instance_of(inner) for name, inner in properties.items()}
    if kind == "array":
        return []
    return {"string": SIDE, "integer": 1, "number": 1, "boolean": False}.get(kind)


class Gemini:
    """`POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` (and `:generateContent`)."""

    def tools(self, body: Json) -> list[str]:
        return [
            declaration["name"]
            for tool in body.get("tools") or []
            for declaration in tool.get("functionDeclarations") or []
        ]

    def results(self, body: Json) -> list[tuple[str, str]]:
        found = []
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if "functionResponse" in part:
                    response = part["functionResponse"].get("response") or {}
                    output = response.get("output")
                    text = output if isinstance(output, str) else json.dumps(response)
                    found.append((part["functionResponse"].get("name", ""), text))
        return found

    def call(self, body: Json, name: str, arguments: Json, call_id: str) -> Response:
        return self._answer(body, {"functionCall": {"name": name, "args": arguments}})

    def text(self, body: Json, text: str) -> Response:
        schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
        if schema:  # Gemini CLI's router asks for JSON of a schema: an instance of it
            return self._answer(body, {"text": json.dumps(instance_of(schema))})
        return self._answer(body, {"text": text})

    @staticmethod
    def _answer(body: Json, part: Json) -> Response:
        chunk = {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [part]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 10,
                "totalTokenCount": 20,
            },
        }
        if body.get("_stream"):
            return sse([chunk], named=False)
        return JSONResponse(chunk)


@attrs.frozen
class Exchange:
    """One request the client sent: its path and its JSON body."""

    path: str
    body: Json


@attrs.define
class StandIn:
    """The stand-in's records, and its script's answers in one dialect."""

    dialect: Dialect
    script: tuple[Step, ...] = STEPS
    exchanges: list[Exchange] = attrs.field(factory=list)
    ids: Iterator[int] = attrs.field(factory=itertools.count)
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    def conversation(self) -> list[Exchange]:
        """The requests that offered nineplan's tools: the conversation, not its side calls."""
        return [ex for ex in self.exchanges if self.names(ex.body)]

    def names(self, body: Json) -> dict[str, str]:
        """Each step's tool as the request offers it (by the tool's name after `9plan_`)."""
        return {
            offered.rsplit("9plan_", 1)[1]: offered
            for offered in self.dialect.tools(body)
            if "9plan_" in offered
        }

    def handed(self, body: Json) -> list[str]:
        """What the client handed back after each nineplan call of the conversation in `body`
        (the stand-in's call ids, or the function's name, say which were nineplan's)."""
        return [text for key, text in self.dialect.results(body) if "9plan" in key]

    def waits(self, body: Json) -> int:
        """How many times the conversation in `body` called a tool that waits for MCP
        servers."""
        return sum(key.startswith("call_wait") for key, _ in self.dialect.results(body))

    def answer(self, path: str, body: Json) -> Response:
        """The script's answer to `body`: the next call once the previous one's result is
        handed back, a final text after the last, a short text to a side request. Where the
        client offers no nineplan tool yet but a tool that waits for MCP servers that are
        still connecting (Claude Code's WaitForMcpServers), it calls that first, as a model
        asked to use nineplan would."""
        with self.lock:
            self.exchanges.append(Exchange(path, body))
            number = next(self.ids)
        names = self.names(body)
        offered = self.dialect.tools(body)
        if not names and WAIT in offered and self.waits(body) < MAX_WAITS:
            log.info("stand-in: %s offers no nineplan tool yet: calls %s", path, WAIT)
            return self.dialect.call(body, WAIT, {}, f"call_wait_{number}")
        if not names:
            log.info("stand-in: %s offers no nineplan tool: a short text", path)
            return self.dialect.text(body, SIDE)
        call_id = f"call_9plan_{number}"
        handed = self.handed(body)
        if len(handed) >= len(self.script):
            log.info("stand-in: %s after %d results: the final text", path, len(handed))
            return self.dialect.text(body, FINAL)
        tool, arguments = self.script[len(handed)]
        log.info("stand-in: %s after %d results: calls %s", path, len(handed), names[tool])
        return self.dialect.call(body, names[tool], arguments(handed), call_id)


def app(stand_in: StandIn) -> Starlette:
    """Every route any of the three clients was seen to use; each request is recorded."""

    async def messages(request: Request) -> Response:
        return stand_in.answer(request.url.path, await request.json())

    async def count_tokens(request: Request) -> Response:
        stand_in.exchanges.append(Exchange(request.url.path, await request.json()))
        return JSONResponse({"input_tokens": 10})

    async def gemini(request: Request) -> Response:
        body = await request.json()
        method = request.path_params["method"]
        if method == "countTokens":
            stand_in.exchanges.append(Exchange(request.url.path, body))
            return JSONResponse({"totalTokens": 10})
        return stand_in.answer(
            request.url.path, {**body, "_stream": method == "streamGenerateContent"}
        )

    async def anything(request: Request) -> Response:
        raw = await request.body()
        log.info("stand-in: unexpected %s %s %s", request.method, request.url.path, raw[:300])
        stand_in.exchanges.append(
            Exchange(request.url.path, {"_raw": raw.decode(errors="replace")})
        )
        return JSONResponse({"error": {"message": "not in the stand-in"}}, status_code=404)

    return Starlette(
        routes=[
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/v1/responses", messages, methods=["POST"]),
            Route("/v1beta/models/{model}:{method}", gemini, methods=["POST"]),
            Route("/{path:path}", anything, methods=["GET", "POST", "PUT", "DELETE"]),
        ]
    )


@contextmanager
def serving(dialect: Dialect, script: tuple[Step, ...] = STEPS) -> Iterator[tuple[StandIn, str]]:
    """A stand-in speaking `dialect` and following `script` on a free port of 127.0.0.1,
    served by uvicorn in a thread while the block runs; yields it and its base URL."""
    stand_in = StandIn(dialect, script)
    port = free_port()
    config = uvicorn.Config(
        app(stand_in), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="stand-in", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the stand-in did not start")
        time.sleep(0.02)
    try:
        yield stand_in, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def dump(exchanges: Sequence[Exchange], *, limit: int = 4000) -> str:
    """The recorded requests, each path and (cut) body, for a failure's message."""
    return "\n".join(f"{ex.path}: {json.dumps(ex.body)[:limit]}" for ex in exchanges)


def structured(handed: str) -> Mapping[str, Any] | None:
    """`handed` as the JSON object it is, or None when it is not one."""
    try:
        value = json.loads(handed)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
