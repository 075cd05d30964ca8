"""The gateway's `--expose` in the tests: `search` unless a test chooses.

Most gateway tests are about the search-and-activate flow; with the default (`auto`) their small fixture
catalogs would be listed whole from the start. The tests of `--expose` itself (tests/e2e/test_gateway_expose.py)
pass it."""

from __future__ import annotations

from collections.abc import Sequence


def searched(args: Sequence[str]) -> list[str]:
    """The gateway's arguments, with `--expose search` unless they choose."""
    chosen = any(arg == "--expose" or arg.startswith("--expose=") for arg in args)
    return list(args) if chosen else [*args, "--expose", "search"]
