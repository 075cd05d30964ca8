"""2026-07-28 cache hints end to end: `ttlMs` bounds how long a catalog is used, `cacheScope` where it is kept.

The fixture `basic.py --cache-hints TTL_MS:SCOPE` sends the hints on every list of a modern
session and records each list request it answers (`--concurrency-file`), so re-listing is
counted on the server's side. Each test starts its own sidecars: restarts over one cache
directory show what the disk held.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from support.discovery import cache_files, discover, ids, read_lines, status_row
from support.servers import basic_stdio, started_pids
from support.sidecar import SidecarClient, restart_engine, start_sidecar, write_config

MODERN = "2026-07-28"


class Servers:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.logs = tmp_path / "logs"
        self.logs.mkdir()
        self.definitions: dict[str, object] = {}

    def add(self, name: str, *args: str, **options: object) -> None:
        self.definitions[name] = basic_stdio(
            "--counter-file",
            str(self.logs / f"{name}.pids"),
            "--concurrency-file",
            str(self.logs / name),
            *args,
            **options,
        )

    def write(self) -> None:
        write_config(self.home, self.definitions)

    def tool_lists(self, name: str) -> int:
        return sum(
            1 for line in read_lines(self.logs / name) if line.startswith("listed ") and line.endswith("tools/list")
        )

    def starts(self, name: str) -> int:
        return len(started_pids(self.logs / f"{name}.pids"))


async def tools_of(sidecar: SidecarClient, server: str) -> list[str]:
    return ids(await discover(sidecar, "echo", server=server, kind="tools"))


async def test_a_private_list_is_kept_in_memory_only(tmp_path: Path) -> None:
    servers = Servers(tmp_path)
    servers.add("private", "--cache-hints", "3600000:private")
    servers.add("sdk-defaults")  # the SDK's hints when a server sets none (ttlMs 0, private): no hint
    servers.add("legacy", protocol="legacy")  # handshake era: no hints, the 24-hour disk cache
    servers.write()
    async with start_sidecar(servers.home) as sidecar:
        for name in ("private", "sdk-defaults", "legacy"):
            assert (await tools_of(sidecar, name))[0] == f"{name}.echo"
        assert (await status_row(sidecar, "private"))["protocolVersion"] == MODERN
        # In memory for its TTL of an hour: asked again and again, the server is not (but for the
        # one listing more of a modern session whose change stream came after its first list).
        for _ in range(5):
            await tools_of(sidecar, "private")
        assert servers.tool_lists("private") <= 2
    assert sorted(cache_files(servers.home)) == ["legacy", "sdk-defaults"]

    await restart_engine(servers.home)  # the next sidecar starts from the disk
    async with start_sidecar(servers.home) as again:
        assert (await tools_of(again, "private"))[0] == "private.echo"
        assert (await status_row(again, "legacy"))["catalogSource"] == "cache"
        assert (await tools_of(again, "sdk-defaults"))[0] == "sdk-defaults.echo"
        assert (await status_row(again, "sdk-defaults"))["catalogSource"] == "cache"
    # Nothing of the private list was on disk: the second sidecar had to start the server; the
    # others were discovered from the disk cache without starting.
    assert (servers.starts("private"), servers.starts("legacy"), servers.starts("sdk-defaults")) == (2, 1, 1)
    assert sorted(cache_files(servers.home)) == ["legacy", "sdk-defaults"]


async def test_a_public_list_is_listed_again_once_its_ttl_has_passed(tmp_path: Path) -> None:
    servers = Servers(tmp_path)
    servers.add("short", "--cache-hints", "300:public")
    servers.add("hour", "--cache-hints", "3600000:public")
    servers.write()
    async with start_sidecar(servers.home) as sidecar:
        async with asyncio.timeout(30):
            while servers.tool_lists("short") < 3:
                await tools_of(sidecar, "short")
                await tools_of(sidecar, "hour")
                await asyncio.sleep(0.05)
        # Asked as often, the hour-long list was listed once, twice at most: a modern session also
        # lists once more what it listed before its change stream was acknowledged (changes in
        # between were announced to no one). The 300 ms list was listed again and again.
        assert servers.tool_lists("hour") <= 2
    files = cache_files(servers.home)
    assert sorted(files) == ["hour", "short"]
    assert json.loads(files["hour"].read_text(encoding="utf-8"))["freshS"] == 3600
    assert json.loads(files["short"].read_text(encoding="utf-8"))["freshS"] == 0.3

    # On disk too a copy lives for its TTL only: an hour-old file is not served.
    data = json.loads(files["hour"].read_text(encoding="utf-8"))
    data["fetchedAt"] = time.time() - 3601
    files["hour"].write_text(json.dumps(data), encoding="utf-8")
    await restart_engine(servers.home)  # the next sidecar starts from the disk
    async with start_sidecar(servers.home) as again:
        assert (await tools_of(again, "hour"))[0] == "hour.echo"
        assert (await status_row(again, "hour"))["catalogSource"] == "live"
    assert servers.starts("hour") == 2


async def test_a_fresh_public_file_serves_without_connecting(tmp_path: Path) -> None:
    servers = Servers(tmp_path)
    servers.add("hour", "--cache-hints", "3600000:public")
    servers.write()
    async with start_sidecar(servers.home) as sidecar:
        await tools_of(sidecar, "hour")
    await restart_engine(servers.home)  # the next sidecar starts from the disk
    async with start_sidecar(servers.home) as again:
        assert (await tools_of(again, "hour"))[0] == "hour.echo"
        row = await status_row(again, "hour")
        assert (row["state"], row["catalogSource"]) == ("idle", "cache")
    assert servers.starts("hour") == 1
