"""Which OAuth URLs the sidecar fetches or opens: schemes, address classes, numeric host forms."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_sidecar.auth.urls import (
    OAuthUrlRefused,
    allowed,
    classify_host,
    normalise_host,
    refusal,
    require_allowed,
    require_same_origin,
)

PUBLIC_SERVER = "https://mcp.example.com/mcp"
LOOPBACK_SERVER = "http://127.0.0.1:3000/mcp"


@pytest.mark.parametrize(
    ("url", "server"),
    [
        ("https://auth.example.com/authorize?x=1", PUBLIC_SERVER),
        ("https://auth.example.com/authorize?x=1", LOOPBACK_SERVER),
        ("https://8.8.8.8/token", PUBLIC_SERVER),
        ("https://[2606:4700::1111]/token", PUBLIC_SERVER),
        ("http://127.0.0.1:8080/token", LOOPBACK_SERVER),
        ("http://127.5.6.7/token", LOOPBACK_SERVER),
        ("http://[::1]:9000/authorize", LOOPBACK_SERVER),
        ("http://localhost:3000/callback", LOOPBACK_SERVER),
        ("http://0x7f000001:3000/token", "http://localhost:3000/mcp"),
        ("http://[::1]:9000/authorize", "http://[::ffff:127.0.0.1]:3000/mcp"),
    ],
)
def test_https_and_loopback_http_for_a_loopback_server_are_allowed(url: str, server: str) -> None:
    assert refusal(url, server) is None
    assert allowed(url, server)


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "vbscript:msgbox",
        "http://auth.example.com/authorize",
        "https://user:secret@auth.example.com/authorize",
        "https://evil.example\\@127.0.0.1/",
        "https://auth.example.com /authorize",
        "https:///no-host",
        "https://[::1/",
        "https://auth.example.com:99999/",
        "https://1.2.3.4.5/",
        "https://08.0.0.1/",
        "https://256.0.0.1/",
        "https://1.2.3.0x100/",
        "ftp://auth.example.com/",
        "",
    ],
)
def test_other_schemes_credentials_and_unparseable_hosts_are_insecure(url: str) -> None:
    assert refusal(url, LOOPBACK_SERVER) == "insecure"
    with pytest.raises(OAuthUrlRefused) as refused:
        require_allowed(url, "the authorization URL", LOOPBACK_SERVER)
    assert (refused.value.what, refused.value.reason) == ("the authorization URL", "insecure")


@pytest.mark.parametrize(
    "url",
    [
        "https://169.254.169.254/latest/meta-data/",
        "https://10.0.0.1/token",
        "https://172.16.0.1/token",
        "https://172.31.255.254/token",
        "https://192.168.1.1/token",
        "https://100.100.100.200/",  # shared address space (a cloud's metadata service)
        "https://0.0.0.0/",
        "https://224.0.0.1/",
        "https://[fd00::1]/",
        "https://[fd00:ec2::254]/",
        "https://[fe80::1%25eth0]/",
        "https://[::ffff:10.0.0.1]/",
        "https://[::ffff:a9fe:a9fe]/",
        "https://[64:ff9b::a9fe:a9fe]/",
        "https://[2002:a9fe:a9fe::1]/",
        "https://metadata.google.internal/computeMetadata/v1/",
        "https://METADATA.google.internal./",
        "https://metadata/",
        "https://instance-data/",
        "https://0xa9fea9fe/",
        "https://2852039166/",
        "https://0251.0376.0251.0376/",
        "https://169.254.43518/",
        "https://10.1/",
        "https://%31%30.0.0.1/",
        "https://１０.０.０.１/",
        "https://10。0。0。1/",
    ],
)
def test_private_link_local_unique_local_and_metadata_addresses_are_blocked(url: str) -> None:
    assert refusal(url, PUBLIC_SERVER) == "blocked_address"
    assert refusal(url, LOOPBACK_SERVER) == "blocked_address"


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/token",
        "https://localhost/token",
        "https://auth.localhost/token",
        "https://[::1]/token",
        "https://0x7f000001/token",
        "https://2130706433/token",
        "https://0177.0.0.1/token",
        "https://127.1/token",
        "https://[::ffff:127.0.0.1]/token",
    ],
)
def test_loopback_is_blocked_unless_the_server_is_loopback(url: str) -> None:
    assert refusal(url, PUBLIC_SERVER) == "blocked_address"
    assert refusal(url, "https://10.0.0.5/mcp") == "blocked_address"
    assert refusal(url, LOOPBACK_SERVER) is None
    assert refusal(url, "http://localhost:9/mcp") is None


def test_a_non_public_server_host_stays_usable_for_that_host_only() -> None:
    server = "https://10.0.0.5/mcp"
    assert refusal("https://10.0.0.5/authorize", server) is None
    assert refusal("https://0xa000005:8443/token", server) is None  # the same address, spelled otherwise
    assert refusal("https://10.0.0.6/token", server) == "blocked_address"
    assert refusal("https://169.254.169.254/", server) == "blocked_address"
    assert refusal("http://10.0.0.5/token", server) == "insecure"


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0177.0.0.01", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("0x", "0.0.0.0"),
        ("10.0.0.1", "10.0.0.1"),
        ("::ffff:10.0.0.1", "::ffff:a00:1"),
        ("fe80::1%25eth0", "fe80::1"),
    ],
)
def test_numeric_hosts_are_read_as_browsers_read_them(host: str, address: str) -> None:
    assert normalise_host(host) == ipaddress.ip_address(address)


@pytest.mark.parametrize("host", ["1.2.3.4.5", "08.1.1.1", "0x1g.0.0.1", "256.0.0.1", "1.16777216", "a..b", ".", ""])
def test_hosts_no_parser_agrees_on_are_invalid(host: str) -> None:
    assert classify_host(host) == "invalid"


def test_names_are_judged_by_themselves() -> None:
    assert normalise_host("Auth.Example.COM.") == "auth.example.com"
    assert classify_host("auth.example.com") == "public"
    assert classify_host("0x1g") == "public"  # not a number: a (strange) name
    assert classify_host("metadata.google.internal") == "blocked"
    assert classify_host("localhost.") == "loopback"


def test_resource_metadata_must_be_on_the_server_origin() -> None:
    server = "http://127.0.0.1:3000/mcp"
    require_same_origin("http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp", "x", server)
    for other in (
        "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        "http://127.0.0.1:3001/.well-known/oauth-protected-resource/mcp",
        "https://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp",
        "http://169.254.169.254/latest/meta-data/",
        "/.well-known/oauth-protected-resource",
        "http://[::1/",
    ):
        with pytest.raises(OAuthUrlRefused) as refused:
            require_same_origin(other, "the resource metadata URL", server)
        assert refused.value.reason == "foreign_origin"
    require_same_origin("https://MCP.example.com:443/prm", "x", "https://mcp.example.com/mcp")


# -- properties ----------------------------------------------------------------------------------

BLOCKED_NETWORKS = [
    ipaddress.ip_network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "100.64.0.0/10", "0.0.0.0/8")
]


def spellings(value: int) -> list[str]:
    """Every way WHATWG URL parsing (and inet_aton) accepts to write the IPv4 address `value`."""
    a, b, c, d = value.to_bytes(4, "big")
    return [
        f"{a}.{b}.{c}.{d}",
        str(value),
        hex(value),
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"{hex(a)}.{b}.0{c:o}.{d}",
        f"{a}.{b}.{c * 256 + d}",
        f"{a}.{hex(b * 65536 + c * 256 + d)}",
        f"{a}.{b}.{c}.{d}.",
    ]


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_spelling_of_an_ipv4_address_normalises_to_it(value: int) -> None:
    expected = ipaddress.IPv4Address(value)
    for host in spellings(value):
        assert normalise_host(host) == expected, host


@given(
    st.sampled_from(BLOCKED_NETWORKS).flatmap(lambda net: st.integers(0, net.num_addresses - 1).map(net.__getitem__))
)
def test_every_spelling_of_a_blocked_address_is_refused(address: ipaddress.IPv4Address) -> None:
    for host in [*spellings(int(address)), f"[::ffff:{address}]"]:
        assert refusal(f"https://{host}/token", PUBLIC_SERVER) == "blocked_address", host
        assert refusal(f"https://{host}/token", LOOPBACK_SERVER) == "blocked_address", host


@given(st.ip_addresses(network="fc00::/7") | st.ip_addresses(network="fe80::/10"))
def test_unique_local_and_link_local_ipv6_is_refused(address: ipaddress.IPv6Address) -> None:
    assert refusal(f"https://[{address}]/token", PUBLIC_SERVER) == "blocked_address"


@given(st.text(), st.sampled_from([PUBLIC_SERVER, LOOPBACK_SERVER, "not a url"]))
def test_any_text_gets_an_answer_and_never_an_exception(url: str, server: str) -> None:
    assert refusal(url, server) in (None, "insecure", "blocked_address")
    assert refusal(f"https://{url}/", server) in (None, "insecure", "blocked_address")
