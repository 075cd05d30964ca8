"""The optional encoder (all-MiniLM-L6-v2 int8 on onnxruntime): its vectors, its place in the
fusion, its stored vectors, and its background encoding. The test extras install it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest

from mcp_sidecar import heavy
from mcp_sidecar.catalog import encoder, semantic, stored_index
from mcp_sidecar.catalog.documents import embedding_text, tool_document
from mcp_sidecar.catalog.hybrid import search
from mcp_sidecar.catalog.index import Hit, Index
from mcp_sidecar.services.encodings import Encodings

PUBLISHED = (  # sentence-transformers documentation, "Semantic Textual Similarity", all-MiniLM-L6-v2
    ("The new movie is awesome", "The new movie is so great", 0.8939),
    ("The cat sits outside", "The dog plays in the garden", 0.2838),
    ("A man is playing guitar", "A woman watches TV", -0.0327),
)
TOOLS = {
    "files": [
        ("list_directory", "Get a detailed listing of all files and directories in a specified path."),
        ("write_file", "Create a new file or completely overwrite an existing file with new content."),
    ],
    "geo": [
        ("maps_elevation", "Get elevation data for locations on the earth."),
        ("maps_geocode", "Convert an address into geographic coordinates."),
    ],
}


@pytest.fixture(scope="module")
def found() -> encoder.Encoder:
    heavy.ENCODER.wait(120)
    loaded = encoder.load_encoder()
    assert loaded is not None, "the test extras install the encoder"
    return loaded


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> semantic.Model:
    loaded = semantic.load_model(tmp_path_factory.mktemp("models"))
    assert loaded is not None
    return loaded


def indexes(model: semantic.Model, found: encoder.Encoder | None) -> list[Index]:
    out = []
    for server, specs in TOOLS.items():
        docs = [tool_document(server, {"name": n, "description": d}, i) for i, (n, d) in enumerate(specs)]
        texts = [embedding_text(d) for d in docs]
        index = Index.build(server, docs, model.embed(texts))
        index.encoded = found.embed(texts) if found is not None else None
        out.append(index)
    return out


def ids(hits: list[Hit]) -> list[str]:
    return [f"{h.document.server}.{h.document.key}" for h in hits]


def test_the_encoder_reproduces_the_published_similarities(found: encoder.Encoder) -> None:
    for left, right, published in PUBLISHED:
        a, b = found.embed([left, right])
        assert abs(float(a @ b) - published) < 0.01  # int8 weights: within a hundredth of float32's
    vectors = found.embed(["list the files in a folder", "", "show directory contents"])
    assert vectors.shape == (3, encoder.DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert found.embed([]).shape == (0, encoder.DIMENSIONS)


class Pointing:
    """An encoder whose every query is nearest one document: row `at` of the stacked vectors."""

    def __init__(self, at: int) -> None:
        self.at = at

    def embed(self, texts: list[str]) -> Any:
        out = np.zeros((len(texts), 4), np.float32)
        out[:, self.at] = 1.0
        return out


def pointed(model: semantic.Model) -> list[Index]:
    out = indexes(model, None)
    for n, index in enumerate(out):
        index.encoded = np.eye(4, dtype=np.float32)[2 * n : 2 * n + 2]
    return out


def test_the_encoders_ranking_is_fused_and_vouches_for_what_it_finds_near(model: semantic.Model) -> None:
    query = "where on the globe is 10 Downing Street"
    plain = search(pointed(model), query, limit=4, model=model)
    assert ids(plain)[0] != "files.write_file"
    assert all(h.weak for h in plain)
    assert all(h.document.key != "write_file" or h.weak for h in plain)
    hits = search(pointed(model), query, limit=4, model=model, encoder=Pointing(1))
    chosen = {h.document.key: h for h in hits}
    assert not chosen["write_file"].weak  # the encoder's first: its similarity (1.0) vouches for it
    assert all(h.weak for h in hits if h.document.key != "write_file")


def test_a_real_encoder_ranks_a_real_catalog(model: semantic.Model, found: encoder.Encoder) -> None:
    hits = search(indexes(model, found), "how far above sea level is Denver", limit=2, model=model, encoder=found)
    assert ids(hits)[0] == "geo.maps_elevation"


def test_the_encoder_waits_until_every_index_has_its_vectors(model: semantic.Model, found: encoder.Encoder) -> None:
    mixed = indexes(model, found)
    mixed[1].encoded = None
    query = "how far above sea level is Denver"
    assert [(h.score, h.weak) for h in search(mixed, query, limit=4, model=model, encoder=found)] == [
        (h.score, h.weak) for h in search(mixed, query, limit=4, model=model)
    ]


def test_stored_encoder_vectors_come_back_only_with_their_files_named() -> None:
    tools = [{"name": n, "description": d} for n, d in TOOLS["geo"]]
    raw = b'{"tools":[' + b",".join(json.dumps(t, separators=(",", ":")).encode() for t in tools) + b"]}"
    spans = stored_index.tool_spans(raw, tools)
    assert spans is not None
    index = Index.build("geo", [tool_document("geo", t, i) for i, t in enumerate(tools)])
    index.encoded = np.eye(2, encoder.DIMENSIONS, dtype=np.float32)
    mark = stored_index.Fingerprint("k", stored_index.catalog_digest(raw), "f", None, "geo")
    named = stored_index.to_bytes(index, mark, spans, {"refused": [], "encoder": "abc"})
    unnamed = stored_index.to_bytes(index, mark, spans, {"refused": []})
    assert named is not None
    assert unnamed is not None
    back = stored_index.from_bytes(named, mark, raw)
    assert back is not None
    assert back.meta["encoder"] == "abc"
    assert np.array_equal(back.index.encoded, index.encoded)
    again = stored_index.from_bytes(unnamed, mark, raw)
    assert again is not None
    assert again.index.encoded is None


async def test_a_catalog_is_encoded_in_the_background_and_kept(
    model: semantic.Model, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_SIDECAR_ENCODER", "1")
    index = indexes(model, None)[1]
    kept: list[Any] = []
    encodings = Encodings()
    encodings.later("geo", index, kept.append)
    encodings.later("geo", index, kept.append)  # already under way: not twice
    assert len(encodings.running()) == 1
    await asyncio.wait_for(asyncio.gather(*encodings.running()), 120)
    assert kept == [index]
    assert index.encoded is not None
    assert index.encoded.shape == (2, encoder.DIMENSIONS)
    assert Encodings.encoder() is not None


@pytest.mark.parametrize("setting", [None, "0", "off"])
async def test_the_encoder_is_off_unless_turned_on(
    model: semantic.Model, found: encoder.Encoder, monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    # Installed (the test extras) and loaded (`found`): still unused without MCP_SIDECAR_ENCODER=1.
    assert encoder.installed()
    if setting is None:
        monkeypatch.delenv("MCP_SIDECAR_ENCODER", raising=False)
    else:
        monkeypatch.setenv("MCP_SIDECAR_ENCODER", setting)
    index = indexes(model, None)[0]
    encodings = Encodings()
    encodings.later("files", index, None)
    assert encodings.running() == []
    assert index.encoded is None
    assert Encodings.encoder() is None
    assert Encodings.digest() is None
    monkeypatch.setenv("MCP_SIDECAR_ENCODER", "1")
    assert Encodings.encoder() is found
    assert Encodings.digest() is not None
