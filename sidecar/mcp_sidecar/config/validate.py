"""Turn one `mcpServers` JSON document into typed server definitions, or say exactly what is wrong.

Every problem names the server and the field; values are never echoed, since any of them
can hold a credential.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from mcp_sidecar.config.model import (
    MAX_TIMEOUT_MS,
    MIN_TIMEOUT_MS,
    ProtocolMode,
    Scope,
    ServerConfig,
    Transport,
)

SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5B\x5D-\x7E]+\Z")  # RFC 6749 scope-token characters
OAUTH_FIELDS = (
    "oauthClientId",
    "oauthClientSecret",
    "oauthClientMetadataUrl",
    "oauthDpop",
    "oauthIssuer",
    "oauthScopes",
    "oauthCallbackPort",
)
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
        *OAUTH_FIELDS,
        "roots",
        "logLevel",
        "shared",
    }
)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


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
    parsed, broken = parse_servers(document, scope, source)
    if broken:
        raise ConfigProblems([p for problems in broken.values() for p in problems])
    return parsed


def parse_servers(document: Any, scope: Scope, source: str) -> tuple[dict[str, ServerConfig], dict[str, list[str]]]:
    """Each definition on its own: the valid ones, and per invalid one its problems (each naming `source`).

    Raise ConfigProblems only when the file's shape hides which servers it defines (the top
    level or `mcpServers` is not an object).
    """
    if not isinstance(document, Mapping):
        raise ConfigProblems([f"{source}: the top level must be a JSON object."])
    servers = document.get("mcpServers", {})
    if not isinstance(servers, Mapping):
        raise ConfigProblems([f"{source}: `mcpServers` must be a JSON object."])
    parsed: dict[str, ServerConfig] = {}
    broken: dict[str, list[str]] = {}
    for name, definition in servers.items():
        try:
            parsed[name] = parse_server(name, definition, scope)
        except ConfigProblems as exc:
            broken[name] = [f"{source}: {p}" for p in exc.problems]
    return parsed, broken


Bad = Callable[[str, str], None]
"""Records one problem: the field, and why it is wrong."""


SHOWN_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,32}\Z")
"""A name or field key a problem may repeat; others are described, not echoed (file data, maybe a secret,
and text a repository would like a model to read)."""


def shown_name(name: str) -> str:
    """`'name'` for a key that looks like one, else how long it is."""
    return repr(name) if SHOWN_KEY.match(name) else f"with a {len(name)}-character name (not shown)"


def parse_server(name: str, definition: Any, scope: Scope) -> ServerConfig:
    problems: list[str] = []
    where = f"server {shown_name(name)}" if not SERVER_NAME.match(name) else f"server {name!r}"

    def bad(field: str, why: str) -> None:
        shown = f"`{field}`" if SHOWN_KEY.match(field) else f"of {len(field)} characters (not shown)"
        problems.append(f"{where}: field {shown} {why}")

    if not SERVER_NAME.match(name):
        raise ConfigProblems([f"{where}: the name must be 1 to 64 letters, digits, `_` or `-` (no dots or spaces)."])
    if not isinstance(definition, Mapping):
        raise ConfigProblems([f"{where}: the definition must be a JSON object."])

    _check_known_fields(definition, bad)
    transport = _transport(definition, bad)
    _check_process_fields(definition, transport, bad)
    _check_behaviour_fields(definition, bad)
    _check_oauth_fields(definition, transport, bad)
    _check_oauth_client(definition, scope, bad)
    _check_client_fields(definition, bad)

    if problems:
        raise ConfigProblems(problems)
    assert transport is not None
    include = definition.get("includeTools")
    scopes = definition.get("oauthScopes")
    mode: ProtocolMode = "legacy" if definition.get("protocol", "auto") == "legacy" else "auto"
    return ServerConfig(
        name=name,
        scope=scope,
        transport=transport,
        command=definition.get("command"),
        args=tuple(definition.get("args", [])),
        cwd=definition.get("cwd"),
        env=dict(definition.get("env", {})),
        url=definition.get("url"),
        headers=dict(definition.get("headers", {})),
        description=definition.get("description"),
        disabled=definition.get("disabled", False),
        include_tools=tuple(include) if include is not None else None,
        exclude_tools=tuple(definition.get("excludeTools", [])),
        timeout_ms=definition.get("timeoutMs"),
        protocol=mode,
        oauth_client_id=definition.get("oauthClientId"),
        oauth_client_secret=definition.get("oauthClientSecret"),
        oauth_client_metadata_url=definition.get("oauthClientMetadataUrl"),
        oauth_dpop=definition.get("oauthDpop", False),
        oauth_issuer=definition.get("oauthIssuer"),
        oauth_scopes=tuple(scopes) if scopes is not None else None,
        oauth_callback_port=definition.get("oauthCallbackPort"),
        roots=definition.get("roots", True),
        log_level=definition.get("logLevel", "warning"),
        shared=definition.get("shared", True),
        raw=dict(definition),
    )


def _check_known_fields(definition: Mapping[str, Any], bad: Bad) -> None:
    for key in definition:
        if key not in KNOWN_FIELDS:
            if key == "oauth":
                bad(key, "is obsolete: HTTP authentication is automatic; remove it.")
            else:
                bad(key, "is not a supported field.")


def _transport(definition: Mapping[str, Any], bad: Bad) -> Transport | None:
    """stdio or HTTP, from `command` or `url` and the optional `type`; None when unclear."""
    command = definition.get("command")
    url = definition.get("url")
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
    _check_declared_type(definition.get("type"), transport, bad)
    plain_url = transport == "http" and isinstance(url, str) and "${" not in url
    if plain_url and not re.match(r"^https?://[^/\s]+", str(url), re.IGNORECASE):
        bad("url", "must be an http:// or https:// URL.")
    return transport


def _check_declared_type(declared: Any, transport: Transport | None, bad: Bad) -> None:
    if declared is None:
        return
    if declared == "sse":
        bad("type", 'is "sse", which is not supported; use a Streamable HTTP endpoint with type "http".')
    elif declared not in ("stdio", "http"):
        bad("type", 'must be "stdio" or "http".')
    elif transport is not None and declared != transport:
        need = "`command`" if declared == "stdio" else "`url`"
        bad("type", f'is "{declared}", which conflicts with the definition; "{declared}" needs {need}.')


def _check_process_fields(definition: Mapping[str, Any], transport: Transport | None, bad: Bad) -> None:
    """args, cwd and env (stdio) and headers (HTTP): their types, and that each fits the transport."""
    if not _str_list(definition.get("args", [])):
        bad("args", "must be a list of strings.")
    cwd = definition.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        bad("cwd", "must be a string.")
    if not _str_map(definition.get("env", {})):
        bad("env", "must be an object of string values.")
    if not _str_map(definition.get("headers", {})):
        bad("headers", "must be an object of string values.")
    if transport == "http":
        for key in ("args", "cwd", "env"):
            if key in definition:
                bad(key, "applies to stdio servers only.")
    if transport == "stdio" and "headers" in definition:
        bad("headers", "applies to HTTP servers only.")


def _check_behaviour_fields(definition: Mapping[str, Any], bad: Bad) -> None:
    """description, disabled, the tool filters, the timeout and the protocol mode."""
    description = definition.get("description")
    if description is not None and not isinstance(description, str):
        bad("description", "must be a string.")
    if not isinstance(definition.get("disabled", False), bool):
        bad("disabled", "must be true or false.")
    include = definition.get("includeTools")
    if include is not None and not _str_list(include):
        bad("includeTools", "must be a list of tool-name patterns.")
    if not _str_list(definition.get("excludeTools", [])):
        bad("excludeTools", "must be a list of tool-name patterns.")
    timeout = definition.get("timeoutMs")
    if timeout is not None and not (_is_int(timeout) and MIN_TIMEOUT_MS <= timeout <= MAX_TIMEOUT_MS):
        bad("timeoutMs", f"must be an integer from {MIN_TIMEOUT_MS} to {MAX_TIMEOUT_MS}.")
    if definition.get("protocol", "auto") not in ("auto", "legacy"):
        bad("protocol", 'must be "auto" or "legacy".')


def _check_client_fields(definition: Mapping[str, Any], bad: Bad) -> None:
    """What the sidecar offers the server as its client: roots, the log level it asks for, and whether
    clients share its process."""
    for flag in ("roots", "shared"):
        if not isinstance(definition.get(flag, True), bool):
            bad(flag, "must be true or false.")
    if definition.get("logLevel", "warning") not in LOG_LEVELS:
        bad("logLevel", f"must be one of {', '.join(LOG_LEVELS)}.")


def _check_oauth_fields(definition: Mapping[str, Any], transport: Transport | None, bad: Bad) -> None:
    client_id = definition.get("oauthClientId")
    port = definition.get("oauthCallbackPort")
    if client_id is not None and (not isinstance(client_id, str) or not client_id):
        bad("oauthClientId", "must be a non-empty string.")
    _check_oauth_scopes(definition.get("oauthScopes"), bad)
    if port is not None and not (_is_int(port) and 1 <= port <= 65535):
        bad("oauthCallbackPort", "must be an integer from 1 to 65535.")
    if not any(k in definition for k in OAUTH_FIELDS):
        return
    headers = definition.get("headers", {})
    has_auth_header = _str_map(headers) and any(k.lower() == "authorization" for k in headers)
    if transport != "http":
        bad("oauthClientId" if client_id is not None else "oauthScopes", "requires an HTTP server.")
    elif has_auth_header:
        bad("headers", "has an Authorization header, which turns OAuth off; remove the OAuth fields.")


_REFERENCE = re.compile(r"\$\{?[A-Za-z_]")
_BRACED_REFERENCE = re.compile(r"\$\{[A-Za-z_]")


def is_secret_reference(value: str) -> bool:
    """A `!command`, or a value holding a `${VAR}`/`$VAR` reference: a secret that is not in the file."""
    return value.startswith("!") or bool(_REFERENCE.search(value.replace("$$", "")))


def _check_oauth_client(definition: Mapping[str, Any], scope: Scope, bad: Bad) -> None:
    """The confidential client's secret, the client metadata document URL and DPoP."""
    secret = definition.get("oauthClientSecret")
    if secret is not None:
        if not isinstance(secret, str) or not secret.strip("! "):
            bad("oauthClientSecret", "must be a non-empty string: a ${VAR} reference or a !command.")
        elif "oauthClientId" not in definition:
            bad("oauthClientSecret", "requires `oauthClientId` (the client the secret belongs to).")
        elif scope == "project" and not is_secret_reference(secret):
            bad(
                "oauthClientSecret",
                "is a literal secret in a project file, which is refused: use a ${VAR} reference or a !command.",
            )
    client_id = definition.get("oauthClientId")
    if scope == "project" and isinstance(client_id, str) and _BRACED_REFERENCE.search(client_id):
        # It goes to the authorization server (and into the browser's address bar): a repository
        # must not choose which of the person's variables is sent there.
        bad(
            "oauthClientId",
            "holds a ${VAR} reference in a project file, which is refused: a client id is public, write it as it is.",
        )
    url = definition.get("oauthClientMetadataUrl")
    if url is not None and not is_client_metadata_url(url):
        bad("oauthClientMetadataUrl", CLIENT_METADATA_URL_RULE)
    if not isinstance(definition.get("oauthDpop", False), bool):
        bad("oauthDpop", "must be true or false.")
    issuer = definition.get("oauthIssuer")
    if issuer is not None and not (
        isinstance(issuer, str) and re.match(r"^https?://[^/\s?#@]+(/[^\s?#]*)?\Z", issuer, re.IGNORECASE)
    ):
        bad("oauthIssuer", "must be the authorization server's issuer URL (https://, no query or fragment).")


CLIENT_METADATA_URL_RULE = (
    "must be an https:// URL with a path (the client metadata document), without credentials, query or fragment."
)


def is_client_metadata_url(value: Any) -> bool:
    """An HTTPS URL with a non-root path, no userinfo, query or fragment (the client ID metadata document draft)."""
    from urllib.parse import urlsplit

    if not isinstance(value, str) or len(value) > 2048 or not value.isascii() or any(c.isspace() for c in value):
        return False
    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:
        return False
    return (
        parts.scheme == "https"
        and bool(host)
        and parts.path not in ("", "/")
        and "@" not in parts.netloc
        and not parts.query
        and not parts.fragment
        and "\\" not in value
    )


def _check_oauth_scopes(scopes: Any, bad: Bad) -> None:
    if scopes is None:
        return
    if not _str_list(scopes) or not 1 <= len(scopes) <= 100:
        bad("oauthScopes", "must be a list of 1 to 100 scope strings.")
    elif len(set(scopes)) != len(scopes):
        bad("oauthScopes", "must not repeat a scope.")
    elif not all(SCOPE_TOKEN.match(s) for s in scopes):
        bad("oauthScopes", "must hold OAuth scope tokens (no spaces, quotes or backslashes).")
