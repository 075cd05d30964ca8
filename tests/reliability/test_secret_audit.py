"""Secret audit: one canary value in every secret-bearing place, then a scan of everything the
sidecar wrote or answered during a whole scenario proves it never appears.

Where the canary goes: each function in CANARY_SOURCES puts it in one kind of place and
returns the server definitions that use it. The configuration holds references only (`${VAR}`,
`!command`), never the value, so every file is scanned, configuration writes included.
To audit another source, add one function to CANARY_SOURCES that stores the canary there
and returns a definition that uses it. OAuth tokens are one: the test authorization server
issues tokens and codes that contain the canary, and the scenario logs in and out.

What is scanned: every response and error, every notification, the sidecar's log file, and
every file under the sidecar's home and the project (configuration, catalog cache, spill
files, locks and temporary files), for every 8-character piece of the canary, not only the
whole of it: a secret cut in two (a log line cut before redaction, say) leaks its start.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from reliability.helpers import figure
from support.keyring_env import secret_service_env
from support.oauth import play_browser
from support.servers import basic_stdio, fixture_path, fixture_stdio, free_port, http_server
from support.sidecar import SidecarClient, start_sidecar, write_config

CANARY = "RELIABILITY-CANARY-5b0e17d2"
CANARY_VAR = "AUDIT_SECRET_REF"
"""The environment variable holding the canary, in the sidecar's environment only. Its name
shares no 8 characters with the canary, so the references in configuration are not leaks."""
PIECE = 8
PIECES = sorted({CANARY[i : i + PIECE] for i in range(len(CANARY) - PIECE + 1)})
"""Every 8-character substring of the canary: what the scan looks for."""
LOG_LINE_CUT = 2_000
"""Where the sidecar cuts a line of a server's stderr (`stderr_log.MAX_LINE_CHARS`)."""
BEFORE_CUT = 13
"""How much of the canary a stderr line holds before the cut (cutting before redacting leaked it)."""


