"""The MCP server: the tool table, resources, prompts and log messages over stdio (`wolfmem mcp`)."""
