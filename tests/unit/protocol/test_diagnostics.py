from __future__ import annotations

import re
from pathlib import Path
from typing import cast, get_args

import pytest

from mcp_sidecar.protocol.errors import HINTS, DiagnosticCode, diagnostic

ROOT = Path(__file__).resolve().parents[3]
SPEC_CODES = {
    "configuration_invalid",
    "authentication_required",
    "permission_denied",
    "credential_store_unavailable",
    "secret_lookup_failed",
    "connection_failed",
    "timeout",
    "protocol_error",
    "tool_changed",
    "tool_error",
    "resource_invalid",
    "resource_not_found",
    "resources_unsupported",
    "completions_unsupported",
    "completion_invalid",
    "subscriptions_unsupported",
    "subscription_limit",
    "catalog_changed",
    "oauth_failed",
    "oauth_issuer_changed",
    "callback_unavailable",
    "busy",
    "cancelled",
    "operation_failed",
}


def test_every_spec_code_has_a_hint() -> None:
    assert set(HINTS) >= SPEC_CODES
    assert all(hint.endswith(".") for hint in HINTS.values())


def test_every_code_is_documented_in_troubleshooting() -> None:
    text = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", text, re.MULTILINE))
    assert set(HINTS) == documented


def test_diagnostic_shape_and_rendering() -> None:
    diag = diagnostic("authentication_required", "call", "Authentication is required.", "linear")
    assert diag.to_json() == {
        "code": "authentication_required",
        "operation": "call",
        "server": "linear",
        "message": "Authentication is required.",
        "hint": "Run mcp-sidecar login linear (in an editor: /mcp login linear), or check its Authorization header.",
    }
    assert diag.render().startswith("linear: [authentication_required] Authentication is required. ")
    # Without a server, and for a name that is not one shell word, the hint still reads as a command.
    assert diagnostic("authentication_required", "call", "x").hint == HINTS["authentication_required"]
    assert diagnostic("permission_denied", "call", "x", "my docs").hint == (
        "Check account permissions, OAuth scopes and the service's access policy; to ask for the missing "
        "scopes, run mcp-sidecar login 'my docs' (in an editor: /mcp login 'my docs')."
    )
    assert "server" not in diagnostic("busy", "reconnect", "Busy.").to_json()
    # The wire order of the keys, with and without a server.
    assert list(diag.to_json()) == ["code", "operation", "server", "message", "hint"]
    assert list(diagnostic("busy", "reconnect", "Busy.").to_json()) == ["code", "operation", "message", "hint"]


def test_the_code_literal_lists_exactly_the_codes_with_hints() -> None:
    codes = get_args(DiagnosticCode)
    assert len(codes) == len(set(codes))
    assert set(codes) == set(HINTS)


def test_unknown_codes_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown diagnostic code"):
        diagnostic(cast(DiagnosticCode, "made_up"), "x", "y")  # deliberately not a DiagnosticCode
