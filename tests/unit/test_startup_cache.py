"""The attrs code cache: a real lsprotocol import in a fresh interpreter, twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_sidecar.startup import FILE_NAME, MIN_MISSES_TO_SAVE

IMPORT = """
import contextlib, json, sys
from pathlib import Path
from mcp_sidecar.startup import CacheStats, attrs_code_cache
cache = attrs_code_cache(Path(sys.argv[1])) if sys.argv[1] != "-" else contextlib.nullcontext(CacheStats())
with cache as stats:
    import lsprotocol.types as lsp
position = lsp.Position(line=1, character=2)
assert position == lsp.Position(line=1, character=2) and position != lsp.Position(line=1, character=3)
assert lsp.InitializeParams(capabilities=lsp.ClientCapabilities()).process_id is None
init = lsp.Position.__init__.__code__
print(json.dumps({**stats.__dict__, "init": [init.co_flags, init.co_code.hex()]}))
"""


def run_import(directory: Path | str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(
        [sys.executable, "-c", IMPORT, str(directory)], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_second_start_compiles_almost_nothing(tmp_path: Path) -> None:
    first = run_import(tmp_path)
    assert first["loaded"] == 0
    assert int(first["misses"]) > 500  # every lsprotocol class
    assert first["saved"] is True
    path = tmp_path / FILE_NAME
    assert path.stat().st_mode & 0o777 == 0o600
    second = run_import(tmp_path)
    assert second["loaded"] == first["misses"]
    assert int(second["misses"]) < MIN_MISSES_TO_SAVE
    assert int(second["hits"]) > 500
    assert second["saved"] is False


def test_a_damaged_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    path.write_bytes(b"\x00not marshal data")
    path.chmod(0o600)
    stats = run_import(tmp_path)
    assert (stats["loaded"], stats["saved"]) == (0, True)
    assert run_import(tmp_path)["loaded"] == stats["misses"]


def test_a_file_others_can_write_is_never_loaded(tmp_path: Path) -> None:
    run_import(tmp_path)
    (tmp_path / FILE_NAME).chmod(0o666)
    stats = run_import(tmp_path)
    assert stats["loaded"] == 0
    assert int(stats["misses"]) > 500


def test_cached_code_is_the_code_attrs_compiles_itself(tmp_path: Path) -> None:
    plain = run_import("-")
    run_import(tmp_path)
    cached = run_import(tmp_path)
    assert int(cached["hits"]) > 500
    assert cached["init"] == plain["init"]  # same bytecode and flags (attrs' __future__ imports)


def test_a_cache_that_cannot_be_written_does_not_stop_the_start(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory should be")
    stats = run_import(blocker)
    assert (stats["loaded"], stats["saved"]) == (0, False)
    assert int(stats["misses"]) > 500


SOURCES = """
import linecache
import attrs
from mcp_sidecar.startup import attrs_sources_not_kept
def kept():
    return sum(1 for name in linecache.cache if name.startswith("<attrs generated"))
before = kept()
with attrs_sources_not_kept():
    import lsprotocol.types as lsp
inside = kept() - before
assert lsp.Position(line=1, character=2) == lsp.Position(line=1, character=2)
@attrs.define
class After:
    x: int
print(inside, kept() - before)
"""


def test_attrs_keeps_no_generated_source_within_the_block_and_does_again_after_it() -> None:
    done = subprocess.run([sys.executable, "-c", SOURCES], capture_output=True, text=True, timeout=60, check=True)
    inside, after = (int(n) for n in done.stdout.split())
    assert inside == 0
    assert after >= 1  # attrs' own linecache is back once the block ends
