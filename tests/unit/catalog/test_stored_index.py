"""A tool catalog's index kept beside it on disk: the next start's first discovery reads arrays,
parses only the descriptors it returns, and ranks exactly as an index built afresh."""

from __future__ import annotations

import json
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog import stored_index
from mcp_sidecar.catalog.documents import embedding_text, tool_document
from mcp_sidecar.catalog.index import Index
from mcp_sidecar.services.app import Sidecar

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
        found = await app.discovery.discover(query, kind="tools", limit=10)
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
    found = await again.discovery.discover("drop table", kind="tools")
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
    found = await again.discovery.discover("somewhere else", kind="tools")
    assert found["candidates"][0]["description"] == "Now, somewhere else."


async def test_other_filters_mean_another_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = sidecar(tmp_path, monkeypatch)
    stored(first)
    await answers(first)
    filtered = sidecar(tmp_path, monkeypatch, {"excludeTools": ["drop_*"]})
    found = await filtered.discovery.discover("delete a table", kind="tools", limit=10)
    assert "drop_table" not in [c["name"] for c in found["candidates"]]


def catalog_bytes(tools: list[dict[str, Any]]) -> bytes:
    """A catalog file as `ToolCache.store` writes it."""
    payload = {"version": 1, "key": "k", "server": "w", "fetchedAt": time.time(), "freshS": 3600, "tools": tools}
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_damaged_or_foreign_index_file_is_refused() -> None:
    raw = catalog_bytes(TOOLS)
    spans = stored_index.tool_spans(raw, TOOLS)
    assert spans is not None
    index = Index.build("w", [tool_document("w", t, i) for i, t in enumerate(TOOLS)])
    mark = stored_index.Fingerprint("k", stored_index.catalog_digest(raw), "f", None, "w")
    data = stored_index.to_bytes(index, mark, spans, {"refused": []})
    assert data is not None
    assert stored_index.from_bytes(data, mark, raw) is not None
    other = stored_index.Fingerprint("k", stored_index.catalog_digest(raw + b" "), "f", None, "w")
    assert stored_index.from_bytes(data, other, raw) is None
    relabelled = stored_index.Fingerprint("k", stored_index.catalog_digest(raw), "f", None, "x")
    assert stored_index.from_bytes(data, relabelled, raw) is None
    for cut in (10, len(data) // 2, len(data) - 20):
        assert stored_index.from_bytes(data[:cut], mark, raw) is None
    assert stored_index.from_bytes(b"garbage" * 50, mark, raw) is None
    # Any flipped bit, in the header as in the body: the checksum covers both.
    for at in range(stored_index.PREAMBLE, len(data), max(1, (len(data) - stored_index.PREAMBLE) // 197)):
        flipped = bytearray(data)
        flipped[at] ^= 0x10
        assert stored_index.from_bytes(bytes(flipped), mark, raw) is None, at
    # A header that is not what it should be, even with its checksum made to match.
    header, body = split(data)
    for forged_header in (
        b"[" * 100_000,
        b'{"documents": Infinity}',
        header.replace(b'"sidecar":"', b'"sidecar":"0'),
        header.replace(b'"server":"w"', b'"server":"x"'),
    ):
        assert stored_index.from_bytes(join(forged_header, body), mark, raw) is None


def split(data: bytes) -> tuple[bytes, bytes]:
    """An index file's header and body."""
    size = int.from_bytes(data[len(stored_index.MAGIC) : len(stored_index.MAGIC) + 8], "little")
    return data[stored_index.PREAMBLE : stored_index.PREAMBLE + size], data[stored_index.PREAMBLE + size :]


def join(header: bytes, body: bytes) -> bytes:
    """An index file of `header` and `body`, its checksum made to match: what a forger writes."""
    header += b" " * (-(stored_index.PREAMBLE + len(header)) % 8)
    checksum = zlib.crc32(body, zlib.crc32(header))
    return stored_index.MAGIC + len(header).to_bytes(8, "little") + checksum.to_bytes(8, "little") + header + body


def test_spans_must_be_the_elements_of_the_tools_array() -> None:
    """A forger who makes every checksum match still cannot point a span anywhere else."""
    ghost = {"name": "ghost", "description": "Not a tool of this catalog."}
    tools = [{"name": "real", "description": "A tool.", "inputSchema": {"type": "object", "x": ghost}}]
    raw = catalog_bytes(tools)
    mark = stored_index.Fingerprint("k", stored_index.catalog_digest(raw), "f", None, "w")
    real = stored_index.tool_spans(raw, tools)
    assert real is not None
    ghost_blob = json.dumps(ghost, separators=(",", ":")).encode()
    nested = (raw.index(ghost_blob), raw.index(ghost_blob) + len(ghost_blob))
    (start, end) = real[0]
    for document, span in (
        (ghost, nested),  # a nested object offered as a tool
        (tools[0], (start + 1, end)),  # off by one byte
        (tools[0], (start, end - 1)),
        (tools[0], (start - 1, end)),
    ):
        index = Index.build("w", [tool_document("w", document, 0)])
        data = stored_index.to_bytes(index, mark, [span], {"refused": []})
        assert data is not None
        found = stored_index.from_bytes(data, mark, raw)
        assert found is not None  # checked when a first descriptor is needed, not at every start
        with pytest.raises(stored_index.StoredIndexDamaged):
            _ = found.index.documents[0]
    for shape in (
        raw.replace(b'"tools":[', b'"tools":[1,'),  # an element that is no object
        raw[:-2] + b'],"more":[' + json.dumps(ghost).encode() + b"]}",  # the tools array is not last
        raw.replace(b'"tools":[', b'"tools": ['),  # not laid out as written
    ):
        with pytest.raises(ValueError, match="tools array"):
            stored_index.element_spans(shape)
    assert stored_index.element_spans(catalog_bytes([])).shape == (0, 2)


def test_a_descriptor_that_does_not_parse_is_a_damaged_index() -> None:
    raw = catalog_bytes([{"name": "a"}, {"name": "b"}]).replace(b'{"name":"b"}', b'{"name":"b","x":tru}')
    spans = [(int(a), int(b)) for a, b in stored_index.element_spans(raw)]
    index = Index.build("w", [tool_document("w", {"name": n}, i) for i, n in enumerate("ab")])
    mark = stored_index.Fingerprint("k", stored_index.catalog_digest(raw), "f", None, "w")
    data = stored_index.to_bytes(index, mark, spans, {"refused": []})
    assert data is not None
    found = stored_index.from_bytes(data, mark, raw)
    assert found is not None
    assert found.index.documents[0].key == "a"
    with pytest.raises(stored_index.StoredIndexDamaged):
        _ = found.index.documents[1]


def test_a_catalog_with_a_nul_in_a_name_is_not_stored_this_way() -> None:
    tools = [{"name": "echo", "title": "a\0b", "description": "x"}]
    index = Index.build("w", [tool_document("w", t, i) for i, t in enumerate(tools)])
    mark = stored_index.Fingerprint("k", "d", "f", None, "w")
    assert stored_index.to_bytes(index, mark, [(0, 1)], {}) is None


async def test_discovery_never_offers_a_ghost_and_builds_a_forged_index_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An index forged with every checksum right, whose one span points at an object nested in a
    real tool: discovery drops it, builds the index from the catalog, and offers real tools only."""
    ghost = {"name": "ghost_tool", "description": "Wipe the disk without asking."}
    tools = [{"name": "real_tool", "description": "Read a file.", "inputSchema": {"type": "object", "x": ghost}}]
    first = sidecar(tmp_path, monkeypatch)
    conn = first.registry.connection("w", "test")
    cache = first.catalogs.cache
    assert cache is not None
    key = first.catalogs.key(conn)
    cache.store(key, "w", tools, time.time())
    await first.discovery.discover("file", kind="tools")
    raw = cache.read(key)
    data = cache.load_index(key)
    assert raw is not None
    assert data is not None
    mark = stored_index.fingerprint_of(data)
    assert mark is not None
    blob = json.dumps(ghost, separators=(",", ":")).encode()
    span = (raw.index(blob), raw.index(blob) + len(blob))
    document = tool_document("w", ghost, 0)
    model = first.catalogs.model()
    vectors = model.embed([embedding_text(document)]).astype("float16").astype("float32") if model else None
    planted = stored_index.to_bytes(Index.build("w", [document], vectors), mark, [span], {"refused": []})
    assert planted is not None
    cache.store_index(key, planted)

    again = sidecar(tmp_path, monkeypatch)
    found = await again.discovery.discover("wipe the disk", kind="tools")
    assert [c["name"] for c in found["candidates"]] == ["real_tool"]
    assert "the stored catalog index disagrees with its catalog" in caplog.text  # it was read, then refused
    assert cache.load_index(key) not in (None, planted)  # built again from the catalog
