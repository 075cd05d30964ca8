"""The sidecar's private files end to end: spill files, the catalog cache and the log file.

A spill or cache directory that is a symbolic link, or owned by another user, is refused on
every use (`directory_unsafe`): nothing in it is listed, deleted, written, chmodded or served.
A spill write that fails part of the way (the file size limit, standing in for a full disk)
leaves no partial file. The log file is created 0600 and never opened through a link or
when another user's. Tests run as root, so "another user" is a directory chowned to nobody.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support.servers import basic_stdio, fixture_stdio
from support.sidecar import SidecarClient, diagnostic_of, restart_engine, start_sidecar, write_config

NOBODY = 65534
VICTIM_FILES = {"notes.json": '{"mine": true}', "report.txt": "a file of the victim's"}
HINT = (
    "The sidecar's spill or cache directory must be a real directory owned by you: remove the link or "
    "the other user's directory (the sidecar recreates it, private) or set MCP_SIDECAR_HOME elsewhere."
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def victim_dir(path: Path, owner: int | None = None) -> Path:
    """A directory with files the sidecar must leave alone (0755, like a usual home directory)."""
    path.mkdir(parents=True)
    for name, text in VICTIM_FILES.items():
        (path / name).write_text(text, encoding="utf-8")
    os.chmod(path, 0o755)
    if owner is not None:
        for item in (path, *path.iterdir()):
            os.chown(item, owner, owner)
    return path


def untouched(path: Path) -> bool:
    found = {p.name: p.read_text(encoding="utf-8") for p in path.iterdir()}
    return found == VICTIM_FILES and mode(path) == 0o755


async def call_payload(sidecar: SidecarClient, mib: float) -> dict[str, Any]:
    await sidecar.request("mcp/activate", {"ids": ["content.payload"]})
    result: dict[str, Any] = await sidecar.request(
        "mcp/callTool", {"id": "content.payload", "arguments": {"mib": mib}}, timeout=120
    )
    return result


NOT_SAVED = "[Output truncated to the limits (2,000 lines or 50 KiB); the full result could not be saved.]"


# -- spill directory --------------------------------------------------------------------------


async def check_spill_refused(sidecar: SidecarClient, home: Path, why: str) -> None:
    spill = home / "cache" / "spill"
    listed = diagnostic_of(await sidecar.error("mcp/spill/list"))
    assert listed == {
        "code": "directory_unsafe",
        "operation": "spill",
        "message": f"The spill directory {spill} {why}; nothing was listed.",
        "hint": HINT,
    }
    for params in ({}, {"olderThanDays": 0}):
        cleaned = diagnostic_of(await sidecar.error("mcp/spill/clean", params))
        assert (cleaned["code"], cleaned["message"]) == (
            "directory_unsafe",
            f"The spill directory {spill} {why}; nothing was removed.",
        )
    # A result too large to show is cut, and not saved there either.
    result = await call_payload(sidecar, 0.2)
    assert (result["truncated"], result["spill"]) == (True, None)
    assert result["content"][-1] == {"type": "text", "text": NOT_SAVED}


async def test_a_symlinked_spill_directory_is_never_listed_cleaned_or_written(home: Path, tmp_path: Path) -> None:
    victim = victim_dir(tmp_path / "victim")
    (home / "cache").mkdir(parents=True)
    (home / "cache" / "spill").symlink_to(victim, target_is_directory=True)
    write_config(home, {"content": fixture_stdio("content.py", "stdio", protocol="legacy")})
    async with start_sidecar(home) as sidecar:
        await check_spill_refused(sidecar, home, "is a symbolic link")
    assert untouched(victim)


async def test_a_spill_directory_of_another_user_is_never_listed_cleaned_or_written(home: Path, tmp_path: Path) -> None:
    spill = victim_dir(home / "cache" / "spill", owner=NOBODY)
    write_config(home, {"content": fixture_stdio("content.py", "stdio", protocol="legacy")})
    async with start_sidecar(home) as sidecar:
        await check_spill_refused(sidecar, home, "is owned by another user")
    assert untouched(spill)
    assert spill.stat().st_uid == NOBODY


@contextmanager
def file_size_limit(tmp_path: Path, limit: int) -> Iterator[dict[str, str]]:
    """Environment that starts Python processes with RLIMIT_FSIZE at `limit` bytes (through a
    sitecustomize module): a write past it fails with EFBIG, as a full disk fails with ENOSPC."""
    site = tmp_path / "fsize-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        f"import resource\nresource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n", encoding="utf-8"
    )
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    yield {"PYTHONPATH": path}


async def test_a_spill_write_that_fails_midway_leaves_no_partial_file(home: Path, tmp_path: Path) -> None:
    write_config(home, {"content": fixture_stdio("content.py", "stdio", protocol="legacy")})
    with file_size_limit(tmp_path, 2 * 1024 * 1024) as env:
        async with start_sidecar(home, env=env) as sidecar:
            small = await call_payload(sidecar, 0.5)  # under the limit: saved whole
            large = await call_payload(sidecar, 6)  # the write stops at 2 MiB
            listed = await sidecar.request("mcp/spill/list")
    assert small["spill"]["bytes"] > 512 * 1024
    assert (large["truncated"], large["spill"]) == (True, None)
    assert large["content"][-1] == {"type": "text", "text": NOT_SAVED}
    spill = home / "cache" / "spill"
    assert [p.name for p in spill.iterdir()] == [Path(small["spill"]["path"]).name]
    assert [f["path"] for f in listed["files"]] == [small["spill"]["path"]]


# -- catalog cache ----------------------------------------------------------------------------


async def planted_cache(home: Path) -> Path:
    """Let a sidecar cache `basic`'s tools, then add a tool to the file, as another user would."""
    # Public: a modern server's private lists (the SDK's default) never reach the disk cache.
    write_config(home, {"basic": basic_stdio("--cache-hints", "0:public")})
    async with start_sidecar(home) as sidecar:
        await sidecar.request("mcp/server/tools", {"server": "basic"})
    [path] = (home / "cache" / "catalogs").glob("tools-*.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tools"].append({"name": "planted_tool", "description": "Planted by another user.", "inputSchema": {}})
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def kept_with(catalog: Path) -> list[str]:
    """The catalog file and its token figures (counted when its tools were listed), nothing else."""
    return sorted([catalog.name, catalog.name.replace("tools-", "tokens-", 1)])


