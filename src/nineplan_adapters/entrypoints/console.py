"""The `nineplan` command: `serve` runs the MCP server (entrypoints.serve), `ui` the web view, and
every other command is the command line's own (entrypoints.cli)."""

import contextlib
import os
import sys
from collections.abc import Sequence

import anyio

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.cli.main import main as cli_main

#: The exit code after the reader of stdout went away (`nineplan state X | head`): a closed
#: pipe's, as a shell reports a command that SIGPIPE ended (128 + 13).
CLOSED_PIPE = 141


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nineplan ARGV...`; returns the exit code."""
    try:
        return cli_main(argv, launchers={"serve": _serve, "ui": _ui})
    except BrokenPipeError:
        _quiet_stdout()
        return CLOSED_PIPE


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit has nowhere left to fail."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _serve(settings: Settings) -> int:
    from nineplan_adapters.entrypoints.serve import serve  # noqa: PLC0415 - the other commands do not need mcp

    return int(anyio.run(serve, settings))


def _ui(settings: Settings) -> int:
    from nineplan_adapters.entrypoints.web.server import serve_ui  # noqa: PLC0415 - nor the web view

    return int(anyio.run(serve_ui, settings))
