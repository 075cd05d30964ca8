"""How much of a model's context the tool definitions of a client's servers may take before they are left
to a search (issue 34, `mcp-sidecar mcp --expose`). No imports: the command line's parser reads these."""

from __future__ import annotations

from typing import Literal

ExposeMode = Literal["auto", "search", "all"]
EXPOSE_MODES: tuple[ExposeMode, ...] = ("auto", "search", "all")
CONTEXT_WINDOW = 200_000
"""The context window the default budget assumes: Claude's and most current models' (tokens)."""
DEFAULT_BUDGET = CONTEXT_WINDOW * 2 // 100
"""2 % of that window, 4,000 tokens: within the 1 to 5 % that tool definitions should take of a context."""
MAX_BUDGET = 1_000_000
