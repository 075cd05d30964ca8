"""How much one message from a Streamable HTTP server may hold, counted as the bytes arrive.

A stdio server's message is one line of at most 64 MiB (`stdio.MAX_LINE_BYTES`); over HTTP a
message is a JSON response body or one server-sent event, and gets the same bound. Without
it the SDK reads a JSON body whole, however large (a 300 MB tool result held 1.6 GB and was
spilled whole), and its own bound on events (1 MiB) refused legitimate results over 1 MiB.

`ResponseBound` is a pair of httpx event hooks. The response hook wraps the body stream of
every response (whichever transport or proxy mount served it) in a counter that raises once
a JSON body, or one event of an event stream, passes the limit: a body that declares a larger
`Content-Length` fails before a byte is read, and the rest of an oversized body is never
read (the connection is closed). The exception types are those the SDK already handles per
request: a `StreamError` for a JSON body (that request fails, the session goes on) and an
`SSEError` for an event stream. `on_exceeded` tells the connection, so the failure is
classified as `protocol_error` rather than a parse error or a closed connection.

The limit is counted on the bytes as decoded: requests ask for no content encoding, and a
server that compresses anyway (gzip or deflate) is decoded here, in bounded pieces, with
its `Content-Encoding` removed, so a small compressed body cannot inflate past the limit. A
body in any other encoding is passed on undecoded (and fails to parse as MCP).
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Callable

import httpx2

from mcp_sidecar.connections.stdio import MAX_LINE_BYTES

MAX_MESSAGE_BYTES = MAX_LINE_BYTES
"""The largest JSON body or server-sent event taken from an HTTP server (64 MiB, as on stdio)."""
SDK_EVENT_LIMIT = MAX_MESSAGE_BYTES + 1024 * 1024
"""For the SDK's own event bound: above ours, which counts every byte and so is reached first."""
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r")
"""A blank line ends an event: two line ends in a row (LF, CR or CRLF, in any mix)."""
_DECODE_PIECE = 1024 * 1024


class BodyTooLarge(httpx2.StreamError):
    """A JSON response body passed MAX_MESSAGE_BYTES (the SDK fails that request as unparsable)."""


class EventTooLarge(httpx2.SSEError):
    """One server-sent event passed MAX_MESSAGE_BYTES (the SDK fails the stream's request)."""


class _Decoder:
    """gzip or deflate, decoded in pieces of at most _DECODE_PIECE bytes."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding in ("gzip", "x-gzip")
        self._inner = zlib.decompressobj(zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS)
        self._first = True

    def decode(self, data: bytes) -> list[bytes]:
        try:
            pieces = self._pieces(data)
        except zlib.error:
            if self._gzip or not self._first:
                raise httpx2.DecodingError("the compressed body is invalid") from None
            # Some servers send raw deflate without the zlib header, as httpx also accepts.
            self._inner = zlib.decompressobj(-zlib.MAX_WBITS)
            pieces = self._pieces(data)
        self._first = False
        return pieces

    def _pieces(self, data: bytes) -> list[bytes]:
        out = [self._inner.decompress(data, _DECODE_PIECE)]
        while self._inner.unconsumed_tail:
            out.append(self._inner.decompress(self._inner.unconsumed_tail, _DECODE_PIECE))
        return [piece for piece in out if piece]


class _BoundedStream(httpx2.AsyncByteStream):
    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        *,
        limit: int,
        events: bool,
        declared: int | None,
        decoder: _Decoder | None,
        on_exceeded: Callable[[], None],
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._events = events
        self._declared = declared
        self._decoder = decoder
        self._on_exceeded = on_exceeded
        self._count = 0
        """Bytes of the body so far, or of the current event on an event stream."""
        self._last = b""

    def _exceeded(self) -> Exception:
        self._on_exceeded()
        what = "server-sent event" if self._events else "response body"
        message = f"a {what} of more than {self._limit} bytes"
        return EventTooLarge(message) if self._events else BodyTooLarge(message)

    def _count_piece(self, piece: bytes) -> None:
        if not self._events:
            self._count += len(piece)
        else:
            # The last byte of the previous piece joins this one, so a blank line split between
            # them is seen. An event ending here must fit with what came before; what follows
            # the last blank line starts the next count. (Pieces are far smaller than the
            # limit, so an event between two blank lines of one piece fits.)
            joined = self._last + piece
            starts = [i for mark in _EVENT_ENDS if (i := joined.find(mark)) >= 0]
            if starts:
                if self._count + min(starts) + 2 - len(self._last) > self._limit:
                    raise self._exceeded()
                self._count = len(joined) - max(joined.rfind(mark) for mark in _EVENT_ENDS) - 2
            else:
                self._count += len(piece)
            self._last = piece[-1:]
        if self._count > self._limit:
            raise self._exceeded()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if not self._events and self._declared is not None and self._declared > self._limit:
            raise self._exceeded()  # said so up front: nothing is read
        async for chunk in self._inner:
            pieces = self._decoder.decode(chunk) if self._decoder is not None else [chunk]
            for piece in pieces:
                self._count_piece(piece)
                yield piece

    async def aclose(self) -> None:
        await self._inner.aclose()


class ResponseBound:
    """The httpx event hooks that bound every response of one connection's client."""

    def __init__(self, on_exceeded: Callable[[], None], limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self._on_exceeded = on_exceeded

    async def on_request(self, request: httpx2.Request) -> None:
        request.headers["Accept-Encoding"] = "identity"

    async def on_response(self, response: httpx2.Response) -> None:
        if not isinstance(response.stream, httpx2.AsyncByteStream):
            return  # an async client's responses always stream asynchronously
        kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        encodings = [e.strip().lower() for e in response.headers.get_list("content-encoding", split_commas=True)]
        encodings = [e for e in encodings if e and e != "identity"]
        decoder = _Decoder(encodings[0]) if len(encodings) == 1 and encodings[0] in _DECODABLE else None
        if encodings:
            del response.headers["content-encoding"]  # decoded here (or not at all), never by httpx
        declared = response.headers.get("content-length", "")
        response.stream = _BoundedStream(
            response.stream,
            limit=self.limit,
            events=kind == "text/event-stream",
            declared=int(declared) if declared.isdigit() and not encodings else None,
            decoder=decoder,
            on_exceeded=self._on_exceeded,
        )


_DECODABLE = ("gzip", "x-gzip", "deflate")
