"""The stdio wire on the event loop: no worker thread per line read or reply written.

The SDK's stdio transport reads every line and writes every reply through anyio's
`wrap_file`, which runs each `readline`, `write` and `flush` in a worker thread: three thread
handoffs per call, about 0.13 ms of a no-op call's 0.61 ms on a 2-core machine (benchmark
row 20). Every MCP client spawns its server with pipes or socket pairs on stdin and stdout,
and those the event loop can watch. So when both are pipes or sockets, nineplan hands the
SDK's `stdio_server` streams that read and write on the loop: a read or a write is made only
when `poll` says it cannot block, and otherwise the stream waits with `anyio.wait_readable` /
`wait_writable`. The descriptors stay blocking (their flags are shared with every process
that holds the same pipe, so they are never changed). A write goes out in pieces of at most
`PIPE_BUF` bytes, the most a writable pipe always takes at once.

The wire is claimed as the SDK claims it: while serving, fd 0 reads /dev/null and fd 1
writes to stderr (to /dev/null when stderr is the wire itself, `2>&1`), so a stray print
never reaches the wire. Anything else (a file or a
terminal on stdin or stdout, descriptors that cannot be duplicated, Windows) is served by the
SDK's own transport.
"""

import os
import select
import stat
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress

import anyio

if sys.platform != "win32":  # imported now: importing it later can fail when descriptors run out
    import fcntl

#: How much one read takes from the pipe at most.
CHUNK = 1 << 16
#: The most one write hands a writable pipe (4096 on Linux, 512 on macOS).
PIECE = getattr(select, "PIPE_BUF", 512)
_NOW = 0  # poll's timeout: answer at once


class PipeLines(anyio.AsyncFile[str]):
    """The lines of a pipe or socket, read when the event loop says it has data.

    A line is decoded as UTF-8 with bad bytes replaced, as the SDK's transport does, and a
    line ending in CR LF comes with LF alone (JSON-RPC messages end in LF; a CR never ends
    one). A newline byte is never part of a multi-byte character, so lines split cleanly in
    bytes. At the end of the input the last line comes without its newline, then "".
    """

    def __init__(self, fd: int) -> None:
        super().__init__(open(fd, encoding="utf-8", errors="replace", closefd=False))  # noqa: SIM115 - the wire outlives this object
        self._fd = fd
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)
        self._buffer = bytearray()
        self._scanned = 0  # the buffer's first bytes, known to hold no newline
        self._ended = False

    async def readline(self) -> str:
        while (end := self._buffer.find(b"\n", self._scanned)) < 0:
            self._scanned = len(self._buffer)
            if self._ended or not await self._fill():
                self._ended = True
                end = len(self._buffer) - 1  # the rest, maybe nothing
                break
        line = bytes(self._buffer[: end + 1])
        del self._buffer[: end + 1]
        self._scanned = 0
        if line.endswith(b"\r\n"):
            line = line[:-2] + b"\n"
        return line.decode("utf-8", errors="replace")

    async def _fill(self) -> bool:
        """Read what the pipe holds, waiting for it on the loop; False at the end (a peer
        that reset the connection has ended it too)."""
        while True:
            if not self._poll.poll(_NOW):
                await anyio.wait_readable(self._fd)
            try:
                chunk = os.read(self._fd, CHUNK)
            except BlockingIOError:  # another holder made the pipe non-blocking, and read first
                continue
            except ConnectionResetError:
                return False
            self._buffer += chunk
            return bool(chunk)


class PipeReplies(anyio.AsyncFile[str]):
    """Writes to a pipe or socket, waiting on the loop while it is full.

    Nothing is buffered, so `flush` has nothing to do. A peer that closed its end raises
    ClosedResourceError, which ends the SDK's writer quietly, as a closed stream does.
    """

    def __init__(self, fd: int) -> None:
        super().__init__(open(fd, "w", encoding="utf-8", closefd=False))  # noqa: SIM115 - the wire outlives this object
        self._fd = fd
        self._poll = select.poll()
        self._poll.register(fd, select.POLLOUT)

    async def write(self, text: str) -> int:
        data = memoryview(text.encode("utf-8"))
        while data:
            if not self._poll.poll(_NOW):
                await anyio.wait_writable(self._fd)
            try:
                data = data[os.write(self._fd, data[:PIECE]) :]
            except BlockingIOError:  # another holder made the pipe non-blocking, and wrote first
                continue
            except ConnectionError as exc:  # the reader has gone (EPIPE, ECONNRESET)
                raise anyio.ClosedResourceError from exc
        return len(text)

    async def flush(self) -> None:
        """Every write has reached the pipe already."""


def _loop_watchable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextmanager
def claimed_pipes() -> Iterator[tuple[PipeLines, PipeReplies] | None]:
    """The wire's streams when stdin and stdout are both pipes or sockets, else None.

    While the block runs, the wire is served from private duplicates of fd 0 and fd 1, fd 0
    reads /dev/null and fd 1 writes to stderr; what was printed meanwhile is flushed there.
    On exit both descriptors point at the wire again. If the descriptors cannot be claimed
    (no descriptor left, no /dev/null), nothing is changed and the result is None.
    """
    if sys.platform == "win32" or not (_loop_watchable(0) and _loop_watchable(1)):
        yield None
        return
    with ExitStack() as undo:
        try:
            sys.stdout.flush()
            wire = [_claim(undo, std) for std in (0, 1)]
            _divert(0, os.devnull, os.O_RDONLY)
            _divert(1, None, os.O_WRONLY)
        except OSError:
            undo.close()
            yield None
            return
        undo.callback(_flush_stray_output)
        yield PipeLines(wire[0]), PipeReplies(wire[1])


def _claim(undo: ExitStack, fd: int) -> int:
    """A close-on-exec duplicate of `fd` above the standard descriptors; on exit of `undo`,
    `fd` is the wire again and the duplicate is closed."""
    private = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    undo.callback(_give_back, private, fd)
    return private


def _give_back(private: int, fd: int) -> None:
    """Point `fd` at the wire again and close the duplicate; if that cannot be done, the
    duplicate stays open (as the SDK's claim does) rather than leave `fd` pointing nowhere."""
    try:
        os.dup2(private, fd)
    except OSError:
        return
    os.close(private)


def _flush_stray_output() -> None:
    """What was printed while serving goes to stderr, where fd 1 points until the restore."""
    with suppress(Exception):
        sys.stdout.flush()


def _divert(fd: int, path: str | None, flags: int) -> None:
    """Point `fd` at stderr (path None) or at `path`; /dev/null if stderr is gone or is the
    wire itself (`2>&1`)."""
    if path is None:
        with suppress(OSError):
            if not _same_file(2, fd):
                os.dup2(2, fd)
                return
        path = os.devnull
    target = os.open(path, flags)
    try:
        os.dup2(target, fd)
    finally:
        os.close(target)


def _same_file(one: int, other: int) -> bool:
    first, second = os.fstat(one), os.fstat(other)
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)
