"""OAuth for the servers people log in to: confidential clients, client ID metadata documents,
RFC 9207 `iss`, issuer-keyed registrations and DPoP, end to end.

The real sidecar against the SDK's authorization server (`oauth_server.py`, with the options
each test names), a real Secret Service, and, for metadata documents, a real HTTPS server on
127.0.0.1 with a certificate authority made here that the authorization server trusts.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import os
import ssl
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from e2e.test_oauth import call_whoami, sidecar_for, stats
from support.cli import cli
from support.keyring_env import secret_service_env
from support.servers import free_port, http_server
from support.sidecar import SidecarClient, diagnostic_of, write_config

CLIENT_SECRET = "canary-client-secret-7f3a9c"


@pytest.fixture(scope="module")
def keyring_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with secret_service_env(tmp_path_factory.mktemp("secret-service")) as env:
        yield env


def secrets_of(url: str) -> list[str]:
    return list(httpx2.get(url.removesuffix("/mcp") + "/test/secrets", timeout=10).json())


async def keyring_record(env: dict[str, str], account: list[str | None]) -> dict[str, Any]:
    """The credential record as the keyring holds it, read by another process."""
    script = "import json, sys, keyring\nprint(keyring.get_password('mcp-sidecar', sys.argv[1]) or 'null')\n"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        script,
        json.dumps(account, separators=(",", ":")),
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    found: dict[str, Any] = json.loads(out)
    return found


def files_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file())


# -- confidential clients --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("methods", "seen", "secret"),
    [
        ("client_secret_basic", "basic", "${APP_SECRET}"),
        ("client_secret_post", "post", "${APP_SECRET}"),
        ("client_secret_basic,client_secret_post", "basic", "!cat {secret_file}"),
    ],
)
async def test_a_confidential_client_authenticates_the_way_the_server_advertises(
    home: Path, keyring_env: dict[str, str], tmp_path: Path, methods: str, seen: str, secret: str
) -> None:
    port = free_port()
    secret_file = tmp_path / "vault" / "client-secret"  # a password manager's stand-in, outside the home
    secret_file.parent.mkdir()
    secret_file.write_text(CLIENT_SECRET, encoding="utf-8")
    secret = secret.replace("{secret_file}", str(secret_file))
    fixture = ("--preregistered", "app", "--client-secret", CLIENT_SECRET, "--token-auth-methods", methods)
    with http_server("oauth_server.py", *fixture, "--callback-port", str(port), "--access-ttl", "3") as url:
        definition = {"url": url, "oauthCallbackPort": port, "oauthClientId": "app", "oauthClientSecret": secret}
        write_config(home, {"secure": definition})
        env = {**keyring_env, "APP_SECRET": CLIENT_SECRET}
        async with sidecar_for(home, env) as client:
            got = await client.request("mcp/server/get", {"server": "secure"})
            assert got["authentication"]["client"] == "confidential"
            assert CLIENT_SECRET not in json.dumps(got)
            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
            assert stats(url)["clientAuth"] == [seen]
            await asyncio.sleep(3.5)  # the access token expires: the refresh authenticates too
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
            logs = await client.request("mcp/server/logs", {"server": "secure"})
            record = await keyring_record(keyring_env, ["secure", url, "app"])
            assert record["tokens"]["access_token"]
            assert CLIENT_SECRET not in json.dumps(record), "the configured secret is never copied to the keyring"
            # Logging out revokes with the client's authentication, which the server requires.
            logout = await client.request("mcp/auth/logout", {"server": "secure"})
            assert logout["revocation"] == "accepted"
        counts = stats(url)
        assert counts["grants"] == {"authorization_code": 1, "refresh_token": 1}
        assert counts["clientAuth"] == [seen, seen]
        assert counts["registrations"] == 0
        assert counts["revocations"] >= 1
        assert CLIENT_SECRET not in json.dumps(logs)
        assert CLIENT_SECRET not in files_text(home), "nor to a log, cache or spill file"


async def test_a_token_endpoint_without_a_secret_method_is_refused(home: Path, keyring_env: dict[str, str]) -> None:
    port = free_port()
    fixture = ("--preregistered", "app", "--client-secret", CLIENT_SECRET, "--token-auth-methods", "private_key_jwt")
    with http_server("oauth_server.py", *fixture, "--callback-port", str(port)) as url:
        definition = {"url": url, "oauthCallbackPort": port, "oauthClientId": "app", "oauthClientSecret": "${S}"}
        write_config(home, {"secure": definition})
        async with sidecar_for(home, {**keyring_env, "S": CLIENT_SECRET}) as client:
            error = diagnostic_of(await client.error("mcp/auth/login", {"server": "secure"}))
            assert error["code"] == "oauth_refused"
            assert "neither client_secret_basic nor client_secret_post" in error["message"]
            assert CLIENT_SECRET not in json.dumps(error)
        assert stats(url)["grants"] == {}


async def test_a_failing_secret_command_fails_the_login_without_its_output(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    fixture = ("--preregistered", "app", "--client-secret", CLIENT_SECRET)
    with http_server("oauth_server.py", *fixture, "--callback-port", str(port)) as url:
        command = f"!echo {CLIENT_SECRET}; exit 3"
        definition = {"url": url, "oauthCallbackPort": port, "oauthClientId": "app", "oauthClientSecret": command}
        write_config(home, {"secure": definition})
        async with sidecar_for(home, keyring_env) as client:
            error = diagnostic_of(await client.error("mcp/auth/login", {"server": "secure"}))
            assert error["code"] == "secret_lookup_failed"
            assert error["message"] == "The secret command in `oauthClientSecret` exited with status 3."
            assert client.shown == []


# -- client ID metadata documents ------------------------------------------------------------


def _certificates(root: Path) -> tuple[Path, Path, Path]:
    """A CA, and a leaf for 127.0.0.1 it signed: (ca.pem, leaf.pem, leaf-key.pem)."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .sign(ca_key, hashes.SHA256())
    )
    paths = root / "ca.pem", root / "leaf.pem", root / "leaf-key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


