"""OAuth end to end: the real sidecar, the SDK's authorization server, a real Secret Service.

The tests play the browser: they follow the authorization URL the sidecar asks the editor
to open (`window/showDocument`), and deliver the redirect to the sidecar's real loopback
listener (or paste it into `mcp/auth/completeLogin` for the no-browser flow). Every sidecar
here runs under an egress guard (`support/oauth.py`): it can reach loopback only, and a test
fails if it even tried to connect elsewhere or to resolve a name.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest

from support.cli import Run, cli, plain_status
from support.keyring_env import secret_service_env
from support.oauth import egress_attempts, egress_guard, forging_browser, play_browser, redirect_of, with_state
from support.servers import free_port, http_server
from support.sidecar import SidecarClient, diagnostic_of, start_sidecar, write_config


@pytest.fixture(scope="module")
def keyring_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with secret_service_env(tmp_path_factory.mktemp("secret-service")) as env:
        yield env


def stats(url: str) -> dict[str, Any]:
    base = url.removesuffix("/mcp")
    return dict(httpx2.get(f"{base}/test/stats", timeout=10).json())


def oauth_config(home: Path, url: str, port: int, **extra: Any) -> None:
    write_config(home, {"secure": {"url": url, "oauthCallbackPort": port, **extra}})


@asynccontextmanager
async def sidecar_for(
    home: Path,
    env: dict[str, str],
    *,
    browser: bool = True,
    browse: Callable[[str], Awaitable[bool]] = play_browser,
) -> AsyncIterator[SidecarClient]:
    guard, attempts = egress_guard(home.parent / "egress-guard")
    full_env = {**env, **guard}
    async with start_sidecar(home, env=full_env, interactive=True, browser=browse if browser else None) as client:
        yield client
    assert egress_attempts(attempts) == [], "the sidecar tried to reach beyond loopback"


async def call_whoami(client: SidecarClient) -> dict[str, Any]:
    await client.request("mcp/activate", {"ids": ["secure.whoami"]})
    result: dict[str, Any] = await client.request("mcp/callTool", {"id": "secure.whoami", "arguments": {}})
    return result


async def test_first_login_stores_tokens_in_the_keyring_and_later_sessions_reuse_them(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            before = await client.error("mcp/server/tools", {"server": "secure"})
            assert diagnostic_of(before)["code"] == "authentication_required"
            assert stats(url)["registrations"] == 0, "a request must never register a client"
            got = await client.request("mcp/server/get", {"server": "secure"})
            assert got["authentication"]["tokensStored"] is False
            assert got["authentication"]["credentialStore"] == "available"

            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
            assert result["scopes"] == ["mcp"]
            assert len(client.shown) == 1
            assert client.shown[0].startswith(url.removesuffix("/mcp") + "/authorize?")
            assert "code_challenge_method=S256" in client.shown[0]
            assert "resource=" in client.shown[0]
            got = await client.request("mcp/server/get", {"server": "secure"})
            assert got["authentication"]["tokensStored"] is True
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
        counts = stats(url)
        assert counts["registrations"] == 1
        assert counts["grants"] == {"authorization_code": 1}

        # A new sidecar process: tokens come from the keyring; no browser, no login.
        async with sidecar_for(home, keyring_env) as client:
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
            assert client.shown == []
        assert stats(url)["grants"] == {"authorization_code": 1}
        written = [p for p in home.rglob("*") if p.is_file()]  # noqa: ASYNC240 - the sidecar has stopped
        contents = "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in written)
        issued = httpx2.get(url.removesuffix("/mcp") + "/test/secrets", timeout=10).json()
        assert len(issued) >= 3
        leaked = [secret for secret in issued if secret in contents]
        assert leaked == [], "a token or code reached a file the sidecar wrote (log, cache, config)"


LOGIN_HINT = "Run mcp-sidecar login secure (in an editor: /mcp login secure), or check its Authorization header."


async def test_a_server_that_asks_for_authentication_needs_login_until_one_succeeds(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py") as url:
        # `keyed` sends its own Authorization header, which the server refuses: a login cannot fix that.
        keyed = {"url": url, "headers": {"Authorization": "Bearer not-a-token"}}
        write_config(home, {"secure": {"url": url, "oauthCallbackPort": port}, "keyed": keyed})
        # The CLI, before any login: no tokens, and the refusal names the command that fixes it.
        got, tools = await asyncio.gather(
            cli(home, "get", "secure", env=keyring_env), cli(home, "tools", "secure", env=keyring_env)
        )
        assert got.stdout.splitlines()[-2] == "  authentication: oauth, credentials none"
        message = "The server requires authentication."
        assert tools == Run(1, "", f"secure: [authentication_required] {message} {LOGIN_HINT}\n")
        async with sidecar_for(home, keyring_env) as client:
            refused = diagnostic_of(await client.error("mcp/server/tools", {"server": "secure"}))
            assert refused == {
                "code": "authentication_required",
                "operation": "tools",
                "server": "secure",
                "message": message,
                "hint": LOGIN_HINT,
            }
            header_refused = diagnostic_of(await client.error("mcp/server/tools", {"server": "keyed"}))
            assert header_refused["code"] == "authentication_required"
            row, keyed_row = (await client.request("mcp/status"))["servers"]
            assert (row["state"], row["lastDiagnostic"]) == ("needs_login", refused)
            assert (keyed_row["state"], keyed_row["lastDiagnostic"]) == ("failed", header_refused)
            assert client.states("secure")[-1] == "needs_login"
            listed = await client.request("mcp/command", {"line": "list"})
            assert plain_status(listed["text"]) == (
                "   Server  State        Scope   Transport  Tools  Tokens  Resources  Prompts  Loaded\n"
                "⚿  secure  needs login  global  http       —      —       —          —        0\n"
                "✘  keyed   failed       global  http       —      —       —          —        0\n"
                f"secure: [authentication_required] {message} {LOGIN_HINT}\n"
                f"keyed: [authentication_required] {message} {header_refused['hint']}"
            )
            details = (await client.request("mcp/command", {"line": "get secure"}))["text"].splitlines()
            assert (details[0], details[-1]) == (
                "⚿ secure · needs login · global · http",
                f"  last failure: [authentication_required] {message} {LOGIN_HINT}",
            )
            await client.request("mcp/auth/login", {"server": "secure"})
            row, _ = (await client.request("mcp/status"))["servers"]
            assert (row["state"], row["lastDiagnostic"]) == ("idle", None)
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
            # Never `failed`: the refusal, the login closing the connection, the next one working.
            assert client.states("secure") == ["connecting", "needs_login", "idle", "connecting", "connected"]
        got = await cli(home, "get", "secure", env=keyring_env)
        assert got.stdout.splitlines()[-2] == "  authentication: oauth, credentials stored"


async def test_expired_access_token_is_refreshed_with_the_refresh_token(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    # Four seconds: the login's own retried request must still find the token valid (with one
    # second, a loaded machine saw it expire there, and the SDK authorized a second time).
    with http_server("oauth_server.py", "--access-ttl", "4") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
        await asyncio.sleep(4.5)  # let the access token expire (the server's clock decides)
        async with sidecar_for(home, keyring_env) as client:
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
        assert stats(url)["grants"].get("refresh_token", 0) >= 1


async def test_a_second_sidecar_adopts_tokens_another_one_refreshed(home: Path, keyring_env: dict[str, str]) -> None:
    """Refresh tokens rotate: a process holding the old one takes the newer tokens from the keyring."""
    port = free_port()
    with http_server("oauth_server.py", "--access-ttl", "4", "--refreshed-ttl", "600") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as first, sidecar_for(home, keyring_env) as second:
            await first.request("mcp/auth/login", {"server": "secure"})
            await second.request("mcp/server/tools", {"server": "secure"})  # loads the first tokens
            await asyncio.sleep(4.5)  # both now hold an expired access token (the server's clock decides)
            assert (await call_whoami(first))["content"][0]["text"] == "authenticated"
            assert (await call_whoami(second))["content"][0]["text"] == "authenticated"
        assert stats(url)["grants"] == {"authorization_code": 1, "refresh_token": 1}


async def test_revoked_tokens_answer_authentication_required_and_never_open_a_browser(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
            shown = len(client.shown)
            httpx2.post(url.removesuffix("/mcp") + "/test/revoke-all", timeout=10)
            error = await client.error("mcp/server/reconnect", {"server": "secure"})
            diag = diagnostic_of(error)
            assert diag["code"] == "authentication_required"
            assert "log in again" in diag["message"]
            assert len(client.shown) == shown
            assert stats(url)["registrations"] == 1


@pytest.mark.parametrize(
    ("flags", "expected"),
    [((), "accepted"), (("--no-revocation",), "unsupported"), (("--slow-revocation", "8"), "unconfirmed")],
)
async def test_logout_removes_local_credentials_first_then_reports_revocation(
    home: Path, keyring_env: dict[str, str], flags: tuple[str, ...], expected: str
) -> None:
    port = free_port()
    with http_server("oauth_server.py", *flags) as url:
        oauth_config(home, url, port, disabled=False)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
            await client.request("mcp/config/setEnabled", {"server": "secure", "enabled": False})
            loop = asyncio.get_running_loop()
            started = loop.time()
            result = await client.request("mcp/auth/logout", {"server": "secure"})
            assert result["revocation"] == expected
            assert result["removed"] is True
            if expected == "unconfirmed":
                assert loop.time() - started < 15, "revocation is bounded in time"
            got = await client.request("mcp/server/get", {"server": "secure"})
            assert got["authentication"]["tokensStored"] is False
            again = await client.request("mcp/auth/logout", {"server": "secure"})
            assert again["revocation"] == "none"
        if expected == "accepted":
            assert stats(url)["revocations"] >= 1


async def test_pre_registered_public_client_skips_registration(home: Path, keyring_env: dict[str, str]) -> None:
    port = free_port()
    with http_server("oauth_server.py", "--preregistered", "editor-client", "--callback-port", str(port)) as url:
        oauth_config(home, url, port, oauthClientId="${MCP_TEST_CLIENT_ID}")
        env = {**keyring_env, "MCP_TEST_CLIENT_ID": "editor-client"}
        async with sidecar_for(home, env) as client:
            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
            assert "client_id=editor-client" in client.shown[0]
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
        assert stats(url)["registrations"] == 0


async def test_changed_issuer_is_refused_until_logout(home: Path, keyring_env: dict[str, str]) -> None:
    port, server_port = free_port(), free_port()
    with http_server("oauth_server.py", port=server_port) as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
    with http_server("oauth_server.py", "--tenant", "elsewhere", port=server_port) as url:
        async with sidecar_for(home, keyring_env) as client:
            error = await client.error("mcp/auth/login", {"server": "secure"})
            assert diagnostic_of(error)["code"] == "oauth_issuer_changed"
            assert client.shown == [], "nothing is opened for a changed issuer"
            await client.request("mcp/auth/logout", {"server": "secure"})


async def test_callback_port_in_use_is_callback_unavailable(home: Path, keyring_env: dict[str, str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with http_server("oauth_server.py") as url:
            oauth_config(home, url, port)
            async with sidecar_for(home, keyring_env) as client:
                error = await client.error("mcp/auth/login", {"server": "secure"})
                diag = diagnostic_of(error)
                assert diag["code"] == "callback_unavailable"
                assert "oauthCallbackPort" in diag["hint"]
                assert client.shown == []


async def test_no_browser_login_completes_from_the_pasted_callback(home: Path, keyring_env: dict[str, str]) -> None:
    port = free_port()
    with http_server("oauth_server.py") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env, browser=False) as client:
            pending = await client.request("mcp/auth/login", {"server": "secure", "noBrowser": True})
            assert pending["status"] == "pending"
            assert pending["redirectUri"] == f"http://127.0.0.1:{port}/callback"
            with socket.socket() as probe:  # nothing listens in the no-browser flow
                assert probe.connect_ex(("127.0.0.1", port)) != 0
            wrong = await client.error(
                "mcp/auth/completeLogin", {"loginId": pending["loginId"], "callbackUrl": "http://evil.test/cb?code=x"}
            )
            assert diagnostic_of(wrong)["code"] == "invalid_params"
            pasted = await redirect_of(pending["authorizationUrl"])
            forged = await client.error(
                "mcp/auth/completeLogin",
                {"loginId": pending["loginId"], "callbackUrl": with_state(pasted, "another-login")},
            )
            assert diagnostic_of(forged)["code"] == "invalid_params"
            assert diagnostic_of(forged)["message"] == (
                "`callbackUrl` carries a state that is not this login's; "
                "paste the address its authorization page sent you to."
            )
            done = await client.request(
                "mcp/auth/completeLogin", {"loginId": pending["loginId"], "callbackUrl": pasted}
            )
            assert done["status"] == "completed"
            gone = await client.error("mcp/auth/completeLogin", {"loginId": pending["loginId"], "callbackUrl": pasted})
            assert diagnostic_of(gone)["code"] == "login_not_found"
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"


async def refused_admin_report(client: SidecarClient) -> dict[str, Any]:
    await client.request("mcp/activate", {"ids": ["secure.admin_report"]})
    denied = await client.error("mcp/callTool", {"id": "secure.admin_report", "arguments": {}})
    return diagnostic_of(denied)


async def test_scope_step_up_waits_for_the_person_to_approve_the_extra_scopes(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py", "--step-up") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
            denied = await refused_admin_report(client)
            assert denied["code"] == "permission_denied"
            assert denied["message"] == (
                "The server asks for more OAuth scopes than it granted (mcp admin). The request was not repeated; "
                "the next login shows the scopes and asks before requesting them (for 10 minutes)."
            )
            assert denied["hint"] == (
                "Check account permissions, OAuth scopes and the service's access policy; to ask for the missing "
                "scopes, run mcp-sidecar login secure (in an editor: /mcp login secure)."
            )
            assert len(client.shown) == 1, "a refused elevation never opens a browser by itself"
            before = stats(url)
            asked = await client.request("mcp/auth/login", {"server": "secure"})
            assert asked["status"] == "needs_approval"
            assert asked["extraScopes"] == ["admin"]
            assert asked["scopes"] == ["mcp", "admin"]
            assert 590 <= asked["expiresInSeconds"] <= 600
            assert "admin" in asked["text"]
            assert len(client.shown) == 1, "asking opens nothing"
            assert stats(url)["discovery"] == before["discovery"], "asking sends nothing"

            result = await client.request("mcp/auth/login", {"server": "secure", "approveScopes": ["admin"]})
            assert result["status"] == "completed"
            assert set(result["scopes"]) == {"mcp", "admin"}
            report = await client.request("mcp/callTool", {"id": "secure.admin_report", "arguments": {}})
            assert report["content"][0]["text"] == "admin report"
            again = await client.request("mcp/auth/login", {"server": "secure"})
            assert again["status"] == "completed", "an approved and granted scope is not asked for again"
        assert stats(url)["authorizations"][-2:] == [["mcp", "admin"], ["mcp", "admin"]]
        assert stats(url)["grants"]["authorization_code"] == 3, "the refused call was never replayed by a login"


async def test_a_declined_step_up_logs_in_without_the_extra_scopes_and_forgets_them(
    home: Path, keyring_env: dict[str, str]
) -> None:
    port = free_port()
    with http_server("oauth_server.py", "--step-up") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
            assert (await refused_admin_report(client))["code"] == "permission_denied"
            # Approving a scope nobody asked for adds nothing: only pending extras can be approved.
            result = await client.request("mcp/auth/login", {"server": "secure", "approveScopes": ["root"]})
            assert result["status"] == "completed"
            assert result["scopes"] == ["mcp"]
            assert (await client.request("mcp/auth/login", {"server": "secure"}))["status"] == "completed"
        assert stats(url)["authorizations"][-2:] == [["mcp"], ["mcp"]]


async def test_a_step_up_request_lapses_after_ten_minutes(home: Path, keyring_env: dict[str, str]) -> None:
    port = free_port()
    with http_server("oauth_server.py", "--step-up") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
            assert (await refused_admin_report(client))["code"] == "permission_denied"
        # Age the request in the keyring itself, as eleven minutes would.
        account = json.dumps(["secure", url, "dynamic"], separators=(",", ":"))
        await age_step_up(keyring_env, account, 660)
        async with sidecar_for(home, keyring_env) as client:
            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
            assert result["scopes"] == ["mcp"]


async def age_step_up(env: dict[str, str], account: str, seconds: float) -> None:
    script = (
        "import json, sys, keyring\n"
        "account, seconds = sys.argv[1], float(sys.argv[2])\n"
        "record = json.loads(keyring.get_password('mcp-sidecar', account))\n"
        "assert record['stepUpScope'] and record['stepUpAt']\n"
        "record['stepUpAt'] -= seconds\n"
        "keyring.set_password('mcp-sidecar', account, json.dumps(record))\n"
    )
    full = {**os.environ, **env}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-c", script, account, str(seconds), env=full)
    assert await proc.wait() == 0


INSECURE = "OAuth URLs must use HTTPS (plain HTTP only on loopback), with a valid host and no credentials."
BLOCKED = (
    "it is on a private, link-local, unique-local or cloud-metadata address (loopback only for a loopback server)."
)
FOREIGN = "protected-resource metadata is fetched only from the server's own origin."


@pytest.mark.parametrize(
    ("flag", "value", "what"),
    [
        ("--prm-as-url", "http://auth.example.test/", "an OAuth endpoint"),
        ("--authorize-url", "http://auth.example.test/authorize", "the authorization URL"),
    ],
)
async def test_unsafe_oauth_urls_are_refused_before_anything_is_opened(
    home: Path, keyring_env: dict[str, str], flag: str, value: str, what: str
) -> None:
    port = free_port()
    with http_server("oauth_server.py", flag, value) as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            error = await client.error("mcp/auth/login", {"server": "secure"})
            diag = diagnostic_of(error)
            assert diag["code"] == "oauth_refused"
            assert diag["message"] == f"Refused {what}: {INSECURE}"
            assert value not in json.dumps(diag)
            assert client.shown == []
        assert stats(url)["authorizations"] == []


@pytest.mark.parametrize(
    "authorization_server",
    [
        "https://169.254.169.254/",
        "https://0xa9fea9fe/",  # 169.254.169.254, as browsers and inet_aton read it
        "https://[::ffff:10.0.0.1]/",
        "https://[fd00::1]:8443/",
        "https://metadata.google.internal/",
    ],
)
async def test_oauth_endpoints_on_private_and_metadata_addresses_are_refused_before_any_connection(
    home: Path, keyring_env: dict[str, str], authorization_server: str
) -> None:
    """The server names an internal address as its authorization server: nothing is sent there."""
    port = free_port()
    with http_server("oauth_server.py", "--prm-as-url", authorization_server) as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:  # its egress guard sees every attempt
            error = await client.error("mcp/auth/login", {"server": "secure"})
            diag = diagnostic_of(error)
            assert diag["code"] == "oauth_refused"
            assert diag["message"] == f"Refused an OAuth endpoint: {BLOCKED}"
            assert client.shown == []
        counts = stats(url)
        assert counts["discovery"] == ["/.well-known/oauth-protected-resource/mcp"]
        assert counts["registrations"] == 0


@pytest.mark.parametrize("pointer", ["localhost", "metadata"])
async def test_resource_metadata_on_another_origin_is_never_fetched(
    home: Path, keyring_env: dict[str, str], pointer: str
) -> None:
    port, server_port = free_port(), free_port()
    # `localhost` is the fixture itself under another origin: a fetch would show in its stats.
    target = {
        "localhost": f"http://localhost:{server_port}/.well-known/oauth-protected-resource/mcp",
        "metadata": "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    }[pointer]
    with http_server("oauth_server.py", "--resource-metadata-url", target, port=server_port) as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            error = await client.error("mcp/auth/login", {"server": "secure"})
            diag = diagnostic_of(error)
            assert diag["code"] == "oauth_refused"
            assert diag["message"] == f"Refused the resource metadata URL: {FOREIGN}"
            assert target not in json.dumps(diag)
            assert client.shown == []
        assert stats(url)["discovery"] == []


async def test_a_same_origin_resource_metadata_url_is_followed(home: Path, keyring_env: dict[str, str]) -> None:
    port, server_port = free_port(), free_port()
    target = f"http://127.0.0.1:{server_port}/.well-known/oauth-protected-resource/mcp"
    with http_server("oauth_server.py", "--resource-metadata-url", target, port=server_port) as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
        assert stats(url)["discovery"][0] == "/.well-known/oauth-protected-resource/mcp"


@pytest.mark.parametrize(
    ("methods", "preregistered"), [("", False), ("plain", False), ("", True)], ids=["absent", "plain", "preregistered"]
)
async def test_an_authorization_server_without_s256_is_refused(
    home: Path, keyring_env: dict[str, str], methods: str, preregistered: bool
) -> None:
    """PKCE S256 is a MUST: no registration, no authorization page, whichever client is used."""
    port = free_port()
    flags = ["--pkce-methods", methods]
    extra: dict[str, Any] = {}
    if preregistered:
        flags += ["--preregistered", "editor-client", "--callback-port", str(port)]
        extra["oauthClientId"] = "editor-client"
    with http_server("oauth_server.py", *flags) as url:
        oauth_config(home, url, port, **extra)
        async with sidecar_for(home, keyring_env) as client:
            error = await client.error("mcp/auth/login", {"server": "secure"})
            diag = diagnostic_of(error)
            assert diag["code"] == "oauth_refused"
            assert diag["message"] == (
                "Refused the authorization server: its metadata does not list S256 in "
                "code_challenge_methods_supported (PKCE is required)."
            )
            assert client.shown == []
            got = await client.request("mcp/server/get", {"server": "secure"})
            assert got["authentication"]["tokensStored"] is False
        counts = stats(url)
        assert counts["registrations"] == 0
        assert counts["authorizations"] == []


async def test_the_callback_listener_ignores_other_states_and_keeps_waiting(
    home: Path, keyring_env: dict[str, str]
) -> None:
    """Any local page can hit the callback port: only the pending login's state ends the wait."""
    port = free_port()
    statuses: list[int] = []
    with http_server("oauth_server.py") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env, browse=forging_browser(statuses)) as client:
            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
            assert statuses == [400, 400, 400, 200]
            assert (await call_whoami(client))["content"][0]["text"] == "authenticated"
        assert stats(url)["grants"] == {"authorization_code": 1}


