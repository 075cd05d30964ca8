"""Where the sidecar's files live, by platform convention.

`$MCP_SIDECAR_HOME` replaces the platform directories when set. It must be an absolute
path: a relative one would be resolved against whatever directory the sidecar was started
in, which for an editor is the workspace, so it is refused (`InvalidHome`) instead.
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "mcp-sidecar"
HOME_ENV = "MCP_SIDECAR_HOME"
GLOBAL_FILE = "mcp.json"
PROJECT_FILE = ".mcp.json"
APPROVALS_FILE = "project-approvals.json"


class InvalidHome(ValueError):
    """`$MCP_SIDECAR_HOME` is set to a relative path."""

    def __init__(self) -> None:
        super().__init__(f"{HOME_ENV} must be an absolute path; a relative one is never used.")


def _home_override() -> Path | None:
    home = os.environ.get(HOME_ENV)
    if not home:
        return None
    path = Path(home).expanduser()
    if not path.is_absolute():
        raise InvalidHome()
    return path


def config_dir() -> Path:
    """`$MCP_SIDECAR_HOME` when set, else the platform's user config dir for mcp-sidecar."""
    home = _home_override()
    if home is not None:
        return home
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def global_config_path() -> Path:
    return config_dir() / GLOBAL_FILE


def project_config_path(project_dir: Path) -> Path:
    return project_dir / PROJECT_FILE


def approvals_path() -> Path:
    """Which project server definitions the person approved (hashes only); never in a project."""
    return config_dir() / APPROVALS_FILE


def cache_dir() -> Path:
    """The cache directory; with an invalid `$MCP_SIDECAR_HOME`, the platform's (never a relative path)."""
    try:
        home = _home_override()
    except InvalidHome:
        home = None
    if home is not None:
        return home / "cache"
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def neutral_dir() -> Path:
    """Where servers and secret commands run when the workspace is not trusted.

    Never the workspace: a program started there finds the repository's own modules first
    (`python -m pkg` imports `./pkg.py`, `npx` resolves `./node_modules`, `git` reads
    `./.git/config`). The sidecar's config directory when it exists, else the user's home.
    """
    try:
        directory = config_dir()
    except InvalidHome:
        return Path.home()
    return directory if directory.is_dir() else Path.home()
