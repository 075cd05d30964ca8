"""The on-disk tool catalog cache: private files, 24-hour expiry (or a server's shorter TTL), atomic writes."""

from __future__ import annotations

import json
import logging
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.catalog import disk_cache
from mcp_sidecar.catalog.disk_cache import FORMAT_VERSION, TTL_SECONDS, ToolCache, atomic_write, cache_key

TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object", "required": ["text"]}},
    {"name": "add", "title": "Add", "inputSchema": {"type": "object"}},
]
NOW = 1_800_000_000.0


@pytest.fixture
def cache(tmp_path: Path) -> ToolCache:
    return ToolCache(tmp_path / "cache" / "catalogs")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_round_trip(cache: ToolCache) -> None:
    key = cache_key("basic", "fingerprint", Path("/work/app"))
    cache.store(key, "basic", TOOLS, NOW)
    assert cache.load(key, now=NOW + 1) == (TOOLS, NOW, TTL_SECONDS)
    [path] = cache.directory.iterdir()
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "version": FORMAT_VERSION,
        "key": key,
        "server": "basic",
        "fetchedAt": NOW,
        "freshS": TTL_SECONDS,
        "tools": TOOLS,
    }


def test_absent_is_a_miss(cache: ToolCache) -> None:
    assert cache.load("nothing", now=NOW) is None


@pytest.mark.parametrize(
    ("age", "hit"),
    [
        (0, True),
        (TTL_SECONDS - 1, True),
        (TTL_SECONDS, True),
        (TTL_SECONDS + 1, False),
        (25 * 3600, False),
        (-60, False),
    ],
    ids=["fresh", "almost-24h", "exactly-24h", "just-expired", "25h", "from-the-future"],
)
def test_entries_expire_after_24_hours(cache: ToolCache, age: float, hit: bool) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    assert (cache.load("k", now=NOW + age) is not None) is hit


def test_now_zero_is_a_time_not_a_default(cache: ToolCache) -> None:
    cache.store("k", "basic", TOOLS, 1000.0)
    assert cache.load("k", now=0.0) is None  # fetched "in the future" of t=0: ignored


def test_an_expired_file_is_not_deleted_but_a_new_store_replaces_it(cache: ToolCache) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    assert cache.load("k", now=NOW + 2 * TTL_SECONDS) is None
    cache.store("k", "basic", TOOLS[:1], NOW + 2 * TTL_SECONDS)
    assert cache.load("k", now=NOW + 2 * TTL_SECONDS) == (TOOLS[:1], NOW + 2 * TTL_SECONDS, TTL_SECONDS)


@pytest.mark.parametrize(("age", "hit"), [(0, True), (600, True), (601, False)])
def test_a_shorter_life_given_at_store_expires_the_file_sooner(cache: ToolCache, age: float, hit: bool) -> None:
    """A server's `ttlMs` for a public list (`catalog/freshness.py`)."""
    cache.store("k", "basic", TOOLS, NOW, fresh_s=600)
    loaded = cache.load("k", now=NOW + age)
    assert (loaded is not None) is hit
    assert loaded is None or loaded.fresh_s == 600


def test_a_life_is_never_longer_than_24_hours(cache: ToolCache) -> None:
    cache.store("k", "basic", TOOLS, NOW, fresh_s=10 * TTL_SECONDS)
    assert cache.load("k", now=NOW + TTL_SECONDS) == (TOOLS, NOW, TTL_SECONDS)
    assert cache.load("k", now=NOW + TTL_SECONDS + 1) is None


@pytest.mark.parametrize("fresh", [0, -5, "600", True, 10 * TTL_SECONDS, None])
def test_a_file_with_a_bad_life_is_a_miss(cache: ToolCache, fresh: object) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    [path] = cache.directory.iterdir()
    data = json.loads(path.read_text(encoding="utf-8"))
    data["freshS"] = fresh
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cache.load("k", now=NOW) is None


