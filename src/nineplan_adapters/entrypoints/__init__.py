"""The ways in: the MCP server, the web view and the command line. Each talks to NinePlan, never to
storage; what two of them share (views, text, workspace, the ASGI serving half) lives here."""
