"""The OAuth pieces that need no server: records, scopes, callback parsing, the loopback listener."""

from __future__ import annotations

import asyncio
import socket

import pytest

from mcp_sidecar.auth.callback import CallbackListener, CallbackPortInUse
from mcp_sidecar.auth.login import AuthorizationDenied, CallbackInvalid, parse_callback
from mcp_sidecar.auth.provider import cap_scope, union
from mcp_sidecar.auth.store import CredentialRecord, CredentialStoreUnavailable, MemoryBackedStore, account_of

REDIRECT = "http://127.0.0.1:19847/callback"


def test_record_round_trips_and_rejects_foreign_text() -> None:
    record = CredentialRecord(
        server="docs",
        url="https://mcp.example.com/mcp",
        configured_client_id=None,
        issuer="https://auth.example.com",
        tokens={"access_token": "a", "refresh_token": "r", "token_type": "Bearer"},
        expires_at=123.5,
        step_up_scope="admin",
    )
    again = CredentialRecord.from_json(record.to_json())
    assert again == record
    assert again is not None
    assert again.has_tokens
    assert CredentialRecord.from_json("not json") is None
    assert CredentialRecord.from_json('{"version": 99, "server": "x", "url": "y"}') is None


def test_accounts_separate_servers_urls_and_clients() -> None:
    accounts = {
        account_of("docs", "https://a.example/mcp", None),
        account_of("docs", "https://b.example/mcp", None),
        account_of("docs", "https://a.example/mcp", "client-1"),
        account_of("other", "https://a.example/mcp", None),
    }
    assert len(accounts) == 4


async def test_memory_store_saves_loads_and_deletes() -> None:
    store = MemoryBackedStore()
    account = account_of("docs", "https://a.example/mcp", None)
    assert await store.load(account) is None
    await store.save(account, CredentialRecord(server="docs", url="https://a.example/mcp", configured_client_id=None))
    loaded = await store.load(account)
    assert loaded is not None
    assert loaded.server == "docs"
    assert await store.delete(account) is True
    assert await store.delete(account) is False


async def test_a_store_whose_backend_raises_is_unavailable() -> None:
    class Broken(MemoryBackedStore):
        def _get(self, account: str) -> str | None:
            raise RuntimeError("locked collection")

    with pytest.raises(CredentialStoreUnavailable):
        await Broken().load("any")


def test_scopes_are_unique_capped_and_never_a_bare_wildcard() -> None:
    assert cap_scope("mcp admin mcp * read") == "mcp admin read"
    assert cap_scope(" ".join(f"s{i}" for i in range(150))) == " ".join(f"s{i}" for i in range(100))
    assert cap_scope("*") is None
    assert union("mcp", None, "admin mcp") == "mcp admin"
    assert union(None, None) is None


def test_callback_parsing_takes_code_state_and_iss_from_this_redirect_only() -> None:
    result = parse_callback(f"{REDIRECT}?code=abc&state=xyz&iss=https%3A%2F%2Fauth.example", REDIRECT)
    assert (result.code, result.state, result.iss) == ("abc", "xyz", "https://auth.example")
    for wrong in (
        "http://127.0.0.1:9999/callback?code=a&state=b",
        "http://evil.example/callback?code=a&state=b",
        f"{REDIRECT}/other?code=a&state=b",
        f"{REDIRECT}?state=b",
        f"{REDIRECT}?code=a",
        "not a url at all",
    ):
        with pytest.raises(CallbackInvalid):
            parse_callback(wrong, REDIRECT)
    with pytest.raises(AuthorizationDenied):
        parse_callback(f"{REDIRECT}?error=access_denied&state=b", REDIRECT)


async def _get(port: int, target: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return answer


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_the_listener_takes_one_callback_and_never_echoes_the_code() -> None:
    port = _free_port()
    listener = CallbackListener(port)
    await listener.start()
    listener.expect_state("s")
    try:
        assert (await _get(port, "/favicon.ico")).startswith(b"HTTP/1.1 404")
        page = await _get(port, "/callback?code=secret-code-123&state=s")
        assert page.startswith(b"HTTP/1.1 200")
        assert b"secret-code-123" not in page
        assert (
            await asyncio.wait_for(listener.received, 5)
            == f"http://127.0.0.1:{port}/callback?code=secret-code-123&state=s"
        )
        assert (await _get(port, "/callback?code=again&state=s")).startswith(b"HTTP/1.1 410")
    finally:
        await listener.close()
    # The port is free again at once (a second login right after the first).
    second = CallbackListener(port)
    await second.start()
    await second.close()


async def test_the_listener_answers_400_to_other_states_and_keeps_waiting() -> None:
    port = _free_port()
    listener = CallbackListener(port)
    await listener.start()
    try:
        before = await _get(port, "/callback?code=early&state=guess")
        assert before.startswith(b"HTTP/1.1 400")  # no login has a state yet
        listener.expect_state("the-state")
        for target in (
            "/callback?code=x&state=guess",
            "/callback?code=x",
            "/callback?code=x&state=the-state&state=guess",
            "/callback?code=x&state=the-stat",
            "/callback?code=x&state=%E2%98%83",
            "/callback?error=access_denied&state=guess",
        ):
            answer = await _get(port, target)
            assert answer.startswith(b"HTTP/1.1 400"), target
            assert answer.endswith(b"This address does not belong to the pending login.")
            assert b"code" not in answer.split(b"\r\n\r\n", 1)[1]
        assert not listener.received.done()
        assert (await _get(port, "/callback?code=real&state=the-state")).startswith(b"HTTP/1.1 200")
        received = await asyncio.wait_for(listener.received, 5)
        assert received == f"http://127.0.0.1:{port}/callback?code=real&state=the-state"
    finally:
        await listener.close()


async def test_a_port_in_use_is_reported() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listener = CallbackListener(taken.getsockname()[1])
        with pytest.raises(CallbackPortInUse):
            await listener.start()
        await listener.close()
