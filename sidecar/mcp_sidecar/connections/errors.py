"""Classify what the SDK, the transports and the OS raise into diagnostics.

This is where exceptions stop: messages are ours and generic, chosen by exception type and
JSON-RPC code, never by the exception's text (which can carry server output or secrets).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from mcp_sidecar import heavy
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, diagnostic, fail


@dataclass(slots=True)
class FailureContext:
    """What the connection observed around a failure, to classify it better."""

    operation: str
    server: str
    http_status: int | None = None
    garbage_lines: int = 0
    connecting: bool = False
    http_not_mcp: bool = False
    """An HTTP answer was neither JSON nor an event stream."""
    http_too_large: bool = False
    """An HTTP body or server-sent event passed the 64 MiB message limit (`http_limits`)."""
    auth_state: str = "none"
    """OAuth: `tokens` (stored tokens were sent), `none`, or `unavailable` (the keyring failed)."""
    step_up_scope: str | None = None
    """A 403 asked for these OAuth scopes (`insufficient_scope`); "" when it named none."""


class ToolCallAnswer(Exception):
    """The JSON-RPC error the SDK raised for a `tools/call` (an `MCPError`), to classify as a call's.

    A server that answers a call with a JSON-RPC error instead of a result has run (or refused)
    the tool and is still there: that is a `tool_error`, not a failed connection. The SDK uses
    JSON-RPC codes for its own failures too (a lost connection, a timeout, an HTTP status), and
    those keep their meaning: `_answered` tells the two apart by code and by what the transport saw.
    """

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def reported_tool_error(operation: str, server: str) -> Diagnostic:
    """The diagnostic of a result the server itself marked `isError`."""
    return diagnostic(
        "tool_error", operation, "The tool reported an error; the result's content is the server's account.", server
    )


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        out: list[BaseException] = []
        for inner in exc.exceptions:
            out.extend(leaves(inner))
        return out
    return [exc]


def classify(exc: BaseException, ctx: FailureContext) -> SidecarError:
    if isinstance(exc, SidecarError):
        return exc
    candidates = leaves(exc)
    # The sidecar's own diagnosis first (a secret command that failed during a refresh, beside
    # the 401 that asked for the refresh), then the most specific leaf: a timeout or HTTP
    # status over a generic closure.
    for leaf in candidates:
        if isinstance(leaf, SidecarError):
            return leaf
    for leaf in candidates:
        error = _classify_leaf(leaf, ctx)
        if error.diagnostic.code != "operation_failed":
            return error
    return _classify_leaf(candidates[0], ctx)


def _unauthorized(ctx: FailureContext) -> SidecarError:
    op, server = ctx.operation, ctx.server
    if ctx.auth_state == "unavailable":
        return fail(
            "credential_store_unavailable",
            op,
            "The server requires authentication and the OS keyring holding its tokens is not available.",
            server,
        )
    if ctx.auth_state == "tokens":
        return fail("authentication_required", op, "The server refused the stored OAuth tokens; log in again.", server)
    return fail("authentication_required", op, "The server requires authentication.", server)


def _forbidden(ctx: FailureContext) -> SidecarError:
    op, server = ctx.operation, ctx.server
    if ctx.step_up_scope is None or ctx.auth_state != "tokens":
        return fail("permission_denied", op, "The server denied access.", server)
    wanted = f" ({ctx.step_up_scope})" if ctx.step_up_scope else ""
    return fail(
        "permission_denied",
        op,
        f"The server asks for more OAuth scopes than it granted{wanted}. The request was not repeated; "
        "the next login shows the scopes and asks before requesting them (for 10 minutes).",
        server,
    )


Rule = Callable[[BaseException, FailureContext], SidecarError | None]


def _classify_leaf(exc: BaseException, ctx: FailureContext) -> SidecarError:
    # In this order: what the HTTP status says beats the exception. The SDK's and httpx2's types
    # are looked at only once the SDK is loaded (`heavy.SDK`): before that nothing of theirs can
    # have raised (a missing command fails before the load), and importing them here would run
    # beside that load.
    rules: tuple[Rule, ...] = (_by_http_status, _by_os)
    if heavy.SDK.loaded:
        rules += (_by_sdk, _by_http_client)
    for rule in (*rules, _by_builtin):
        error = rule(exc, ctx)
        if error is not None:
            return error
    return fail("operation_failed", ctx.operation, "The request failed for an unclassified reason.", ctx.server)


def _by_http_status(exc: BaseException, ctx: FailureContext) -> SidecarError | None:
    if ctx.http_status in (401,):
        return _unauthorized(ctx)
    if ctx.http_status == 403:
        return _forbidden(ctx)
    if isinstance(exc, SidecarError):
        return exc
    return None


def _by_os(exc: BaseException, ctx: FailureContext) -> SidecarError | None:
    op, server = ctx.operation, ctx.server
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        if ctx.garbage_lines:
            return fail("protocol_error", op, "The server wrote output that is not MCP JSON-RPC.", server)
        return _timeout(ctx)
    if isinstance(exc, FileNotFoundError):
        return fail("connection_failed", op, "The server command was not found.", server)
    if isinstance(exc, PermissionError):
        return fail("connection_failed", op, "The server command could not be executed (permission denied).", server)
    if isinstance(exc, NotADirectoryError):
        return fail("connection_failed", op, "The server's working directory is not a directory.", server)
    return None


def _timeout(ctx: FailureContext) -> SidecarError:
    what = "connect" if ctx.connecting else "answer"
    return fail("timeout", ctx.operation, f"The server did not {what} within the time limit.", ctx.server)


def _by_sdk(exc: BaseException, ctx: FailureContext) -> SidecarError | None:
    from mcp import MCPError
    from pydantic import ValidationError

    op, server = ctx.operation, ctx.server
    if isinstance(exc, ToolCallAnswer):
        return _answered(exc.code, ctx)
    if isinstance(exc, MCPError):
        return _by_jsonrpc_code(exc.code, ctx)
    if isinstance(exc, ValidationError | UnicodeDecodeError):
        return fail("protocol_error", op, "The server sent a message that is not valid MCP.", server)
    if isinstance(exc, RuntimeError) and "schema" in type(exc).__name__.lower():
        return fail("protocol_error", op, "The server's result does not match its output schema.", server)
    return None


def _by_jsonrpc_code(code: int, ctx: FailureContext) -> SidecarError:
    from mcp_types import (
        CONNECTION_CLOSED,
        INTERNAL_ERROR,
        INVALID_REQUEST,
        METHOD_NOT_FOUND,
        PARSE_ERROR,
        REQUEST_TIMEOUT,
        UNSUPPORTED_PROTOCOL_VERSION,
    )

    op, server = ctx.operation, ctx.server
    if ctx.http_too_large and code in (PARSE_ERROR, CONNECTION_CLOSED):
        # The SDK fails an oversized JSON body as unparsable, an oversized event as a lost stream.
        return fail(
            "protocol_error", op, "The server's answer is larger than 64 MiB, the most one message may be.", server
        )
    if code == REQUEST_TIMEOUT:
        return _timeout(ctx)
    if code == CONNECTION_CLOSED:
        if ctx.garbage_lines:
            return fail("protocol_error", op, "The server wrote output that is not MCP JSON-RPC.", server)
        return fail("connection_failed", op, "The server closed the connection.", server)
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        return fail("protocol_error", op, "The server supports no protocol version in common.", server)
    if code in (METHOD_NOT_FOUND, PARSE_ERROR):
        if ctx.connecting and ctx.http_status == 404:
            return fail("connection_failed", op, "The server's endpoint was not found (HTTP 404).", server)
        return fail("protocol_error", op, "The server does not support this MCP request.", server)
    error = _invalid_request(ctx) if code == INVALID_REQUEST else None
    if error is not None:
        return error
    if code == INTERNAL_ERROR and ctx.http_status is not None and ctx.http_status >= 400:
        return fail("connection_failed", op, f"The server answered HTTP {ctx.http_status}.", server)
    return fail("operation_failed", op, f"The server answered with JSON-RPC error {code}.", server)


def _answered(code: int, ctx: FailureContext) -> SidecarError:
    """A `tools/call` failed with JSON-RPC error `code`: the server's answer unless the code means more.

    The SDK's own codes keep their meaning: -32000 (the connection closed) and -32001 (no answer
    in time), as do codes that say the server does not speak MCP (-32601, -32700) and codes the
    HTTP transport synthesises from a status it saw. Any other code is the server's answer.
    """
    from mcp_types import INVALID_REQUEST

    error = _by_jsonrpc_code(code, ctx)
    unexplained = error.diagnostic.code == "operation_failed"
    status = ctx.http_status
    if code == INVALID_REQUEST and not ctx.http_not_mcp and (status is None or (400 <= status < 500 and status != 404)):
        # The transport makes this code up only for a redirect, a lost session (404) or a body
        # that is not MCP; else the server refused the call (a modern server with HTTP 400).
        unexplained = True
    if not unexplained:
        return error
    message = f"The server answered with JSON-RPC error {code} instead of a result; its message is the content."
    return fail("tool_error", ctx.operation, message, ctx.server)


def _invalid_request(ctx: FailureContext) -> SidecarError | None:
    """The SDK answers an unfollowed redirect and a body that is not MCP with INVALID_REQUEST."""
    op, server = ctx.operation, ctx.server
    if ctx.http_status is not None and 300 <= ctx.http_status < 400:
        return fail(
            "connection_failed", op, f"The server redirected (HTTP {ctx.http_status}); use the final URL.", server
        )
    if ctx.http_not_mcp:
        return fail("protocol_error", op, "The server answered with something other than MCP JSON.", server)
    if not ctx.connecting:
        return fail("connection_failed", op, "The server ended the session.", server)
    return None


def _by_http_client(exc: BaseException, ctx: FailureContext) -> SidecarError | None:
    import httpx2

    op, server = ctx.operation, ctx.server
    if isinstance(exc, httpx2.TimeoutException):
        return fail("timeout", op, "The HTTP request timed out.", server)
    if isinstance(exc, httpx2.ConnectError):
        return fail("connection_failed", op, "The HTTP endpoint refused or failed the connection.", server)
    if isinstance(exc, httpx2.HTTPStatusError):
        status = exc.response.status_code
        if status == 401:
            return _unauthorized(ctx)
        if status == 403:
            return _forbidden(ctx)
        return fail("connection_failed", op, f"The server answered HTTP {status}.", server)
    if isinstance(exc, httpx2.TransportError):
        return fail("connection_failed", op, "The connection to the server failed.", server)
    return None


def _by_builtin(exc: BaseException, ctx: FailureContext) -> SidecarError | None:
    op, server = ctx.operation, ctx.server
    if isinstance(exc, ConnectionError | EOFError):
        return fail("connection_failed", op, "The connection to the server failed.", server)
    if isinstance(exc, OSError):
        return fail("connection_failed", op, "The server could not be started or reached.", server)
    if isinstance(exc, RuntimeError) and ctx.connecting:
        return fail("protocol_error", op, "The server's handshake could not be completed.", server)
    return None
