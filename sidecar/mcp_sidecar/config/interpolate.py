"""Resolve `${VAR}` references when a server connects, never earlier, in the client's environment.

The environment is each client's own (an editor's, a host's, a CLI run's: its front's, carried to
the engine in the hello; in-process, this process's `os.environ`), never the engine's.
`command`, `args`, `cwd`, `env`, `url` and `headers` take `${VAR}`. In `env` and `headers`,
values also take `$VAR`, `$$` for a literal `$` and `$!` for a literal `!`; a value whose
original text starts with `!` is a secret command (run by the connection layer, see
docs/configuration.md). A missing variable stops this server only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcp_sidecar.config import paths
from mcp_sidecar.config.model import ServerConfig

_BRACED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SHELL_STYLE = re.compile(r"\$(?:\$|!|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


class MissingVariable(Exception):
    def __init__(self, variable: str, field_name: str) -> None:
        super().__init__(f"environment variable {variable} (used in `{field_name}`) is not set")
        self.variable = variable
        self.field_name = field_name


@dataclass(frozen=True, slots=True)
class SecretCommand:
    """A `!command` value in env or headers; run at connect time."""

    command: str


@dataclass(frozen=True, slots=True)
class ResolvedServer:
    command: str | None
    args: tuple[str, ...]
    cwd: str | None
    env: dict[str, str | SecretCommand]
    url: str | None
    headers: dict[str, str | SecretCommand]
    secret_values: frozenset[str] = field(default=frozenset(), repr=False)
    """Every value that came from the environment or a header/env field, for the log's redaction."""
    passed_secrets: frozenset[str] = field(default=frozenset(), repr=False)
    """What the server was given from the environment or a secret command (in `env` and
    `headers`: each variable's value and the whole value it is part of) and the OAuth client
    secret: replaced in everything the server sends back (`output/redact.py`)."""
    oauth_client_id: str | None = None
    oauth_client_secret: str | SecretCommand | None = field(default=None, repr=False)
    """The confidential client's secret: resolved, or a `!command` the OAuth code runs when it needs it."""

    def secret_commands(self) -> dict[str, str]:
        """The `!command` values still to run, by field (`env.KEY`, `headers.Name`)."""
        return {
            f"{group}.{key}": value.command
            for group, values in (("env", self.env), ("headers", self.headers))
            for key, value in values.items()
            if isinstance(value, SecretCommand)
        }


def _braced(text: str, field_name: str, environ: Mapping[str, str], found: set[str]) -> str:
    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise MissingVariable(name, field_name)
        found.add(environ[name])
        return environ[name]

    return _BRACED.sub(sub, text)


def _shell_style(text: str, field_name: str, environ: Mapping[str, str], found: set[str]) -> str:
    def sub(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "$$":
            return "$"
        if whole == "$!":
            return "!"
        name = match.group(1) or match.group(2)
        if name not in environ:
            raise MissingVariable(name, field_name)
        found.add(environ[name])
        return environ[name]

    return _SHELL_STYLE.sub(sub, text)


def _secret_map(
    values: Mapping[str, str], field_name: str, environ: Mapping[str, str], found: set[str], passed: set[str]
) -> dict[str, str | SecretCommand]:
    out: dict[str, str | SecretCommand] = {}
    for key, value in values.items():
        if value.startswith("!"):
            out[key] = SecretCommand(value[1:])
        else:
            referenced: set[str] = set()
            resolved = _shell_style(value, f"{field_name}.{key}", environ, referenced)
            if referenced:  # a value written out in the file is the file's, not a secret passed on
                passed.update(referenced | {resolved})
            found.update(referenced | {resolved})
            out[key] = resolved
    return out


def resolve(config: ServerConfig, workspace: Path | None, environ: Mapping[str, str]) -> ResolvedServer:
    """`workspace` is the directory a stdio server runs in (a relative `cwd` is taken from it):
    the workspace only when it is trusted, else a neutral one (see docs/configuration.md);
    `environ`, the client's environment, which every reference resolves in."""
    env_source = environ
    found: set[str] = set()
    command = _braced(config.command, "command", env_source, found) if config.command else None
    args = tuple(_braced(a, "args", env_source, found) for a in config.args)
    cwd: str | None = None
    if config.transport == "stdio":
        base = workspace or paths.neutral_dir()  # never the directory the sidecar happened to start in
        cwd = str(base / _braced(config.cwd, "cwd", env_source, found)) if config.cwd else str(base)
    url = _braced(config.url, "url", env_source, found) if config.url else None
    passed: set[str] = set()
    env = _secret_map(config.env, "env", env_source, found, passed)
    headers = _secret_map(config.headers, "headers", env_source, found, passed)
    client_secret: str | SecretCommand | None = None
    written = config.oauth_client_secret
    if written is not None and written.startswith("!"):
        client_secret = SecretCommand(written[1:])
    elif written is not None:
        referenced: set[str] = set()
        client_secret = _shell_style(written, "oauthClientSecret", env_source, referenced)
        found.update(referenced | {client_secret})
        passed.update(referenced | {client_secret})
    return ResolvedServer(
        command=command,
        args=args,
        cwd=cwd,
        env=env,
        url=url,
        headers=headers,
        secret_values=frozenset(v for v in found if len(v) >= 4),
        passed_secrets=frozenset(passed),
        oauth_client_id=(
            _braced(config.oauth_client_id, "oauthClientId", env_source, found) if config.oauth_client_id else None
        ),
        oauth_client_secret=client_secret,
    )
