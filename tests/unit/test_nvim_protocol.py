"""The Neovim plugin's protocol.lua and docs/protocol.md name the same methods."""

from __future__ import annotations

import re
from pathlib import Path

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