async def check_cache_refused(home: Path, why: str) -> None:
    catalogs = home / "cache" / "catalogs"
    await restart_engine(home)  # what a new process finds on disk
    async with start_sidecar(home) as sidecar:
        [row] = (await sidecar.request("mcp/status"))["servers"]
        assert (row["catalogSource"], row["catalog"]["tools"]) == (None, None)  # nothing served from disk
        found = await sidecar.request("mcp/discover", {"query": "planted", "kind": "tools"})
        assert "basic.planted_tool" not in [c["id"] for c in found["candidates"]]
        tools = await sidecar.request("mcp/server/tools", {"server": "basic"})
        assert "planted_tool" not in json.dumps(tools)
        await sidecar.request("mcp/server/refresh", {"server": "basic"})  # invalidates, then stores
        log = sidecar.log_text()
    warning = (
        f"[directory_unsafe] The catalog cache directory {catalogs} {why}; it is not read, written or cleaned. {HINT}"
    )
    assert log.count(warning) == 1, log[-2000:]


async def test_a_symlinked_catalog_cache_is_never_served_written_or_chmodded(home: Path, tmp_path: Path) -> None:
    planted = await planted_cache(home)
    elsewhere = tmp_path / "elsewhere"
    (home / "cache" / "catalogs").rename(elsewhere)
    os.chmod(elsewhere, 0o755)
    (home / "cache" / "catalogs").symlink_to(elsewhere, target_is_directory=True)
    before = (elsewhere / planted.name).read_bytes()
    await check_cache_refused(home, "is a symbolic link")
    assert sorted(p.name for p in elsewhere.iterdir()) == kept_with(planted)
    assert (elsewhere / planted.name).read_bytes() == before
    assert mode(elsewhere) == 0o755