@contextmanager
def hosted_document(root: Path, callback_port: int) -> Iterator[tuple[str, Path, list[str]]]:
    """Serve a client metadata document over HTTPS; yield (its URL, the CA file, the paths fetched)."""
    ca, leaf, leaf_key = _certificates(root)
    fetched: list[str] = []
    holder: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            body = holder["document"] if self.path == "/org/mcp-sidecar.json" else b"{}"
            self.send_response(200 if self.path == "/org/mcp-sidecar.json" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf, leaf_key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    url = f"https://127.0.0.1:{server.server_address[1]}/org/mcp-sidecar.json"
    holder["document"] = json.dumps(
        {
            "client_id": url,
            "client_name": "mcp-sidecar",
            "redirect_uris": [f"http://127.0.0.1:{callback_port}/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        }
    ).encode()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url, ca, fetched
    finally:
        server.shutdown()
        server.server_close()


async def test_a_client_metadata_document_is_the_client_id_when_the_server_supports_one(
    home: Path, keyring_env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    with (
        hosted_document(tmp_path, port) as (document_url, ca, fetched),
        http_server("oauth_server.py", "--cimd-ca", str(ca)) as url,
    ):
        # The global file's option: every HTTP server's default.
        (home / "mcp.json").write_text(
            json.dumps(
                {
                    "oauthClientMetadataUrl": document_url,
                    "mcpServers": {"secure": {"url": url, "oauthCallbackPort": port}},
                }
            ),
            encoding="utf-8",
        )
        async with sidecar_for(home, keyring_env) as client:
            got = await client.request("mcp/server/get", {"server": "secure"})
            assert got["authentication"]["client"] == "metadata document"
            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
            assert "client_id=" + quote(document_url, safe="") in client.shown[0]
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
        counts = stats(url)
        assert counts["registrations"] == 0, "no dynamic registration when a document is accepted"
        assert counts["cimdClients"] == [document_url]
        assert "/org/mcp-sidecar.json" in fetched, "the authorization server fetched the document"


async def test_without_document_support_the_sidecar_registers_dynamically_as_a_native_app(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py") as url:
        definition = {"url": url, "oauthCallbackPort": port, "oauthClientMetadataUrl": "https://org.example/c.json"}
        write_config(home, {"secure": definition})
        async with sidecar_for(home, keyring_env) as client:
            assert (await client.request("mcp/auth/login", {"server": "secure"}))["status"] == "completed"
        counts = stats(url)
        assert counts["registrations"] == 1
        assert counts["registrationBodies"][0]["application_type"] == "native"
        assert counts["registrationBodies"][0]["client_name"] == "mcp-sidecar"


# -- RFC 9207 --------------------------------------------------------------------------------


async def test_the_authorization_response_issuer_is_checked(home: Path, keyring_env: dict[str, str]) -> None:
    port = free_port()
    with http_server("oauth_server.py", "--iss", "advertise") as url:
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}})
        async with sidecar_for(home, keyring_env) as client:
            assert (await client.request("mcp/auth/login", {"server": "secure"}))["status"] == "completed"
    for mode in ("wrong", "missing"):
        with http_server("oauth_server.py", "--iss", mode) as url:
            write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}})
            async with sidecar_for(home, keyring_env) as client:
                error = diagnostic_of(await client.error("mcp/auth/login", {"server": "secure"}))
                assert error["code"] == "oauth_failed", mode
                assert error["message"] == "The authorization server's issuer check failed.", mode
                assert "attacker" not in json.dumps(error)
            assert stats(url)["grants"] == {}, f"{mode}: the code was never exchanged"


