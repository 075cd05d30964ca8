"""The stdio message loop: LSP framing with strict answers to malformed input.

pygls' own loop logs and drops what it cannot parse. Ours answers every malformed message
with the standard JSON-RPC error (parse error, invalid request, oversized message) and
keeps reading, so a client's mistake never leaves a request unanswered or stops the sidecar.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

from mcp_sidecar.corked import CorkedWrites
from mcp_sidecar.pygls_shim import is_shutting_down, send_data, track_request, untrack_request

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_LINES = 32
# Not anchored at the start: after a frame without Content-Length, its unread body runs into
# the next header line, and finding the header there puts the stream back in step.
_CONTENT_LENGTH = re.compile(rb"(?<![\w-])content-length:\s*(\d+)\s*$", re.IGNORECASE)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
REQUEST_CANCELLED = -32800


def _error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    send_data(protocol, {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


FastHandler = Callable[[Any], Coroutine[Any, Any, Any]]


class StdoutWriter:
    """pygls' writer over stdout, the writes of one event-loop turn coalesced (`corked.py`).

    A client that went away (a broken pipe) is logged once; what is written after it is dropped,
    and the sidecar ends when its input ends, as it does for a client that closes both pipes.
    """

    def __init__(self, stdout: BinaryIO) -> None:
        self._stdout = stdout
        self._gone = False
        self._writes = CorkedWrites(self._write, self._failed)

    def write(self, data: bytes) -> None:
        if not self._gone:
            self._writes.write(data)

    def flush(self) -> None:
        if not self._gone:
            self._writes.flush()

    def close(self) -> None:
        self.flush()
        self._stdout.close()

    def _write(self, data: bytes) -> None:
        self._stdout.write(data)
        self._stdout.flush()

    def _failed(self, exc: OSError) -> None:
        if not self._gone:
            log.error("the client closed the connection (%s); answers are dropped", type(exc).__name__)
        self._gone = True


async def serve(
    reader: asyncio.StreamReader, protocol: JsonRPCProtocol, fast: Mapping[str, FastHandler] | None = None
) -> None:
    """Read framed messages until end of input.

    Requests for methods in `fast` (the sidecar's own `mcp/*` methods, whose params and
    results are plain JSON) run their handler directly, skipping pygls' generic structuring;
    they are still tracked by the protocol, so `$/cancelRequest` and `shutdown` cancel them.
    """
    while True:
        header = await _read_header(reader)
        if header is None:
            return
        length, bad_header = header
        if length is None:
            what = "a malformed header" if bad_header else "no Content-Length header"
            _error(protocol, None, PARSE_ERROR, f"Parse error: {what}.")
            continue
        if length > MAX_MESSAGE_BYTES:
            await _discard(reader, length)
            _error(protocol, None, INVALID_REQUEST, f"Message larger than {MAX_MESSAGE_BYTES} bytes.")
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return
        _dispatch(protocol, body, fast or {})


async def _read_header(reader: asyncio.StreamReader) -> tuple[int | None, bool] | None:
    """One message's header: (its Content-Length, whether a line was malformed); None at end of input."""
    length: int | None = None
    bad_header = False
    for _ in range(MAX_HEADER_LINES):
        try:
            line = await reader.readline()
        except ValueError:  # a line over the reader's limit: asyncio drops what it buffered
            bad_header = True
            continue
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            return length, bad_header
        match = _CONTENT_LENGTH.search(line.rstrip(b"\r\n"))
        if match:
            length = int(match.group(1))
        elif b":" not in line:
            bad_header = True
    return length, True


async def _discard(reader: asyncio.StreamReader, length: int) -> None:
    remaining = length
    while remaining:
        chunk = await reader.read(min(remaining, 1 << 20))
        if not chunk:
            return
        remaining -= len(chunk)


