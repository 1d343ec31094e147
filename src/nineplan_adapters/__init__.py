"""nineplan's adapters: storage, files, ids, the MCP server, configuration and the CLI."""

from nineplan_adapters.embedding import open_nineplan

__all__ = ["open_nineplan"]
