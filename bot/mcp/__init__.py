"""The MCP server: the library and the matcher for coding and ops agents (``incident-bot mcp``)."""
