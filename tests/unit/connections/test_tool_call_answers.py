"""Which JSON-RPC errors of a `tools/call` are the server's answer (`tool_error`) and which are not.

The SDK and the HTTP transport use JSON-RPC codes for their own failures; those keep their
meaning, decided by code and by what the transport saw, never by the message text.
"""

from __future__ import annotations

import pytest

from mcp_sidecar import heavy
from mcp_sidecar.connections.errors import FailureContext, ToolCallAnswer, classify


@pytest.fixture(autouse=True, scope="module")
def _sdk_loaded() -> None:
    """A call's answer is classified with the SDK's codes, which the sidecar reads once its owner
    loaded the SDK (`heavy.SDK`): a call only exists after that."""
    heavy.SDK.wait(120)


def code_of(code: int, http_status: int | None = None, http_not_mcp: bool = False) -> str:
    ctx = FailureContext(operation="call", server="s", http_status=http_status, http_not_mcp=http_not_mcp)
    return classify(ToolCallAnswer(code), ctx).diagnostic.code


@pytest.mark.parametrize("code", [-32603, -32602, -32600, -32099, -1, 0, 42, 1001])
def test_a_servers_own_error_is_a_tool_error(code: int) -> None:
    assert code_of(code) == "tool_error"


def test_the_message_names_the_code_only() -> None:
    error = classify(ToolCallAnswer(-32602), FailureContext(operation="call", server="s"))
    assert error.diagnostic.message == (
        "The server answered with JSON-RPC error -32602 instead of a result; its message is the content."
    )
    assert error.diagnostic.server == "s"


@pytest.mark.parametrize(
    ("code", "expected"),
    [(-32000, "connection_failed"), (-32001, "timeout"), (-32601, "protocol_error"), (-32700, "protocol_error")],
)
def test_the_sdks_own_codes_keep_their_meaning(code: int, expected: str) -> None:
    assert code_of(code) == expected


def test_http_stand_ins_are_not_the_servers_answer() -> None:
    # The transport's stand-in for an HTTP failure without a JSON-RPC body.
    assert code_of(-32603, http_status=502) == "connection_failed"
    # A lost session (404), a redirect, a body that is not MCP.
    assert code_of(-32600, http_status=404) == "connection_failed"
    assert code_of(-32600, http_status=307) == "connection_failed"
    assert code_of(-32600, http_not_mcp=True) == "protocol_error"
    # A modern server answers invalid params and requests with HTTP 400 and a JSON-RPC body.
    assert code_of(-32600, http_status=400) == "tool_error"
    assert code_of(-32602, http_status=400) == "tool_error"


def test_authentication_failures_stay_what_they_are() -> None:
    assert code_of(-32603, http_status=401) == "authentication_required"
    assert code_of(42, http_status=403) == "permission_denied"
