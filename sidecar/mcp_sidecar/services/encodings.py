"""The optional encoder's vectors for each index, made in the background (`catalog/encoder.py`).

Embedding a catalog with the encoder takes minutes of one core for thousands of tools, so a
discovery never waits for it: an index is ranked without the encoder until its vectors are made,
in a worker thread, one catalog at a time; then they are attached to the index, and a tool
catalog's stored index is written again with them, so the next start has them at once. Ranking
uses the encoder only once every index it searches has its vectors (`catalog/hybrid.py`).
Nothing of this runs unless the extra is installed and `MCP_SIDECAR_ENCODER=1`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Hashable
from typing import Any

from mcp_sidecar import heavy, tasks
from mcp_sidecar.catalog import documents
from mcp_sidecar.catalog import encoder as encoder_module
from mcp_sidecar.catalog.index import Index

log = logging.getLogger(__name__)


class Encodings:
    """One background encoding per index at a time; the encoder loaded on the first one."""

    def __init__(self) -> None:
        self._pending: dict[Hashable, asyncio.Task[None]] = {}
        self._one_at_a_time = asyncio.Lock()

    @staticmethod
    def wanted() -> bool:
        """The extra is installed and `MCP_SIDECAR_ENCODER=1` turned it on (off by default)."""
        return encoder_module.enabled_by_environment() and encoder_module.installed()

    @staticmethod
    def encoder() -> encoder_module.Encoder | None:
        """The encoder for ranking, once loaded (ranking never waits for it to load)."""
        return encoder_module.loaded() if Encodings.wanted() else None

    @staticmethod
    def digest() -> str | None:
        """What names the encoder's files, for stored vectors (None: no encoder to use)."""
        return encoder_module.files_digest() if Encodings.wanted() else None

    def later(self, key: Hashable, index: Index, keep: Callable[[Index], None] | None) -> None:
        """Make the index's vectors in the background, unless it has them or is being encoded;
        `keep` (in a worker thread) stores the index again once they are attached."""
        if index.encoded is not None or not index.documents or not self.wanted():
            return
        running = self._pending.get(key)
        if running is not None and not running.done():
            return
        self._pending[key] = tasks.spawn(self._encode(index, keep), f"encode:{key}")

    async def _encode(self, index: Index, keep: Callable[[Index], None] | None) -> None:
        async with self._one_at_a_time:
            await heavy.ENCODER.ready()
            found = await asyncio.to_thread(encoder_module.load_encoder)
            if found is None or index.encoded is not None:
                return
            vectors = await asyncio.to_thread(_embed, found, index)
            if vectors is None:
                return
            index.encoded = vectors
            if keep is not None:
                await asyncio.to_thread(keep, index)

    def running(self) -> list[asyncio.Task[None]]:
        """The encodings under way (a test or a shutdown may wait for them)."""
        return [t for t in self._pending.values() if not t.done()]

    def forget(self) -> None:
        for task in self._pending.values():
            task.cancel()
        self._pending.clear()


def _embed(found: encoder_module.Encoder, index: Index) -> Any:
    try:
        vectors = found.embed([documents.embedding_text(d) for d in index.documents])
        # At the precision they are stored in: a restart ranks exactly as this process does.
        return vectors.astype("float16").astype("float32")
    except Exception:  # a fault in the encoder's files must not take discovery down with it
        log.exception("the encoder failed on a catalog; it is ranked without it")
        return None
