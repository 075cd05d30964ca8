"""The 64 MiB bound on an HTTP server's message, counted as the bytes arrive (http_limits)."""

from __future__ import annotations

import json
import zlib
from collections.abc import AsyncIterator

import httpx2
import pytest

from mcp_sidecar import json_depth
from mcp_sidecar.connections.http_limits import (
    MAX_MESSAGE_BYTES,
    SDK_EVENT_LIMIT,
    BodyTooLarge,
    EventTooLarge,
    ResponseBound,
)

LIMIT = 1000


class Chunks(httpx2.AsyncByteStream):
    """A response body that records how much of it was read."""

    def __init__(self, *chunks: bytes) -> None:
        self.chunks = chunks
        self.read = 0
        self.closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            self.read += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        self.closed = True


async def bounded(body: Chunks, **headers: str) -> tuple[httpx2.Response, list[int]]:
    exceeded: list[int] = []
    bound = ResponseBound(lambda: exceeded.append(1), limit=LIMIT)
    response = httpx2.Response(
        200,
        headers={k.replace("_", "-"): v for k, v in headers.items()},
        stream=body,
        request=httpx2.Request("POST", "http://127.0.0.1/mcp"),
    )
    await bound.on_response(response)
    return response, exceeded


def test_the_limit_is_the_stdio_line_limit() -> None:
    assert MAX_MESSAGE_BYTES == 64 * 1024 * 1024
    assert SDK_EVENT_LIMIT > MAX_MESSAGE_BYTES  # ours counts every byte, so it is reached first


async def test_a_json_body_within_the_limit_passes_whole() -> None:
    body = Chunks(b"a" * 600, b"b" * 400)
    response, exceeded = await bounded(body, content_type="application/json")
    assert await response.aread() == b"a" * 600 + b"b" * 400
    assert exceeded == []


async def test_a_json_body_over_the_limit_stops_being_read() -> None:
    body = Chunks(*[b"x" * 300] * 100)
    response, exceeded = await bounded(body, content_type="application/json")
    with pytest.raises(BodyTooLarge):
        await response.aread()
    assert exceeded == [1]
    assert body.read == 1200  # the chunk that passed the limit, and not one more
    assert isinstance(BodyTooLarge("x"), httpx2.StreamError)  # the SDK fails only that request


async def test_a_declared_length_over_the_limit_fails_before_reading() -> None:
    body = Chunks(b"x" * 10)
    response, exceeded = await bounded(body, content_type="application/json", content_length=str(LIMIT + 1))
    with pytest.raises(BodyTooLarge):
        await response.aread()
    assert (body.read, exceeded) == (0, [1])


async def test_an_event_stream_is_bounded_per_event_not_in_total() -> None:
    event = b"event: message\ndata: " + b"e" * 700 + b"\n\n"
    last = b"data: " + b"f" * 990 + b"\r\n\r\n"  # 1,000 bytes: just within the limit
    body = Chunks(*[event] * 20, last[:500], last[500:])
    response, exceeded = await bounded(body, content_type="text/event-stream")
    assert len(await response.aread()) == len(event) * 20 + len(last)
    assert exceeded == []


@pytest.mark.parametrize("chunks", [1, 2], ids=["one-chunk", "two-chunks"])
async def test_an_event_over_the_limit_ending_in_the_same_chunk_is_caught(chunks: int) -> None:
    event = b"data: " + b"f" * 995 + b"\r\n\r\n"  # 1,005 bytes
    parts = [event] if chunks == 1 else [event[:500], event[500:]]
    response, exceeded = await bounded(Chunks(b"data: a\n\n", *parts), content_type="text/event-stream")
    with pytest.raises(EventTooLarge):
        await response.aread()
    assert exceeded == [1]


async def test_one_event_over_the_limit_fails_the_stream() -> None:
    body = Chunks(b"data: ok\n\n", b"data: " + b"g" * 600, b"g" * 600, b"\n\n")
    response, exceeded = await bounded(body, content_type="text/event-stream; charset=utf-8")
    with pytest.raises(EventTooLarge):
        await response.aread()
    assert exceeded == [1]
    assert isinstance(EventTooLarge("x"), httpx2.SSEError)  # the SDK ends that stream's request


@pytest.mark.parametrize("split", [1, 2, 3])
async def test_an_event_end_split_between_chunks_is_seen(split: int) -> None:
    first = b"data: " + b"h" * 900 + b"\r\n\r\n"
    body = Chunks(first[: len(first) - split], first[len(first) - split :], b"data: " + b"i" * 900 + b"\n\n")
    response, exceeded = await bounded(body, content_type="text/event-stream")
    await response.aread()
    assert exceeded == []


