"""The one place a diagnostic becomes a JSON-RPC error: its text is clean whatever it quotes."""

from __future__ import annotations

from mcp_sidecar.handlers.base import to_rpc_error
from mcp_sidecar.protocol.errors import fail


def test_a_diagnostic_quoting_server_data_reaches_the_client_as_clean_text() -> None:
    # A prompt's declared argument names are the server's; a message may list them.
    message = "Missing required argument(s): name\x1b]52;c;ZXZpbA==\x07, other\u202e\U000e0041\nforged row."
    error = to_rpc_error(fail("prompt_invalid", "preview", message, "hostile"))
    expected = "Missing required argument(s): name, other forged row."
    data = error.data
    assert isinstance(data, dict)
    assert data["message"] == expected
    assert error.message == f"hostile: [prompt_invalid] {expected} {data['hint']}"
    assert data["code"] == "prompt_invalid"
