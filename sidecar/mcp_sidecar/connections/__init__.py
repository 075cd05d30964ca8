"""The only layer that imports the `mcp` SDK: one owner task per server connection."""
