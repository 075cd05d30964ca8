"""Dense similarity from a small static embedding model that ships inside a PyPI package.

The model is WordLlama's `l2_supercat` at 256 dimensions (MIT; the `wordllama` wheel holds its
16 MB float16 weights and its tokenizer): a text's vector is the mean of its tokens' rows,
normalised, so two texts compare by a dot product. Nothing here imports `wordllama`, whose
import configures the root logger and whose `load()` looks for the tokenizer in the wrong
folder and then tries the network. The files are read directly from the installed package:

* the weights through a read-only memory map of the `.safetensors` file (an 8-byte header
  length, a JSON header, then the raw array), so only the rows a text uses are ever paged in;
* the tokenizer (Llama 2's byte-fallback BPE, 32,000 tokens and 61,249 merges) compiled once
  into a few integer arrays (`CompiledTokenizer`), kept in the cache directory so a later
  start loads it without parsing 1.8 MB of JSON.

No network is ever touched: a missing package or file makes `load_model` return None, and
ranking goes on with BM25 alone.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_sidecar import fs

log = logging.getLogger(__name__)

PACKAGE = "wordllama"
WEIGHTS = Path("weights") / "l2_supercat_256.safetensors"
TOKENIZER = Path("tokenizers") / "l2_supercat_tokenizer_config.json"
MODEL_NAME = "wordllama-l2_supercat-256"
DIMENSIONS = 256
SPACE = "\u2581"
"""SentencePiece's word-start mark: the tokenizer's normaliser puts it before every word."""
COMPILED_FORMAT = 2
MAX_WORD_CHARS = 24
"""A longer run of characters is cut: it is an identifier, a path or a hash, not a word with
meaning, and merging a long word costs time that grows with its square (a hostile catalog)."""
MAX_TEXT_TOKENS = 512
"""A text is embedded from its first tokens only (a document text is short by construction)."""


class ModelUnavailable(Exception):
    """The package or one of its files is missing, or a file is not what it should be."""


def package_dir() -> Path | None:
    """Where the installed `wordllama` package lives, found without importing it."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