def leaked_pieces(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


@dataclass
class Scenario:
    tmp: Path
    http_url: str
    oauth_url: str
    """An HTTP server behind the SDK's authorization server, issuing tokens that contain the canary."""
    confidential_url: str
    """Another, whose pre-registered client `app` has the canary as its secret, with DPoP."""
    confidential_port: int
    """The callback port the confidential client is registered with."""
    env: dict[str, str] = field(default_factory=dict)
    """Added to the sidecar's environment."""


CanarySource = Callable[[Scenario], dict[str, Any]]


def env_reference(s: Scenario) -> dict[str, Any]:
    s.env[CANARY_VAR] = CANARY
    return {
        "env-ref": basic_stdio(env={"API_TOKEN": f"${{{CANARY_VAR}}}", "MIXED": f"prefix-${CANARY_VAR}-suffix"}),
        # A server that prints its secret on stderr: the log view must redact it.
        "env-stderr": basic_stdio("--stderr-line", f"token ${{{CANARY_VAR}}}", env={"T": f"${{{CANARY_VAR}}}"}),
        "env-crashes": fixture_stdio("crash_on_start.py", env={"API_TOKEN": f"${{{CANARY_VAR}}}"}),
        "env-hangs": fixture_stdio("hang.py", env={"API_TOKEN": f"${{{CANARY_VAR}}}"}, timeoutMs=1000),
    }


def header_reference(s: Scenario) -> dict[str, Any]:
    s.env[CANARY_VAR] = CANARY
    refused = f"http://127.0.0.1:{free_port()}/mcp"
    return {
        "header-ref": {"url": s.http_url, "headers": {"Authorization": f"Bearer ${{{CANARY_VAR}}}"}},
        "header-refused": {"url": refused, "headers": {"X-Api-Key": f"${{{CANARY_VAR}}}"}, "timeoutMs": 2000},
    }


def secret_command(s: Scenario) -> dict[str, Any]:
    """`!command` output: the command text names a file, the canary is only in its output."""
    secret_file = s.tmp / "secret.txt"
    secret_file.write_text(CANARY + "\n", encoding="utf-8")
    return {
        "command-env": basic_stdio(env={"API_TOKEN": f"!cat {secret_file}"}),
        "command-header": {"url": s.http_url, "headers": {"Authorization": f"!printf 'Bearer '; cat {secret_file}"}},
        # A helper that fails after printing the secret: the diagnostic must not echo its output.
        "command-fails": basic_stdio(env={"API_TOKEN": f"!cat {secret_file}; cat {secret_file} >&2; exit 4"}),
    }


def stderr_across_the_cut(s: Scenario) -> dict[str, Any]:
    """Servers that print a secret on stderr so that it straddles the log's 2,000-character cut:
    from the environment, in a header-like `Authorization: Bearer` line, and from a `!command`."""
    secret_file = s.tmp / "cut-secret.txt"
    secret_file.write_text(CANARY + "\n", encoding="utf-8")

    def printing(label: str, variable: str, value_prefix: str = "", **env: str) -> dict[str, Any]:
        """`sh` prints `000...label$variable tail` on stderr (the canary BEFORE_CUT characters
        before the cut), then runs basic.py; `value_prefix` is what the variable holds before it."""
        pad = LOG_LINE_CUT - BEFORE_CUT - len(label) - len(value_prefix)
        script = f'printf "%0{pad}d%s%s tail\\n" 0 "{label}" "${variable}" >&2; exec "$@"'
        return {
            "command": "sh",
            "args": ["-c", script, "sh", sys.executable, str(fixture_path("basic.py")), "stdio"],
            "env": env,
        }

    return {
        "cut-env": printing("token=", "T", T=f"${{{CANARY_VAR}}}"),
        "cut-header": printing("Authorization: ", "AUTH", "Bearer ", AUTH=f"Bearer ${{{CANARY_VAR}}}"),
        "cut-command": printing("secret: ", "T", T=f"!cat {secret_file}"),
    }


def oauth_tokens(s: Scenario) -> dict[str, Any]:
    """OAuth: every access token, refresh token and authorization code the server issues
    starts with the canary; the scenario logs in (tokens go to a real Secret Service)."""
    return {"oauth": {"url": s.oauth_url, "oauthCallbackPort": free_port()}}


def oauth_client_secrets(s: Scenario) -> dict[str, Any]:
    """A confidential client's secret (from a reference and from a `!command`), sent on every token
    request, with DPoP: its private key is audited separately (it is not the canary)."""
    s.env[CANARY_VAR] = CANARY
    secret_file = s.tmp / "client-secret.txt"
    secret_file.write_text(CANARY + "\n", encoding="utf-8")
    client = {"url": s.confidential_url, "oauthCallbackPort": s.confidential_port, "oauthClientId": "app"}
    return {
        "client-ref": {**client, "oauthClientSecret": f"${{{CANARY_VAR}}}", "oauthDpop": True},
        "client-command": {**client, "oauthClientSecret": f"!cat {secret_file}", "oauthDpop": True},
    }


CANARY_SOURCES: list[CanarySource] = [
    env_reference,
    header_reference,
    secret_command,
    stderr_across_the_cut,
    oauth_tokens,
    oauth_client_secrets,
]


class Transcript:
    """Everything the sidecar answered, as text."""

    def __init__(self, sidecar: SidecarClient) -> None:
        self.sidecar = sidecar
        self.texts: list[str] = []

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        try:
            result = await self.sidecar.request(method, params, timeout=60)
        except JsonRpcException as exc:
            self.texts.append(f"{exc} {exc.code} {json.dumps(exc.data)}")
            return None
        self.texts.append(json.dumps(result))
        return result


def files_under(*roots: Path) -> Iterator[Path]:
    for root in roots:
        yield from (p for p in root.rglob("*") if p.is_file())


@pytest.fixture
def scenario(tmp_path: Path) -> Iterator[Scenario]:
    port = free_port()
    confidential = ("--preregistered", "app", "--client-secret", CANARY, "--callback-port", str(port), "--dpop")
    with (
        http_server("basic.py") as url,
        http_server("oauth_server.py", "--token-prefix", CANARY) as oauth_url,
        http_server("oauth_server.py", "--token-prefix", CANARY, *confidential) as confidential_url,
        secret_service_env(tmp_path / "secret-service") as keyring_env,
    ):
        yield Scenario(tmp_path, url, oauth_url, confidential_url, port, env=dict(keyring_env))


def dpop_private_key(scenario: Scenario, server: str) -> str:
    """The `d` of the DPoP key the keyring holds for `server` (read by another process)."""
    account = json.dumps([server, scenario.confidential_url, "app"], separators=(",", ":"))
    script = "import keyring, sys; print(keyring.get_password('mcp-sidecar', sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", script, account],
        env={**os.environ, **scenario.env},
        capture_output=True,
        text=True,
        check=True,
    )
    key: str = json.loads(done.stdout)["dpopKey"]["d"]
    return key