def _dispatch(protocol: JsonRPCProtocol, body: bytes, fast: Mapping[str, FastHandler]) -> None:
    try:
        text = body.decode("utf-8")
        raw = json.loads(text)
    except (ValueError, RecursionError):
        # ValueError, not only JSONDecodeError: an integer over Python's 4,300-digit limit
        # raises a plain ValueError, which would otherwise end the read loop and the sidecar.
        _error(protocol, None, PARSE_ERROR, "Parse error: the message is not valid UTF-8 JSON.")
        return
    refusal = _refusal(protocol, raw)
    if refusal is not None:
        _error(protocol, refusal[0], INVALID_REQUEST, refusal[1])
        return
    msg_id = raw.get("id")
    method = raw.get("method")
    if "id" in raw and isinstance(method, str) and method in fast:
        _run_fast(protocol, msg_id, fast[method], raw.get("params"))
        return
    _handle_structured(protocol, raw, msg_id)


def _refusal(protocol: JsonRPCProtocol, raw: Any) -> tuple[Any, str] | None:
    """Why a parsed message is an invalid request: (the id to answer, the message); None when valid."""
    if not isinstance(raw, dict):
        return None, "Invalid request: expected a JSON-RPC 2.0 object."
    msg_id = raw.get("id")
    if "id" in raw and not (isinstance(msg_id, str | int) and not isinstance(msg_id, bool)):
        return None, "Invalid request: `id` must be a string or an integer."
    if raw.get("jsonrpc") != "2.0":
        # The id is readable, so the client can match the answer to its request.
        return msg_id, "Invalid request: expected a JSON-RPC 2.0 object."
    if "method" in raw and not isinstance(raw["method"], str):
        return msg_id, "Invalid request: `method` must be a string."
    if "method" not in raw and "id" not in raw:
        return None, "Invalid request: no `method`."
    if is_shutting_down(protocol) and "method" in raw and "id" in raw:
        # pygls drops requests after `shutdown` silently; LSP wants them refused, and answered.
        return msg_id, "Invalid request: the sidecar is shutting down."
    return None


def _handle_structured(protocol: JsonRPCProtocol, raw: dict[str, Any], msg_id: Any) -> None:
    """Everything else goes through pygls: structured, then handled; a failure is answered."""
    try:
        message = protocol.structure_message(raw)
    except JsonRpcException as exc:
        if "method" in raw and "id" in raw:
            _error(protocol, msg_id, exc.code, exc.message or "Invalid params.")
        else:
            log.warning("dropped an invalid notification or response (%s)", type(exc).__name__)
        return
    except Exception as exc:  # a converter failure must not stop the loop
        log.warning("could not structure a message: %s", type(exc).__name__)
        if "method" in raw and "id" in raw:
            _error(protocol, msg_id, -32602, "Invalid params.")
        return
    try:
        protocol.handle_message(message)
    except Exception as exc:
        log.error("handling a message failed: %s", type(exc).__name__)
        if "method" in raw and "id" in raw:
            _error(protocol, msg_id, -32603, "Internal error.")


def _run_fast(protocol: JsonRPCProtocol, msg_id: Any, handler: FastHandler, params: Any) -> None:
    task: asyncio.Task[None] = asyncio.get_running_loop().create_task(_answer(protocol, msg_id, handler, params))
    track_request(protocol, msg_id, task)
    task.add_done_callback(functools.partial(_finished, protocol, msg_id))


async def _answer(protocol: JsonRPCProtocol, msg_id: Any, handler: FastHandler, params: Any) -> None:
    """Run the handler and write its answer in the same step it ends in (not one turn later)."""
    try:
        result = await handler(params)
    except asyncio.CancelledError:
        raise  # answered by _finished, which sees every cancelled request, started or not
    except JsonRpcException as exc:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        send_data(protocol, {"jsonrpc": "2.0", "id": msg_id, "error": error})
    except Exception as exc:
        log.error("request handler failed: %s", type(exc).__name__)
        _error(protocol, msg_id, -32603, "Internal error.")
    else:
        send_data(protocol, {"jsonrpc": "2.0", "id": msg_id, "result": result})


def _finished(protocol: JsonRPCProtocol, msg_id: Any, task: asyncio.Task[None]) -> None:
    untrack_request(protocol, msg_id, task)
    if task.cancelled():
        _error(protocol, msg_id, REQUEST_CANCELLED, f'Request with id "{msg_id}" is canceled')
