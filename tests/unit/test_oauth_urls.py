from __future__ import annotations

import pytest

from mcp_sidecar.auth.urls import OAuthUrlRefused, allowed, require_allowed


@pytest.mark.parametrize(
    "url",
    [
        "https://auth.example.com/authorize?x=1",
        "http://127.0.0.1:8080/token",
        "http://127.5.6.7/token",
        "http://[::1]:9000/authorize",
        "http://localhost:3000/callback",
    ],
)
def test_https_and_loopback_http_are_allowed(url: str) -> None:
    assert allowed(url)


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "vbscript:msgbox",
        "http://auth.example.com/authorize",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/token",
        "https://user:secret@auth.example.com/authorize",
        "https:///no-host",
        "ftp://auth.example.com/",
        "",
    ],
)
def test_everything_else_is_refused(url: str) -> None:
    assert not allowed(url)
    with pytest.raises(OAuthUrlRefused) as refused:
        require_allowed(url, "the authorization URL")
    assert refused.value.what == "the authorization URL"