async def test_without_a_keyring_login_is_credential_store_unavailable_and_writes_nothing(
    home: Path, tmp_path: Path
) -> None:
    port = free_port()
    bare_home = tmp_path / "user-home"
    bare_home.mkdir()
    env = {
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + str(tmp_path / "no-bus"),
        "HOME": str(bare_home),
        "XDG_DATA_HOME": str(bare_home / "data"),
    }
    with http_server("oauth_server.py") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, env) as client:
            error = await client.error("mcp/auth/login", {"server": "secure"})
            assert diagnostic_of(error)["code"] == "credential_store_unavailable"
            got = await client.request("mcp/server/get", {"server": "secure"})
            assert got["authentication"]["credentialStore"] == "unavailable"
            assert got["authentication"]["tokensStored"] is None
            assert client.shown == []
            command = await client.error("mcp/command", {"line": "logout secure"})
            assert diagnostic_of(command)["code"] == "credential_store_unavailable"
        assert stats(url)["registrations"] == 0
    assert list(bare_home.rglob("*")) == [], "no file store is created as a fallback"


async def test_login_refuses_stdio_and_header_servers(home: Path, keyring_env: dict[str, str]) -> None:
    write_config(
        home,
        {
            "local": {"command": "python3", "args": ["-c", "pass"]},
            "keyed": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer ${NOPE}"}},
        },
    )
    async with sidecar_for(home, keyring_env) as client:
        for server in ("local", "keyed"):
            error = await client.error("mcp/auth/login", {"server": server})
            assert diagnostic_of(error)["code"] == "not_supported"
        text = await client.error("mcp/command", {"line": "login nowhere"})
        assert diagnostic_of(text)["code"] == "server_not_found"