async def test_a_catalog_cache_of_another_user_is_never_served_written_or_chmodded(home: Path) -> None:
    planted = await planted_cache(home)
    catalogs = planted.parent
    os.chmod(catalogs, 0o755)
    for item in (catalogs, planted):
        os.chown(item, NOBODY, NOBODY)
    before = planted.read_bytes()
    await check_cache_refused(home, "is owned by another user")
    assert sorted(p.name for p in catalogs.iterdir()) == kept_with(planted)
    assert planted.read_bytes() == before
    assert (mode(catalogs), catalogs.stat().st_uid) == (0o755, NOBODY)


# -- log file ---------------------------------------------------------------------------------


@contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


async def test_the_log_file_is_created_private(home: Path) -> None:
    write_config(home, {})
    with umask(0o022):
        async with start_sidecar(home) as sidecar:
            await sidecar.error("mcp/server/tools", {"server": "missing"})
    log = home / "sidecar.log"
    assert mode(log) == 0o600
    assert "mcp_sidecar.handlers.base: tools failed: server_not_found" in log.read_text(encoding="utf-8")


async def test_an_existing_open_log_file_is_made_private(home: Path) -> None:
    write_config(home, {})
    log = home / "sidecar.log"
    log.write_text("an earlier run\n", encoding="utf-8")
    os.chmod(log, 0o644)
    async with start_sidecar(home) as sidecar:
        await sidecar.request("mcp/status")
    assert mode(log) == 0o600
    assert log.read_text(encoding="utf-8").startswith("an earlier run\n")


async def test_a_log_file_that_is_a_link_or_another_users_is_not_written(home: Path, tmp_path: Path) -> None:
    write_config(home, {})
    target = tmp_path / "bashrc"
    target.write_text("export KEEP=me\n", encoding="utf-8")
    (home / "sidecar.log").symlink_to(target)
    async with start_sidecar(home) as sidecar:
        await sidecar.error("mcp/server/tools", {"server": "missing"})  # logged (to stderr only)
        assert (await sidecar.request("mcp/status"))["servers"] == []
    assert target.read_text(encoding="utf-8") == "export KEEP=me\n"
    assert mode(target) == 0o644

    (home / "sidecar.log").unlink()
    theirs = home / "sidecar.log"
    theirs.write_text("", encoding="utf-8")
    os.chmod(theirs, 0o666)
    os.chown(theirs, NOBODY, NOBODY)
    async with start_sidecar(home) as sidecar:
        await sidecar.error("mcp/server/tools", {"server": "missing"})  # logged (to stderr only)
        assert (await sidecar.request("mcp/status"))["servers"] == []
    assert theirs.read_text(encoding="utf-8") == ""
    assert (mode(theirs), theirs.stat().st_uid) == (0o666, NOBODY)


async def test_a_log_file_hard_linked_to_another_file_is_not_written(home: Path, tmp_path: Path) -> None:
    """O_NOFOLLOW does not see a hard link: one planted where `fs.protected_hardlinks` is off."""
    write_config(home, {})
    target = tmp_path / "profile"
    target.write_text("export KEEP=me\n", encoding="utf-8")
    os.chmod(target, 0o644)
    os.link(target, home / "sidecar.log")
    async with start_sidecar(home) as sidecar:
        await sidecar.error("mcp/server/tools", {"server": "missing"})  # logged (to stderr only)
        assert (await sidecar.request("mcp/status"))["servers"] == []
    assert target.read_text(encoding="utf-8") == "export KEEP=me\n"
    assert mode(target) == 0o644
