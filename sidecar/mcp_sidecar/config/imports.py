"""Find and read another client's MCP configuration file, and hand each of its servers to
`config/import_values.py`, which converts it to our `mcpServers` format.

Supported: the `mcpServers` JSON of Claude Desktop, Claude Code and Cursor; VS Code's
`servers` JSON (`.vscode/mcp.json`, or `mcp.servers` in settings.json) with its `inputs`;
and Codex's TOML (`[mcp_servers.NAME]`). Nothing here runs, connects or authenticates
anything: it only reads one file the user named.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_sidecar.config.import_values import Candidate, from_codex, from_json
from mcp_sidecar.config.jsonc import strip_jsonc

MAX_IMPORT_BYTES = 4 * 1024 * 1024
FORMAT_LABELS = {
    "mcpServers": "mcpServers JSON (Claude Desktop, Claude Code, Cursor)",
    "vscode": "VS Code servers JSON",
    "codex": "Codex TOML",
}


class ImportInvalid(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(slots=True)
class ImportSource:
    path: Path
    format: str
    candidates: list[Candidate]

    def candidate(self, name: str) -> Candidate | None:
        return next((c for c in self.candidates if c.name == name), None)


def read_import(path: Path) -> ImportSource:
    """Parse `path`; ImportInvalid when it cannot be read or is no supported format."""
    text = _read_text(path)
    if path.suffix.lower() == ".toml":
        return _codex(path, text)
    try:
        document = json.loads(strip_jsonc(text))
    except (json.JSONDecodeError, RecursionError):
        try:
            return _codex(path, text)  # a TOML file with another name
        except ImportInvalid:
            raise ImportInvalid(f"{path}: neither JSON nor TOML.") from None
    if not isinstance(document, dict):
        raise ImportInvalid(f"{path}: the top level must be an object.")
    if isinstance(document.get("mcpServers"), dict):
        return _convert_all(path, "mcpServers", document["mcpServers"], {})
    nested = document.get("mcp")
    vscode: dict[str, Any] = nested if isinstance(nested, dict) else document
    if isinstance(vscode.get("servers"), dict):
        inputs = _inputs(vscode.get("inputs"))
        return _convert_all(path, "vscode", vscode["servers"], inputs)
    raise ImportInvalid(f"{path}: no `mcpServers`, `servers` or `mcp_servers` table found.")


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise ImportInvalid(f"{path}: the file is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MiB.")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ImportInvalid(f"{path}: no such file.") from None
    except IsADirectoryError:
        raise ImportInvalid(f"{path}: is a directory, not a configuration file.") from None
    except OSError as exc:
        raise ImportInvalid(f"{path}: the file cannot be read ({exc.strerror or 'error'}).") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportInvalid(f"{path}: the file is not UTF-8 text.") from None


def _codex(path: Path, text: str) -> ImportSource:
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise ImportInvalid(f"{path}: invalid TOML.") from None
    servers = document.get("mcp_servers")
    if not isinstance(servers, dict):
        raise ImportInvalid(f"{path}: no `[mcp_servers.NAME]` tables found.")
    return ImportSource(path, "codex", [from_codex(name, raw) for name, raw in servers.items()])


def _convert_all(path: Path, fmt: str, servers: dict[str, Any], inputs: dict[str, str | None]) -> ImportSource:
    return ImportSource(path, fmt, [from_json(name, raw, inputs) for name, raw in servers.items()])


def _inputs(raw: Any) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                description = item.get("description")
                out[item["id"]] = description if isinstance(description, str) else None
    return out


__all__ = ["FORMAT_LABELS", "Candidate", "ImportInvalid", "ImportSource", "read_import"]