async def test_a_javascript_authorization_endpoint_is_never_opened(home: Path, keyring_env: dict[str, str]) -> None:
    """The SDK drops metadata whose endpoint is not an HTTP URL; whatever follows, nothing but http(s) is opened."""
    port = free_port()
    with http_server("oauth_server.py", "--authorize-url", "javascript:alert(1)") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            result = await client.request("mcp/auth/login", {"server": "secure"})
            assert result["status"] == "completed"
            assert client.shown, "the fallback endpoint on the server's origin was used"
            assert all(uri.startswith(url.removesuffix("/mcp") + "/authorize?") for uri in client.shown)


async def test_headless_cli_login_without_a_browser_then_logout(home: Path, keyring_env: dict[str, str]) -> None:
    import os
    import re
    import sys

    port = free_port()
    env = {**os.environ, **keyring_env, "MCP_SIDECAR_HOME": str(home)}
    cli = [sys.executable, "-m", "mcp_sidecar"]
    with http_server("oauth_server.py") as url:
        oauth_config(home, url, port)
        proc = await asyncio.create_subprocess_exec(
            *cli,
            "login",
            "secure",
            "--no-browser",
            env=env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stderr is not None
        assert proc.stdin is not None
        shown = b""
        while b"Callback address:" not in shown:
            chunk = await asyncio.wait_for(proc.stderr.read(4096), 60)
            assert chunk, shown.decode()
            shown += chunk
        match = re.search(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)", shown.decode())
        assert match is not None
        proc.stdin.write((await redirect_of(match.group(1))).encode() + b"\n")
        await proc.stdin.drain()
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0
        assert "secure: logged in" in out.decode()

        done = await asyncio.create_subprocess_exec(
            *cli, "--json", "logout", "secure", env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, _ = await asyncio.wait_for(done.communicate(), 60)
        assert done.returncode == 0
        assert json.loads(out)["revocation"] == "accepted"


async def test_the_cli_asks_for_extra_scopes_and_a_script_approves_them_with_a_flag(
    home: Path, keyring_env: dict[str, str]
) -> None:
    import re

    port = free_port()
    env = {**os.environ, **keyring_env, "MCP_SIDECAR_HOME": str(home)}
    cli = [sys.executable, "-m", "mcp_sidecar", "login", "secure", "--no-browser"]
    pipes = {"stdin": asyncio.subprocess.PIPE, "stdout": asyncio.subprocess.PIPE, "stderr": asyncio.subprocess.PIPE}
    with http_server("oauth_server.py", "--step-up") as url:
        oauth_config(home, url, port)
        async with sidecar_for(home, keyring_env) as client:
            await client.request("mcp/auth/login", {"server": "secure"})
            assert (await refused_admin_report(client))["code"] == "permission_denied"
        before = stats(url)

        # No terminal and no flag: cancelled, nothing opened or sent.
        unasked = await asyncio.create_subprocess_exec(*cli, env=env, **pipes)  # type: ignore[arg-type]
        out, err = await asyncio.wait_for(unasked.communicate(b""), 60)
        assert unasked.returncode == 1
        assert "asks for scopes it was not granted: admin" in err.decode()
        assert "run again with --approve-scopes" in err.decode()
        assert stats(url) == before

        proc = await asyncio.create_subprocess_exec(*cli, "--approve-scopes", env=env, **pipes)  # type: ignore[arg-type]
        assert proc.stderr is not None
        assert proc.stdin is not None
        shown = b""
        while b"Callback address:" not in shown:
            chunk = await asyncio.wait_for(proc.stderr.read(4096), 60)
            assert chunk, shown.decode()
            shown += chunk
        assert b"Approving the extra scopes admin (--approve-scopes)." in shown
        match = re.search(r"(http://127\.0\.0\.1:\d+/authorize\?\S+)", shown.decode())
        assert match is not None
        assert "scope=mcp+admin" in match.group(1)
        proc.stdin.write((await redirect_of(match.group(1))).encode() + b"\n")
        await proc.stdin.drain()
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0
        assert "secure: logged in (scopes: mcp admin)" in out.decode()
