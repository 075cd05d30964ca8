"""Read the global and (trusted) project files and merge them into one effective configuration.

Project definitions replace same-named global ones whole. When neither file exists the
bundled demo server is configured, so a new user sees something work.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mcp_sidecar.config import paths
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.validate import ConfigProblems, parse_document, parse_server

DEMO_SERVER = "demo"


@dataclass(frozen=True, slots=True)
class ConfigFile:
    scope: str
    path: str
    exists: bool
    read: bool
    """False for an untrusted project file, which is never opened."""


@dataclass(frozen=True, slots=True)
class EffectiveConfig:
    servers: dict[str, ServerConfig]
    files: tuple[ConfigFile, ...]
    shadowed: dict[str, ServerConfig] = field(default_factory=dict)
    """Global definitions hidden by a same-named project definition."""


def _read(path: Path, scope: str) -> dict[str, ServerConfig]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigProblems([f"{path}: the file is not UTF-8 text."]) from exc
    except OSError as exc:
        raise ConfigProblems([f"{path}: the file cannot be read ({exc.strerror or 'error'})."]) from exc
    if not text.strip():
        return {}  # an empty file is kept by the editing commands and means "no servers"
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigProblems([f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}."]) from exc
    return parse_document(document, scope, str(path))  # type: ignore[arg-type]


def demo_server() -> ServerConfig:
    """The demo runs isolated: `-I` keeps the working directory and `PYTHON*` variables off its
    `sys.path`, so a workspace's own `mcp_sidecar/demo/__main__.py` is never imported; the
    script is named by its absolute path and puts only its own package root on `sys.path`."""
    from mcp_sidecar.demo import __file__ as demo_init

    raw = {
        "command": sys.executable,
        "args": ["-I", str(Path(demo_init).resolve().with_name("__main__.py"))],
        "description": "Bundled demo server",
    }
    return parse_server(DEMO_SERVER, raw, "builtin")


def load(project_dir: Path | None, trusted: bool) -> EffectiveConfig:
    """Load the effective configuration; raise ConfigProblems when any file is invalid."""
    try:
        global_path = paths.global_config_path()
    except paths.InvalidHome as exc:
        raise ConfigProblems([str(exc)]) from None
    files = [ConfigFile("global", str(global_path), global_path.is_file(), global_path.is_file())]
    problems: list[str] = []
    global_servers: dict[str, ServerConfig] = {}
    project_servers: dict[str, ServerConfig] = {}
    if global_path.is_file():
        try:
            global_servers = _read(global_path, "global")
        except ConfigProblems as exc:
            problems.extend(exc.problems)
    if project_dir is not None:
        project_path = paths.project_config_path(project_dir)
        exists = project_path.is_file()
        read = exists and trusted and not _same_file(project_path, global_path)
        files.append(ConfigFile("project", str(project_path), exists, read))
        if read:
            try:
                project_servers = _read(project_path, "project")
            except ConfigProblems as exc:
                problems.extend(exc.problems)
    if problems:
        raise ConfigProblems(problems)
    if not any(f.exists for f in files if f.scope == "global") and not any(f.read for f in files[1:]):
        return EffectiveConfig(servers={DEMO_SERVER: demo_server()}, files=tuple(files))
    merged = dict(global_servers)
    shadowed = {name: global_servers[name] for name in project_servers if name in global_servers}
    merged.update(project_servers)
    return EffectiveConfig(servers=merged, files=tuple(files), shadowed=shadowed)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
