"""The two framings a front relays, read incrementally: LSP's `Content-Length` frames and MCP's JSON lines.

A front passes its client's bytes on untouched and reads them only to know which requests are in
flight (so it can answer them if the engine dies) and to keep the client's `initialize` for a
re-attach. A reader here never raises on what it is fed: a frame it cannot parse is still a frame
(its `message` is None), a header it cannot read is skipped up to the next one, as the engine's
own loop (`rpc_io.serve`) does. Standard library only: a front must stay small.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

MAX_FRAME_BYTES = 64 * 1024 * 1024
_CONTENT_LENGTH = re.compile(rb"(?<![\w-])content-length:\s*(\d+)\s*$", re.IGNORECASE | re.MULTILINE)
_HEADER_END = b"\r\n\r\n"


class Frame(NamedTuple):
    raw: bytes
    """The frame as it came, header and all: what a front passes on."""
    message: Any
    """The parsed JSON, or None when the body is not JSON (the engine answers that itself)."""


class LspFrames:
    """`Content-Length: N\\r\\n\\r\\n<N bytes>` frames, fed in any chunks."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._passing = 0
        """Bytes of an oversized body still to pass on as they come (never held whole)."""

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while True:
            if self._passing:
                chunk = bytes(self._buffer[: self._passing])
                del self._buffer[: self._passing]
                self._passing -= len(chunk)
                if chunk:
                    frames.append(Frame(chunk, None))
                if self._passing:
                    return frames
            end = self._buffer.find(_HEADER_END)
            if end < 0:
                return frames
            match = _CONTENT_LENGTH.search(bytes(self._buffer[:end]))
            if match is None:
                # No usable length: pass the header on alone; the engine answers a parse error.
                frames.append(Frame(bytes(self._buffer[: end + 4]), None))
                del self._buffer[: end + 4]
                continue
            if int(match.group(1)) > MAX_FRAME_BYTES:
                # Too large to hold: the header, then the body as it comes; the engine discards it
                # and answers that the message was too large.
                frames.append(Frame(bytes(self._buffer[: end + 4]), None))
                del self._buffer[: end + 4]
                self._passing = int(match.group(1))
                continue
            total = end + 4 + int(match.group(1))
            if len(self._buffer) < total:
                return frames
            raw = bytes(self._buffer[:total])
            del self._buffer[:total]
            frames.append(Frame(raw, _parse(raw[end + 4 :])))

    def rest(self) -> list[Frame]:
        """At the end of input: a partial frame is dropped, as the engine's own reader drops it."""
        self._buffer.clear()
        return []

    @staticmethod
    def frame(message: Any) -> bytes:
        body = json.dumps(message, separators=(",", ":")).encode()
        return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class LineFrames:
    """One JSON-RPC message per line (MCP's stdio transport), fed in any chunks."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0
        """How much of the buffer is known to hold no newline (a long line is searched once)."""
        self._passing = False
        """In an oversized line, passed on as it comes (never held whole) up to its newline."""

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames: list[Frame] = []
        while True:
            end = self._buffer.find(b"\n", self._scanned)
            if end < 0:
                self._scanned = len(self._buffer)
                if self._passing or len(self._buffer) > MAX_FRAME_BYTES:
                    # Too large to hold: passed on as it comes; the engine discards the line and
                    # answers that the message was too large.
                    if self._buffer:
                        frames.append(Frame(bytes(self._buffer), None))
                    self._buffer.clear()
                    self._scanned = 0
                    self._passing = True
                return frames
            raw = bytes(self._buffer[: end + 1])
            del self._buffer[: end + 1]
            self._scanned = 0
            frames.append(Frame(raw, None if self._passing else _parse(raw)))
            self._passing = False

    def rest(self) -> list[Frame]:
        """At the end of input: a last line without its newline, which the gateway still reads."""
        raw = bytes(self._buffer)
        self._buffer.clear()
        self._scanned = 0
        if self._passing:
            return [Frame(raw, None)] if raw else []
        return [Frame(raw, _parse(raw))] if raw.strip() else []

    @staticmethod
    def frame(message: Any) -> bytes:
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _parse(body: bytes) -> Any:
    if len(body) > MAX_FRAME_BYTES:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def requests_in(message: Any) -> list[tuple[Any, str]]:
    """The (id, method) of every request in a message or a batch; notifications and answers have none."""
    items = message if isinstance(message, list) else [message]
    return [
        (item["id"], item["method"])
        for item in items
        if isinstance(item, dict) and "id" in item and isinstance(item.get("method"), str) and _usable(item["id"])
    ]


def answers_in(message: Any) -> list[Any]:
    """The ids of every answer (result or error) in a message or a batch."""
    items = message if isinstance(message, list) else [message]
    return [
        item["id"]
        for item in items
        if isinstance(item, dict) and "method" not in item and ("result" in item or "error" in item)
        if _usable(item.get("id"))
    ]


def _usable(msg_id: Any) -> bool:
    return isinstance(msg_id, str | int) and not isinstance(msg_id, bool)


CANCELS = {"notifications/cancelled": "requestId", "$/cancelRequest": "id"}
"""MCP's and LSP's cancellation notices, and where each names the request."""


def cancelled_in(message: Any) -> list[Any]:
    """The ids of the requests a message (or a batch) cancels."""
    items = message if isinstance(message, list) else [message]
    found = []
    for item in items:
        if isinstance(item, dict) and item.get("method") in CANCELS and isinstance(item.get("params"), dict):
            msg_id = item["params"].get(CANCELS[item["method"]])
            if _usable(msg_id):
                found.append(msg_id)
    return found