# -- the tokenizer -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompiledTokenizer:
    """Llama 2's BPE as arrays: single characters, byte fallbacks, and merges keyed by id pairs.

    Encoding matches the `tokenizers` library on text whose whitespace is single spaces (which
    `embedding_text` guarantees): the text is split before each word-start mark, since no token
    has the mark anywhere but at its start, and each word is merged lowest rank first.
    """

    chars: Any
    """Sorted code points that are tokens of their own (int64)."""
    char_ids: Any
    byte_ids: Any
    """The `<0xNN>` token of each byte value, for characters with no token (int64, 256)."""
    pair_keys: Any
    """Sorted `left * VOCABULARY + right` of every merge (int64)."""
    pair_ranks: Any
    pair_merged: Any
    unknown: int

    VOCABULARY = 1 << 15

    @classmethod
    def from_json(cls, raw: bytes) -> CompiledTokenizer:
        import numpy as np

        model = json.loads(raw)["model"]
        vocab: dict[str, int] = model["vocab"]
        if max(vocab.values()) >= cls.VOCABULARY:
            raise ModelUnavailable("the tokenizer's vocabulary is larger than expected")
        singles = sorted((ord(t), i) for t, i in vocab.items() if len(t) == 1)
        byte_ids = np.array([vocab.get(f"<0x{b:02X}>", 0) for b in range(256)], np.int64)
        keys: list[int] = []
        ranks: list[int] = []
        merged: list[int] = []
        for rank, merge in enumerate(model["merges"]):
            left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
            a, b, c = vocab.get(left), vocab.get(right), vocab.get(left + right)
            if a is None or b is None or c is None:
                continue
            keys.append(a * cls.VOCABULARY + b)
            ranks.append(rank)
            merged.append(c)
        order = np.argsort(np.array(keys, np.int64), kind="stable")
        return cls(
            chars=np.array([c for c, _ in singles], np.int64),
            char_ids=np.array([i for _, i in singles], np.int64),
            byte_ids=byte_ids,
            pair_keys=np.array(keys, np.int64)[order],
            pair_ranks=np.array(ranks, np.int64)[order],
            pair_merged=np.array(merged, np.int64)[order],
            unknown=int(vocab.get(model.get("unk_token") or "<unk>", 0)),
        )

    def to_bytes(self) -> bytes:
        import numpy as np

        parts = [self.chars, self.char_ids, self.byte_ids, self.pair_keys, self.pair_ranks, self.pair_merged]
        body = b"".join(np.ascontiguousarray(p, np.int64).tobytes() for p in parts)
        header = np.array([COMPILED_FORMAT, self.unknown, zlib.crc32(body), *(len(p) for p in parts)], np.int64)
        return header.tobytes() + body

    @classmethod
    def from_bytes(cls, data: bytes) -> CompiledTokenizer:
        import numpy as np

        words = np.frombuffer(data, np.int64)
        if len(words) < 9 or words[0] != COMPILED_FORMAT:
            raise ValueError("not a compiled tokenizer of this format")
        sizes = [int(n) for n in words[3:9]]
        if any(n < 0 for n in sizes) or 9 + sum(sizes) != len(words):
            raise ValueError("a truncated compiled tokenizer")
        if int(words[2]) != zlib.crc32(words[9:].tobytes()):
            raise ValueError("a damaged compiled tokenizer")
        parts, at = [], 9
        for n in sizes:
            parts.append(words[at : at + n])
            at += n
        chars, char_ids, byte_ids, pair_keys, pair_ranks, pair_merged = parts
        found = cls(chars, char_ids, byte_ids, pair_keys, pair_ranks, pair_merged, unknown=int(words[1]))
        found.check()
        return found

    def check(self) -> None:
        """Every table encoding relies on: sizes that agree, sorted for bisection, ids in range."""
        import numpy as np

        ids = (self.char_ids, self.byte_ids, self.pair_merged, np.array([self.unknown]))
        if len(self.chars) != len(self.char_ids) or len(self.byte_ids) != 256:
            raise ValueError("tables of the wrong size")
        if not (len(self.pair_keys) == len(self.pair_ranks) == len(self.pair_merged)):
            raise ValueError("merge tables of different sizes")
        if (np.diff(self.chars) <= 0).any() or (np.diff(self.pair_keys) < 0).any():
            raise ValueError("tables that are looked up by bisection are not sorted")
        if any(len(a) and (a.min() < 0 or a.max() >= self.VOCABULARY) for a in ids):
            raise ValueError("a token id out of range")
        if len(self.pair_ranks) and (self.pair_ranks.min() < 0 or self.pair_ranks.max() >= 1 << 31):
            raise ValueError("a merge rank out of range")

    def symbol_ids(self, word: str) -> list[int]:
        import numpy as np

        codes = np.fromiter((ord(c) for c in word), np.int64, len(word))
        at = np.searchsorted(self.chars, codes)
        at[at >= len(self.chars)] = 0
        found = self.chars[at] == codes
        ids: list[int] = []
        for char, hit, where in zip(word, found.tolist(), at.tolist(), strict=True):
            if hit:
                ids.append(int(self.char_ids[where]))
            else:
                ids.extend(int(self.byte_ids[b]) or self.unknown for b in char.encode("utf-8"))
        return ids

    def encode_word(self, word: str) -> tuple[int, ...]:
        import numpy as np

        symbols = self.symbol_ids(word)
        keys, ranks, merged = self.pair_keys, self.pair_ranks, self.pair_merged
        while len(symbols) > 1:
            pairs = np.array(symbols[:-1], np.int64) * self.VOCABULARY + np.array(symbols[1:], np.int64)
            at = np.searchsorted(keys, pairs)
            at[at >= len(keys)] = 0
            known = keys[at] == pairs
            if not known.any():
                break
            candidate_ranks = np.where(known, ranks[at], np.iinfo(np.int64).max)
            best = int(np.argmin(candidate_ranks))
            symbols[best : best + 2] = [int(merged[at[best]])]
        return tuple(symbols)


def words_of(text: str) -> list[str]:
    """The tokenizer's words: single spaces become word-start marks, as its normaliser does."""
    return [SPACE + w[:MAX_WORD_CHARS] for w in text.split()]


