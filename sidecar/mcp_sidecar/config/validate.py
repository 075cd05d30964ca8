"""Turn one `mcpServers` JSON document into typed server definitions, or say exactly what is wrong.

Every problem names the server and the field; values are never echoed, since any of them
can hold a credential.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp_sidecar.config.model import (
    MAX_TIMEOUT_MS,
    MIN_TIMEOUT_MS,
    ProtocolMode,
    Scope,
    ServerConfig,
    Transport,
)

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5B\x5D-\x7E]+$")  # RFC 6749 scope-token characters
KNOWN_FIELDS = frozenset(
    {
        "type",
        "command",
        "args",
        "cwd",
        "env",
        "url",
        "headers",
        "description",
        "disabled",
        "includeTools",
        "excludeTools",
        "timeoutMs",
        "protocol",
        "oauthClientId",
        "oauthScopes",
        "oauthCallbackPort",
    }
)


class ConfigProblems(Exception):
    """All problems found in one document, each a readable sentence."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _str_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def parse_document(document: Any, scope: Scope, source: str) -> dict[str, ServerConfig]:
    """Validate a whole file's content; raise ConfigProblems listing every problem."""
    if not isinstance(document, Mapping):
        raise ConfigProblems([f"{source}: the top level must be a JSON object."])
    servers = document.get("mcpServers", {})
    if not isinstance(servers, Mapping):
        raise ConfigProblems([f"{source}: `mcpServers` must be a JSON object."])
    problems: list[str] = []
    parsed: dict[str, ServerConfig] = {}
    for name, definition in servers.items():
        try:
            parsed[name] = parse_server(name, definition, scope)
        except ConfigProblems as exc:
            problems.extend(f"{source}: {p}" for p in exc.problems)
    if problems:
        raise ConfigProblems(problems)
    return parsed


def parse_server(name: str, definition: Any, scope: Scope) -> ServerConfig:
    problems: list[str] = []
    where = f"server {name!r}"

    def bad(field: str, why: str) -> None:
        problems.append(f"{where}: field `{field}` {why}")

    if not SERVER_NAME.match(name):
        raise ConfigProblems([f"{where}: the name must be 1 to 64 letters, digits, `_` or `-` (no dots or spaces)."])
    if not isinstance(definition, Mapping):
        raise ConfigProblems([f"{where}: the definition must be a JSON object."])

    for key in definition:
        if key not in KNOWN_FIELDS:
            if key == "oauth":
                bad(key, "is obsolete: HTTP authentication is automatic; remove it.")
            else:
                bad(key, "is not a supported field.")

    command = definition.get("command")
    url = definition.get("url")
    declared = definition.get("type")
    transport: Transport | None = None

    if command is not None and (not isinstance(command, str) or not command.strip()):
        bad("command", "must be a non-empty string.")
    if url is not None and (not isinstance(url, str) or not url.strip()):
        bad("url", "must be a non-empty string.")
    if command is not None and url is not None:
        bad("url", "cannot be combined with `command`; a server is either stdio or HTTP.")
    elif command is None and url is None:
        bad("command", "or `url` is required (even when the server is disabled).")
    else:
        transport = "stdio" if command is not None else "http"

    if declared is not None:
        if declared == "sse":
            bad("type", 'is "sse", which is not supported; use a Streamable HTTP endpoint with type "http".')
        elif declared not in ("stdio", "http"):
            bad("type", 'must be "stdio" or "http".')
        elif transport is not None and declared != transport:
            need = "`command`" if declared == "stdio" else "`url`"
            bad("type", f'is "{declared}", which conflicts with the definition; "{declared}" needs {need}.')

    plain_url = transport == "http" and isinstance(url, str) and "${" not in url
    if plain_url and not re.match(r"^https?://[^/\s]+", str(url), re.IGNORECASE):
        bad("url", "must be an http:// or https:// URL.")

    args = definition.get("args", [])
    if not _str_list(args):
        bad("args", "must be a list of strings.")
    cwd = definition.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        bad("cwd", "must be a string.")
    env = definition.get("env", {})
    if not _str_map(env):
        bad("env", "must be an object of string values.")
    headers = definition.get("headers", {})
    if not _str_map(headers):
        bad("headers", "must be an object of string values.")
    if transport == "http":
        for key in ("args", "cwd", "env"):
            if key in definition:
                bad(key, "applies to stdio servers only.")
    if transport == "stdio" and "headers" in definition:
        bad("headers", "applies to HTTP servers only.")

    description = definition.get("description")
    if description is not None and not isinstance(description, str):
        bad("description", "must be a string.")
    disabled = definition.get("disabled", False)
    if not isinstance(disabled, bool):
        bad("disabled", "must be true or false.")
    include = definition.get("includeTools")
    if include is not None and not _str_list(include):
        bad("includeTools", "must be a list of tool-name patterns.")
    exclude = definition.get("excludeTools", [])
    if not _str_list(exclude):
        bad("excludeTools", "must be a list of tool-name patterns.")
    timeout = definition.get("timeoutMs")
    if timeout is not None and not (_is_int(timeout) and MIN_TIMEOUT_MS <= timeout <= MAX_TIMEOUT_MS):
        bad("timeoutMs", f"must be an integer from {MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS}.")
    protocol = definition.get("protocol", "auto")
    if protocol not in ("auto", "legacy"):
        bad("protocol", 'must be "auto" or "legacy".')

    client_id = definition.get("oauthClientId")
    scopes = definition.get("oauthScopes")
    port = definition.get("oauthCallbackPort")
    if client_id is not None and (not isinstance(client_id, str) or not client_id):
        bad("oauthClientId", "must be a non-empty string.")
    if scopes is not None:
        if not _str_list(scopes) or not 1 <= len(scopes) <= 100:
            bad("oauthScopes", "must be a list of 1 to 100 scope strings.")
        elif len(set(scopes)) != len(scopes):
            bad("oauthScopes", "must not repeat a scope.")
        elif not all(SCOPE_TOKEN.match(s) for s in scopes):
            bad("oauthScopes", "must hold OAuth scope tokens (no spaces, quotes or backslashes).")
    if port is not None and not (_is_int(port) and 1 <= port <= 65535):
        bad("oauthCallbackPort", "must be an integer from 1 to 65535.")
    uses_oauth = any(k in definition for k in ("oauthClientId", "oauthScopes", "oauthCallbackPort"))
    if uses_oauth:
        has_auth_header = _str_map(headers) and any(k.lower() == "authorization" for k in headers)
        if transport != "http":
            bad("oauthClientId" if client_id is not None else "oauthScopes", "requires an HTTP server.")
        elif has_auth_header:
            bad("headers", "has an Authorization header, which turns OAuth off; remove the OAuth fields.")

    if problems:
        raise ConfigProblems(problems)
    assert transport is not None
    mode: ProtocolMode = "legacy" if protocol == "legacy" else "auto"
    return ServerConfig(
        name=name,
        scope=scope,
        transport=transport,
        command=command,
        args=tuple(args),
        cwd=cwd,
        env=dict(env),
        url=url,
        headers=dict(headers),
        description=description,
        disabled=disabled,
        include_tools=tuple(include) if include is not None else None,
        exclude_tools=tuple(exclude),
        timeout_ms=timeout,
        protocol=mode,
        oauth_client_id=client_id,
        oauth_scopes=tuple(scopes) if scopes is not None else None,
        oauth_callback_port=port,
        raw=dict(definition),
    )
