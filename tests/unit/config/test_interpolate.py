from __future__ import annotations

from pathlib import Path

import pytest

from mcp_sidecar.config.interpolate import MissingVariable, SecretCommand, resolve
from mcp_sidecar.config.validate import parse_server

ENV = {"TOKEN": "tok-123456", "DIR": "sub", "BIN": "node"}


def test_braced_variables_in_every_connection_field(tmp_path: Path) -> None:
    server = parse_server(
        "s",
        {"command": "${BIN}", "args": ["--token=${TOKEN}"], "cwd": "${DIR}", "env": {"A": "${TOKEN}"}},
        "global",
    )
    resolved = resolve(server, tmp_path, ENV)
    assert resolved.command == "node"
    assert resolved.args == ("--token=tok-123456",)
    assert resolved.cwd == str(tmp_path / "sub")
    assert resolved.env == {"A": "tok-123456"}
    assert "tok-123456" in resolved.secret_values


def test_http_url_and_headers() -> None:
    server = parse_server(
        "s", {"url": "https://${BIN}.example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}, "global"
    )
    resolved = resolve(server, None, ENV)
    assert resolved.url == "https://node.example.test/mcp"
    assert resolved.headers == {"Authorization": "Bearer tok-123456"}
    assert "Bearer tok-123456" in resolved.secret_values
    assert resolved.cwd is None


def test_missing_variable_names_variable_and_field() -> None:
    server = parse_server("s", {"command": "x", "args": ["${NOPE}"]}, "global")
    with pytest.raises(MissingVariable) as info:
        resolve(server, None, ENV)
    assert (info.value.variable, info.value.field_name) == ("NOPE", "args")


def test_env_and_headers_take_shell_style_references_and_escapes() -> None:
    server = parse_server("s", {"command": "x", "env": {"A": "$TOKEN", "B": "cost $$5", "C": "$!bang"}}, "global")
    resolved = resolve(server, None, ENV)
    assert resolved.env == {"A": "tok-123456", "B": "cost $5", "C": "!bang"}


def test_shell_style_references_stay_literal_outside_env_and_headers() -> None:
    server = parse_server("s", {"command": "x", "args": ["$TOKEN", "$$"]}, "global")
    assert resolve(server, None, ENV).args == ("$TOKEN", "$$")


def test_only_a_leading_bang_in_the_original_makes_a_secret_command() -> None:
    server = parse_server("s", {"command": "x", "env": {"A": "!op read x", "B": "${BANG}"}}, "global")
    resolved = resolve(server, None, {"BANG": "!not a command"})
    assert resolved.env["A"] == SecretCommand("op read x")
    assert resolved.env["B"] == "!not a command"


def test_cwd_defaults_to_workspace_and_absolute_cwd_wins(tmp_path: Path) -> None:
    assert resolve(parse_server("s", {"command": "x"}, "global"), tmp_path, {}).cwd == str(tmp_path)
    absolute = parse_server("s", {"command": "x", "cwd": "/opt"}, "global")
    assert resolve(absolute, tmp_path, {}).cwd == "/opt"


def test_references_resolve_in_the_clients_environment_never_this_processs(monkeypatch: pytest.MonkeyPatch) -> None:
    """In the engine each client's `${VAR}` is its front's: what the engine process has set counts for nothing."""
    monkeypatch.setenv("TOKEN", "the-engines-token")
    server = parse_server("s", {"command": "x", "args": ["${TOKEN}"], "env": {"T": "$TOKEN"}}, "global")
    resolved = resolve(server, None, {"TOKEN": "this-clients-token"})
    assert (resolved.args, resolved.env) == (("this-clients-token",), {"T": "this-clients-token"})
    with pytest.raises(MissingVariable) as info:
        resolve(server, None, {})  # unset in the client's environment: unset, whatever the process has
    assert info.value.variable == "TOKEN"
