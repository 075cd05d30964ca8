"""The bundled demo MCP server, configured when no configuration file exists."""
