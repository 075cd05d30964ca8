"""Typed parameters of `mcp/command` and the `mcp/config/*` methods, checked in one place."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcp_sidecar.protocol.errors import invalid_params
from mcp_sidecar.protocol.params import _object, _str

MAX_LINE_CHARS = 64 * 1024
Scope = Literal["global", "project"]


@dataclass(frozen=True, slots=True)
class CommandParams:
    line: str


@dataclass(frozen=True, slots=True)
class ConfigAddParams:
    scope: Scope
    server: str
    definition: dict[str, Any] | None
    """None when `target` is given instead."""
    replace: bool
    target: str | None = None
    """An http(s) URL or a stdio command line, split by the `/mcp add` parser."""
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class ConfigRemoveParams:
    scope: Scope
    server: str


@dataclass(frozen=True, slots=True)
class SetEnabledParams:
    server: str
    enabled: bool


@dataclass(frozen=True, slots=True)
class ConfigImportParams:
    file: str
    scope: Scope
    select: tuple[str, ...] | None
    confirm: bool
    replace: bool


def _bool(operation: str, params: Mapping[str, Any], name: str, default: bool | None = None) -> bool:
    value = params.get(name, default)
    if not isinstance(value, bool):
        raise invalid_params(operation, f"`{name}` must be true or false.")
    return value


def _scope(operation: str, params: Mapping[str, Any]) -> Scope:
    scope = params.get("scope")
    if scope == "global":
        return "global"
    if scope == "project":
        return "project"
    raise invalid_params(operation, '`scope` must be "global" or "project".')


def _required(operation: str, params: Mapping[str, Any], name: str) -> str:
    value = _str(operation, params, name)
    assert value is not None
    return value


def parse_command(operation: str, params: Any) -> CommandParams:
    p = _object(operation, params)
    line = p.get("line")
    if not isinstance(line, str):
        raise invalid_params(operation, "`line` must be a string (an empty line shows the status).")
    if len(line) > MAX_LINE_CHARS:
        raise invalid_params(operation, f"`line` must be at most {MAX_LINE_CHARS} characters.")
    return CommandParams(line=line)


def parse_command_spec(operation: str, params: Any) -> str | None:
    """`{command?}`: one command's entry, or every command's."""
    return _str(operation, _object(operation, params), "command", required=False)


def parse_config_add(operation: str, params: Any) -> ConfigAddParams:
    p = _object(operation, params)
    definition = p.get("definition")
    target = p.get("target")
    if target is not None:
        if definition is not None:
            raise invalid_params(operation, "Give `definition` or `target`, not both.")
        if not isinstance(target, str) or len(target) > MAX_LINE_CHARS:
            raise invalid_params(operation, f"`target` must be a string of at most {MAX_LINE_CHARS} characters.")
    elif not isinstance(definition, Mapping):
        raise invalid_params(operation, "`definition` must be a JSON object (an `mcpServers` entry).")
    return ConfigAddParams(
        scope=_scope(operation, p),
        server=_required(operation, p, "server"),
        definition=dict(definition) if isinstance(definition, Mapping) else None,
        replace=_bool(operation, p, "replace", False),
        target=target,
        dry_run=_bool(operation, p, "dryRun", False),
    )


def parse_config_remove(operation: str, params: Any) -> ConfigRemoveParams:
    p = _object(operation, params)
    return ConfigRemoveParams(scope=_scope(operation, p), server=_required(operation, p, "server"))


def parse_set_enabled(operation: str, params: Any) -> SetEnabledParams:
    p = _object(operation, params)
    return SetEnabledParams(server=_required(operation, p, "server"), enabled=_bool(operation, p, "enabled"))


def parse_config_import(operation: str, params: Any) -> ConfigImportParams:
    p = _object(operation, params)
    select = p.get("select")
    if select is not None:
        if not isinstance(select, list) or not select or not all(isinstance(s, str) and s for s in select):
            raise invalid_params(operation, "`select` must be a non-empty list of server names.")
        select = tuple(dict.fromkeys(select))
    return ConfigImportParams(
        file=_required(operation, p, "file"),
        scope=_scope(operation, p),
        select=select,
        confirm=_bool(operation, p, "confirm", False),
        replace=_bool(operation, p, "replace", False),
    )


def parse_set_trusted(operation: str, params: Any) -> bool:
    return _bool(operation, _object(operation, params), "trusted")


MAX_APPROVALS = 50


def parse_approve(operation: str, params: Any) -> list[tuple[str, str]]:
    """`{approvals: [{server, definitionHash}]}`: what the person saw and approved, 1 to 50 entries."""
    entries = _object(operation, params).get("approvals")
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_APPROVALS:
        raise invalid_params(operation, f"`approvals` must be a list of 1 to {MAX_APPROVALS} entries.")
    out: list[tuple[str, str]] = []
    for entry in entries:
        if not isinstance(entry, dict):
            raise invalid_params(operation, "Each approval must be an object {server, definitionHash}.")
        out.append((_required(operation, entry, "server"), _required(operation, entry, "definitionHash")))
    return out


@dataclass(frozen=True, slots=True)
class LoginParams:
    server: str
    no_browser: bool
    approve_scopes: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class CompleteLoginParams:
    login_id: str
    callback_url: str


MAX_CALLBACK_URL_CHARS = 8192


MAX_APPROVED_SCOPES = 100


def parse_login(operation: str, params: Any) -> LoginParams:
    p = _object(operation, params)
    approved = p.get("approveScopes")
    if approved is not None and not (
        isinstance(approved, list)
        and len(approved) <= MAX_APPROVED_SCOPES
        and all(isinstance(s, str) and 0 < len(s) <= 256 for s in approved)
    ):
        raise invalid_params(operation, f"`approveScopes` must be a list of at most {MAX_APPROVED_SCOPES} scopes.")
    return LoginParams(
        server=_required(operation, p, "server"),
        no_browser=_bool(operation, p, "noBrowser", False),
        approve_scopes=tuple(approved) if approved is not None else None,
    )


def parse_complete_login(operation: str, params: Any) -> CompleteLoginParams:
    p = _object(operation, params)
    url = _required(operation, p, "callbackUrl")
    if len(url) > MAX_CALLBACK_URL_CHARS:
        raise invalid_params(operation, f"`callbackUrl` must be at most {MAX_CALLBACK_URL_CHARS} characters.")
    return CompleteLoginParams(login_id=_required(operation, p, "loginId"), callback_url=url)


def parse_logout(operation: str, params: Any) -> str:
    return _required(operation, _object(operation, params), "server")