def test_a_file_from_before_lives_24_hours(cache: ToolCache) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    [path] = cache.directory.iterdir()
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["freshS"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cache.load("k", now=NOW + TTL_SECONDS) == (TOOLS, NOW, TTL_SECONDS)


def test_key_depends_on_name_definition_workspace_and_what_is_offered() -> None:
    base = cache_key("s", "fp", Path("/a"))
    assert base == cache_key("s", "fp", Path("/a")) == cache_key("s", "fp", Path("/a"), {})
    others = {
        cache_key("t", "fp", Path("/a")),  # same definition under another name: a file of its own
        cache_key("s", "fp2", Path("/a")),
        cache_key("s", "fp", Path("/b")),
        cache_key("s", "fp", None),
        # Servers list some tools only to a client offering sampling or elicitation.
        cache_key("s", "fp", Path("/a"), {"sampling": {}}),
        cache_key("s", "fp", Path("/a"), {"elicitation": {"form": {}}}),
    }
    assert len({base, *others}) == 7


def rewrite(cache: ToolCache, key: str, **changes: Any) -> None:
    path = cache.directory / f"tools-{key}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_a_file_written_for_another_key_is_ignored(cache: ToolCache) -> None:
    cache.store("first", "basic", TOOLS, NOW)
    os.replace(cache.directory / "tools-first.json", cache.directory / "tools-second.json")
    assert cache.load("second", now=NOW) is None


@pytest.mark.parametrize(
    "changes",
    [
        {"version": FORMAT_VERSION + 1},
        {"version": None},
        {"fetchedAt": "yesterday"},
        {"tools": {"echo": {}}},
        {"tools": [{"description": "no name"}]},
        {"tools": ["echo"]},
    ],
    ids=["newer-version", "no-version", "bad-time", "tools-not-a-list", "tool-without-name", "tool-not-an-object"],
)
def test_a_file_of_another_format_is_ignored(cache: ToolCache, changes: dict[str, Any]) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    rewrite(cache, "k", **changes)
    assert cache.load("k", now=NOW) is None


@pytest.mark.parametrize("content", [b"", b"{not json", b"[1, 2]", b"\xff\xfe\x00garbage"])
def test_a_corrupt_file_is_ignored(cache: ToolCache, content: bytes) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    (cache.directory / "tools-k.json").write_bytes(content)
    assert cache.load("k", now=NOW) is None


def test_directory_is_0700_and_files_0600(cache: ToolCache) -> None:
    old = os.umask(0o022)
    try:
        cache.store("k", "basic", TOOLS, NOW)
    finally:
        os.umask(old)
    assert mode(cache.directory) == 0o700
    assert mode(cache.directory / "tools-k.json") == 0o600


def test_an_existing_open_directory_is_made_private(cache: ToolCache) -> None:
    cache.directory.mkdir(parents=True)
    os.chmod(cache.directory, 0o755)
    cache.store("k", "basic", TOOLS, NOW)
    assert mode(cache.directory) == 0o700


def test_a_write_leaves_no_temporary_file(cache: ToolCache) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    cache.store("k", "basic", TOOLS[:1], NOW + 1)
    cache.store("other", "basic", TOOLS, NOW)
    assert sorted(p.name for p in cache.directory.iterdir()) == ["tools-k.json", "tools-other.json"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "file.json"
    atomic_write(target, "old")

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.json"]


def test_atomic_write_failure_on_rename_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "file.json"
    atomic_write(target, "old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(5, "I/O error")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="I/O error"):
        atomic_write(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["file.json"]


def test_a_failed_store_is_logged_not_raised_and_keeps_the_old_entry(
    cache: ToolCache, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    cache.store("k", "basic", TOOLS, NOW)

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device /secret/path")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    cache.store("k", "basic", TOOLS[:1], NOW + 1)
    assert cache.load("k", now=NOW + 1) == (TOOLS, NOW, TTL_SECONDS)
    assert "could not write the tool cache: OSError" in caplog.text
    assert "/secret/path" not in caplog.text


def test_store_into_an_unusable_directory_logs_and_stores_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the directory should be", encoding="utf-8")
    unusable = ToolCache(blocker / "catalogs")
    with caplog.at_level(logging.WARNING, logger=disk_cache.__name__):
        unusable.store("k", "basic", TOOLS, NOW)  # must not raise: the cache is an optimisation
    assert [r.getMessage() for r in caplog.records] == ["could not write the tool cache: FileExistsError"]
    assert unusable.load("k", now=NOW) is None
    assert blocker.read_text(encoding="utf-8") == "a file where the directory should be"
    assert [p.name for p in tmp_path.iterdir()] == ["cache"]


def test_invalidate_removes_the_entry_and_tolerates_absence(cache: ToolCache) -> None:
    cache.store("k", "basic", TOOLS, NOW)
    cache.invalidate("k")
    assert cache.load("k", now=NOW) is None
    cache.invalidate("k")
    cache.invalidate("never-stored")


# -- the directory is checked on every use ----------------------------------------------------

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown to another user")


def planted(directory: Path, key: str) -> Path:
    """A valid cache file, written where the sidecar must not take it from."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"tools-{key}.json"
    payload = {"version": FORMAT_VERSION, "key": key, "server": "basic", "fetchedAt": NOW, "tools": TOOLS}
    path.write_text(json.dumps(payload), encoding="utf-8")
    os.chmod(directory, 0o755)
    return path


def refused_everything(cache: ToolCache, victim: Path, path: Path, caplog: pytest.LogCaptureFixture, why: str) -> None:
    before = path.read_bytes()
    assert cache.load("k", now=NOW) is None
    cache.store("k", "basic", TOOLS[:1], NOW)
    cache.store("other", "basic", TOOLS[:1], NOW)
    cache.invalidate("k")
    assert path.read_bytes() == before
    assert sorted(p.name for p in victim.iterdir()) == ["tools-k.json"]
    assert mode(victim) == 0o755
    warning = (
        f"[directory_unsafe] The catalog cache directory {cache.directory} {why}; it is not read, written or cleaned."
    )
    assert caplog.text.count(warning) == 1  # once, not on every lookup


def test_a_symlinked_directory_is_never_read_written_chmodded_or_cleaned(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    victim = tmp_path / "victim"
    path = planted(victim, "k")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "catalogs").symlink_to(victim)
    refused_everything(ToolCache(tmp_path / "cache" / "catalogs"), victim, path, caplog, "is a symbolic link")


@needs_root
def test_a_directory_of_another_user_is_never_read_written_chmodded_or_cleaned(
    cache: ToolCache, caplog: pytest.LogCaptureFixture
) -> None:
    path = planted(cache.directory, "k")
    for item in (cache.directory, path):
        os.chown(item, NOBODY, NOBODY)
    refused_everything(cache, cache.directory, path, caplog, "is owned by another user")


@needs_root
def test_a_file_of_another_user_in_our_directory_is_not_served(cache: ToolCache) -> None:
    path = planted(cache.directory, "k")
    os.chown(path, NOBODY, NOBODY)
    assert cache.load("k", now=NOW) is None


def test_a_symlinked_cache_file_is_not_followed(cache: ToolCache, tmp_path: Path) -> None:
    outside = planted(tmp_path / "outside", "k")
    cache.directory.mkdir(parents=True)
    (cache.directory / "tools-k.json").symlink_to(outside)
    assert cache.load("k", now=NOW) is None
    cache.invalidate("k")  # removes the link, never its target
    assert outside.exists()
    assert not (cache.directory / "tools-k.json").is_symlink()


def test_storing_an_index_prunes_what_can_never_be_served_again(cache: ToolCache, tmp_path: Path) -> None:
    live, gone, stale = (cache_key(name, "fp", Path("/work")) for name in ("live", "gone", "stale"))
    for key in (live, stale):
        cache.store(key, "s", TOOLS, NOW)
        cache.store_index(key, b"an index")
    cache.store_index(gone, b"an index whose catalog is gone")
    now = time.time()
    old = now - disk_cache.STALE_SECONDS - 60
    os.utime(cache.directory / f"tools-{stale}.json", (old, old))
    (cache.directory / "notes.txt").write_text("not the cache's", encoding="utf-8")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not ours to remove")
    (cache.directory / f"index-{'0' * 40}.bin").symlink_to(outside)

    cache.prune(now=now)

    assert sorted(p.name for p in cache.directory.iterdir()) == sorted(
        ["notes.txt", f"index-{'0' * 40}.bin", f"tools-{live}.json", f"index-{live}.bin"]
    )
    assert outside.read_bytes() == b"not ours to remove"


def test_token_estimates_are_kept_and_removed_with_their_catalog(cache: ToolCache) -> None:
    live, gone, stale, other = (cache_key(name, "fp", Path("/work")) for name in ("live", "gone", "stale", "other"))
    for key in (live, stale, other):
        cache.store(key, "s", TOOLS, NOW)
        cache.store_tokens(key, b"estimates")
    cache.store_tokens(gone, b"estimates whose catalog is gone")
    assert cache.load_tokens(live) == b"estimates"

    cache.invalidate(other, index_only=True)  # a damaged index: the estimates stay
    assert cache.load_tokens(other) == b"estimates"
    cache.invalidate(other)  # the catalog goes: so do they
    assert cache.load_tokens(other) is None
    now = time.time()
    old = now - disk_cache.STALE_SECONDS - 60
    os.utime(cache.directory / f"tools-{stale}.json", (old, old))
    cache.prune(now=now)

    assert sorted(p.name for p in cache.directory.iterdir()) == sorted([f"tools-{live}.json", f"tokens-{live}.json"])
