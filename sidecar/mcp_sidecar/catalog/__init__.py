"""Per-server catalogs of tool (and later resource and prompt) metadata."""
