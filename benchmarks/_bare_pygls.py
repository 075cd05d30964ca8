"""A bare pygls LanguageServer with no features: the startup baseline for benchmarks/startup.py."""

from __future__ import annotations

from pygls.lsp.server import LanguageServer


def main() -> None:
    LanguageServer("bare-pygls", "0.0.0").start_io()


if __name__ == "__main__":
    main()
