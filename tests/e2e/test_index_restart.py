"""A start's first discovery ranks from the index stored beside the disk-cached catalog: the same
answer (token figures included) as the sidecar that built it, no server started, and the files
private."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from support.servers import basic_stdio
from support.sidecar import restart_engine, start_sidecar, write_config

QUERIES = ("echo", "add two numbers", "send something back to me", "zebra crossing")


def catalogs(home: Path) -> dict[str, int]:
    return {p.name.split("-")[0]: stat.S_IMODE(p.stat().st_mode) for p in (home / "cache" / "catalogs").iterdir()}


async def test_a_restart_answers_from_the_stored_index_without_starting_the_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    counter = tmp_path / "started.txt"
    # Public: a modern server's private lists (the SDK's default) never reach the disk cache.
    write_config(home, {"basic": basic_stdio("--cache-hints", "0:public", "--counter-file", str(counter))})
    async with start_sidecar(home) as sidecar:
        first = [await sidecar.request("mcp/discover", {"query": q, "kind": "tools"}) for q in QUERIES]
        await sidecar.request("mcp/server/tools", {"server": "basic"})  # its token figures counted and kept
    assert catalogs(home) == {"index": 0o600, "tokens": 0o600, "tools": 0o600}
    started = counter.read_text(encoding="utf-8").split()
    assert len(started) == 1

    await restart_engine(home)  # a restart: the next sidecar starts from the disk
    async with start_sidecar(home) as sidecar:
        again = [await sidecar.request("mcp/discover", {"query": q, "kind": "tools"}) for q in QUERIES]
        [row] = (await sidecar.request("mcp/status"))["servers"]
    for a, f in zip(again, first, strict=True):
        assert a["candidates"] == f["candidates"], json.dumps([a["candidates"], f["candidates"]], indent=0)
    assert [a["text"] for a in again] == [f["text"] for f in first]
    assert first[0]["candidates"][0]["id"] == "basic.echo"
    # Meaning took part: it ranked the paraphrase from the stored embeddings.
    assert any("semantic" in c["match"]["signals"] for c in again[2]["candidates"])
    assert (row["state"], row["catalogSource"]) == ("idle", "cache")
    assert counter.read_text(encoding="utf-8").split() == started  # nothing was started to answer