async def test_a_registration_is_presented_only_to_the_issuer_that_made_it(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port, server_port = free_port(), free_port()
    # A login that registers and then fails (the answer's issuer is wrong): a registration, no tokens.
    with http_server("oauth_server.py", "--iss", "wrong", port=server_port) as url:
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}})
        async with sidecar_for(home, keyring_env) as client:
            await client.error("mcp/auth/login", {"server": "secure"})
        assert stats(url)["registrations"] == 1
    record = await keyring_record(keyring_env, ["secure", url, "dynamic"])
    first_issuer = record["issuer"]
    assert record["tokens"] is None
    assert list(record["registrations"]) == [first_issuer]
    # The same URL now names another authorization server: no tokens are pinned, so the sidecar
    # registers with it instead of presenting the old client id (and is not refused).
    with http_server("oauth_server.py", "--tenant", "elsewhere", port=server_port) as url:
        async with sidecar_for(home, keyring_env) as client:
            outcome: Any = None
            try:
                outcome = await client.request("mcp/auth/login", {"server": "secure"})
            except Exception as exc:
                outcome = diagnostic_of(exc)  # type: ignore[arg-type]
            assert outcome.get("code") != "oauth_issuer_changed"
        assert stats(url)["registrations"] == 1, "a new registration with the new issuer"


# -- DPoP ------------------------------------------------------------------------------------


async def dpop_login(client: SidecarClient) -> dict[str, Any]:
    result: dict[str, Any] = await client.request("mcp/auth/login", {"server": "secure"})
    return result


@pytest.mark.parametrize("nonce", [False, True])
async def test_dpop_binds_the_tokens_to_a_key_kept_in_the_keyring_only(
    home: Path, keyring_env: dict[str, str], nonce: bool
) -> None:
    port = free_port()
    options = ["--dpop", "--access-ttl", "3", *(["--dpop-nonce"] if nonce else [])]
    with http_server("oauth_server.py", *options) as url:
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port, "oauthDpop": True}})
        async with sidecar_for(home, keyring_env) as client:
            assert (await client.request("mcp/server/get", {"server": "secure"}))["authentication"]["dpop"] is True
            assert (await dpop_login(client))["status"] == "completed"
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
            if nonce:
                httpx2.post(url.removesuffix("/mcp") + "/test/rotate-nonces", timeout=10)
            await asyncio.sleep(3.5)  # expired: the refresh is proved with the same key
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
        counts = stats(url)
        assert counts["dpop"]["failures"] == [] or all("nonce" in f for f in counts["dpop"]["failures"])
        assert counts["grants"] == {"authorization_code": 1, "refresh_token": 1}
        assert len(counts["dpopKeys"]) == 1, "one key per login"
        assert counts["dpop"]["tokenProofs"] >= 2
        assert counts["dpop"]["resourceProofs"] >= 2
        if nonce:
            assert counts["dpop"]["nonceChallenges"] >= 2, "the first token request and the server's first"
        record = await keyring_record(keyring_env, ["secure", url, "dynamic"])
        assert record["dpopBound"] is True
        assert set(record["dpopKey"]) == {"kty", "crv", "x", "y", "d"}
        private = record["dpopKey"]["d"]
        assert private not in files_text(home), "the private key is nowhere but the keyring"

        # A new process: the stored key signs again (no login).
        async with sidecar_for(home, keyring_env) as client:
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
            assert client.shown == []


