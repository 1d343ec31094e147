"""The MCP surface: the twelve 9plan tools, the bootstrap prompt, instructions and resources."""

from nineplan_adapters.mcp.server import build_server

__all__ = ["build_server"]
