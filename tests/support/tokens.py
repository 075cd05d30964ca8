"""An independent count of what a tool definition costs a model's context, for checking the
sidecar's estimates: the `tokenizers` library (Rust BPE) loading the same Llama 2 tokenizer file
from the `wordllama` package, on the compact JSON of the tool's name, description, inputSchema and
outputSchema (docs/protocol.md, *Token estimates*). Nothing of the sidecar's counting is used."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from mcp_sidecar.catalog import semantic

FIELDS = ("name", "description", "inputSchema", "outputSchema")


@cache
def _tokenizer() -> Any:
    tokenizers = pytest.importorskip("tokenizers")  # the [encoder] extra, which `scripts/setup --test` installs
    root = semantic.package_dir()
    assert root is not None, "the wordllama package is a dependency of mcp-sidecar"
    return tokenizers.Tokenizer.from_file(str(root / semantic.TOKENIZER))


def text_tokens(text: str) -> int:
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def definition_tokens(tool: dict[str, Any]) -> int:
    """The tokens of the tool as a host sends it to its model: compact JSON of its four fields."""
    shown = {key: tool[key] for key in FIELDS if key in tool}
    return text_tokens(json.dumps(shown, separators=(",", ":"), ensure_ascii=False))
