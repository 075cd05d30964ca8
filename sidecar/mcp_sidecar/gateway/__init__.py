"""The MCP server face (`mcp-sidecar mcp`): any MCP host gets discovery, activation and native tools.

This package and `connections/`, `auth/` are the only ones that import the SDK; this one imports
its server half. Everything it does goes through the services, exactly as the editor handlers do.
"""
