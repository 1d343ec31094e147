"""The stdio wire on the event loop: lines and replies over real pipes and socket pairs."""

import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from nineplan_adapters.entrypoints.mcp.pipes import CHUNK, PipeLines, PipeReplies

PROJECT = Path(__file__).resolve().parents[2]


Ends = tuple[int, int, Callable[[], None]]


@contextmanager
def pipe() -> Iterator[Ends]:
    """A pipe (blocking, as a client hands it over): its read end, its write end and how to
    end the input."""
    read, write = os.pipe()
    open_fds = {read, write}

    def end_input() -> None:
        os.close(write)
        open_fds.discard(write)

    try:
        yield read, write, end_input
    finally:
        for fd in open_fds:
            os.close(fd)


@contextmanager
def socket_pair() -> Iterator[Ends]:
    """A connected socket pair, as a pipe's ends (the way Node spawns children)."""
    left, right = socket.socketpair()
    with left, right:
        yield left.fileno(), right.fileno(), lambda: right.shutdown(socket.SHUT_WR)


async def read_all(lines: PipeLines) -> list[str]:
    return [line async for line in lines]


@pytest.mark.parametrize("ends", [pipe, socket_pair])
async def test_lines_come_whole_however_the_bytes_arrive(ends):
    """Lines written in pieces that split them anywhere (even inside a character) are read
    whole and in order, CR LF as LF; the last one at the end of input comes without its
    newline. The descriptors are never made non-blocking (other processes share them)."""
    with ends() as (read, write, end_input):
        lines = PipeLines(read)
        wire = '{"a": 1}\n{"b": "é€"}\n\n{"c": 3}\r\n{"last": true}'.encode()

        async def trickle() -> None:
            for start in range(0, len(wire), 3):
                os.write(write, wire[start : start + 3])
                await anyio.sleep(0)
            end_input()

        async with anyio.create_task_group() as group:
            group.start_soon(trickle)
            with anyio.fail_after(5):
                got = await read_all(lines)
        assert os.get_blocking(read)
    assert got == ['{"a": 1}\n', '{"b": "é€"}\n', "\n", '{"c": 3}\n', '{"last": true}']
    assert await lines.readline() == ""  # and again at the end


async def test_bytes_that_are_not_utf8_are_replaced_not_fatal():
    """A line with bytes that are not UTF-8 is read with replacement characters, as the SDK's
    transport reads it, and the next line is unharmed."""
    with pipe() as (read, write, end_input):
        os.write(write, b'{"x": "\xff\xfe"}\n{"ok": 1}\n')
        end_input()
        with anyio.fail_after(5):
            got = await read_all(PipeLines(read))
    assert got == ['{"x": "\ufffd\ufffd"}\n', '{"ok": 1}\n']


@pytest.mark.parametrize("ends", [pipe, socket_pair])
async def test_a_reply_larger_than_the_pipe_waits_for_the_reader(ends):
    """A 3 MiB reply (far more than a pipe holds) is written while the reader drains it: the
    writer waits on the loop instead of failing or blocking it, and every byte arrives."""
    big = "x" * (3 * 2**20) + "\n"
    with ends() as (read, write, _):
        replies, lines = PipeReplies(write), PipeLines(read)
        got: list[str] = []

        async def reader() -> None:
            got.append(await lines.readline())
            got.append(await lines.readline())

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(reader)
                assert await replies.write(big) == len(big)
                await replies.write("é\n")
                await replies.flush()
    assert got == [big, "é\n"]
    assert len(big) > CHUNK * 16


async def test_a_client_that_resets_the_socket_ends_the_input():
    """A socket-pair client that closes while a reply is still unread resets the connection;
    the reader takes that as the end of the input instead of crashing the server."""
    ours, theirs = socket.socketpair()
    with ours:
        await PipeReplies(ours.fileno()).write("{}\n")
        theirs.close()  # with our reply unread: the kernel resets the connection
        with anyio.fail_after(5):
            assert await PipeLines(ours.fileno()).readline() == ""