# -- the model -----------------------------------------------------------------------------------


class Merges:
    """The tokenizer's tables as dicts: building them costs about 20 ms, after which a word encodes
    several times faster than through the arrays (for catalogs; one query does not repay it)."""

    def __init__(self, tokenizer: CompiledTokenizer) -> None:
        # One int per merge, rank above the merged token: ordering by it orders by rank.
        packed = (tokenizer.pair_ranks << 15) | tokenizer.pair_merged
        self.pairs: dict[int, int] = dict(zip(tokenizer.pair_keys.tolist(), packed.tolist(), strict=True))
        self.chars = dict(zip(tokenizer.chars.tolist(), tokenizer.char_ids.tolist(), strict=True))
        self.bytes = [int(b) or tokenizer.unknown for b in tokenizer.byte_ids.tolist()]

    def encode_word(self, word: str) -> tuple[int, ...]:
        symbols: list[int] = []
        for char in word:
            found = self.chars.get(ord(char))
            if found is not None:
                symbols.append(found)
            else:
                symbols.extend(self.bytes[b] for b in char.encode("utf-8"))
        pairs, width = self.pairs, CompiledTokenizer.VOCABULARY
        while len(symbols) > 1:
            best = -1
            at = -1
            for i in range(len(symbols) - 1):
                merge = pairs.get(symbols[i] * width + symbols[i + 1])
                if merge is not None and (best < 0 or merge < best):
                    best, at = merge, i
            if best < 0:
                break
            symbols[at : at + 2] = [best & (width - 1)]
        return tuple(symbols)


WORD_BUDGET = 20_000
"""At most this many words not seen before are encoded for one batch (about half a second at
worst, for random strings): a hostile catalog could otherwise keep a core busy for many seconds.
Past it, new words count for nothing in that batch. Real catalogs repeat their words: the tools
of 30 real servers (488 tools) have 3,434 distinct ones."""


class Model:
    """Embeds texts: token rows from the memory-mapped weights, averaged, normalised (float32)."""

    def __init__(self, weights: Any, tokenizer: CompiledTokenizer, digest: str) -> None:
        rows = weights.shape[0]
        if tokenizer.unknown >= rows or any(
            len(a) and a.max() >= rows for a in (tokenizer.char_ids, tokenizer.pair_merged)
        ):
            raise ModelUnavailable("the tokenizer names tokens the weights do not have")
        self.weights = weights
        self.tokenizer = tokenizer
        self.digest = digest
        """Names the model files: embeddings made with other files are never compared with these."""
        self._words: dict[str, tuple[int, ...]] = {}
        self._merges: Merges | None = None
        self._lock = threading.Lock()

    def token_ids(self, text: str) -> list[int]:
        with self._lock:
            return self._token_ids(text, None)

    def _token_ids(self, text: str, budget: list[int] | None) -> list[int]:
        ids: list[int] = []
        words = self._words
        for word in words_of(text):
            found = words.get(word)
            if found is None:
                if budget is not None:
                    if budget[0] <= 0:
                        continue
                    budget[0] -= 1
                encode = self._merges.encode_word if self._merges is not None else self.tokenizer.encode_word
                found = encode(word)
                if len(words) >= WORD_CACHE:
                    words.clear()
                words[word] = found
            ids.extend(found)
            if len(ids) >= MAX_TEXT_TOKENS:
                break
        return ids[:MAX_TEXT_TOKENS]

    def embed(self, texts: list[str]) -> Any:
        """One unit vector (float32) per text; an empty text gets a zero vector."""
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), np.float32)
        with self._lock:
            if len(texts) > 1 and self._merges is None:
                self._merges = Merges(self.tokenizer)
            budget = [WORD_BUDGET]
            exhausted = False
            for row, text in enumerate(texts):
                ids = self._token_ids(text, budget)
                exhausted = exhausted or budget[0] <= 0
                if not ids:
                    continue
                vector = self.weights[np.asarray(ids, np.int64)].astype(np.float32).mean(axis=0)
                norm = float(np.linalg.norm(vector))
                if norm > 0:
                    out[row] = vector / norm
        if exhausted:
            log.warning("embedding: more than %d new words in one catalog; the rest were left out", WORD_BUDGET)
        return out