async def test_dpop_fails_closed(home: Path, keyring_env: dict[str, str]) -> None:
    port = free_port()
    # An authorization server without DPoP: the login is refused before anything is opened.
    with http_server("oauth_server.py") as url:
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port, "oauthDpop": True}})
        async with sidecar_for(home, keyring_env) as client:
            error = diagnostic_of(await client.error("mcp/auth/login", {"server": "secure"}))
            assert error["code"] == "oauth_refused"
            assert "oauthDpop" in error["message"]
            assert client.shown == []
        # Bearer tokens from a login before oauthDpop was set are not sent once it is.
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}})
        async with sidecar_for(home, keyring_env) as client:
            assert (await client.request("mcp/auth/login", {"server": "secure"}))["status"] == "completed"
        before = stats(url)["bearers"]
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port, "oauthDpop": True}})
        async with sidecar_for(home, keyring_env) as client:
            error = diagnostic_of(await client.error("mcp/server/tools", {"server": "secure"}))
            assert error["code"] == "authentication_required"
        assert stats(url)["bearers"] == before, "the bearer token was never presented"


async def test_a_literal_client_secret_never_reaches_a_project_file(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    write_config(home, {})
    args = ("--project", str(project), "--trust-project", "run", "add", "--scope", "project", "--oauth-client-id")
    refused = await cli(home, *args, "app", "--oauth-client-secret", CLIENT_SECRET, "crm", "https://crm.example/mcp")
    assert refused.code == 1
    assert "is a literal secret in a project file, which is refused" in refused.stderr
    assert CLIENT_SECRET not in refused.stderr + refused.stdout
    assert not (project / ".mcp.json").exists()
    secret_env = {"CRM_SECRET": CLIENT_SECRET}
    added = await cli(
        home, *args, "app", "--oauth-client-secret", "${CRM_SECRET}", "crm", "https://crm.example/mcp", env=secret_env
    )
    assert added.code == 0, added.stderr
    assert json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["crm"] == {
        "url": "https://crm.example/mcp",
        "oauthClientId": "app",
        "oauthClientSecret": "${CRM_SECRET}",
    }
    assert CLIENT_SECRET not in added.stdout + added.stderr


# -- what a hostile server might try (the adversarial review's findings) ---------------------


async def test_a_configured_issuer_is_the_only_one_a_confidential_secret_goes_to(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    fixture = ("--preregistered", "app", "--client-secret", CLIENT_SECRET, "--callback-port", str(port))
    with http_server("oauth_server.py", *fixture) as url:
        base = url.removesuffix("/mcp")
        client = {"url": url, "oauthCallbackPort": port, "oauthClientId": "app", "oauthClientSecret": "${S}"}
        env = {**keyring_env, "S": CLIENT_SECRET}
        write_config(home, {"secure": {**client, "oauthIssuer": "https://auth.corp.example/"}})
        async with sidecar_for(home, env) as sidecar:
            error = diagnostic_of(await sidecar.error("mcp/auth/login", {"server": "secure"}))
            assert error["code"] == "oauth_refused"
            assert error["message"] == (
                "Refused the authorization server: the server names another issuer than the configured oauthIssuer."
            )
            assert sidecar.shown == [], "nothing opened"
        assert stats(url)["clientAuth"] == [], "the secret was sent nowhere"
        write_config(home, {"secure": {**client, "oauthIssuer": base + "/"}})
        async with sidecar_for(home, env) as sidecar:
            assert (await sidecar.request("mcp/auth/login", {"server": "secure"}))["status"] == "completed"


async def test_a_login_that_fails_after_the_token_exchange_keeps_the_tokens_endpoint_and_issuer(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    # Tokens that expire at once: the login's own request after the exchange is refused.
    with http_server("oauth_server.py", "--access-ttl", "-1") as url:
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}})
        async with sidecar_for(home, keyring_env) as sidecar:
            await sidecar.error("mcp/auth/login", {"server": "secure"})
        record = await keyring_record(keyring_env, ["secure", url, "dynamic"])
        assert record["tokens"]["access_token"]
        assert record["issuer"] == url.removesuffix("/mcp") + "/"
        assert record["oauthMetadata"]["token_endpoint"] == url.removesuffix("/mcp") + "/token", (
            "a later refresh goes to the authorization server's token endpoint, not a guess on the server's origin"
        )


