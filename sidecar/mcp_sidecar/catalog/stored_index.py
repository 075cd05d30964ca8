"""A tool catalog's ranking index (and embeddings) kept beside it in the disk cache.

A first discovery after a start reads each server's index as arrays instead of parsing its
catalog and tokenising every description again: `index-KEY.bin` holds the postings (CSR:
term offsets, document ids, weighted term frequencies), document lengths, the sorted
vocabulary, the exact spellings, each visible tool's name and byte span in the catalog file,
the refusals, and the embeddings (float16), with the optional encoder's (`encoder` in the
header names its files; `services/catalogs.py` drops them when they are another encoder's).
Tool descriptors stay in the catalog file and are parsed one by one, only for the candidates a
query returns.

The file is trusted only when it was made from the very catalog file beside it (its size and
CRC-32), for the same server, filters, embedding model and sidecar version, in this format,
with its checksum intact (CRC-32 over the header and the body: nothing it says is outside it);
anything else is ignored and the index is built (and kept) again. It is keyed and removed with
its catalog, and when it was served from holds nothing of its own: the catalog file's
`fetchedAt` and `freshS` decide (`disk_cache.header`). Its spans must be exactly the elements of
the catalog's `tools` array, read from the catalog's brackets (`json_depth.structure`, about as
fast as parsing the catalog, so only when a first descriptor of it is needed): a span pointing
into a nested object or off by a byte is a damaged index, never a tool. That, or a descriptor
that does not parse, raises `StoredIndexDamaged`, and discovery drops the index and builds it
again (`services/discovery.py`).
No string it holds may contain a NUL (they are NUL-joined); a catalog that has one is simply
never stored this way.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from mcp_sidecar import __version__, json_depth
from mcp_sidecar.catalog.index import Document, Index
from mcp_sidecar.catalog.semantic import DIMENSIONS

MAGIC = b"mcp-sidecar index 4\n"
PREAMBLE = len(MAGIC) + 16
"""The magic, the header's length and the checksum (8 bytes each), before the header."""
SEPARATOR = "\0"


def catalog_digest(raw: bytes) -> str:
    """Which catalog file an index was made from: its size and CRC-32 (the directory is private;
    this tells a changed or damaged file, it is no defence against its owner)."""
    return f"{len(raw)}:{zlib.crc32(raw):08x}"