WORD_CACHE = 65_536
"""Words remembered with their tokens (emptied when full: catalogs repeat their words)."""


def _map_weights(path: Path) -> Any:
    import numpy as np

    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        if not 0 < size < 1 << 20:
            raise ModelUnavailable("the weights file has no safetensors header")
        header = json.loads(handle.read(size))
    entry = header.get("embedding.weight")
    if not isinstance(entry, dict) or entry.get("dtype") != "F16":
        raise ModelUnavailable("the weights file holds no float16 embedding table")
    rows, columns = entry["shape"]
    start, end = entry["data_offsets"]
    if columns != DIMENSIONS or end - start != rows * columns * 2:
        raise ModelUnavailable("the embedding table has an unexpected shape")
    return np.memmap(path, dtype=np.float16, mode="r", offset=8 + size + start, shape=(rows, columns))


def files_digest(root: Path) -> str:
    """Names the model files by their sizes and times (stat only): what was made from them says which."""
    parts = []
    for relative in (WEIGHTS, TOKENIZER):
        info = (root / relative).stat()
        parts.append(f"{relative}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join([MODEL_NAME, *parts]).encode()).hexdigest()[:16]


def _compiled_tokenizer(root: Path, digest: str, cache: Path | None) -> CompiledTokenizer:
    name = f"tokenizer-{MODEL_NAME}-{digest}.bin"
    if cache is not None:
        try:
            with fs.private_directory(cache, create=False) as dir_fd:
                if dir_fd is not None:
                    return CompiledTokenizer.from_bytes(fs.read_private_file(dir_fd, name, 16 << 20))
        except FileNotFoundError:
            pass
        except Exception as exc:  # damaged or foreign: compile it again
            log.debug("compiled tokenizer not reused: %s", type(exc).__name__)
    compiled = CompiledTokenizer.from_json((root / TOKENIZER).read_bytes())
    if cache is not None:
        try:
            with fs.private_directory(cache, create=True) as dir_fd:
                assert dir_fd is not None
                fs.atomic_write_at(dir_fd, name, compiled.to_bytes())
                for other in os.listdir(dir_fd):  # another version's, which nothing reads again
                    if other != name and other.startswith("tokenizer-") and other.endswith(".bin"):
                        fs.unlink_own_file(dir_fd, other)
        except (OSError, fs.UnsafeDirectory) as exc:
            log.debug("compiled tokenizer not kept: %s", type(exc).__name__)
    return compiled


_loaded: dict[tuple[Path | None, Path | None], Model | None] = {}
_load_lock = threading.Lock()


def load_model(cache: Path | None = None, root: Path | None = None) -> Model | None:
    """The embedding model (loaded once per process), or None when its package is not installed.

    `cache`: the directory for the compiled tokenizer (the catalog cache's `models` folder).
    """
    with _load_lock:
        key = (cache, root)
        if key in _loaded:
            return _loaded[key]
        model: Model | None = None
        where = root or package_dir()
        if where is None:
            log.info("semantic ranking off: the %s package is not installed", PACKAGE)
        else:
            try:
                digest = files_digest(where)
                model = Model(_map_weights(where / WEIGHTS), _compiled_tokenizer(where, digest, cache), digest)
            except (OSError, ValueError, KeyError, TypeError, ModelUnavailable) as exc:
                log.warning("semantic ranking off: the %s model could not be read (%s)", PACKAGE, type(exc).__name__)
                model = None
        _loaded[key] = model
        return model


def enabled_by_environment() -> bool:
    """`MCP_SIDECAR_SEMANTIC=0` turns the dense signal off (BM25 alone), for comparison and triage."""
    return os.environ.get("MCP_SIDECAR_SEMANTIC", "1").strip().lower() not in ("0", "false", "no", "off")


def forget_loaded() -> None:
    """Load again on the next `load_model` (a changed package, or a test that damaged a file)."""
    with _load_lock:
        _loaded.clear()
