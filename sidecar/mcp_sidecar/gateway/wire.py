"""The MCP wire as the gateway's start-up front sees it: plain JSON, no SDK.

The SDK's names for the protocol versions and the 2026-07-28 envelope, spelled here so that the
front can answer a host's opening requests before `import mcp` (about a second) has finished.
`tests/unit/gateway/test_gateway_front.py` pins every value to the SDK's own.
"""

from __future__ import annotations

from typing import Any

from mcp_sidecar import __version__

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = "2025-11-25"
MODERN_VERSIONS = ("2026-07-28",)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
SERVER_NAME = "mcp-sidecar"
LIST_FRESHNESS = {"ttlMs": 0, "cacheScope": "private"}
"""What every list answer of the 2026-07-28 era says of its freshness: each host's own, never fresh for long."""

Message = dict[str, Any]


def server_info() -> dict[str, str]:
    return {"name": SERVER_NAME, "version": __version__}


def params_of(message: Message) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def has_envelope(message: Message) -> bool:
    """The request carries the 2026-07-28 envelope (the protocol-version key is the signal, as for the SDK)."""
    meta = params_of(message).get("_meta")
    return isinstance(meta, dict) and VERSION_KEY in meta


def modern_version(message: Message) -> str | None:
    """The 2026-07-28 version of a request whose envelope is complete and well-formed, else None."""
    meta = params_of(message).get("_meta")
    if not isinstance(meta, dict):
        return None
    version, info, capabilities = meta.get(VERSION_KEY), meta.get(CLIENT_INFO_KEY), meta.get(CAPABILITIES_KEY)
    if version not in MODERN_VERSIONS or not isinstance(capabilities, dict) or not isinstance(info, dict):
        return None
    if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
        return None
    return str(version)


def is_request(message: Message) -> bool:
    return isinstance(message.get("method"), str) and "id" in message and _plain_id(message["id"])


def is_notification(message: Message) -> bool:
    return isinstance(message.get("method"), str) and "id" not in message


def _plain_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def response(request_id: Any, result: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def modern_result(result: dict[str, Any], *, listing: bool) -> dict[str, Any]:
    """A 2026-07-28 result as the SDK sends it: complete, stamped with the server's info, and for a
    list, its freshness."""
    out = {**LIST_FRESHNESS, **result} if listing else dict(result)
    out["resultType"] = "complete"
    out["_meta"] = {SERVER_INFO_KEY: server_info()}
    return out


def negotiated(requested: Any) -> str:
    """The handshake version the gateway answers `initialize` with: the host's, when it is one."""
    return requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
