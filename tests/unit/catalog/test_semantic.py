"""The semantic signal's model, read from the installed `wordllama` wheel without importing it.

The tokenizer compiled to arrays must encode exactly as the `tokenizers` library does with the
package's own tokenizer file, and the embeddings must equal WordLlama's own (`load()` with
`cache_dir` at the package folder and downloads off: its documented way to stay offline).
Loading must never touch the network: these tests run with every socket refused.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mcp_sidecar.catalog import semantic
from mcp_sidecar.catalog.documents import embedding_text, tool_document

REFERENCE = Path(__file__).resolve().parents[3] / "benchmarks" / "data" / "reference_catalogs.json"


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("networking is unavailable in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture
def model(tmp_path: Path, no_network: None) -> semantic.Model:
    semantic.forget_loaded()  # loaded here, with the network refused
    loaded = semantic.load_model(tmp_path / "models")
    assert loaded is not None, "the wordllama package is a dependency: it must be installed"
    return loaded


def texts() -> list[str]:
    catalogs = json.loads(REFERENCE.read_text(encoding="utf-8"))["servers"]
    out = [
        embedding_text(tool_document(server, tool, i))
        for server, entry in catalogs.items()
        for i, tool in enumerate(entry["tools"])
    ]
    return [
        *out,
        "héllo wörld — ünïcode ☃ 日本語 🎉",
        "list_directory_with_sizes getFileInfo HTTPServer2",
        "undo my staged changes",
        "",
    ]


def test_the_compiled_tokenizer_encodes_as_the_tokenizers_library(model: semantic.Model) -> None:
    from tokenizers import Tokenizer

    root = semantic.package_dir()
    assert root is not None
    reference = Tokenizer.from_file(str(root / semantic.TOKENIZER))
    for text in texts():
        single_spaced = " ".join(text.split())
        # Words past MAX_WORD_CHARS are cut before merging (identifiers, paths, hashes).
        cut = " ".join(w[: semantic.MAX_WORD_CHARS] for w in text.split())
        expected = reference.encode(cut, add_special_tokens=False).ids if cut else []
        assert model.token_ids(single_spaced) == expected[: semantic.MAX_TEXT_TOKENS], text


def test_embeddings_equal_wordllamas_own(model: semantic.Model) -> None:
    # WordLlama's documented offline load: the tokenizer found through cache_dir, downloads off.
    # Its import configures the root logger, so it runs in a child process.
    root = semantic.package_dir()
    # Words no longer than MAX_WORD_CHARS: longer ones are cut here, not by WordLlama.
    sample = [t for t in texts() if t and max(len(w) for w in t.split()) < semantic.MAX_WORD_CHARS][:20]
    assert len(sample) == 20
    script = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from wordllama import WordLlama\n"
        f"wl = WordLlama.load(cache_dir=Path({str(root)!r}), disable_download=True)\n"
        "texts = json.load(sys.stdin)\n"
        "print(json.dumps(wl.embed(texts, norm=True).tolist()))\n"
    )
    # In a network namespace of its own where one can be made (root, as in CI): no network at all.
    isolated = ["unshare", "--net"] if shutil.which("unshare") and os.geteuid() == 0 else []
    done = subprocess.run(
        [*isolated, sys.executable, "-c", script], input=json.dumps(sample), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    theirs = np.array(json.loads(done.stdout), np.float32)
    ours = model.embed(sample)
    assert ours.shape == theirs.shape == (len(sample), semantic.DIMENSIONS)
    np.testing.assert_allclose(ours, theirs, atol=1e-4)


def test_similar_meanings_are_closer_than_unrelated_ones(model: semantic.Model) -> None:
    folder, listing, pizza = model.embed(["show what is in this folder", "list directory contents", "order a pizza"])
    assert float(folder @ listing) > float(folder @ pizza) + 0.1
    assert float(np.linalg.norm(folder)) == pytest.approx(1.0, abs=1e-5)


def test_an_empty_text_embeds_to_zeros(model: semantic.Model) -> None:
    [vector] = model.embed([""])
    assert not vector.any()


def test_the_compiled_tokenizer_is_kept_and_read_back(tmp_path: Path) -> None:
    first = semantic.load_model(tmp_path / "fresh")
    assert first is not None
    [kept] = list((tmp_path / "fresh").iterdir())
    assert kept.name.startswith(f"tokenizer-{semantic.MODEL_NAME}-")
    assert kept.stat().st_mode & 0o777 == 0o600
    again = semantic.CompiledTokenizer.from_bytes(kept.read_bytes())
    assert again.encode_word("\u2581directory") == first.tokenizer.encode_word("\u2581directory")


def test_a_damaged_compiled_tokenizer_is_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "damaged"
    assert semantic.load_model(cache) is not None
    [kept] = list(cache.iterdir())
    kept.write_bytes(kept.read_bytes()[:100])
    semantic.forget_loaded()  # a new process, as far as loading goes
    model = semantic.load_model(cache)
    assert model is not None
    assert model.token_ids("list files") == [1051, 2066]
    assert len(kept.read_bytes()) > 100


def test_a_missing_package_turns_the_signal_off(tmp_path: Path) -> None:
    assert semantic.load_model(tmp_path / "c", root=tmp_path / "no-such-package") is None


def test_a_foreign_weights_file_turns_the_signal_off(tmp_path: Path) -> None:
    root = tmp_path / "fake"
    (root / "weights").mkdir(parents=True)
    (root / "tokenizers").mkdir()
    (root / semantic.WEIGHTS).write_bytes(b"\x00" * 64)
    (root / semantic.TOKENIZER).write_text("{}", encoding="utf-8")
    assert semantic.load_model(tmp_path / "c", root=root) is None


def test_the_merge_tables_encode_as_the_arrays(model: semantic.Model) -> None:
    merges = semantic.Merges(model.tokenizer)
    words = {w for text in texts() for w in semantic.words_of(" ".join(text.split()))}
    words |= {"\u2581" + "x" * 64, "\u2581日本語", "\u2581🎉🎉", "\u2581a"}
    for word in sorted(words):
        assert merges.encode_word(word) == model.tokenizer.encode_word(word), word


def test_a_catalog_of_endless_new_words_is_cut_at_the_budget(
    model: semantic.Model, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(semantic, "WORD_BUDGET", 3)
    first, second = model.embed(["alpha beta gamma", "delta epsilon"])
    assert first.any()
    assert not second.any()  # its words came after the budget: they count for nothing
    assert "more than 3 new words in one catalog" in caplog.text
    [again] = model.embed(["alpha beta gamma"])  # words already known cost nothing
    np.testing.assert_allclose(again, first)


def test_a_compiled_tokenizer_with_shifted_sections_is_refused(model: semantic.Model) -> None:
    data = bytearray(model.tokenizer.to_bytes())
    words = np.frombuffer(bytes(data), np.int64).copy()
    words[3] += 1  # one more character, one merge fewer: the same bytes, read as other tables
    words[8] -= 1
    with pytest.raises(ValueError, match="tables of the wrong size"):
        semantic.CompiledTokenizer.from_bytes(words.tobytes())
    flipped = bytearray(data)
    flipped[-5] ^= 0x01
    with pytest.raises(ValueError, match="damaged"):
        semantic.CompiledTokenizer.from_bytes(bytes(flipped))


def test_a_new_compiled_tokenizer_removes_another_versions(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    cache.mkdir(mode=0o700)
    (cache / "tokenizer-wordllama-old-0000.bin").write_bytes(b"another version's")
    (cache / "notes.txt").write_text("not a tokenizer", encoding="utf-8")
    semantic.forget_loaded()
    assert semantic.load_model(cache) is not None
    names = sorted(p.name for p in cache.iterdir())
    assert names[0] == "notes.txt"
    assert len(names) == 2
    assert names[1].startswith(f"tokenizer-{semantic.MODEL_NAME}-")
