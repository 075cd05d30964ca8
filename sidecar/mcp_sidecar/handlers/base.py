"""Where failures become JSON-RPC errors: the one place a handler's exception is translated."""

from __future__ import annotations

import asyncio
import functools
import logging
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcException

from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.protocol.errors import INTERNAL_ERROR, SidecarError, diagnostic

log = logging.getLogger(__name__)

Handler = Callable[[Any], Awaitable[Any]]


def to_rpc_error(error: SidecarError) -> JsonRpcException:
    """The JSON-RPC error; its message is clean text, since a diagnostic may quote server data."""
    diag = error.diagnostic
    data = diag.to_json()
    data["message"] = one_line(diag.message)
    return JsonRpcException(message=one_line(diag.render()), code=error.rpc_code, data=data)


def guarded(operation: str) -> Callable[[Handler], Handler]:
    """Wrap a handler so every failure reaches the client as a diagnostic, never a traceback."""

    def wrap(fn: Handler) -> Handler:
        @functools.wraps(fn)
        async def run(params: Any) -> Any:
            try:
                return await fn(params)
            except asyncio.CancelledError:
                raise
            except SidecarError as exc:
                log.info("%s failed: %s", operation, exc.diagnostic.code)
                raise to_rpc_error(exc) from None
            except Exception as exc:
                # Frames only: an exception's text may carry server output or credentials.
                frames = "".join(traceback.format_tb(exc.__traceback__))
                log.error("%s failed unexpectedly: %s\n%s", operation, type(exc).__name__, frames)
                diag = diagnostic("operation_failed", operation, "The sidecar hit an unexpected error.")
                raise to_rpc_error(SidecarError(diag, rpc_code=INTERNAL_ERROR)) from None

        return run

    return wrap
