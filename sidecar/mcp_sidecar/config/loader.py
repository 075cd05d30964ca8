"""Read the global and (trusted) project files and merge them into one effective configuration.

Project definitions replace same-named global ones whole. When neither file exists the
bundled demo server is configured, so a new user sees something work.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from mcp_sidecar.config import budget, paths
from mcp_sidecar.config.budget import Budget, BudgetRead
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.profiles import Profile, ProfilesRead, check_servers, parse_profiles
from mcp_sidecar.config.validate import (
    CLIENT_METADATA_URL_RULE,
    SERVER_NAME,
    ConfigProblems,
    is_client_metadata_url,
    parse_server,
    parse_servers,
)

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
    profiles: dict[str, Profile] = field(default_factory=dict)
    """The valid profiles of both files (a project profile replaces a same-named global one)."""
    budget: Budget = field(default_factory=Budget)
    """The files' session budget (`sessionBudget`; the project's fields over the global's): off by default."""


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    message: str
    """One readable sentence naming the file (and the server and field); never a value."""
    server: str | None = None
    """The definition at fault; None when the whole file (or the config directory) is, and its servers are unknown."""


@dataclass(frozen=True, slots=True)
class LoadReport:
    """What the files say: every valid definition, and every problem (a file's or a definition's)."""

    config: EffectiveConfig
    problems: tuple[ConfigProblem, ...] = ()
    profile_problems: tuple[str, ...] = ()
    """Invalid profiles, each left out on its own: they never make the servers' setup invalid."""
    budget_problems: tuple[str, ...] = ()
    """Invalid `sessionBudget` fields, each off: they never make the servers' setup invalid either."""


@dataclass(slots=True)
class _FileRead:
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)
    client_metadata_url: str | None = None
    """The global file's top-level `oauthClientMetadataUrl`: every HTTP server's default."""
    profiles: ProfilesRead = field(default_factory=ProfilesRead)
    budget: BudgetRead = field(default_factory=BudgetRead)


GLOBAL_OPTIONS = ("oauthClientMetadataUrl",)


def _read(path: Path, scope: str) -> _FileRead:
    """One file's valid definitions and its problems; a file that is not a JSON object has no servers."""
    try:
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            return _FileRead()  # an empty file is kept by the editing commands and means "no servers"
        try:
            document = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigProblems([f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}."]) from exc
        servers, broken = parse_servers(document, scope, str(path))  # type: ignore[arg-type]
        option = document.get("oauthClientMetadataUrl") if isinstance(document, dict) else None
        profiles = parse_profiles(document, scope, str(path))  # type: ignore[arg-type]
        session_budget = budget.parse_budget(document, str(path))
    except UnicodeDecodeError:
        return _FileRead(problems=[ConfigProblem(f"{path}: the file is not UTF-8 text.")])
    except OSError as exc:
        return _FileRead(problems=[ConfigProblem(f"{path}: the file cannot be read ({exc.strerror or 'error'}).")])
    except ConfigProblems as exc:
        return _FileRead(problems=[ConfigProblem(p) for p in exc.problems])
    # An invalid name is not repeated anywhere (it is file data a repository chose): a file-level problem.
    problems = [
        ConfigProblem(p, name if SERVER_NAME.match(name) else None)
        for name, sentences in broken.items()
        for p in sentences
    ]
    if option is not None and scope != "global":
        problems.append(
            ConfigProblem(
                f"{path}: `oauthClientMetadataUrl` at the top level is a global option; "
                "set it in the global file, or on a server."
            )
        )
        option = None
    elif option is not None and not is_client_metadata_url(option):
        problems.append(ConfigProblem(f"{path}: the top-level `oauthClientMetadataUrl` {CLIENT_METADATA_URL_RULE}"))
        option = None
    return _FileRead(servers, problems, option, profiles, session_budget)


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
    """Load the effective configuration; raise ConfigProblems when any file or definition is invalid."""
    report = load_report(project_dir, trusted)
    if report.problems:
        raise ConfigProblems([p.message for p in report.problems])
    return report.config


def load_report(project_dir: Path | None, trusted: bool) -> LoadReport:
    """Every valid definition of both files, and every problem.

    A file that is not a JSON object contributes no servers; an invalid definition is left
    out on its own, and a project definition that is invalid also hides the same-named
    global one (the project meant to replace it). The demo is configured only when no file
    exists and nothing is wrong.
    """
    try:
        global_path = paths.global_config_path()
    except paths.InvalidHome as exc:
        return LoadReport(EffectiveConfig(servers={}, files=()), (ConfigProblem(str(exc)),))
    files = [ConfigFile("global", str(global_path), global_path.is_file(), global_path.is_file())]
    global_read = _read(global_path, "global") if global_path.is_file() else _FileRead()
    project_read = _FileRead()
    if project_dir is not None:
        project_path = paths.project_config_path(project_dir)
        exists = project_path.is_file()
        read = exists and trusted and not _same_file(project_path, global_path)
        files.append(ConfigFile("project", str(project_path), exists, read))
        if read:
            project_read = _read(project_path, "project")
    problems = (*global_read.problems, *project_read.problems)
    if not problems and not any(f.exists for f in files if f.scope == "global") and not any(f.read for f in files[1:]):
        return LoadReport(EffectiveConfig(servers={DEMO_SERVER: demo_server()}, files=tuple(files)))
    global_servers, project_servers = global_read.servers, project_read.servers
    hidden = {p.server for p in project_read.problems if p.server is not None}
    merged = {name: s for name, s in global_servers.items() if name not in hidden}
    shadowed = {name: global_servers[name] for name in project_servers if name in global_servers}
    merged.update(project_servers)
    default_url = global_read.client_metadata_url
    if default_url:
        merged = {
            name: dataclasses.replace(s, oauth_client_metadata_url=default_url)
            if s.transport == "http" and s.oauth_client_metadata_url is None
            else s
            for name, s in merged.items()
        }
    profiles, profile_problems = _profiles(global_read, project_read, {*merged, *broken_names(problems)})
    limits = budget.merged(global_read.budget, project_read.budget)
    config = EffectiveConfig(
        servers=merged, files=tuple(files), shadowed=shadowed, profiles=profiles, budget=limits.budget
    )
    return LoadReport(config, problems, profile_problems, limits.problems)


def broken_names(problems: tuple[ConfigProblem, ...]) -> set[str]:
    return {p.server for p in problems if p.server is not None}


def _profiles(
    global_read: _FileRead, project_read: _FileRead, configured: set[str]
) -> tuple[dict[str, Profile], tuple[str, ...]]:
    """Both files' profiles merged (project over global), each checked against the configured servers
    (a server whose definition is invalid counts as configured: its own problem says what is wrong)."""
    merged = {name: p for name, p in global_read.profiles.profiles.items() if name not in project_read.profiles.broken}
    merged.update(project_read.profiles.profiles)
    problems = [*global_read.profiles.problems, *project_read.profiles.problems]
    valid: dict[str, Profile] = {}
    for name, profile in merged.items():
        found = check_servers(profile, configured)
        problems += found
        if not found:
            valid[name] = profile
    return valid, tuple(problems)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
