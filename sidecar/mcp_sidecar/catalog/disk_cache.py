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

    def _vectors_name(self, key: str) -> str:
        return f"vectors-{key}.bin"

    def _refused(self, exc: fs.UnsafeDirectory) -> None:
        if self._reported == exc.why:
            return
        self._reported = exc.why
        message = f"The catalog cache directory {exc.path} {exc.why}; it is not read, written or cleaned."
        log.warning("%s", diagnostic("directory_unsafe", "catalog cache", message).render())

    def load(self, key: str, now: float | None = None) -> CachedTools | None:
        """The cached descriptors, when they were fetched and for how long, or None when absent,
        expired or unreadable."""
        try:
            with fs.private_directory(self.directory, create=False) as dir_fd:
                if dir_fd is None:
                    return None
                raw = fs.read_private_file(dir_fd, self._name(key), MAX_FILE_BYTES)
            data = json.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            return None
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
            return None
        except (OSError, ValueError):
            log.warning("ignoring an unreadable tool cache file")
            return None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION or data.get("key") != key:
            return None
        fetched_at = data.get("fetchedAt")
        tools = data.get("tools")
        fresh_s = data.get("freshS", TTL_SECONDS)  # files written before it existed: 24 hours
        if not isinstance(fetched_at, int | float) or not isinstance(tools, list):
            return None
        if isinstance(fresh_s, bool) or not isinstance(fresh_s, int | float) or not 0 < fresh_s <= TTL_SECONDS:
            return None
        age = (time.time() if now is None else now) - fetched_at
        if age < 0 or age > fresh_s:
            return None
        if not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
            return None
        return CachedTools(tools, float(fetched_at), float(fresh_s))

    def store(
        self, key: str, server: str, tools: list[dict[str, Any]], fetched_at: float, fresh_s: float = TTL_SECONDS
    ) -> None:
        payload = {
            "version": FORMAT_VERSION,
            "key": key,
            "server": server,
            "fetchedAt": fetched_at,
            "freshS": min(fresh_s, TTL_SECONDS),
            "tools": tools,
        }
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        try:
            with fs.private_directory(self.directory, create=True) as dir_fd:
                assert dir_fd is not None
                fs.atomic_write_at(dir_fd, self._name(key), data)
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
        except OSError as exc:
            log.warning("could not write the tool cache: %s", type(exc).__name__)

    def load_vectors(self, key: str, digest: str) -> Any:
        """The embeddings kept beside catalog `key` (float32), when they were made from `digest`."""
        try:
            with fs.private_directory(self.directory, create=False) as dir_fd:
                if dir_fd is None:
                    return None
                raw = fs.read_private_file(dir_fd, self._vectors_name(key), MAX_FILE_BYTES)
        except FileNotFoundError:
            return None
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
            return None
        except (OSError, ValueError):
            return None
        return vectors_from_bytes(raw, digest)

    def store_vectors(self, key: str, digest: str, vectors: Any) -> None:
        try:
            with fs.private_directory(self.directory, create=True) as dir_fd:
                assert dir_fd is not None
                fs.atomic_write_at(dir_fd, self._vectors_name(key), vectors_to_bytes(digest, vectors))
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
        except OSError as exc:
            log.warning("could not write catalog embeddings: %s", type(exc).__name__)

    def invalidate(self, key: str) -> None:
        try:
            with fs.private_directory(self.directory, create=False) as dir_fd:
                if dir_fd is not None:
                    for name in (self._name(key), self._vectors_name(key)):
                        with contextlib.suppress(FileNotFoundError):
                            os.unlink(name, dir_fd=dir_fd)
        except fs.UnsafeDirectory as exc:
            self._refused(exc)
        except OSError as exc:
            log.warning("could not remove a tool cache file: %s", type(exc).__name__)


VECTORS_MAGIC = b"mcp-sidecar vectors 1\n"


def vectors_to_bytes(digest: str, vectors: Any) -> bytes:
    """A header (magic, the digest of what was embedded, rows, columns), then float16 rows."""
    import numpy as np

    rows, columns = vectors.shape
    header = VECTORS_MAGIC + f"{digest} {rows} {columns}\n".encode()
    return header + np.ascontiguousarray(vectors, np.float16).tobytes()


def vectors_from_bytes(raw: bytes, digest: str) -> Any:
    import numpy as np

    if not raw.startswith(VECTORS_MAGIC):
        return None
    end = raw.find(b"\n", len(VECTORS_MAGIC))
    try:
        found, rows, columns = raw[len(VECTORS_MAGIC) : end].decode().split(" ")
        shape = (int(rows), int(columns))
    except ValueError:
        return None
    body = raw[end + 1 :]
    if found != digest or len(body) != shape[0] * shape[1] * 2:
        return None
    return np.frombuffer(body, np.float16).reshape(shape).astype(np.float32)
