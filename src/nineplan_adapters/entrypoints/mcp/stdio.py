"""The SDK's stdio transport (`mcp.server.stdio.stdio_server`), with the two things it lacks.

- A line that is not JSON-RPC gets a parse error (-32700, id null) and the server reads on;
  the SDK's transport passes the exception into the read stream, where nobody answers it.
- A stray print never reaches the wire. While serving, the SDK points fd 1 at a copy of
  stderr; when stderr is the wire itself (`nineplan serve 2>&1`) that copy would be the wire,
  so fd 2 points at /dev/null while the SDK makes it, and fd 1 writes there instead. What a
  block-buffered `sys.stdout` still holds is flushed before the SDK gives fd 1 back.
"""

import logging
import os
import stat
import sys
from collections.abc import AsyncIterable, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager, nullcontext, suppress
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from mcp.server.lowlevel import Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import PARSE_ERROR, ErrorData, JSONRPCError

log = logging.getLogger("nineplan.mcp")


async def serve_stdio(server: Server[Any], options: InitializationOptions) -> None:
    """Serve `server` on stdin and stdout until the client closes stdin."""
    async with AsyncExitStack() as stack:
        with _null_stderr() if _stderr_is_stdout() else nullcontext():
            lines, replies = await stack.enter_async_context(stdio_server())
        stack.callback(_flush_stray_output)  # before the SDK gives fd 1 back
        relayed, messages = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_answer_parse_errors, lines, relayed, replies.send)
            await server.run(messages, replies, options)


async def _answer_parse_errors(
    lines: AsyncIterable[SessionMessage | Exception],
    relayed: MemoryObjectSendStream[SessionMessage | Exception],
    reply: Callable[[SessionMessage], Awaitable[None]],
) -> None:
    """Pass the SDK's messages on; answer each line it could not parse with -32700."""
    async with relayed:
        async for item in lines:
            if not isinstance(item, Exception):
                await relayed.send(item)
                continue
            log.warning("stdio: a line that is not JSON-RPC: %s", _first_line(item))
            error = ErrorData(code=PARSE_ERROR, message=f"Parse error: {_first_line(item)}")
            await reply(SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error)))


def _first_line(error: Exception) -> str:
    return str(error).splitlines()[0][:200] if str(error) else type(error).__name__


def _stderr_is_stdout() -> bool:
    """Whether fd 1 and fd 2 are the same pipe or socket (`2>&1` from a client that reads the
    wire). A terminal shared by both is no wire: a stray print shows there as before."""
    try:
        first, second = os.fstat(1), os.fstat(2)
    except OSError:
        return False
    wire = stat.S_ISFIFO(first.st_mode) or stat.S_ISSOCK(first.st_mode)
    return wire and (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


@contextmanager
def _null_stderr() -> Iterator[None]:
    """fd 2 points at /dev/null inside the block and at stderr again after it; with no
    descriptor to spare, nothing is changed (and the SDK serves fd 1 in place)."""
    with ExitStack() as undo:
        with suppress(OSError):
            saved = os.dup(2)
            undo.callback(os.close, saved)
            null = os.open(os.devnull, os.O_WRONLY)
            undo.callback(os.close, null)
            os.dup2(null, 2)
            undo.callback(os.dup2, saved, 2)
        yield


def _flush_stray_output() -> None:
    """What a stray print left in `sys.stdout`'s buffer goes where fd 1 points while serving."""
    with suppress(Exception):
        sys.stdout.flush()