async def _call_each(t: Transcript, working: list[str]) -> list[Any]:
    """Echo, fail, a result over the output limits (a spill file) and a refresh, on each server."""
    echoed = []
    for name in working:
        echoed.append(await t.send("mcp/callTool", {"id": f"{name}.echo", "arguments": {"text": "hello"}}))
        await t.send("mcp/callTool", {"id": f"{name}.fail", "arguments": {"message": "failed on purpose"}})
        await t.send("mcp/callTool", {"id": f"{name}.echo", "arguments": {"text": "line\n" * 3000}})
        await t.send("mcp/server/refresh", {"server": name})
    return echoed


async def _write_configuration(t: Transcript, scenario: Scenario) -> None:
    """Configuration writes: a new server with a reference, a disable, a project entry."""
    await t.send(
        "mcp/config/add",
        {
            "scope": "global",
            "server": "added",
            "definition": {"command": "true", "env": {"K": f"${{{CANARY_VAR}}}"}},
        },
    )
    await t.send("mcp/config/setEnabled", {"server": "env-ref", "enabled": False})
    await t.send(
        "mcp/config/add",
        {
            "scope": "project",
            "server": "proj",
            "definition": {"url": scenario.http_url, "headers": {"A": "!cat x"}},
        },
    )


def assert_cut_lines_redacted(logs: dict[str, Any]) -> None:
    """Each line with the canary across the cut was stored with the canary replaced."""
    for name in ("cut-env", "cut-header", "cut-command"):
        lines = [line["text"] for line in (logs[name] or {"lines": []})["lines"]]
        cut = [text for text in lines if len(text) > LOG_LINE_CUT - BEFORE_CUT]
        assert len(cut) == 1, (name, [t[-60:] for t in lines])
        # Redacted first, the line is short enough to keep whole: nothing of it was cut.
        assert cut[0].endswith("*** tail"), (name, cut[0][-60:])


async def _confidential_logins(t: Transcript, scenario: Scenario) -> tuple[list[Any], list[str]]:
    """Log in with both confidential clients, call a tool on each; their DPoP keys, from the keyring."""
    answers = []
    for name in ("client-ref", "client-command"):
        answers.append(await t.send("mcp/auth/login", {"server": name}))
        await t.send("mcp/activate", {"ids": [f"{name}.whoami"]})
        answers.append(await t.send("mcp/callTool", {"id": f"{name}.whoami", "arguments": {}}))
        await t.send("mcp/command", {"line": f"/mcp get {name}"})
    return answers, [dpop_private_key(scenario, name) for name in ("client-ref", "client-command")]


def _leaks(answered: list[str], written: list[Path], private_keys: list[str]) -> list[tuple[str, str]]:
    """Every canary piece, and every DPoP private key, found in an answer or a written file."""
    leaks = [(text[:120], piece) for text in answered for piece in leaked_pieces(text)]
    for path in written:
        text = path.read_bytes().decode("utf-8", "replace")
        leaks += [(str(path), piece) for piece in leaked_pieces(text)]
        leaks += [(str(path), "a DPoP private key") for key in private_keys if key in text]
    leaks += [(text[:120], "a DPoP private key") for text in answered for key in private_keys if key in text]
    return leaks


