"""The web view for the people around the agents: `nineplan ui`, and `/` beside `/mcp`."""

from nineplan_adapters.entrypoints.web.app import web_app

__all__ = ["web_app"]
