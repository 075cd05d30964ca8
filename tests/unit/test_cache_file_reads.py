"""Every cache file is read through one check (`fs.open_regular`): opened without waiting, without
following a link, and refused unless it is a regular file of this user's (issue 31, item 12).

A read that blocked would hang the test: each read runs in a daemon thread joined with a time
limit, so a regression fails here instead of waiting forever."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar import fs, startup
from mcp_sidecar.catalog import semantic
from mcp_sidecar.catalog.disk_cache import ToolCache

LIMIT_S = 10


def bounded(read: Callable[[], Any]) -> Any:
    """`read()`, which must return (or raise) within LIMIT_S."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(read())
        except BaseException as exc:  # handed back to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(LIMIT_S)
    assert outcome, f"the read did not return within {LIMIT_S} s: it waited on the file"
    return outcome[0]


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory"])
def test_only_a_regular_file_of_ours_is_read(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "real"
    target.write_bytes(b"data")
    path = tmp_path / "planted"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        path.symlink_to(target)
    else:
        path.mkdir()
    found = bounded(lambda: fs.read_regular(path, 100))
    assert isinstance(found, OSError | ValueError), found
    assert fs.read_regular(target, 100) == b"data"
    if kind == "symlink":
        assert fs.read_regular(path, 100, follow=True) == b"data"  # where a link is the user's choice
    with pytest.raises(ValueError, match="larger than the limit"):
        fs.read_regular(target, 3)


def test_a_fifo_catalog_or_index_reads_as_absent(tmp_path: Path) -> None:
    cache = ToolCache(tmp_path / "catalogs")
    cache.store("a" * 40, "s", [{"name": "t"}], 1.0)
    for name in ("tools-" + "a" * 40 + ".json", "index-" + "a" * 40 + ".bin"):
        path = cache.directory / name
        path.unlink(missing_ok=True)
        os.mkfifo(path, 0o600)
    assert bounded(lambda: cache.read("a" * 40)) is None
    assert bounded(lambda: cache.load_index("a" * 40)) is None


def test_a_fifo_code_cache_is_not_loaded(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / startup.FILE_NAME, 0o600)

    def enter() -> int:
        with startup.attrs_code_cache(tmp_path) as stats:
            return stats.loaded

    assert bounded(enter) == 0


def test_a_fifo_compiled_tokenizer_is_compiled_again(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    semantic.forget_loaded()
    if semantic.load_model(cache) is None:
        pytest.skip("the embedding model's package is not installed")
    (compiled,) = cache.glob("tokenizer-*.bin")
    compiled.unlink()
    os.mkfifo(compiled, 0o600)
    semantic.forget_loaded()
    try:
        model = bounded(lambda: semantic.load_model(cache))
    finally:
        semantic.forget_loaded()
    assert isinstance(model, semantic.Model)
    assert compiled.is_file()  # replaced by a good copy
