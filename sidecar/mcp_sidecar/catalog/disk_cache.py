"""Tool catalogs cached on disk, privately, for 24 hours (or less, when the server says so).

One JSON file per server, named by a hash of the server's name, its definition as written
(its `${VAR}` references, never their values) and the working directory: two servers with
the same definition keep files of their own, so one's change notice never drops the
other's. Files hold tool descriptors only, never a credential or an interpolated value. The
directory is 0700 and files 0600; writes are atomic (temporary file in the same directory,
fsync, rename), so a crash leaves the old file or the new one, never half of one.

Every read, write and removal checks the directory first, like spill files do: a symbolic
link, something other than a directory, or a directory owned by another user is refused
(logged once as `directory_unsafe`), so nothing is served from it, written to it (or
chmodded), or deleted in it. Inside, files are opened without following links, and only a
regular file of this user's is served.

A file also says how long it may be served (`freshS`, at most 24 hours): a modern server's `ttlMs`
for a `public` list shortens it (`catalog/freshness.py`); a `private` list is never written here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from mcp_sidecar import fs
from mcp_sidecar.fs import atomic_write as atomic_write  # kept importable from here
from mcp_sidecar.protocol.errors import diagnostic

log = logging.getLogger(__name__)

TTL_SECONDS = 24 * 3600
FORMAT_VERSION = 1
STALE_SECONDS = 7 * 24 * 3600
"""A catalog file untouched this long is removed (with its index) when an index is stored."""
MAX_FILE_BYTES = 64 * 1024 * 1024
"""Far above any catalog the sidecar accepts (10,000 tools, 4 MiB of descriptors)."""


class CachedTools(NamedTuple):
    tools: list[dict[str, Any]]
    fetched_at: float
    fresh_s: float
    """How long after `fetched_at` the copy may be served, at most TTL_SECONDS."""


def cache_key(server: str, fingerprint: str, workspace: Path | None, offered: Mapping[str, Any] | None = None) -> str:
    """The file of one server's catalog: its definition as written, where it runs, and what it is
    offered (servers list some tools only to clients that offer elicitation or sampling)."""
    material = json.dumps(
        {
            "v": FORMAT_VERSION,
            "name": server,
            "server": fingerprint,
            "cwd": str(workspace or ""),
            "offer": offered or {},
        },
        sort_keys=True,
    )
    return hashlib.sha256(material.encode()).hexdigest()[:40]


class ToolCache:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._reported: str | None = None
        """The last refusal logged, so a refused directory is reported once, not on every lookup."""

    def _name(self, key: str) -> str:
        return f"tools-{key}.json"

    def _index_name(self, key: str) -> str:
        return f"index-{key}.bin"

    def _tokens_name(self, key: str) -> str:
        return f"tokens-{key}.json"

    def _refused(self, exc: fs.UnsafeDirectory) -> None:
        if self._reported == exc.why:
            return
        self._reported = exc.why
        message = f"The catalog cache directory {exc.path} {exc.why}; it is not read, written or cleaned."
        log.warning("%s", diagnostic("directory_unsafe", "catalog cache", message).render())

    def read(self, key: str) -> bytes | None:
        """The catalog file's bytes, unparsed, or None when absent or unreadable."""
        return self._read(self._name(key), quiet=False)

    def _read(self, name: str, *, quiet: bool) -> bytes | None:
        try:
            with fs.private_directory(self.directory, create=False) as dir_fd:
                if dir_fd is None:
                    return None
                return fs.read_private_file(dir_fd, name, MAX_FILE_BYTES)
        except FileNotFoundError:
            return None
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
            return None
        except (OSError, ValueError):
            if not quiet:
                log.warning("ignoring an unreadable tool cache file")
            return None

    def load(self, key: str, now: float | None = None) -> CachedTools | None:
        """The cached descriptors, when they were fetched and for how long, or None when absent,
        expired or unreadable."""
        raw = self.read(key)
        return None if raw is None else parse(key, raw, now)

    def store(
        self, key: str, server: str, tools: list[dict[str, Any]], fetched_at: float, fresh_s: float = TTL_SECONDS
    ) -> bytes | None:
        """Write the catalog; the bytes written, or None when it could not be."""
        payload = {
            "version": FORMAT_VERSION,
            "key": key,
            "server": server,
            "fetchedAt": fetched_at,
            "freshS": min(fresh_s, TTL_SECONDS),
            "tools": tools,  # last: `stored_index.tool_spans` relies on it
        }
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        return data if self._write(self._name(key), data, "the tool cache") else None

    def load_index(self, key: str) -> bytes | None:
        """The stored index file beside catalog `key` (`catalog/stored_index.py`), unchecked."""
        return self._read(self._index_name(key), quiet=True)

    def store_index(self, key: str, data: bytes) -> None:
        if self._write(self._index_name(key), data, "a catalog index"):
            self.prune()

    def load_tokens(self, key: str) -> bytes | None:
        """The token estimates kept beside catalog `key` (`catalog/token_count.py`), unchecked."""
        return self._read(self._tokens_name(key), quiet=True)

    def store_tokens(self, key: str, data: bytes) -> None:
        self._write(self._tokens_name(key), data, "token estimates")

    def holds_indexes(self) -> bool:
        """Whether an earlier discovery left an index here (a next one will read it): names only."""
        try:
            return any(name.startswith("index-") for name in os.listdir(self.directory))
        except OSError:
            return False

    def prune(self, now: float | None = None) -> None:
        """Remove what can never be served again: an index or token estimates whose catalog is gone,
        and a catalog (with its index and estimates) untouched for `STALE_SECONDS`, long past its 24
        hours (a definition that changed keys its catalog anew, so nothing replaces the old file)."""
        now = time.time() if now is None else now
        try:
            with fs.private_directory(self.directory, create=False) as dir_fd:
                if dir_fd is None:
                    return
                names = set(os.listdir(dir_fd))
                for name in sorted(names):
                    key = _key_of(name)
                    if key is None:
                        continue
                    if name.startswith(("index-", "tokens-")) and self._name(key) not in names:
                        fs.unlink_own_file(dir_fd, name)
                    elif name.startswith("tools-") and _age(dir_fd, name, now) > STALE_SECONDS:
                        fs.unlink_own_file(dir_fd, name)
                        fs.unlink_own_file(dir_fd, self._index_name(key))
                        fs.unlink_own_file(dir_fd, self._tokens_name(key))
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
        except OSError as exc:
            log.warning("could not prune the tool cache: %s", type(exc).__name__)

    def _write(self, name: str, data: bytes, what: str) -> bool:
        """Replace `name` atomically in the checked directory; whether it was written."""
        try:
            with fs.private_directory(self.directory, create=True) as dir_fd:
                assert dir_fd is not None
                fs.atomic_write_at(dir_fd, name, data)
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
            return False
        except OSError as exc:
            log.warning("could not write %s: %s", what, type(exc).__name__)
            return False
        return True

    def invalidate(self, key: str, *, index_only: bool = False) -> None:
        """Remove catalog `key` with its index and token estimates (`index_only`: the index alone)."""
        names = (
            (self._index_name(key),) if index_only else (self._name(key), self._index_name(key), self._tokens_name(key))
        )
        try:
            with fs.private_directory(self.directory, create=False) as dir_fd:
                if dir_fd is not None:
                    for name in names:
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(name, dir_fd=dir_fd)
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
        except OSError as exc:
            log.warning("could not remove a tool cache file: %s", type(exc).__name__)


