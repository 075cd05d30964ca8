"""What makes a cold process fast and small: a code cache for attrs, no full collections during
imports, and no copy of the source attrs generates.

lsprotocol defines about 570 attrs classes, and attrs writes and `compile()`s the source of
each one's methods at import: 0.3 s of the sidecar's start-up of about 0.9 s
(benchmarks/startup.py). That source is the same from one run to the next, so the compiled
code is kept in one marshal file, as Python keeps `.pyc` files, keyed by a hash of the source
and its file name, one file per Python version. Anything that changes the source (an attrs
or lsprotocol upgrade) misses and compiles as before, and the file is rewritten.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import marshal
import os
import stat
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType
from typing import Any

from mcp_sidecar.fs import atomic_write, open_regular

log = logging.getLogger(__name__)

FILE_NAME = f"attrs-code.{sys.implementation.cache_tag}.marshal"
MIN_MISSES_TO_SAVE = 5
"""Frozen attrs classes put a per-run random hash seed in their source; those few always miss."""
MAX_FILE_BYTES = 16 * 1024 * 1024
NO_FULL_COLLECTIONS = 1_000_000
"""A third threshold so high that no full (generation 2) collection runs."""


_pauses = 0
_pause_lock = threading.Lock()
_thresholds = gc.get_threshold()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No full collections while a block imports, then what it made leaves future collections.

    Imports make thousands of long-lived objects, and the collector's full passes over them cost
    about 0.1 s each (benchmarks/startup.py). Young collections still run, so short-lived garbage
    (attrs replaces each class it decorates) is reclaimed as before and memory stays the same;
    turning the collector off instead cost 9 MiB. Nests and works across threads (the SDK imports
    in one while the event loop runs).
    """
    global _pauses, _thresholds
    with _pause_lock:
        if _pauses == 0:
            _thresholds = gc.get_threshold()
            gc.set_threshold(_thresholds[0], _thresholds[1], NO_FULL_COLLECTIONS)
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0:
                gc.set_threshold(*_thresholds)
                gc.freeze()


@dataclass
class CacheStats:
    loaded: int = 0
    hits: int = 0
    misses: int = 0
    saved: bool = False


@contextlib.contextmanager
def attrs_code_cache(directory: Path) -> Iterator[CacheStats]:
    """Within the block, attrs takes compiled code from `directory`; new code is saved after it.

    Never fails a start: whatever goes wrong with the cache only means compiling as before.
    """
    stats = CacheStats()
    try:
        import attr
        import attr._make as attrs_make

        # Where a file's owner cannot be checked (Windows), its code is not trusted.
        entries = _load(directory / FILE_NAME) if hasattr(os, "getuid") else None
    except Exception as exc:
        log.info("start-up code cache unavailable: %s", type(exc).__name__)
        entries = None
    if entries is None:
        yield stats
        return
    stats.loaded = len(entries)
    used: dict[bytes, CodeType] = {}
    """What this run looked up: the file keeps only these, so old versions' code does not pile up."""
    # Compile exactly as attrs' own `compile()` call would: with its module's __future__ flags.
    flags = _future_flags(vars(attrs_make))
    salt = f"{attr.__version__}\0{sys.flags.optimize}\0{flags}"

    def cached_compile(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or not isinstance(source, str) or not isinstance(filename, str):
            return compile(source, filename, mode, *args, **kwargs)  # not a call attrs makes today
        text = f"{salt}\0{mode}\0{filename}\0{source}".encode("utf-8", "surrogatepass")
        key = hashlib.blake2b(text, digest_size=16).digest()
        code = entries.get(key)
        if code is None:
            stats.misses += 1
            code = compile(source, filename, mode, flags=flags, dont_inherit=True)
        else:
            stats.hits += 1
        used[key] = code
        return code

    # A module global named `compile` shadows the builtin for attrs' own calls, and only those.
    attrs_make.compile = cached_compile  # type: ignore[attr-defined]
    try:
        yield stats
    finally:
        del attrs_make.compile  # type: ignore[attr-defined]
    if stats.misses >= MIN_MISSES_TO_SAVE and not sys.dont_write_bytecode:
        stats.saved = _save(directory / FILE_NAME, used)


class _NotKept(dict[str, Any]):
    """A stand-in for `linecache.cache` that keeps nothing: `setdefault` hands the value back."""

    def setdefault(self, key: str, default: Any = None) -> Any:
        return default


@contextlib.contextmanager
def attrs_sources_not_kept() -> Iterator[None]:
    """Within the block, attrs does not store each class's generated source in `linecache`.

    It keeps them for debuggers stepping through its methods: 1.5 MiB of lines for lsprotocol's
    570 classes, which the sidecar never reads (a traceback through such a method shows its file
    name and line number without the line), and 1.7 MiB of resident memory.
    """
    try:
        import attr._make as attrs_make
    except ImportError:
        yield
        return
    real = vars(attrs_make)["linecache"]
    setattr(attrs_make, "linecache", types.SimpleNamespace(cache=_NotKept()))  # noqa: B010 (a module global)
    try:
        yield
    finally:
        setattr(attrs_make, "linecache", real)  # noqa: B010


def _future_flags(namespace: dict[str, Any]) -> int:
    """The compiler flags of the `from __future__ import ...` statements of a module."""
    import __future__

    flags = 0
    for name in __future__.all_feature_names:
        feature = getattr(__future__, name)
        if namespace.get(name) is feature:
            flags |= int(getattr(feature, "compiler_flag", 0))
    return flags


def _load(path: Path) -> dict[bytes, CodeType]:
    """The cached code, or nothing when the file is missing, foreign, writable by others, damaged,
    or not a regular file (a FIFO in its place is refused, never waited on: `fs.open_regular`)."""
    try:
        # Code from this file runs in the sidecar: take it only from a regular file of our own.
        fd = open_regular(path)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring %s: not a private regular file of this user (%s)", path, type(exc).__name__)
        return {}
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                log.warning("ignoring %s: not a private file of this user", path)
                return {}
            if info.st_size > MAX_FILE_BYTES:
                return {}
            data = marshal.loads(handle.read(MAX_FILE_BYTES + 1))
    except (OSError, EOFError, ValueError, TypeError) as exc:
        log.info("ignoring %s: %s", path, type(exc).__name__)
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, bytes) and isinstance(v, CodeType)}


def _save(path: Path, entries: dict[bytes, CodeType]) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        atomic_write(path, marshal.dumps(entries))
    except Exception as exc:  # a cache that cannot be written is no reason to fail
        log.info("could not save %s: %s", path, type(exc).__name__)
        return False
    return True
