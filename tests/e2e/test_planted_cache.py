"""Planted or damaged cache files (issue 31, item 12): the sidecar stays up and honest.

Someone with write access to the user's cache directory can replace any file there. Each file
planted here is one the review used: a FIFO in place of a catalog, a stored index, the compiled
tokenizer and the start-up code cache (a plain open waits for a writer forever: a hung
discovery, an editor sidecar that stops answering even `mcp/status`), and stored indexes made
to disagree with their catalogs with every checksum recomputed (a span off by one byte made
the CLI's `discover` die with a traceback and every `mcp/discover` answer -32603). Every
request below has a time limit, so a read that blocks fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp_sidecar.catalog import stored_index
from mcp_sidecar.startup import FILE_NAME
from support.cli import cli
from support.servers import basic_stdio
from support.sidecar import restart_engine, start_sidecar, write_config

LIMIT_S = 30


def cached(home: Path, pattern: str) -> Path:
    (found,) = (home / "cache").rglob(pattern)
    return found


async def warmed(tmp_path: Path) -> Path:
    """A home whose cache holds a catalog, its index and token figures, the compiled tokenizer and the
    code cache."""
    home = tmp_path / "home"
    write_config(home, {"basic": basic_stdio("--cache-hints", "0:public")})
    async with start_sidecar(home) as sidecar:
        await sidecar.request("mcp/discover", {"query": "echo", "kind": "tools"})
        await sidecar.request("mcp/server/tools", {"server": "basic"})  # its token figures counted and kept
    for pattern in ("tools-*.json", "index-*.bin", "tokens-*.json", "tokenizer-*.bin"):
        cached(home, pattern)
    # The code cache is written only where bytecode may be (not under PYTHONDONTWRITEBYTECODE).
    (home / "cache" / FILE_NAME).touch(mode=0o600)
    return home


@contextmanager
def fifo_in_place_of(path: Path) -> Iterator[None]:
    path.unlink()
    os.mkfifo(path, 0o600)
    try:
        yield
    finally:
        for leftover in path.parent.iterdir():
            if leftover.is_fifo():
                leftover.unlink()  # the next case starts from real files


async def answers_everything(home: Path) -> None:
    async with start_sidecar(home) as sidecar:
        status = await sidecar.request("mcp/status", timeout=LIMIT_S)
        assert [row["name"] for row in status["servers"]] == ["basic"]
        found = await sidecar.request("mcp/discover", {"query": "echo", "kind": "tools"}, timeout=LIMIT_S)
        assert found["candidates"][0]["id"] == "basic.echo"


async def test_a_fifo_in_place_of_any_cache_file_is_refused_not_waited_on(tmp_path: Path) -> None:
    home = await warmed(tmp_path)
    for pattern in ("tools-*.json", "index-*.bin", "tokens-*.json", "tokenizer-*.bin", FILE_NAME):
        path = cached(home, pattern)
        with fifo_in_place_of(path):
            await answers_everything(home)
            run = await cli(home, "discover", "echo", "--json")
            assert run.code == 0, (pattern, run.stderr)
            assert run.json()["candidates"][0]["id"] == "basic.echo"
        await answers_everything(home)  # the real files again, written anew


def forged(data: bytes, change: dict[str, object]) -> bytes:
    """The index file with its header changed and every checksum made to match."""
    size = int.from_bytes(data[len(stored_index.MAGIC) : len(stored_index.MAGIC) + 8], "little")
    header = json.loads(data[stored_index.PREAMBLE : stored_index.PREAMBLE + size]) | change
    body = data[stored_index.PREAMBLE + size :]
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-(stored_index.PREAMBLE + len(head)) % 8)
    crc = zlib.crc32(body, zlib.crc32(head))
    return stored_index.MAGIC + len(head).to_bytes(8, "little") + crc.to_bytes(8, "little") + head + body


def shifted_spans(data: bytes) -> bytes:
    """Every span moved one byte on, with the checksums made to match."""
    size = int.from_bytes(data[len(stored_index.MAGIC) : len(stored_index.MAGIC) + 8], "little")
    header = json.loads(data[stored_index.PREAMBLE : stored_index.PREAMBLE + size])
    body = bytearray(data[stored_index.PREAMBLE + size :])
    start, length = header["sections"]["spans"]
    for at in range(start, start + length, 8):
        value = int.from_bytes(body[at : at + 8], "little") + 1
        body[at : at + 8] = value.to_bytes(8, "little")
    return forged(data[: stored_index.PREAMBLE + size] + bytes(body), {})


async def test_forged_indexes_are_built_again_and_the_answers_stay_true(tmp_path: Path) -> None:
    home = await warmed(tmp_path)
    index = cached(home, "index-*.bin")
    original = index.read_bytes()
    catalog = cached(home, "tools-*.json")
    for name, planted in (
        ("relabelled", forged(original, {"server": "other"})),
        ("spans off by one", shifted_spans(original)),
        ("header edited, checksum not", original.replace(b'"server":"basic"', b'"server":"other"')),
    ):
        index.write_bytes(planted)
        await restart_engine(home)  # what a new process reads from the disk
        run = await cli(home, "discover", "echo", "--json")
        assert run.code == 0, (name, run.stderr)
        assert "Traceback" not in run.stderr, name
        found = run.json()
        assert [c["server"] for c in found["candidates"]] == ["basic"] * len(found["candidates"]), name
        assert found["candidates"][0]["id"] == "basic.echo", name
        assert index.read_bytes() != planted, f"{name}: the index was built again"
    # A two-day-old catalog is not served because its index says it is new: the catalog says when.
    old = json.loads(catalog.read_text(encoding="utf-8"))
    old["fetchedAt"] -= 2 * 24 * 3600
    catalog.write_text(json.dumps(old, separators=(",", ":"), ensure_ascii=False), encoding="utf-8")
    change = {"catalog": stored_index.catalog_digest(catalog.read_bytes()), "fetchedAt": old["fetchedAt"] + 2 * 86400}
    index.write_bytes(forged(index.read_bytes(), change))
    await restart_engine(home)
    async with start_sidecar(home) as sidecar:
        await sidecar.request("mcp/discover", {"query": "echo", "kind": "tools"}, timeout=LIMIT_S)
        (row,) = (await sidecar.request("mcp/status"))["servers"]
    assert row["catalogSource"] == "live"


async def test_a_descriptor_that_does_not_parse_means_a_rebuild_not_an_internal_error(tmp_path: Path) -> None:
    home = await warmed(tmp_path)
    catalog = cached(home, "tools-*.json")
    index = cached(home, "index-*.bin")
    raw = catalog.read_bytes()
    # Break one descriptor's JSON without moving a bracket, and make the index agree with the file.
    at = raw.index(b'{"name":"echo"') + len(b'{"name":"echo"')
    broken = raw[:at] + b"\x00" + raw[at + 1 :]
    assert len(broken) == len(raw)
    catalog.write_bytes(broken)
    digest = stored_index.catalog_digest(broken)
    index.write_bytes(forged(index.read_bytes(), {"catalog": digest}))
    run = await cli(home, "discover", "echo", "--json")
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert run.json()["candidates"][0]["id"] == "basic.echo"
    async with start_sidecar(home) as sidecar:
        found = await sidecar.request("mcp/discover", {"query": "echo", "kind": "tools"}, timeout=LIMIT_S)
    assert found["candidates"][0]["id"] == "basic.echo"
