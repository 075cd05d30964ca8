"""The Neovim plugin's protocol.lua and docs/protocol.md name the same methods."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_sidecar.protocol import methods

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"
LUA = ROOT / "editor-clients" / "nvim" / "lua" / "mcp_sidecar" / "protocol.lua"


def documented(section: str) -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^### `([^`]+)`", body, re.MULTILINE))


def lua_table(name: str) -> set[str]:
    text = LUA.read_text(encoding="utf-8")
    body = text.split(f"M.{name} = {{", 1)[1].split("\n}", 1)[0]
    return set(re.findall(r'=\s*"([^"]+)"', body))


def test_requests_match_the_document() -> None:
    assert lua_table("requests") == documented("Requests")


def test_notifications_match_the_document() -> None:
    assert lua_table("notifications") == documented("Notifications, sidecar to client")


def test_client_requests_match_the_document() -> None:
    """What a server asks the person through the sidecar (mcp/elicit, mcp/sample)."""
    assert lua_table("client_requests") == documented("Requests, sidecar to client")


def test_client_requests_match_methods_py() -> None:
    assert lua_table("client_requests") == set(methods.CLIENT_REQUESTS)
