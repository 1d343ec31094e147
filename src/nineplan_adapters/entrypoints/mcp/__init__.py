"""The MCP surface: the twelve 9plan tools, the prompts, instructions and resources.

`build_server` is imported on first use, so that importing a light module of this package
(`views`, the result shapes the CLI prints) does not load the MCP SDK.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nineplan_adapters.entrypoints.mcp.server import build_server

__all__ = ["build_server"]


def __getattr__(name: str) -> Any:
    if name == "build_server":
        from nineplan_adapters.entrypoints.mcp.server import build_server  # noqa: PLC0415 - on first use

        return build_server
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