async def test_the_canary_never_appears(scenario: Scenario, home: Path, tmp_path: Path) -> None:
    (project := tmp_path / "project").mkdir()
    servers: dict[str, Any] = {}
    for source in CANARY_SOURCES:
        servers.update(source(scenario))
    write_config(home, servers)
    assert CANARY not in (home / "mcp.json").read_text(encoding="utf-8")  # references only

    async with start_sidecar(home, project=project, trusted=True, env=scenario.env, browser=play_browser) as sidecar:
        t = Transcript(sidecar)
        await t.send("mcp/status")
        await t.send("mcp/server/tools", {"server": "oauth"})  # authentication_required, before the login
        logged_in = await t.send("mcp/auth/login", {"server": "oauth"})
        for name in servers:
            await t.send("mcp/server/get", {"server": name})
            await t.send("mcp/server/tools", {"server": name})
        await t.send("mcp/discover", {"query": "echo", "limit": 50})
        await t.send("mcp/discover", {"query": "token", "kind": "all"})
        working = ["env-ref", "env-stderr", "header-ref", "command-env", "command-header"]
        await t.send("mcp/activate", {"ids": [f"{name}.echo" for name in working] + [f"{n}.fail" for n in working]})
        echoed = await _call_each(t, working)
        logs = {name: await t.send("mcp/server/logs", {"server": name}) for name in servers}
        await t.send("mcp/server/reconnect", {"server": "command-env"})
        await t.send("mcp/command", {"line": "/mcp list"})
        for name in ("env-ref", "command-header"):
            await t.send("mcp/command", {"line": f"/mcp get {name}"})
        await _write_configuration(t, scenario)
        await t.send("mcp/activate", {"ids": ["oauth.whoami"]})
        whoami = await t.send("mcp/callTool", {"id": "oauth.whoami", "arguments": {}})
        confidential, private_keys = await _confidential_logins(t, scenario)
        await t.send("mcp/config/reload")
        await t.send("mcp/status")
        await t.send("mcp/spill/list")
        logged_out = await t.send("mcp/auth/logout", {"server": "oauth"})
        notifications = json.dumps(sidecar.notifications)

    answered = [*t.texts, notifications]
    written = list(files_under(home, project))
    log = (home / "sidecar.log").read_text(encoding="utf-8", errors="replace")
    spills = [p for p in written if "spill" in p.parts]
    assert log, "the scenario must produce a log to scan"
    assert spills, "the scenario must produce spill files to scan"
    assert any("token" in text and "***" in text for text in t.texts), "the stderr log view was not exercised"
    leaks = _leaks(answered, written, private_keys)
    figure(
        "secret audit",
        f"{len(CANARY_SOURCES)} canary sources, {len(servers)} servers; scanned {len(t.texts)} answers, "
        f"{sum(len(v) for v in sidecar.notifications.values())} notifications, {len(written)} files "
        f"({len(spills)} spill), {len(log):,} bytes of log for {len(PIECES)} {PIECE}-character pieces of the "
        f"canary: {len(leaks)} leak(s)",
    )
    assert leaks == []
    assert_cut_lines_redacted(logs)
    # The secrets were really used: every server that needs one connected and answered.
    assert logged_in is not None
    assert logged_in["status"] == "completed"
    assert whoami is not None
    assert whoami["content"][0]["text"] == "authenticated"
    assert logged_out is not None
    assert [c.get("status") or c["content"][0]["text"] for c in confidential] == ["completed", "authenticated"] * 2
    assert len(set(private_keys)) == 2, "a key per server"
    assert logged_out["revocation"] == "accepted"
    assert [r and r["content"] for r in echoed] == [[{"type": "text", "text": "hello"}]] * len(working)