def filters_digest(include: Sequence[str] | None, exclude: Sequence[str] | None) -> str:
    material = json.dumps([list(include) if include is not None else None, list(exclude or [])])
    return hashlib.sha256(material.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What an index file must have been made from to be used."""

    key: str
    catalog: str
    filters: str
    model: str | None
    server: str
    """The server whose catalog it is (a planted header cannot relabel another server's tools)."""


class StoredIndexDamaged(ValueError):
    """A descriptor of a stored index does not parse, or is not the tool its index says."""

    def __init__(self, server: str) -> None:
        super().__init__(f"the stored index of {server!r} disagrees with its catalog")
        self.server = server


def tool_spans(raw: bytes, descriptors: Sequence[dict[str, Any]]) -> list[tuple[int, int]] | None:
    """Each descriptor's byte span in a catalog file whose `tools` array comes last, written compact
    (what `ToolCache.store` writes); None when the file is not laid out so."""
    encoded = [json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode("utf-8") for d in descriptors]
    tail = b"[" + b",".join(encoded) + b"]}"
    if not raw.endswith(tail):
        return None
    at = len(raw) - len(tail) + 1
    spans = []
    for blob in encoded:
        spans.append((at, at + len(blob)))
        at += len(blob) + 1
    return spans


def to_bytes(
    index: Index, fingerprint: Fingerprint, spans: Sequence[tuple[int, int]], meta: dict[str, Any]
) -> bytes | None:
    """The index as a file, or None when one of its strings holds a NUL."""
    import numpy as np

    terms = sorted(index.postings)
    surface = sorted(index.surface.items())
    exact = sorted(index.exact.items())
    keys = [d.key for d in index.documents]
    strings = {
        "terms": terms,
        "vocabulary": list(index.vocabulary),
        "surfaceWords": [w for w, _ in surface],
        "surfaceTerms": [t for _, t in surface],
        "exactSpellings": [s for s, _ in exact],
        "keys": keys,
    }
    if any(SEPARATOR in s for values in strings.values() for s in values):
        return None
    offsets = [0]
    doc_ids: list[int] = []
    tfs: list[float] = []
    for term in terms:
        ids, weights = index.postings[term]
        doc_ids.extend(ids)
        tfs.extend(weights)
        offsets.append(len(doc_ids))
    arrays: dict[str, Any] = {
        "offsets": np.asarray(offsets, np.int64),
        "docIds": np.asarray(doc_ids, np.int32),
        "tfs": np.asarray(tfs, np.float64),
        "lengths": np.asarray(index.lengths, np.float64),
        "positions": np.asarray([d.position for d in index.documents], np.int32),
        "spans": np.asarray(spans, np.int64).reshape(-1),
        "exactCounts": np.asarray([len(ids) for _, ids in exact], np.int32),
        "exactIds": np.asarray([i for _, ids in exact for i in ids], np.int32),
    }
    if index.vectors is not None:
        arrays["vectors"] = np.ascontiguousarray(index.vectors, np.float16)
    if index.encoded is not None and meta.get("encoder"):
        arrays["encoded"] = np.ascontiguousarray(index.encoded, np.float16)
    blobs: list[bytes] = []
    sections: dict[str, list[int]] = {}
    at = 0
    for name, value in [*arrays.items(), *((n, SEPARATOR.join(v).encode("utf-8")) for n, v in strings.items())]:
        blob = value if isinstance(value, bytes) else value.tobytes()
        sections[name] = [at, len(blob)]
        pad = -len(blob) % 8
        blobs.append(blob + b"\0" * pad)
        at += len(blob) + pad
    body = b"".join(blobs)
    header = {
        "sidecar": __version__,
        "key": fingerprint.key,
        "catalog": fingerprint.catalog,
        "filters": fingerprint.filters,
        "model": fingerprint.model,
        "server": fingerprint.server,
        "documents": len(keys),
        "dimensions": 0 if index.vectors is None else int(index.vectors.shape[1]),
        "encodedDimensions": int(index.encoded.shape[1]) if "encoded" in arrays else 0,
        "totalLength": index.total_length,
        "sections": sections,
        **meta,
    }
    head = json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    head += b" " * (-(PREAMBLE + len(head)) % 8)
    checksum = zlib.crc32(body, zlib.crc32(head))
    return MAGIC + len(head).to_bytes(8, "little") + checksum.to_bytes(8, "little") + head + body


@dataclass(frozen=True, slots=True)
class Stored:
    index: Index
    meta: dict[str, Any]
    """Everything else the header holds: `fetchedAt`, `freshS`, `refused`, ..."""


def from_bytes(data: bytes, fingerprint: Fingerprint, catalog: bytes) -> Stored | None:
    """The index in `data` when it was made from `fingerprint`, over the `catalog` file's bytes."""
    try:
        if not _intact(data):
            return None  # damaged, or not an index of this format
        reader = _Reader(data)
        if reader.fingerprint() != fingerprint or reader.header.get("sidecar") != __version__:
            return None  # another server, catalog, filters or model, or another version's tokens
        return Stored(_index(reader, catalog), reader.meta())
    except Exception:  # a damaged or foreign file, however it fails: build the index again
        return None


def _intact(data: bytes) -> bool:
    """The checksum over the header and the body holds."""
    if not data.startswith(MAGIC) or len(data) < PREAMBLE:
        return False
    size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
    said = int.from_bytes(data[len(MAGIC) + 8 : PREAMBLE], "little")
    if PREAMBLE + size > len(data):
        return False
    view = memoryview(data)
    return said == zlib.crc32(view[PREAMBLE + size :], zlib.crc32(view[PREAMBLE : PREAMBLE + size]))


def fingerprint_of(data: bytes) -> Fingerprint | None:
    """What an index file says it was made from (for inspection; `from_bytes` checks it)."""
    try:
        return _Reader(data).fingerprint()
    except Exception:
        return None


class _Reader:
    """The header and the sections of an index file; any inconsistency raises ValueError."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(MAGIC) or len(data) < PREAMBLE:
            raise ValueError("not an index file of this format")
        size = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
        body_at = PREAMBLE + size
        self.header: dict[str, Any] = json.loads(data[PREAMBLE:body_at])
        self.body = memoryview(data)[body_at:]
        self.sections: dict[str, list[int]] = self.header["sections"]

    def fingerprint(self) -> Fingerprint:
        h = self.header
        return Fingerprint(h["key"], h["catalog"], h["filters"], h["model"], h["server"])

    def meta(self) -> dict[str, Any]:
        internal = ("sections", "documents", "dimensions", "encodedDimensions", "totalLength", "sidecar")
        return {k: v for k, v in self.header.items() if k not in internal}

    def _section(self, name: str) -> memoryview:
        start, length = self.sections[name]
        if start < 0 or length < 0 or start + length > len(self.body):
            raise ValueError("a section lies outside the file")
        return self.body[start : start + length]

    def array(self, name: str, dtype: Any, count: int | None = None) -> Any:
        import numpy as np

        found = np.frombuffer(self._section(name), dtype)
        if count is not None and len(found) != count:
            raise ValueError("a section has the wrong size")
        return found

    def strings(self, name: str) -> list[str]:
        text = bytes(self._section(name)).decode("utf-8")
        return text.split(SEPARATOR) if text else []


def _index(reader: _Reader, catalog: bytes) -> Index:
    import numpy as np

    n_docs = int(reader.header["documents"])
    server = reader.header["server"]
    terms = reader.strings("terms")
    offsets = reader.array("offsets", np.int64, len(terms) + 1)
    doc_ids = reader.array("docIds", np.int32)
    tfs = reader.array("tfs", np.float64, len(doc_ids))
    spans = reader.array("spans", np.int64, 2 * n_docs).reshape(n_docs, 2)
    keys = reader.strings("keys")
    spellings = reader.strings("exactSpellings")
    counts = reader.array("exactCounts", np.int32, len(spellings))
    exact_ids = reader.array("exactIds", np.int32, int(counts.sum())).tolist()
    lengths = reader.array("lengths", np.float64, n_docs)
    positions = reader.array("positions", np.int32, n_docs)
    _check(n_docs, len(keys), offsets, doc_ids, tfs, lengths, positions, exact_ids)
    if n_docs and (spans[:, 0].min() < 0 or (spans[:, 1] <= spans[:, 0]).any() or spans.max() > len(catalog)):
        raise ValueError("a span lies outside the catalog")
    vocabulary = reader.strings("vocabulary")
    surface_words = reader.strings("surfaceWords")
    vectors = None
    if reader.header["model"] is not None:
        if int(reader.header["dimensions"]) != DIMENSIONS:
            raise ValueError("embeddings of another width")
        vectors = reader.array("vectors", np.float16, n_docs * DIMENSIONS).reshape(n_docs, DIMENSIONS)
        vectors = vectors.astype(np.float32)
        if not np.isfinite(vectors).all():
            raise ValueError("an embedding is not finite")
    encoded = None
    if reader.header.get("encoder") and "encoded" in reader.sections:
        width = int(reader.header.get("encodedDimensions", 0))
        if width <= 0:
            raise ValueError("encoder vectors of no width")
        encoded = reader.array("encoded", np.float16, n_docs * width).reshape(n_docs, width).astype(np.float32)
        if not np.isfinite(encoded).all():
            raise ValueError("an encoder vector is not finite")
    starts = np.concatenate(([0], np.cumsum(counts))).tolist()
    return Index(
        server,
        StoredDocuments(server, keys, positions.tolist(), spans, catalog),
        postings=Postings(dict(zip(terms, range(len(terms)), strict=True)), offsets, doc_ids, tfs),
        lengths=lengths,
        total_length=float(reader.header["totalLength"]),
        vocabulary=vocabulary,
        surface=SortedMap(surface_words, reader.strings("surfaceTerms")),
        exact=SortedMap(spellings, Slices(exact_ids, starts)),
        vectors=vectors,
        encoded=encoded,
        kinds=["tool"] * n_docs,
    )


def _check(
    n_docs: int, n_keys: int, offsets: Any, doc_ids: Any, tfs: Any, lengths: Any, positions: Any, exact_ids: list[int]
) -> None:
    """Every number an index holds within the range ranking relies on."""
    import numpy as np

    if n_keys != n_docs or int(offsets[0]) != 0 or int(offsets[-1]) != len(doc_ids) or (np.diff(offsets) < 0).any():
        raise ValueError("the postings disagree with their offsets")
    if len(doc_ids) and (doc_ids.min() < 0 or doc_ids.max() >= n_docs):
        raise ValueError("a posting names no document")
    if not (np.isfinite(tfs).all() and (tfs > 0).all() and np.isfinite(lengths).all() and (lengths >= 0).all()):
        raise ValueError("a weight is not a positive number")
    if n_docs and positions.min() < 0:
        raise ValueError("a negative position")
    if exact_ids and (min(exact_ids) < 0 or max(exact_ids) >= n_docs):
        raise ValueError("an exact spelling names no document")


def element_spans(catalog: bytes) -> Any:
    """`(start, end)` of every object in the catalog file's `tools` array (its last member), read
    from the catalog's brackets outside strings; ValueError when the file is not laid out so."""
    import numpy as np

    found = json_depth.structure(catalog)
    if found is None or not found.depth.size or not catalog.endswith(b"]}") or catalog[:1] != b"{":
        raise ValueError("the catalog file is not an object ending in its tools array")
    positions, opens, depth = found.positions, found.opens, found.depth
    if int(depth.min()) < 0 or int(depth[-1]) != 0 or (depth[:-1] == 0).any() or positions[-1] != len(catalog) - 1:
        raise ValueError("the catalog's brackets do not pair")
    arrays = np.flatnonzero(opens & (depth == 2))
    tools_at = int(positions[arrays[-1]]) if arrays.size else -1
    if tools_at < 0 or catalog[tools_at - 8 : tools_at + 1] != b'"tools":[' or positions[-2] != len(catalog) - 2:
        raise ValueError("the catalog's last member is not its tools array")
    inside = positions > tools_at
    starts = positions[inside & opens & (depth == 3)]
    ends = positions[inside & ~opens & (depth == 2)] + 1
    if ends.size != starts.size:
        raise ValueError("an element of the tools array does not close")
    # Written compact, the array is its elements and the commas between them, nothing else.
    raw = np.frombuffer(catalog, np.uint8)
    first, last = (int(starts[0]), int(ends[-1])) if starts.size else (tools_at + 1, tools_at + 1)
    tiled = (starts[1:] == ends[:-1] + 1).all() and (raw[ends[:-1]] == ord(",")).all()
    if first != tools_at + 1 or last != len(catalog) - 2 or not tiled:
        raise ValueError("the tools array holds more than its elements")
    return np.stack([starts, ends], axis=1)


def _check_spans(spans: Any, catalog: bytes) -> None:
    """Every span is one whole element of the catalog's `tools` array, never a part of one."""
    import numpy as np

    if not len(spans):
        return
    elements = element_spans(catalog)
    at = np.searchsorted(elements[:, 0], spans[:, 0])
    inside = at < len(elements)
    at = np.minimum(at, len(elements) - 1)
    if not (inside & (elements[at, 0] == spans[:, 0]) & (elements[at, 1] == spans[:, 1])).all():
        raise ValueError("a span is not an element of the catalog's tools array")


class Slices(Sequence[list[int]]):
    """`values[starts[i]:starts[i + 1]]` for each i, made when asked for."""

    def __init__(self, values: list[int], starts: list[int]) -> None:
        self._values = values
        self._starts = starts

    @overload
    def __getitem__(self, i: int) -> list[int]: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[list[int]]: ...

    def __getitem__(self, i: int | slice) -> list[int] | Sequence[list[int]]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._values[self._starts[i] : self._starts[i + 1]]

    def __len__(self) -> int:
        return len(self._starts) - 1


class Postings(Mapping[str, tuple[Sequence[int], Sequence[float]]]):
    """term → (document ids, weighted term frequencies), read from CSR arrays on demand."""

    def __init__(self, rows: dict[str, int], offsets: Any, doc_ids: Any, tfs: Any) -> None:
        self._rows = rows
        self._offsets = offsets
        self._doc_ids = doc_ids
        self._tfs = tfs
        self._lists: dict[str, tuple[list[int], list[float]]] = {}

    def __getitem__(self, term: str) -> tuple[list[int], list[float]]:
        found = self._lists.get(term)
        if found is None:
            row = self._rows[term]
            a, b = int(self._offsets[row]), int(self._offsets[row + 1])
            found = self._lists[term] = (self._doc_ids[a:b].tolist(), self._tfs[a:b].tolist())
        return found

    def __contains__(self, term: object) -> bool:
        return term in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


class SortedMap(Mapping[str, Any]):
    """A mapping over sorted keys and aligned values, looked up by bisection: no dict to build."""

    def __init__(self, keys: list[str], values: Sequence[Any]) -> None:
        if len(keys) != len(values):
            raise ValueError("keys and values differ in length")
        self._keys = keys
        self._values = values

    def __getitem__(self, key: str) -> Any:
        at = bisect_left(self._keys, key)
        if at < len(self._keys) and self._keys[at] == key:
            return self._values[at]
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class StoredDocuments(Sequence[Document]):
    """The visible tools of a stored index; each becomes a `Document` (its descriptor parsed from
    its span of the catalog file) the first time it is asked for."""

    def __init__(self, server: str, keys: list[str], positions: list[int], spans: Any, catalog: bytes) -> None:
        self._server = server
        self._keys = keys
        self._positions = positions
        self._spans = spans
        self._catalog = catalog
        self._made: dict[int, Document] = {}
        self._checked = False
        """Whether the spans were found to be the catalog's tools (once, when a first one is needed)."""

    @overload
    def __getitem__(self, i: int) -> Document: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Document]: ...

    def __getitem__(self, i: int | slice) -> Document | Sequence[Document]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self._keys)
        found = self._made.get(i)
        if found is None:
            if not self._checked:
                # Read from the catalog's brackets only for a catalog whose tools are returned.
                try:
                    _check_spans(self._spans, self._catalog)
                except ValueError:
                    raise StoredIndexDamaged(self._server) from None
                self._checked = True
            a, b = (int(x) for x in self._spans[i])
            try:
                descriptor = json.loads(self._catalog[a:b])
            except (ValueError, RecursionError):
                raise StoredIndexDamaged(self._server) from None
            if not isinstance(descriptor, dict) or descriptor.get("name") != self._keys[i]:
                raise StoredIndexDamaged(self._server)
            found = self._made[i] = Document(
                "tool", self._server, self._keys[i], {}, frozenset(), self._positions[i], descriptor
            )
        return found

    def __len__(self) -> int:
        return len(self._keys)
