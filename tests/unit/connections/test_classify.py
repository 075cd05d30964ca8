"""connections/errors.classify: which leaf of a failure names it."""

from __future__ import annotations

import httpx2

from mcp_sidecar.connections.errors import FailureContext, classify
from mcp_sidecar.protocol.errors import fail


def _unauthorized() -> httpx2.HTTPStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1:9/mcp")
    return httpx2.HTTPStatusError("401", request=request, response=httpx2.Response(401, request=request))


def test_the_sidecars_own_diagnosis_beats_the_401_beside_it() -> None:
    """A refresh asked for by a 401 whose secret command failed: the person needs the secret's
    reason, not "log in again"."""
    secret = fail("secret_lookup_failed", "connect", "The secret command in `oauthClientSecret` failed.", "s")
    group = ExceptionGroup("connection ended", [_unauthorized(), secret])
    ctx = FailureContext("connect", "s", http_status=401, auth_state="tokens")
    assert classify(group, ctx).diagnostic.code == "secret_lookup_failed"


def test_a_401_alone_still_asks_for_a_login() -> None:
    group = ExceptionGroup("connection ended", [_unauthorized()])
    ctx = FailureContext("connect", "s", http_status=401, auth_state="tokens")
    assert classify(group, ctx).diagnostic.code == "authentication_required"