async def test_a_relogin_challenge_cannot_widen_the_grant_without_the_person(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py") as url:
        base = url.removesuffix("/mcp")
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}})
        async with sidecar_for(home, keyring_env) as sidecar:
            assert (await sidecar.request("mcp/auth/login", {"server": "secure"}))["scopes"] == ["mcp"]
            # The server now challenges for more than it was granted.
            httpx2.post(f"{base}/test/prm-scopes", json=["mcp", "admin"], timeout=10)
            before = len(sidecar.shown)
            asked = await sidecar.request("mcp/auth/login", {"server": "secure"})
            assert asked["status"] == "needs_approval"
            assert asked["extraScopes"] == ["admin"]
            assert len(sidecar.shown) == before, "nothing opened before the person answers"
            declined = await sidecar.request("mcp/auth/login", {"server": "secure", "approveScopes": []})
            assert declined["status"] == "completed"
            assert declined["scopes"] == ["mcp"], "declining keeps what the server had"
            again = await sidecar.request("mcp/auth/login", {"server": "secure"})
            assert again["status"] == "needs_approval", "the server still asks; the person is asked again"
            approved = await sidecar.request("mcp/auth/login", {"server": "secure", "approveScopes": ["admin"]})
            assert approved["scopes"] == ["mcp", "admin"]
        assert stats(url)["authorizations"] == [["mcp"], ["mcp"], ["mcp", "admin"]]


async def test_a_connection_runs_the_secret_command_only_when_a_refresh_needs_it(
    home: Path, keyring_env: dict[str, str], tmp_path: Path
) -> None:
    port = free_port()
    secret_file = tmp_path / "client-secret"
    secret_file.write_text(CLIENT_SECRET, encoding="utf-8")
    fixture = ("--preregistered", "app", "--client-secret", CLIENT_SECRET, "--callback-port", str(port))
    with http_server("oauth_server.py", *fixture) as url:
        command = f"!cat {secret_file}"
        definition = {"url": url, "oauthCallbackPort": port, "oauthClientId": "app", "oauthClientSecret": command}
        write_config(home, {"secure": definition})
        async with sidecar_for(home, keyring_env) as sidecar:
            assert (await sidecar.request("mcp/auth/login", {"server": "secure"}))["status"] == "completed"
            secret_file.unlink()  # the password manager is locked now
            assert (await call_whoami(sidecar))["content"][0]["text"] == "authenticated", "valid tokens need no secret"
            # The access token ends (the server forgets it; a lifetime of seconds could end before the
            # call above on a loaded machine): the next connection must refresh, which needs the secret.
            httpx2.post(url.removesuffix("/mcp") + "/test/expire-access", timeout=10).raise_for_status()
            error = diagnostic_of(await sidecar.error("mcp/server/reconnect", {"server": "secure"}))
            assert error["code"] == "secret_lookup_failed", "the refresh needed it, and says why it failed"
            assert error["message"] == "The secret command in `oauthClientSecret` exited with status 1."
        assert stats(url)["grants"] == {"authorization_code": 1}


async def test_a_login_authorizes_once_even_when_the_server_turns_mid_login(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py") as elsewhere:
        other = elsewhere.removesuffix("/mcp") + "/"
        with http_server("oauth_server.py", "--hostile-after-login", other) as url:
            write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}})
            async with sidecar_for(home, keyring_env) as sidecar:
                await sidecar.error("mcp/auth/login", {"server": "secure"})
                assert len(sidecar.shown) == 1, "no second authorization page"
            record = await keyring_record(keyring_env, ["secure", url, "dynamic"])
            assert record["issuer"] == url.removesuffix("/mcp") + "/", "the tokens keep their own issuer"
            assert record["oauthMetadata"]["token_endpoint"] == url.removesuffix("/mcp") + "/token"
        assert stats(elsewhere)["discovery"] == [], "the other authorization server was never contacted"
        assert stats(elsewhere)["registrations"] == 0
