"""The SDK transports a connection attempt opens, and what they observe for classifying failures.

`connections/stdio.py` is the stdio transport where it runs; the SDK's own is the fallback
(Windows). HTTP goes through the SDK's streamable HTTP client on an httpx client whose
hooks record the status and content type that explain a failure better than the SDK's error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_sidecar.config.interpolate import ResolvedServer
from mcp_sidecar.connections.sdk_streams import watched
from mcp_sidecar.connections.stderr_log import StderrPipe


@dataclass(slots=True)
class Observations:
    """What the current connection attempt's transport saw; `reset` when a new attempt starts."""

    http_status: int | None = None
    http_not_mcp: bool = False
    """An HTTP answer that was neither JSON nor an event stream (an HTML page, say)."""
    http_too_large: bool = False
    """An HTTP body or event passed the 64 MiB message limit (`http_limits`)."""
    garbage_lines: int = 0
    step_up_scope: str | None = None
    """The scopes a `403 insufficient_scope` challenge asked for (OAuth step-up)."""

    def reset(self) -> None:
        self.step_up_scope = None
        self.http_status = None
        self.http_not_mcp = False
        self.http_too_large = False
        self.garbage_lines = 0

    def on_garbage(self) -> None:
        self.garbage_lines += 1


def sdk_stdio(
    resolved: ResolvedServer, env: dict[str, str], pipe: StderrPipe, on_eof: Callable[[], None], seen: Observations
) -> Any:
    """Where `connections/stdio.py` does not run (Windows): the SDK's own, spawned after its import (it
    puts its own default environment beneath `env`; no engine runs there)."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    assert resolved.command is not None
    params = StdioServerParameters(
        command=resolved.command, args=list(resolved.args), env=env or None, cwd=resolved.cwd
    )
    return watched(stdio_client(params, errlog=pipe.writer), on_eof, seen.on_garbage)  # type: ignore[arg-type]


SHOWN_SCOPES = 10


def step_up_scope(response: Any) -> str | None:
    """The scopes of a `403 insufficient_scope` challenge, as far as they are plain scope tokens."""
    from mcp.client.auth.utils import extract_field_from_www_auth

    from mcp_sidecar.config.validate import SCOPE_TOKEN

    if extract_field_from_www_auth(response, "error") != "insufficient_scope":
        return None
    words = (extract_field_from_www_auth(response, "scope") or "").split()
    shown = [w for w in dict.fromkeys(words) if len(w) <= 64 and SCOPE_TOKEN.match(w)][:SHOWN_SCOPES]
    return " ".join(shown) or ""


def _opens_a_stream(request: Any) -> bool:
    """The GET stream, or the long-lived `subscriptions/listen` request of the 2026-07-28 era."""
    if request.method == "GET":
        return True
    try:
        head = request.content[:200]
    except Exception:  # a streamed body (the SDK sends bytes): not a listen request
        return False
    return b'"subscriptions/listen"' in head


def http(resolved: ResolvedServer, auth: Any, timeout: float, on_eof: Callable[[], None], seen: Observations) -> Any:
    """The streamable HTTP transport with `auth` (an httpx auth or None), recording into `seen`."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from mcp_sidecar.connections.http_limits import SDK_EVENT_LIMIT, ResponseBound

    assert resolved.url is not None
    headers = {k: v for k, v in resolved.headers.items() if isinstance(v, str)}

    endpoint = httpx2.URL(resolved.url)

    async def record_status(response: httpx2.Response) -> None:
        if response.status_code >= 400:
            seen.http_status = response.status_code
            seen.step_up_scope = step_up_scope(response) if response.status_code == 403 else None
        elif response.request.url != endpoint or _opens_a_stream(response.request):
            # OAuth metadata and token requests share this client; and a stream's success (the GET
            # stream, a modern `subscriptions/listen`) says nothing of the requests beside it: it
            # opens at any time, and would clear the 403 a call got just before.
            return
        elif response.status_code >= 300:  # redirects are not followed
            seen.http_status = response.status_code
        else:
            # A success after a failure status: later failures are not about it. A refreshed token
            # cures a 401; a modern server answers a JSON-RPC error with a 4xx (a tool's own error,
            # say) and goes on answering; a 405 on the optional GET stream says nothing of POSTs.
            seen.http_status = None
            if response.status_code != 202 and response.request.method == "POST":
                kind = response.headers.get("content-type", "").lower()
                seen.http_not_mcp = not kind.startswith(("application/json", "text/event-stream"))

    def too_large() -> None:
        seen.http_too_large = True

    bound = ResponseBound(too_large)  # every body and event at most 64 MiB, as on stdio
    client = httpx2.AsyncClient(
        auth=auth,
        headers=headers,
        timeout=httpx2.Timeout(timeout, read=max(timeout, 300.0)),
        event_hooks={"request": [bound.on_request], "response": [record_status, bound.on_response]},
        follow_redirects=False,
    )
    transport = streamable_http_client(resolved.url, http_client=client, max_sse_event_size=SDK_EVENT_LIMIT)
    return watched(transport, on_eof, seen.on_garbage, client)


__all__ = ["Observations", "http", "sdk_stdio"]