async def test_a_compressed_body_is_counted_decoded() -> None:
    """300 KiB of zeros compress to a few hundred bytes: the decoded size is what counts."""
    compressor = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)
    packed = compressor.compress(b"0" * 300_000) + compressor.flush()
    assert len(packed) < LIMIT
    body = Chunks(packed)
    response, exceeded = await bounded(body, content_type="application/json", content_encoding="gzip")
    assert "content-encoding" not in response.headers  # decoded here, never by httpx
    with pytest.raises(BodyTooLarge):
        await response.aread()
    assert exceeded == [1]


@pytest.mark.parametrize("wbits", [zlib.MAX_WBITS, -zlib.MAX_WBITS], ids=["zlib", "raw"])
async def test_deflate_within_the_limit_is_decoded(wbits: int) -> None:
    compressor = zlib.compressobj(wbits=wbits)
    packed = compressor.compress(b'{"ok": true}') + compressor.flush()
    response, _ = await bounded(
        Chunks(packed[:3], packed[3:]), content_type="application/json", content_encoding="deflate"
    )
    assert await response.aread() == b'{"ok": true}'


async def test_an_unknown_encoding_is_passed_on_undecoded() -> None:
    response, _ = await bounded(Chunks(b"\x28\xb5\x2f\xfd"), content_type="application/json", content_encoding="zstd")
    assert "content-encoding" not in response.headers
    assert await response.aread() == b"\x28\xb5\x2f\xfd"  # fails to parse as MCP, never inflates


async def test_requests_ask_for_no_encoding() -> None:
    bound = ResponseBound(lambda: None)
    request = httpx2.Request("POST", "http://127.0.0.1/mcp", headers={"Accept-Encoding": "gzip, deflate"})
    await bound.on_request(request)
    assert request.headers["accept-encoding"] == "identity"


def _deep_json(levels: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":1,"result":{"a":' + b'{"b":' * levels + b"1" + b"}" * levels + b',"c":2}}'


async def _pieces(body: Chunks, kind: str) -> list[bytes]:
    """What the SDK would read, piece by piece, from a response under the real limit."""
    response = httpx2.Response(
        200, headers={"content-type": kind}, stream=body, request=httpx2.Request("POST", "http://127.0.0.1/mcp")
    )
    await ResponseBound(lambda: None).on_response(response)
    return [piece async for piece in response.aiter_raw()]


async def test_events_pass_whole_and_unchanged_each_at_its_blank_line() -> None:
    """Split anywhere, CRLF halves included, each event comes out as it was sent."""
    stream = b': ping\r\n\r\nevent: message\r\ndata: {"a": [1]}\r\n\r\ndata: {}\n\n'
    for split in range(1, len(stream)):
        out = await _pieces(Chunks(stream[:split], stream[split:]), "text/event-stream")
        assert b"".join(out) == stream, split
        assert out[:3] == [b": ping\r\n\r\n", b'event: message\r\ndata: {"a": [1]}\r\n\r\n', b"data: {}\n\n"]


async def test_an_event_nested_too_deep_loses_its_deepest_values_and_keeps_its_fields() -> None:
    deep = _deep_json(300)
    cut = deep.index(b",") + 1  # the data in two lines, split between tokens
    event = b"event: message\r\nid: 7\r\ndata: " + deep[:cut] + b"\r\ndata: " + deep[cut:] + b"\r\n\r\n"
    [out] = await _pieces(Chunks(event), "text/event-stream")
    assert out.startswith(b"event: message\nid: 7\ndata: ")
    data = b"\n".join(line[6:] for line in out.split(b"\n") if line.startswith(b"data: "))
    parsed = json.loads(data)
    assert parsed["result"]["c"] == 2
    assert json_depth.MARKER.strip(b'"').decode() in data.decode()


async def test_a_json_body_nested_too_deep_loses_its_deepest_values_only() -> None:
    shallow = _deep_json(100)
    assert b"".join(await _pieces(Chunks(shallow[:50], shallow[50:]), "application/json")) == shallow
    deep = _deep_json(1000)
    out = b"".join(await _pieces(Chunks(deep[:500], deep[500:]), "application/json"))
    assert json.loads(out)["result"]["c"] == 2
    assert json_depth.max_depth(out) == json_depth.MESSAGE_DEPTH
