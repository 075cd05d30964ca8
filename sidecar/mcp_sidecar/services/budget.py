"""Which active tools the session budget deactivates, least recently used first.

A session over its budget (`config/budget.py`) after an activation gives up the tools used least
recently (activated or called: `Sessions.touch`) until it fits, never one the activation asked for:
the model asked for those now. When they alone exceed the budget, every other tool goes and they
stay active all the same, over the budget, which the answer says (refusing them would leave the
model with nothing to call). Tokens count only when every active tool's estimate is known (without
the tokenizer, only `maxTools` holds).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_sidecar.config.budget import Budget
    from mcp_sidecar.protocol.results import SessionBudget


@dataclass(frozen=True, slots=True)
class Use:
    """One active tool as the budget sees it."""

    tool_id: str
    last_used: int
    """Its place in the session's order of use: higher is more recent."""
    tokens: int | None


def fits(budget: Budget, tools: int, tokens: int | None) -> bool:
    """Whether `tools` active tools costing `tokens` (None: unknown, not held against it) fit the budget."""
    if budget.max_tools is not None and tools > budget.max_tools:
        return False
    return budget.max_tokens is None or tokens is None or tokens <= budget.max_tokens


def evictions(budget: Budget, active: list[Use], keep: Collection[str]) -> list[str]:
    """The ids to deactivate so that `active` fits `budget`, least recently used first; never one in `keep`.
    Fewer than needed (even none) when `keep` alone does not fit."""
    if budget.off:
        return []
    known = all(use.tokens is not None for use in active)
    tokens = sum(use.tokens or 0 for use in active) if known else None
    count = len(active)
    gone: list[str] = []
    for use in sorted((u for u in active if u.tool_id not in keep), key=lambda u: u.last_used):
        if fits(budget, count, tokens):
            break
        gone.append(use.tool_id)
        count -= 1
        if tokens is not None:
            tokens -= use.tokens or 0
    return gone


def uses(order: Mapping[str, int], tokens: Mapping[str, int | None]) -> list[Use]:
    """The session's active tools (`tokens`: id → estimate) with their places in `order` (0: never used)."""
    return [Use(tool_id, order.get(tool_id, 0), n) for tool_id, n in tokens.items()]


def to_json(budget: Budget) -> SessionBudget | None:
    return None if budget.off else {"maxTools": budget.max_tools, "maxTokens": budget.max_tokens}
