"""What a tool definition costs a model's context, estimated in tokens of Llama 2's BPE.

A host sends each tool it lists to its model as a JSON object; the estimate counts the compact
JSON (no spaces between tokens of the syntax, non-ASCII kept as it is) of the tool's `name`,
`description`, `inputSchema` and `outputSchema`, as the server listed them (`definition_text`).
The tokenizer is the one the semantic signal already reads from the `wordllama` wheel
(`catalog/semantic.py`: Llama 2's byte-fallback BPE, 32,000 tokens), so no other package and no
download is needed. How far its counts are from the tokenizers of the models people use is
measured by `benchmarks/context.py` (docs/performance.md, "Issue 34").

The count is exactly the `tokenizers` library's for the same file (without the `<s>` it adds),
computed in pure Python and fast enough for 10,000 tools in a worker thread:

* the normaliser puts a word-start mark before the text and in place of every space; no token
  holds a mark after another character, so the text is cut before every mark that follows one;
* within such a word, two neighbouring characters that no token of the vocabulary holds side by
  side are never merged, so the word is cut there too: BPE on each piece alone gives the same
  tokens as on the whole (its merges never cross the cut, and merges on either side do not depend
  on each other). JSON's syntax and identifiers break into short pieces that repeat across a
  catalog, and each distinct piece and word is encoded once (`Merges.encode_word`).

A piece longer than `MAX_PIECE_CHARS` (a run of characters that all join, only in a hostile
catalog) is cut every `MAX_PIECE_CHARS` characters, where the count may differ by a token or two;
and one count encodes at most `NEW_CHARS_BUDGET` characters of pieces not seen before (random
strings cost about 4 s a megabyte), past which a new piece counts as one token per two characters.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_sidecar.catalog import semantic

log = logging.getLogger(__name__)

TOKENIZER = "llama-2-bpe"
"""Names the tokenizer in results (`tokenizer` of `mcp/status`'s `tokens`)."""
FIELDS = ("name", "description", "inputSchema", "outputSchema")
MAX_PIECE_CHARS = 64
NEW_CHARS_BUDGET = 400_000
"""Characters of new pieces one count encodes (about 1.5 s of random strings, far above real
catalogs: the 488 tools of benchmarks/data/task_catalogs.json, 638,000 characters, have 41,000)."""
CACHE_ENTRIES = 200_000
"""Words and pieces remembered with their counts (emptied when full)."""

_WORD = re.compile(semantic.SPACE + "*[^" + semantic.SPACE + "]+|" + semantic.SPACE + "+")


def definition(descriptor: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a tool a host shows its model, in the order a server lists them."""
    return {k: descriptor[k] for k in FIELDS if k in descriptor}


def definition_text(descriptor: Mapping[str, Any]) -> str:
    """The tool as a host serialises it for its model: compact JSON of `definition`."""
    return json.dumps(definition(descriptor), separators=(",", ":"), ensure_ascii=False)


def joinable_pairs(tokenizer: semantic.CompiledTokenizer) -> frozenset[str]:
    """Every two characters some token holds side by side: the last of a merge's left part and the
    first of its right part (every neighbouring pair inside a token meets at one of its merges).

    A token's first and last characters are those of its merge's parts, found for every merge at
    once and repeated until nothing changes (as many rounds as merges nest, about twenty)."""
    import numpy as np

    width = semantic.CompiledTokenizer.VOCABULARY
    first = np.full(width, -1, np.int64)
    last = np.full(width, -1, np.int64)
    first[tokenizer.char_ids] = tokenizer.chars
    last[tokenizer.char_ids] = tokenizer.chars
    left, right = np.divmod(tokenizer.pair_keys, width)
    merged = tokenizer.pair_merged
    for _ in range(width):  # bounded: each round settles at least one token, or ends it
        new_first = (first[merged] < 0) & (first[left] >= 0)
        new_last = (last[merged] < 0) & (last[right] >= 0)
        if not (new_first.any() or new_last.any()):
            break
        first[merged[new_first]] = first[left[new_first]]
        last[merged[new_last]] = last[right[new_last]]
    # A merge of a byte token (none in Llama 2's file) joins nothing a character can show.
    known = (last[left] >= 0) & (first[right] >= 0)
    codes = set(zip(last[left[known]].tolist(), first[right[known]].tolist(), strict=True))
    return frozenset(chr(a) + chr(b) for a, b in codes)


@dataclass(frozen=True, slots=True)
class Figure:
    """A token count and the tokenizer files it was made with (`digest`)."""

    tokens: int
    digest: str


class TokenCounter:
    """Counts tokens of texts; thread-safe, its word and piece caches shared by every catalog."""

    def __init__(self, tokenizer: semantic.CompiledTokenizer, digest: str) -> None:
        self.digest = digest
        """Names the tokenizer files: counts kept on disk with other files are counted again."""
        self._merges = semantic.Merges(tokenizer)
        self._pairs = joinable_pairs(tokenizer)
        self._words: dict[str, int] = {}
        self._pieces: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, text: str, budget: list[int] | None = None) -> int:
        """The number of tokens `tokenizers` gives `text` with this file (no `<s>`).

        `budget`: characters of new pieces left to encode, shared by the counts of one catalog."""
        if not text:
            return 0
        normalised = semantic.SPACE + text.replace(" ", semantic.SPACE)
        left = [NEW_CHARS_BUDGET] if budget is None else budget
        total = 0
        with self._lock:
            words = self._words
            for word in _WORD.findall(normalised):
                found = words.get(word)
                if found is None:
                    found, exact = self._count_word(word, left)
                    if exact:
                        if len(words) >= CACHE_ENTRIES:
                            words.clear()
                        words[word] = found
                total += found
        return total

    def _count_word(self, word: str, budget: list[int]) -> tuple[int, bool]:
        """The word's count, and whether it is exact (every new piece encoded within the budget)."""
        pairs = self._pairs
        total, start, exact = 0, 0, True
        for at, pair in enumerate(map(str.__add__, word, word[1:]), 1):
            if pair not in pairs or at - start >= MAX_PIECE_CHARS:
                found = self._count_piece(word[start:at], budget)
                total, exact, start = total + abs(found), exact and found > 0, at
        found = self._count_piece(word[start:], budget)
        return total + abs(found), exact and found > 0

    def _count_piece(self, piece: str, budget: list[int]) -> int:
        """The piece's tokens; negative when estimated from its length (past the budget)."""
        pieces = self._pieces
        found = pieces.get(piece)
        if found is None:
            if budget[0] <= 0:
                return -((len(piece) + 1) // 2)
            budget[0] -= len(piece)
            if len(pieces) >= CACHE_ENTRIES:
                pieces.clear()
            found = pieces[piece] = len(self._merges.encode_word(piece))
        return found

    def tool(self, descriptor: Mapping[str, Any], budget: list[int] | None = None) -> int:
        """The estimate for one tool definition."""
        return self.count(definition_text(descriptor), budget)


_loaded: dict[Path | None, TokenCounter | None] = {}
_load_lock = threading.Lock()


def load_counter(cache: Path | None = None) -> TokenCounter | None:
    """The counter (built once per process, with numpy: call it off the event loop once numpy is
    loaded), or None when the `wordllama` package or its files are missing.

    `cache`: where the compiled tokenizer is kept (the catalog cache's `models` folder).
    """
    with _load_lock:
        if cache in _loaded:
            return _loaded[cache]
        counter: TokenCounter | None = None
        model = semantic.load_model(cache)
        if model is not None:
            try:
                counter = TokenCounter(model.tokenizer, model.digest)
            except (ValueError, TypeError, IndexError) as exc:
                log.warning("token estimates off: the tokenizer could not be read (%s)", type(exc).__name__)
        _loaded[cache] = counter
        return counter


def files_digest() -> str | None:
    """The digest a counter would have, from the files' sizes and times alone (no numpy, no
    reading): whether counts kept on disk are this tokenizer's is known before it loads."""
    root = semantic.package_dir()
    if root is None:
        return None
    try:
        return semantic.files_digest(root)
    except OSError:
        return None


KEPT_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Counted:
    """A catalog's estimates: name → tokens, and name → CRC-32 of the text counted (a later list
    of the same server reuses the count of a tool whose definition did not change)."""

    tokens: dict[str, int]
    texts: dict[str, int]
    catalog: str | None = None
    """The catalog file they were kept for (`stored_index.catalog_digest`), when read from one."""


def count_catalog(
    counter: TokenCounter, descriptors: Iterable[Mapping[str, Any]], earlier: Counted | None = None
) -> Counted:
    """Every descriptor's estimate, reusing `earlier`'s for a definition that is the same text."""
    budget = [NEW_CHARS_BUDGET]
    tokens: dict[str, int] = {}
    texts: dict[str, int] = {}
    for descriptor in descriptors:
        name = descriptor["name"]
        text = definition_text(descriptor)
        crc = zlib.crc32(text.encode("utf-8", "surrogatepass"))
        if earlier is not None and earlier.texts.get(name) == crc and name in earlier.tokens:
            tokens[name] = earlier.tokens[name]
        else:
            tokens[name] = counter.count(text, budget)
        texts[name] = crc
    if budget[0] <= 0:
        log.warning("token estimates: a catalog with more than %d characters of new text", NEW_CHARS_BUDGET)
    return Counted(tokens, texts)


def kept_bytes(catalog: str, digest: str, counted: Counted) -> bytes:
    """A catalog's estimates as kept beside its disk copy: for that very file (`catalog`, its
    `stored_index.catalog_digest`) and these tokenizer files (`digest`)."""
    tools = {name: [n, counted.texts.get(name, 0)] for name, n in counted.tokens.items()}
    payload = {"version": KEPT_FORMAT, "catalog": catalog, "tokenizer": digest, "tools": tools}
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def from_kept(data: bytes, digest: str, catalog: str | None = None) -> Counted | None:
    """The estimates kept with tokenizer files `digest` (and, given `catalog`, for that catalog file);
    None for another file's, another tokenizer's, or anything malformed (they are counted again)."""
    try:
        found = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(found, dict) or found.get("version") != KEPT_FORMAT or found.get("tokenizer") != digest:
        return None
    if catalog is not None and found.get("catalog") != catalog:
        return None
    tools = found.get("tools")
    if not isinstance(tools, dict):
        return None
    tokens: dict[str, int] = {}
    texts: dict[str, int] = {}
    for name, entry in tools.items():
        if not (isinstance(entry, list) and len(entry) == 2 and all(type(v) is int and v >= 0 for v in entry)):
            return None  # a bool is no count: `type(v) is int`
        tokens[name], texts[name] = entry
    kept_for = found.get("catalog")
    return Counted(tokens, texts, kept_for if isinstance(kept_for, str) else None)
