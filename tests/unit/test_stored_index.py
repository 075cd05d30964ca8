"""A tool catalog's index kept beside it on disk: the next start's first discovery reads arrays,
parses only the descriptors it returns, and ranks exactly as an index built afresh."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog import stored_index
from mcp_sidecar.catalog.documents import tool_document
from mcp_sidecar.catalog.index import Index
from mcp_sidecar.services.app import Sidecar
from mcp_sidecar.services.discovery import discover

TOOLS: list[dict[str, Any]] = [
    {"name": "list_tables", "description": "List the tables of a schema.", "inputSchema": {"type": "object"}},
    {"name": "run_query", "title": "Run SQL", "description": "Run a read-only SQL query.", "inputSchema": {}},
    {"name": "bad name", "description": "Refused: a space in the name."},
    {"name": "drop_table", "description": "Delete a table for good.", "annotations": {"destructiveHint": True}},
    {"name": "get_current_time", "description": "The current time in a timezone. ünïcode ☃"},
]
QUERIES = ("list tables", "what time is it in Oslo", "run_query", "rea", "delete a table", "", "sql")


def sidecar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: dict[str, Any] | None = None) -> Sidecar:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(home))
    definition = {"command": str(tmp_path / "never-run"), **(server or {})}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"w": definition}}), encoding="utf-8")
    app = Sidecar(lambda method, params: None, workspace=tmp_path)
    app.ensure_loaded()
    return app


def stored(app: Sidecar) -> None:
    conn = app.registry.connection("w", "test")
    assert app.catalogs.cache is not None
    app.catalogs.cache.store(app.catalogs.key(conn), "w", TOOLS, time.time())


def files(tmp_path: Path) -> list[str]:
    return sorted(p.name.split("-")[0] for p in (tmp_path / "home" / "cache" / "catalogs").iterdir())


async def answers(app: Sidecar) -> list[list[tuple[str, float, bool]]]:
    out = []
    for query in QUERIES:
        found = await discover(app, query, kind="tools", limit=10)
        out.append([(c["name"], c["score"], bool(c.get("weak"))) for c in found["candidates"]])
    return out


async def test_a_restart_ranks_from_the_stored_index_as_from_a_fresh_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = sidecar(tmp_path, monkeypatch)
    stored(first)
    built = await answers(first)  # builds the index, and keeps it beside the catalog
    assert files(tmp_path) == ["index", "tools"]

    again = sidecar(tmp_path, monkeypatch)
    conn = again.registry.connection("w", "test")
    catalog = again.catalogs.cached_tools(conn)
    assert catalog is not None
    assert catalog._descriptors is None  # noqa: SLF001 (nothing parsed to rank)
    assert [r["name"] for r in catalog.refused] == ["bad name"]
    assert await answers(again) == built
    assert catalog._descriptors is None  # noqa: SLF001 (candidates came from their spans only)
    found = await discover(again, "drop table", kind="tools")
    [top, *_] = found["candidates"]
    assert top["kind"] == "tool"
    assert top["annotations"] == {"destructiveHint": True}
    assert [r["name"] for r in found["refused"]] == ["bad name"]
    # Whatever needs every descriptor parses them then.
    assert [d["name"] for d in catalog.descriptors] == [t["name"] for t in TOOLS]


async def test_an_index_of_another_catalog_file_is_ignored_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = sidecar(tmp_path, monkeypatch)
    stored(first)
    await answers(first)
    conn = first.registry.connection("w", "test")
    assert first.catalogs.cache is not None
    changed = [*TOOLS[:-1], {"name": "get_current_time", "description": "Now, somewhere else."}]
    first.catalogs.cache.store(first.catalogs.key(conn), "w", changed, time.time())

    again = sidecar(tmp_path, monkeypatch)
    catalog = again.catalogs.cached_tools(again.registry.connection("w", "test"))
    assert catalog is not None
    assert catalog._descriptors is not None  # noqa: SLF001 (parsed: the index was of the old file)
    found = await discover(again, "somewhere else", kind="tools")
    assert found["candidates"][0]["description"] == "Now, somewhere else."


async def test_other_filters_mean_another_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = sidecar(tmp_path, monkeypatch)
    stored(first)
    await answers(first)
    filtered = sidecar(tmp_path, monkeypatch, {"excludeTools": ["drop_*"]})
    found = await discover(filtered, "delete a table", kind="tools", limit=10)
    assert "drop_table" not in [c["name"] for c in found["candidates"]]


def test_a_damaged_or_foreign_index_file_is_refused() -> None:
    raw = json.dumps({"tools": TOOLS}, separators=(",", ":"), ensure_ascii=False).encode() + b"}"
    raw = b'{"version":1,' + raw[1:-1]
    spans = stored_index.tool_spans(raw, TOOLS)
    assert spans is not None
    index = Index.build("w", [tool_document("w", t, i) for i, t in enumerate(TOOLS)])
    mark = stored_index.Fingerprint("k", stored_index.catalog_digest(raw), "f", None)
    data = stored_index.to_bytes(index, mark, spans, {"refused": []})
    assert data is not None
    assert stored_index.from_bytes(data, mark, raw) is not None
    other = stored_index.Fingerprint("k", stored_index.catalog_digest(raw + b" "), "f", None)
    assert stored_index.from_bytes(data, other, raw) is None
    for cut in (10, len(data) // 2, len(data) - 20):
        assert stored_index.from_bytes(data[:cut], mark, raw) is None
    assert stored_index.from_bytes(b"garbage" * 50, mark, raw) is None
    # Any flipped bit past the header: the body's checksum no longer matches.
    head = (
        len(stored_index.MAGIC)
        + 8
        + int.from_bytes(data[len(stored_index.MAGIC) : len(stored_index.MAGIC) + 8], "little")
    )
    for at in range(head, len(data), max(1, (len(data) - head) // 97)):
        flipped = bytearray(data)
        flipped[at] ^= 0x10
        assert stored_index.from_bytes(bytes(flipped), mark, raw) is None, at
    # A header that is not what it should be: nested too deep, not finite, another version's.
    for header in (
        b"[" * 100_000,
        b'{"documents": Infinity}',
        data[len(stored_index.MAGIC) + 8 : head].replace(b'"sidecar":"', b'"sidecar":"0'),
    ):
        forged = stored_index.MAGIC + len(header).to_bytes(8, "little") + header + data[head:]
        assert stored_index.from_bytes(forged, mark, raw) is None


def test_a_catalog_with_a_nul_in_a_name_is_not_stored_this_way() -> None:
    tools = [{"name": "echo", "title": "a\0b", "description": "x"}]
    index = Index.build("w", [tool_document("w", t, i) for i, t in enumerate(tools)])
    mark = stored_index.Fingerprint("k", "d", "f", None)
    assert stored_index.to_bytes(index, mark, [(0, 1)], {}) is None
