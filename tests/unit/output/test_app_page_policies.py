"""The loopback app page's policies and host page (`output/app_page.py`)."""

from __future__ import annotations

import json
import re

from mcp_sidecar.output import app_page


def directives(policy: str) -> dict[str, list[str]]:
    return {name: values for name, *values in (part.split() for part in policy.split("; "))}


def test_an_app_that_declares_nothing_gets_the_extensions_restrictive_default() -> None:
    got = directives(app_page.app_csp(None))
    assert got["default-src"] == ["'none'"]
    assert got["script-src"] == ["'self'", "'unsafe-inline'"]
    assert got["style-src"] == ["'self'", "'unsafe-inline'"]
    assert got["img-src"] == ["'self'", "data:"]
    assert got["media-src"] == ["'self'", "data:"]
    assert got["object-src"] == ["'none'"]
    assert got["connect-src"] == ["'none'"]
    assert got["frame-src"] == ["'none'"]
    assert got["frame-ancestors"] == ["'self'"]


def test_declared_origins_widen_only_their_directives() -> None:
    ui = {
        "csp": {
            "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
            "resourceDomains": ["https://*.cdn.example.com"],
            "frameDomains": ["https://www.youtube.com"],
            "baseUriDomains": ["https://base.example.com"],
        }
    }
    got = directives(app_page.app_csp(ui))
    assert got["connect-src"] == ["https://api.example.com", "wss://live.example.com:8443"]
    for name in ("script-src", "style-src", "img-src", "font-src", "media-src"):
        assert got[name][-1] == "https://*.cdn.example.com"
    assert got["frame-src"] == ["https://www.youtube.com"]
    assert got["base-uri"] == ["'self'", "https://base.example.com"]
    assert got["default-src"] == ["'none'"]


def test_anything_but_a_plain_origin_is_dropped() -> None:
    hostile = [
        "https://a.example.com; script-src *",
        "'unsafe-eval'",
        "*",
        "https://a.example.com/path",
        "data:",
        "javascript:alert(1)",
        "https://a.example.com\nscript-src *",
        42,
    ]
    policy = app_page.app_csp({"csp": {"connectDomains": hostile, "resourceDomains": hostile}})
    assert directives(policy)["connect-src"] == ["'none'"]
    assert "*" not in policy.replace("'none'", "")
    assert "unsafe-eval" not in policy
    assert policy.count(";") == len(directives(policy)) - 1


def test_the_host_page_allows_only_its_own_script_and_keeps_the_data_inert() -> None:
    nonce = "n0nce"
    data = {"toolResult": {"content": [{"type": "text", "text": "</script><script>alert(1)</script>&"}]}}
    page = app_page.host_page(nonce, "weather: <ui://x>", data)
    assert "</script><script>alert(1)" not in page
    assert "weather: &lt;ui://x&gt;" in page
    found = re.search(r'<script type="application/json" id="mcp-app-data">(.*?)</script>', page, re.DOTALL)
    assert found is not None
    assert json.loads(found.group(1)) == data
    policy = directives(app_page.host_csp(nonce))
    assert policy["script-src"] == ["'nonce-n0nce'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["connect-src"] == ["'self'"]
    assert page.count(f'nonce="{nonce}"') == 2  # its style and its script, nothing else runs