def parse(key: str, raw: bytes, now: float | None = None, *, fresh_only: bool = True) -> CachedTools | None:
    """A catalog file's descriptors, when it is this key's, well formed and (`fresh_only`) fresh."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:
        log.warning("ignoring an unreadable tool cache file")
        return None
    if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION or data.get("key") != key:
        return None
    fetched_at = data.get("fetchedAt")
    tools = data.get("tools")
    fresh_s = data.get("freshS", TTL_SECONDS)  # files written before it existed: 24 hours
    if not isinstance(fetched_at, int | float) or not isinstance(tools, list):
        return None
    if fresh_only and not fresh(fetched_at, fresh_s, now):
        return None
    if not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
        return None
    return CachedTools(tools, float(fetched_at), float(fresh_s))


def header(key: str, raw: bytes) -> dict[str, Any] | None:
    """The catalog file's own fields before its `tools` array (`version`, `key`, `server`,
    `fetchedAt`, `freshS`), read without parsing the tools; None unless it is this key's file."""
    end = raw.find(b',"tools":[')
    if end < 0 or len(raw) - end < 12:
        return None
    try:
        fields = json.loads(raw[:end] + b"}")
    except (ValueError, RecursionError):
        return None
    if not isinstance(fields, dict) or fields.get("version") != FORMAT_VERSION or fields.get("key") != key:
        return None
    return fields


def fresh(fetched_at: Any, fresh_s: Any, now: float | None = None) -> bool:
    """Whether a copy fetched at `fetched_at` may still be served (`fresh_s`: at most 24 hours)."""
    if isinstance(fetched_at, bool) or not isinstance(fetched_at, int | float):
        return False
    if isinstance(fresh_s, bool) or not isinstance(fresh_s, int | float) or not 0 < fresh_s <= TTL_SECONDS:
        return False
    age = (time.time() if now is None else now) - fetched_at
    return 0 <= age <= fresh_s


_CACHE_FILE = re.compile(r"(?:tools|index|tokens)-([0-9a-f]{40})\.(?:json|bin)\Z")


def _key_of(name: str) -> str | None:
    found = _CACHE_FILE.fullmatch(name)
    return found.group(1) if found else None


def _age(dir_fd: int, name: str, now: float) -> float:
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return 0.0
    return now - info.st_mtime
