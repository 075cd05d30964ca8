"""Issue 21's client side, in parts: configuration of confidential clients, metadata documents
and DPoP; DPoP keys and proofs (checked with `cryptography` independently of the code that
signs them); the step-up request's lifetime in the credential record."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from mcp_sidecar.auth.dpop import DpopKey, DpopKeyInvalid, Nonces, asks_for_nonce, target_uri
from mcp_sidecar.auth.store import STEP_UP_TTL_S, CredentialRecord
from mcp_sidecar.config import loader
from mcp_sidecar.config.interpolate import SecretCommand, resolve
from mcp_sidecar.config.validate import ConfigProblems, parse_server

URL = "https://mcp.example.com/mcp"


def problems(definition: dict[str, Any], scope: Any = "global") -> list[str]:
    with pytest.raises(ConfigProblems) as info:
        parse_server("srv", definition, scope)
    return info.value.problems


# -- configuration ---------------------------------------------------------------------------


def test_a_client_secret_comes_from_a_reference_or_a_command_in_a_project_file() -> None:
    for written in ("${ORG_SECRET}", "$ORG_SECRET", "prefix-${ORG_SECRET}", "!pass show org/mcp"):
        config = parse_server("srv", {"url": URL, "oauthClientId": "app", "oauthClientSecret": written}, "project")
        assert config.oauth_client_secret == written
    literal = problems({"url": URL, "oauthClientId": "app", "oauthClientSecret": "s3cr3t-literal"}, "project")
    assert literal == [
        "server 'srv': field `oauthClientSecret` is a literal secret in a project file, which is refused: "
        "use a ${VAR} reference or a !command."
    ]
    assert "s3cr3t-literal" not in " ".join(literal)
    escaped = problems({"url": URL, "oauthClientId": "app", "oauthClientSecret": "a$$b"}, "project")
    assert "literal secret" in escaped[0], "an escaped dollar is not a reference"
    # The person's own global file may hold one (docs recommend a reference anyway).
    assert parse_server("srv", {"url": URL, "oauthClientId": "app", "oauthClientSecret": "lit"}, "global")


def test_a_client_secret_needs_its_client_id_and_an_http_server() -> None:
    assert problems({"url": URL, "oauthClientSecret": "${S}"}) == [
        "server 'srv': field `oauthClientSecret` requires `oauthClientId` (the client the secret belongs to)."
    ]
    assert any("requires an HTTP server" in p for p in problems({"command": "x", "oauthDpop": True}))
    assert problems({"url": URL, "oauthClientId": "a", "oauthClientSecret": ""})[0].endswith(
        "must be a non-empty string: a ${VAR} reference or a !command."
    )
    assert problems({"url": URL, "oauthDpop": "yes"}) == ["server 'srv': field `oauthDpop` must be true or false."]


@pytest.mark.parametrize(
    "url",
    [
        "http://org.example/client.json",
        "https://org.example",
        "https://org.example/",
        "https://user:pw@org.example/c.json",
        "https://org.example/c.json?x=1",
        "https://org.example/c.json#f",
        "https://org.example/c json",
        "https:///c.json",
        42,
    ],
)
def test_a_client_metadata_url_is_https_with_a_path_and_nothing_else(url: Any) -> None:
    assert problems({"url": URL, "oauthClientMetadataUrl": url}) == [
        "server 'srv': field `oauthClientMetadataUrl` must be an https:// URL with a path (the client metadata "
        "document), without credentials, query or fragment."
    ]


def test_the_global_metadata_url_is_every_http_servers_default(tmp_path: Path, monkeypatch: Any) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    document = {
        "oauthClientMetadataUrl": "https://org.example/mcp-sidecar.json",
        "mcpServers": {
            "a": {"url": URL},
            "b": {"url": URL, "oauthClientMetadataUrl": "https://other.example/own.json"},
            "c": {"command": "server"},
        },
    }
    (home / "mcp.json").write_text(json.dumps(document), encoding="utf-8")
    servers = loader.load(None, trusted=False).servers
    assert servers["a"].oauth_client_metadata_url == "https://org.example/mcp-sidecar.json"
    assert servers["b"].oauth_client_metadata_url == "https://other.example/own.json"
    assert servers["c"].oauth_client_metadata_url is None

    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({**document, "mcpServers": {}}), encoding="utf-8")
    report = loader.load_report(project, trusted=True)
    assert [p.message for p in report.problems] == [
        f"{project / '.mcp.json'}: `oauthClientMetadataUrl` at the top level is a global option; "
        "set it in the global file, or on a server."
    ]
    document["oauthClientMetadataUrl"] = "http://org.example/x.json"
    (home / "mcp.json").write_text(json.dumps(document), encoding="utf-8")
    assert "top-level `oauthClientMetadataUrl` must be an https:// URL" in str(loader.load_report(None, False).problems)


def test_a_client_secret_resolves_from_the_environment_or_stays_a_command() -> None:
    config = parse_server("srv", {"url": URL, "oauthClientId": "a", "oauthClientSecret": "${ORG_SECRET}"}, "global")
    resolved = resolve(config, None, {"ORG_SECRET": "canary-client-secret"})
    assert resolved.oauth_client_secret == "canary-client-secret"
    assert "canary-client-secret" in resolved.secret_values
    assert "canary" not in repr(resolved)
    assert "canary" not in repr(config)
    command = parse_server("srv", {"url": URL, "oauthClientId": "a", "oauthClientSecret": "!echo hi"}, "global")
    assert resolve(command, None, {}).oauth_client_secret == SecretCommand("echo hi")


# -- DPoP ------------------------------------------------------------------------------------


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def decode(proof: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    head, body, signature = proof.split(".")
    return json.loads(unb64(head)), json.loads(unb64(body)), f"{head}.{body}".encode(), unb64(signature)


def verify(jwk: dict[str, str], signed: bytes, signature: bytes) -> None:
    numbers = ec.EllipticCurvePublicNumbers(
        int.from_bytes(unb64(jwk["x"]), "big"), int.from_bytes(unb64(jwk["y"]), "big"), ec.SECP256R1()
    )
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    numbers.public_key().verify(der, signed, ec.ECDSA(hashes.SHA256()))


def test_a_proof_is_an_es256_jwt_over_the_request_signed_by_the_key() -> None:
    key = DpopKey.generate()
    proof = key.proof("post", "https://as.example/token?x=1#f", nonce="n-1")
    header, claims, signed, signature = decode(proof)
    assert header == {"typ": "dpop+jwt", "alg": "ES256", "jwk": key.public_jwk()}
    assert "d" not in header["jwk"], "the private key never leaves in a proof"
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://as.example/token"
    assert claims["nonce"] == "n-1"
    assert "ath" not in claims
    assert abs(claims["iat"] - time.time()) < 5
    verify(header["jwk"], signed, signature)
    with pytest.raises(InvalidSignature):
        verify(header["jwk"], signed + b"x", signature)

    _, bound, _, _ = decode(key.proof("GET", URL, access_token="tok-123"))
    assert bound["ath"] == base64.urlsafe_b64encode(hashlib.sha256(b"tok-123").digest()).rstrip(b"=").decode()
    assert "nonce" not in bound
    assert bound["jti"] != claims["jti"]


def test_a_key_round_trips_through_its_private_jwk_and_a_damaged_one_is_refused() -> None:
    key = DpopKey.generate()
    stored = key.private_jwk()
    again = DpopKey.from_jwk(stored)
    assert again.thumbprint() == key.thumbprint()
    canonical = json.dumps(key.public_jwk(), sort_keys=True, separators=(",", ":")).encode()
    assert unb64(key.thumbprint()) == hashlib.sha256(canonical).digest()
    other = DpopKey.generate().private_jwk()
    for bad in (None, {}, {**stored, "crv": "P-384"}, {**stored, "d": "!!"}, {**stored, "x": other["x"]}):
        with pytest.raises(DpopKeyInvalid):
            DpopKey.from_jwk(bad)


def test_nonces_are_kept_per_origin_and_only_a_nonce_challenge_asks_for_a_retry() -> None:
    nonces = Nonces()
    assert nonces.note("https://as.example/token", httpx2.Headers({"DPoP-Nonce": "a1"}))
    assert not nonces.note("https://as.example/other", httpx2.Headers({"DPoP-Nonce": "a1"})), "not new"
    assert nonces.get("https://AS.example/anything") == "a1"
    assert nonces.get(URL) is None
    assert not nonces.note(URL, httpx2.Headers({"DPoP-Nonce": "bad\nvalue"}))
    assert not nonces.note(URL, httpx2.Headers({"DPoP-Nonce": "x" * 600}))
    challenge = {"DPoP-Nonce": "r1", "WWW-Authenticate": 'DPoP error="use_dpop_nonce"'}
    assert asks_for_nonce(401, httpx2.Headers(challenge), None)
    assert not asks_for_nonce(401, httpx2.Headers({"WWW-Authenticate": 'DPoP error="use_dpop_nonce"'}), None)
    assert not asks_for_nonce(401, httpx2.Headers({**challenge, "WWW-Authenticate": "Bearer"}), None)
    as_answer = httpx2.Headers({"DPoP-Nonce": "a2"})
    assert asks_for_nonce(400, as_answer, b'{"error": "use_dpop_nonce"}')
    assert not asks_for_nonce(400, as_answer, b'{"error": "invalid_grant"}')
    assert not asks_for_nonce(400, as_answer, b"not json")
    assert target_uri("https://h.example") == "https://h.example/"


# -- the step-up request in the record -------------------------------------------------------


def test_a_step_up_request_lapses_and_survives_the_record_round_trip() -> None:
    record = CredentialRecord(server="s", url=URL, configured_client_id=None)
    record.tokens = {"access_token": "t", "scope": "mcp"}
    record.step_up_scope, record.step_up_at = "mcp admin", time.time()
    record.registrations = {"https://as.example/": {"client_id": "c", "redirect_uris": ["http://127.0.0.1:1/c"]}}
    record.dpop_key, record.dpop_bound = DpopKey.generate().private_jwk(), True
    again = CredentialRecord.from_json(record.to_json())
    assert again is not None
    assert again.pending_step_up() == {"mcp", "admin"}
    assert again.granted_scope == {"mcp"}
    assert again.registrations == record.registrations
    assert again.dpop_bound
    assert again.dpop_key == record.dpop_key
    assert again.pending_step_up(now=time.time() + STEP_UP_TTL_S + 1) == set()
    record.step_up_at = None  # a request recorded before requests had a time: lapsed
    assert record.pending_step_up() == set()


def test_htu_is_normalised_and_never_carries_credentials() -> None:
    assert target_uri("https://u:p@Host.Example:443/mcp?x=1#f") == "https://host.example/mcp"
    assert target_uri("http://127.0.0.1:80/mcp") == "http://127.0.0.1/mcp"
    assert target_uri("http://127.0.0.1:8080/mcp") == "http://127.0.0.1:8080/mcp"
    assert target_uri("https://[::1]:8443/x") == "https://[::1]:8443/x"


def test_a_deeply_nested_answer_is_no_nonce_request_and_raises_nothing() -> None:
    assert not asks_for_nonce(400, httpx2.Headers({"DPoP-Nonce": "n"}), b"[" * 100_000)


def storage_for(record: CredentialRecord, store: Any = None) -> Any:
    from mcp_sidecar.auth.provider import RecordStorage
    from mcp_sidecar.auth.store import MemoryBackedStore

    return RecordStorage(
        store or MemoryBackedStore(),
        "acct",
        record,
        pre_registered=None,
        redirect_uri="http://127.0.0.1:1/c",
        with_tokens=True,
    )


async def test_a_step_up_challenge_is_remembered_as_plain_scope_tokens_only() -> None:
    from mcp_sidecar.auth.provider import SidecarOAuth

    remembered: list[str] = []

    async def remember(scope: str) -> None:
        remembered.append(scope)

    record = CredentialRecord(server="s", url=URL, configured_client_id=None)
    provider = SidecarOAuth(URL, storage_for(record), 1, login=False, on_step_up=remember)
    hostile = 'Bearer error="insufficient_scope", scope="files:read \x1b[2J\x9b31mADMIN ' + "x" * 400 + ' admin"'
    request = httpx2.Request("POST", URL)
    answer = httpx2.Response(403, headers={b"WWW-Authenticate": hostile.encode("latin-1")}, request=request)
    flow = provider.async_auth_flow(request)
    assert await flow.__anext__() is request
    with pytest.raises(StopAsyncIteration):
        await flow.asend(answer)
    assert remembered == ["files:read admin"]


async def test_tokens_another_process_bound_to_another_dpop_key_are_not_adopted() -> None:
    from mcp_sidecar.auth.store import MemoryBackedStore

    store = MemoryBackedStore()
    mine = CredentialRecord(server="s", url=URL, configured_client_id=None, tokens={"access_token": "t1"})
    mine.dpop_key, mine.dpop_bound = DpopKey.generate().private_jwk(), True
    newer = CredentialRecord.from_json(mine.to_json())
    assert newer is not None
    newer.tokens = {"access_token": "t2"}
    newer.dpop_key = DpopKey.generate().private_jwk()
    await store.save("acct", newer)
    assert await storage_for(mine, store).newer_tokens() is None
    newer.dpop_key = mine.dpop_key  # the same key: another process's refresh, adopted
    await store.save("acct", newer)
    adopted = await storage_for(mine, store).newer_tokens()
    assert adopted is not None
    assert adopted.access_token == "t2"


async def test_a_connections_redaction_is_told_every_token_it_sends_refreshed_ones_first() -> None:
    """`on_secrets` (a connection's redaction) hears of new tokens before they are saved and sent."""
    from mcp.shared.auth import OAuthToken

    from mcp_sidecar.auth.store import MemoryBackedStore

    told: list[list[str]] = []
    saved: list[str] = []

    class Watched(MemoryBackedStore):
        async def save(self, account: str, record: CredentialRecord) -> None:
            saved.append(str((record.tokens or {}).get("access_token")))
            assert [t[0] for t in told[-1:]] == saved[-1:], "told before the save (and so before the request)"
            await super().save(account, record)

    store = Watched()
    tokens = {"access_token": "access-1", "refresh_token": "refresh-1"}
    record = CredentialRecord(server="s", url=URL, configured_client_id=None, tokens=tokens)
    record.dpop_key, record.dpop_bound = DpopKey.generate().private_jwk(), True
    storage = storage_for(record, store)
    storage.on_secrets = told.append
    storage.reveal()
    assert told[-1] == ["access-1", "refresh-1", record.dpop_key["d"]]
    await storage.set_tokens(OAuthToken(access_token="access-2", refresh_token="refresh-2", token_type="Bearer"))
    assert saved == ["access-2"]
    assert told[-1][:2] == ["access-2", "refresh-2"]
    newer = CredentialRecord.from_json(storage.record.to_json())
    assert newer is not None
    newer.tokens = {"access_token": "access-3"}
    await MemoryBackedStore.save(store, "acct", newer)
    assert await storage.newer_tokens() is not None
    assert told[-1][0] == "access-3"
