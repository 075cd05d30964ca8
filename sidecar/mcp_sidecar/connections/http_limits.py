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

A message nested deeper than the SDK's parser reads (about 200 levels) is passed on with its
deepest values left out (`json_depth.MESSAGE_DEPTH`), as on stdio: a JSON body is held whole
until it ends, an event stream one event at a time (the SDK acts on neither before its end), and
only one with more brackets than that bound is looked at further. The entry that held the deep
value is then refused on its own (`catalog/names.py`), the rest of the answer kept.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import AsyncIterator, Callable

import httpx2

from mcp_sidecar.connections.stdio import MAX_LINE_BYTES, pruned_message
from mcp_sidecar.json_depth import MESSAGE_DEPTH

MAX_MESSAGE_BYTES = MAX_LINE_BYTES
"""The largest JSON body or server-sent event taken from an HTTP server (64 MiB, as on stdio)."""
SDK_EVENT_LIMIT = MAX_MESSAGE_BYTES + 1024 * 1024
"""For the SDK's own event bound: above ours, which counts every byte and so is reached first."""
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r")
"""A blank line ends an event: two line ends in a row (LF, CR or CRLF, in any mix)."""
_DECODE_PIECE = 1024 * 1024
_LINE_END = rb"(?:\r\n|\n|\r(?!\n))"
_EVENT_END = re.compile(_LINE_END + _LINE_END)
_LINE = re.compile(_LINE_END)


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
        held = _Messages(self._events)
        async for chunk in self._inner:
            pieces = self._decoder.decode(chunk) if self._decoder is not None else [chunk]
            for piece in pieces:
                self._count_piece(piece)
                for message in held.feed(piece):
                    yield message
        for message in held.end():
            yield message

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Messages:
    """The stream's messages, each passed on whole and read by the SDK's parser: a JSON body at its
    end, each server-sent event at its blank line."""

    def __init__(self, events: bool) -> None:
        self._events = events
        self._held = bytearray()
        self._scanned = 0
        """Where the search for the next blank line resumes (nothing before it ends an event)."""

    def feed(self, piece: bytes) -> list[bytes]:
        self._held += piece
        if not self._events:
            return []
        done: list[bytes] = []
        while True:
            # A CR at the very end may be the first half of a CRLF still to come.
            end = len(self._held) - 1 if self._held.endswith(b"\r") else len(self._held)
            found = _EVENT_END.search(self._held, self._scanned, end)
            if found is None:
                self._scanned = max(0, end - 3)
                return done
            done.append(_shallow_event(bytes(self._held[: found.end()])))
            del self._held[: found.end()]
            self._scanned = 0

    def end(self) -> list[bytes]:
        rest, self._held = bytes(self._held), bytearray()
        if not rest:
            return []
        return [rest if self._events else _shallow(rest)]


_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{}[]")


def _deep(data: bytes) -> bool:
    """Whether `data` may nest past MESSAGE_DEPTH, told cheaply: its brackets alone, with one level of
    innermost pairs taken away per pass. Brackets inside strings may leave some unpaired: then it
    may be deep, and the exact reading (`json_depth`, which knows strings) decides."""
    brackets = data.translate(None, _NOT_BRACKETS)
    for _ in range(MESSAGE_DEPTH):
        if not brackets:
            return False
        paired = brackets.replace(b"{}", b"").replace(b"[]", b"")
        if paired == brackets:
            return True
        brackets = paired
    return bool(brackets)


def _shallow(body: bytes) -> bytes:
    return (pruned_message(body) or body) if _deep(body) else body


def _shallow_event(event: bytes) -> bytes:
    """The event with its data's deepest values left out (its other fields kept), or as it came."""
    if not _deep(event):
        return event
    lines = [line for line in _LINE.split(event) if line]
    data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
    pruned = pruned_message(b"\n".join(data))
    if pruned is None:
        return event
    fields = [line for line in lines if not line.startswith(b"data:")]
    return b"\n".join([*fields, *(b"data: " + line for line in pruned.split(b"\n"))]) + b"\n\n"


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
