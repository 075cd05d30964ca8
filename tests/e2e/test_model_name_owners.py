"""A model name two servers could own is never given to one of them while the other is down.

Servers `a` and `a__b` meet at `__`: `mcp__a__b__echo` is `a__b.echo`, or `a.b__echo`. With `a`
unreachable nobody knows whether it has `b__echo`, so activating `a__b.echo` would let one
model name stand for two tools once `a` is back; it is refused with the collision's reason.
"""

from __future__ import annotations

from pathlib import Path

from support.servers import basic_stdio, fixture_stdio
from support.sidecar import start_sidecar, write_config


async def test_a_server_that_cannot_be_asked_still_counts_as_an_owner(home: Path) -> None:
    write_config(home, {"a": fixture_stdio("crash_on_start.py"), "a__b": basic_stdio()})
    async with start_sidecar(home) as client:
        result = await client.request("mcp/activate", {"ids": ["a__b.echo"]})
        [row] = result["results"]
        assert (row["status"], row["diagnostic"]["code"]) == ("not loaded", "catalog_entry_invalid")
        assert row["reason"] == (
            "'a__b.echo' and 'a.b__echo' have the same model name 'mcp__a__b__echo' (their mcp__server__tool "
            "forms collide), so neither is activated."
        )
        assert result["tools"] == []
