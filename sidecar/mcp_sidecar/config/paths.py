"""Where the sidecar's files live, by platform convention."""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "mcp-sidecar"
HOME_ENV = "MCP_SIDECAR_HOME"
GLOBAL_FILE = "mcp.json"
PROJECT_FILE = ".mcp.json"


def config_dir() -> Path:
    """`$MCP_SIDECAR_HOME` when set, else the platform's user config dir for mcp-sidecar."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def global_config_path() -> Path:
    return config_dir() / GLOBAL_FILE


def project_config_path(project_dir: Path) -> Path:
    return project_dir / PROJECT_FILE


def cache_dir() -> Path:
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))
