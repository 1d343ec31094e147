"""The MCP surface: the thirteen 9plan tools, the prompts, instructions and resources."""

from nineplan_adapters.entrypoints.mcp.server import build_server

__all__ = ["build_server"]
