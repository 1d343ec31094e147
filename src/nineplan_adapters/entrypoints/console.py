"""The `nineplan` command: `serve` runs the MCP server (entrypoints.serve), `ui` the web view, and
every other command is the command line's own (entrypoints.cli)."""

from collections.abc import Sequence

import anyio

from nineplan_adapters.config import Settings
from nineplan_adapters.entrypoints.cli.main import main as cli_main


def main(argv: Sequence[str] | None = None) -> int:
    """Run `nineplan ARGV...`; returns the exit code."""
    return cli_main(argv, launchers={"serve": _serve, "ui": _ui})


def _serve(settings: Settings) -> int:
    from nineplan_adapters.entrypoints.serve import serve  # noqa: PLC0415 - the other commands do not need mcp

    return int(anyio.run(serve, settings))


def _ui(settings: Settings) -> int:
    from nineplan_adapters.entrypoints.web.server import serve_ui  # noqa: PLC0415 - nor the web view

    return int(anyio.run(serve_ui, settings))