async def test_a_reader_that_went_away_closes_the_stream():
    """Writing after the reading end closed raises ClosedResourceError, which ends the SDK's
    writer quietly, instead of a BrokenPipeError traceback."""
    read, write = os.pipe()
    os.close(read)
    try:
        with pytest.raises(anyio.ClosedResourceError):
            await PipeReplies(write).write("{}\n")
    finally:
        os.close(write)


CLAIM = textwrap.dedent(
    """
    import os, sys, anyio
    from nineplan_adapters.entrypoints.mcp.pipes import claimed_pipes

    async def main():
        with claimed_pipes() as wire:
            assert wire is not None
            lines, replies = wire
            print("a stray print")          # fd 1 is stderr while serving (not flushed here)
            assert os.read(0, 10) == b""      # fd 0 reads /dev/null
            assert os.get_blocking(lines.fileno()) and os.get_blocking(replies.fileno())
            line = await lines.readline()
            await replies.write("echo " + line)
        assert os.get_blocking(0) and os.get_blocking(1)
        os.write(1, b"after\\n")              # the wire again, once served

    anyio.run(main)
    """
)


def claim_run(tmp_path: Path, **streams: Any) -> subprocess.CompletedProcess[str]:
    """The CLAIM script in a child whose stdout is block-buffered (PYTHONUNBUFFERED unset)."""
    script = tmp_path / "claim.py"
    script.write_text(CLAIM)
    buffered = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [sys.executable, str(script)],
        env=buffered,
        input="ping\n",
        stdout=subprocess.PIPE,
        text=True,
        timeout=60,
        cwd=PROJECT,
        check=False,
        **streams,
    )


def test_serving_claims_stdin_and_stdout_and_gives_them_back(tmp_path: Path):
    """While the wire is claimed a stray print goes to stderr (even block-buffered, flushed
    before fd 1 is given back) and stdin reads nothing, the wire itself carries only what
    the server writes and stays blocking, and afterwards fd 0 and 1 are the pipes again."""
    done = claim_run(tmp_path, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo ping\nafter\n"
    assert "a stray print" in done.stderr


def test_a_stray_print_misses_the_wire_when_stderr_is_the_wire(tmp_path: Path):
    """With `2>&1` stderr is the wire itself: the stray print goes to /dev/null instead."""
    done = claim_run(tmp_path, stderr=subprocess.STDOUT)
    assert done.returncode == 0, done.stdout
    assert done.stdout == "echo ping\nafter\n"


NO_DESCRIPTORS = textwrap.dedent(
    """
    import os, resource, stat
    from nineplan_adapters.entrypoints.mcp.pipes import claimed_pipes

    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (3, limits[1]))  # no descriptor above 2
    with claimed_pipes() as wire:
        got = wire
        untouched = all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in (0, 1))
    resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    os.write(1, f"{got} {untouched}".encode())
    """
)


def test_a_claim_that_cannot_be_made_changes_nothing(tmp_path: Path):
    """With no descriptor left for the private copies, the claim gives None (the SDK's own
    transport serves) and fd 0 and 1 are still the pipes."""
    script = tmp_path / "no_descriptors.py"
    script.write_text(NO_DESCRIPTORS)
    done = subprocess.run(
        [sys.executable, str(script)],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=PROJECT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "None True"


def test_a_file_on_stdin_is_served_by_the_sdks_transport(tmp_path: Path):
    """`nineplan serve < requests` (a regular file, which the event loop cannot watch) is
    served by the SDK's own transport: the initialize request is answered."""
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
        '"2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "0"}}}\n'
    )
    with requests.open() as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "nineplan_adapters", "serve"],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=PROJECT,
            env={**os.environ, "NINEPLAN_SESSIONS_PATH": str(tmp_path / "sessions")},
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert '"id":1,"result":{' in done.stdout.replace(" ", "")
