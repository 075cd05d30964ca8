"""The OAuth fixture server's DPoP proof checks (RFC 9449), on proofs built here with `cryptography`."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from fixtures.servers.dpop_check import NonceNeeded, ProofInvalid, thumbprint, verify_proof

TOKEN_URL = "http://127.0.0.1:8123/token"
MCP_URL = "http://127.0.0.1:8123/mcp"

# RFC 9449 Figure 2's proof, and the thumbprint Figure 9 publishes for its key: a wire-format
# vector that no round trip through this file's own signer could fake.
RFC9449_PROOF = (
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMzR0VjNoUklD"
    "UkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFqSG10NnY5VERWclUwQ2R2"
    "R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwiaHRtIjoiUE9TVCIsImh0dSI6Imh0dHBz"
    "Oi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjYyNjE2fQ.2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiML"
    "vqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37xRZT3Lg"
)
RFC9449_JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def public_jwk(key: ec.EllipticCurvePrivateKey) -> dict[str, Any]:
    numbers = key.public_key().public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "x": b64url(numbers.x.to_bytes(32, "big")),
        "y": b64url(numbers.y.to_bytes(32, "big")),
    }


def sign(key: ec.EllipticCurvePrivateKey, header: dict[str, Any], claims: dict[str, Any]) -> str:
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return f"{signing_input}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


Build = Callable[..., str]


@pytest.fixture
def key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture
def proof(key: ec.EllipticCurvePrivateKey) -> Build:
    """A good token-endpoint proof, issued `age` seconds ago; keyword arguments replace (or, as None, remove)
    claims or header members."""
    counter = iter(range(1_000_000))

    def build(*, header: dict[str, Any] | None = None, age: int = 0, **claims: Any) -> str:
        full_header = {"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(key), **(header or {})}
        iat = int(time.time()) - age
        full_claims = {"jti": f"jti-{next(counter)}", "htm": "POST", "htu": TOKEN_URL, "iat": iat}
        full_claims.update(claims)
        return sign(
            key,
            {k: v for k, v in full_header.items() if v is not None},
            {k: v for k, v in full_claims.items() if v is not None},
        )

    return build


def test_the_rfc_example_proof_verifies_and_its_key_has_the_published_thumbprint() -> None:
    jwk = verify_proof(RFC9449_PROOF, "POST", "https://server.example.com/token", seen_jtis=set(), now=1562262616)
    assert thumbprint(jwk) == RFC9449_JKT


def test_a_good_proof_returns_its_public_key(key: ec.EllipticCurvePrivateKey, proof: Build) -> None:
    jwk = verify_proof(proof(), "POST", TOKEN_URL, seen_jtis=set())
    assert jwk == public_jwk(key)
    canonical = json.dumps(
        {"crv": "P-256", "kty": "EC", "x": jwk["x"], "y": jwk["y"]}, separators=(",", ":"), sort_keys=True
    )
    assert thumbprint(jwk) == b64url(hashlib.sha256(canonical.encode()).digest())


def test_iat_may_be_up_to_a_minute_away_either_way(proof: Build) -> None:
    seen: set[str] = set()
    verify_proof(proof(age=50), "POST", TOKEN_URL, seen_jtis=seen)
    verify_proof(proof(age=-50), "POST", TOKEN_URL, seen_jtis=seen)


def test_htu_is_compared_without_query_fragment_or_default_port_spelling(proof: Build) -> None:
    seen: set[str] = set()
    verify_proof(proof(htu=f"{TOKEN_URL}?x=1#f"), "POST", TOKEN_URL, seen_jtis=seen)
    verify_proof(proof(htu="HTTPS://Example.COM:443/token"), "POST", "https://example.com/token", seen_jtis=seen)


def test_a_resource_proof_carries_the_access_token_hash(proof: Build) -> None:
    ath = b64url(hashlib.sha256(b"the-token").digest())
    good = proof(htm="GET", htu=MCP_URL, ath=ath)
    verify_proof(good, "GET", MCP_URL, access_token="the-token", seen_jtis=set())
    with pytest.raises(ProofInvalid, match="ath"):
        verify_proof(proof(htm="GET", htu=MCP_URL, ath=ath), "GET", MCP_URL, access_token="another", seen_jtis=set())
    with pytest.raises(ProofInvalid, match="ath"):
        verify_proof(proof(htm="GET", htu=MCP_URL), "GET", MCP_URL, access_token="the-token", seen_jtis=set())


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"htm": "GET"}, "htm"),
        ({"htu": "http://127.0.0.1:8123/mcp"}, "htu"),
        ({"htu": "http://127.0.0.1:8124/token"}, "htu"),
        ({"htu": "https://127.0.0.1:8123/token"}, "htu"),
        ({"htu": None}, "htu"),
        ({"age": 120}, "iat"),
        ({"age": -120}, "iat"),
        ({"iat": None}, "iat"),
        ({"iat": "now"}, "iat"),
        ({"jti": None}, "jti"),
        ({"jti": ""}, "jti"),
        ({"header": {"typ": "JWT"}}, "typ"),
        ({"header": {"typ": None}}, "typ"),
        ({"header": {"alg": "RS256"}}, "alg"),
        ({"header": {"alg": "none"}}, "alg"),
        ({"header": {"jwk": None}}, "jwk"),
        ({"header": {"jwk": {"kty": "RSA", "n": "AQAB", "e": "AQAB"}}}, "EC P-256"),
    ],
)
def test_a_wrong_claim_or_header_member_is_refused(proof: Build, changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(ProofInvalid, match=reason):
        verify_proof(proof(**changes), "POST", TOKEN_URL, seen_jtis=set())


def test_a_replayed_jti_is_refused(proof: Build) -> None:
    seen: set[str] = set()
    once = proof(jti="same")
    verify_proof(once, "POST", TOKEN_URL, seen_jtis=seen)
    assert seen == {"same"}
    with pytest.raises(ProofInvalid, match="replayed"):
        verify_proof(once, "POST", TOKEN_URL, seen_jtis=seen)
    with pytest.raises(ProofInvalid, match="replayed"):
        verify_proof(proof(jti="same"), "POST", TOKEN_URL, seen_jtis=seen)


def test_a_refused_proof_does_not_use_up_its_jti(proof: Build) -> None:
    seen: set[str] = set()
    with pytest.raises(ProofInvalid):
        verify_proof(proof(jti="j", htm="GET"), "POST", TOKEN_URL, seen_jtis=seen)
    with pytest.raises(NonceNeeded):
        verify_proof(proof(jti="j"), "POST", TOKEN_URL, nonce="n1", seen_jtis=seen)
    assert seen == set()


def test_a_bad_signature_is_refused(key: ec.EllipticCurvePrivateKey, proof: Build) -> None:
    header, claims, signature = proof(jti="signed").split(".")
    forged_claims = proof(jti="forged").split(".")[1]
    other = ec.generate_private_key(ec.SECP256R1())
    foreign = sign(other, {"typ": "dpop+jwt", "alg": "ES256", "jwk": public_jwk(key)}, {"jti": "x"}).split(".")[2]
    flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
    for bad in (
        f"{header}.{forged_claims}.{signature}",
        f"{header}.{claims}.{flipped}",
        f"{header}.{claims}.{foreign}",
        f"{header}.{claims}.{b64url(b'short')}",
    ):
        with pytest.raises(ProofInvalid, match="signature"):
            verify_proof(bad, "POST", TOKEN_URL, seen_jtis=set())


def test_a_private_key_in_the_header_is_refused(key: ec.EllipticCurvePrivateKey, proof: Build) -> None:
    d = b64url(key.private_numbers().private_value.to_bytes(32, "big"))
    with pytest.raises(ProofInvalid, match="private"):
        verify_proof(proof(header={"jwk": {**public_jwk(key), "d": d}}), "POST", TOKEN_URL, seen_jtis=set())


def test_a_key_other_than_the_signer_is_refused(proof: Build) -> None:
    other = public_jwk(ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(ProofInvalid, match="signature"):
        verify_proof(proof(header={"jwk": other}), "POST", TOKEN_URL, seen_jtis=set())


@pytest.mark.parametrize("text", ["", "a.b", "a.b.c.d", "!!.e30.e30", "e30.W10.AAAA", "bnVsbA.e30.AAAA"])
def test_what_is_not_a_compact_jws_object_is_refused(text: str) -> None:
    with pytest.raises(ProofInvalid):
        verify_proof(text, "POST", TOKEN_URL, seen_jtis=set())


def test_the_server_nonce_is_required_when_given(proof: Build) -> None:
    seen: set[str] = set()
    with pytest.raises(NonceNeeded):
        verify_proof(proof(), "POST", TOKEN_URL, nonce="n1", seen_jtis=seen)
    with pytest.raises(NonceNeeded):
        verify_proof(proof(nonce="stale"), "POST", TOKEN_URL, nonce="n1", seen_jtis=seen)
    verify_proof(proof(nonce="n1"), "POST", TOKEN_URL, nonce="n1", seen_jtis=seen)
    # A nonce is no excuse for anything else: an otherwise bad proof is still invalid.
    with pytest.raises(ProofInvalid, match="htm"):
        verify_proof(proof(htm="GET"), "POST", TOKEN_URL, nonce="n1", seen_jtis=seen)
