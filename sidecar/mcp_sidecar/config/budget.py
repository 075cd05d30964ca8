"""The session budget: how many tools, or how many tokens of tool definitions, a session keeps active.

`"sessionBudget": {"maxTools": 12, "maxTokens": 6000}` at the top level of the global file or a
trusted project file (the project's fields over the global's); off when absent. A client can set its
own over the files' (the gateway's `--max-active-tools` / `--max-active-tokens`, an editor's
`initializationOptions.sessionBudget`), where 0 turns a limit off. What goes when an activation would
exceed it is decided in `services/budget.py`.

A problem is a sentence naming the file and the field, never the value; the field is then off, and
the servers' definitions stay valid (as for profiles).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KEY = "sessionBudget"
FIELDS = {"maxTools": "max_tools", "maxTokens": "max_tokens"}
MAX_TOOLS = 1_000
MAX_TOKENS = 10_000_000
LIMITS = {"maxTools": MAX_TOOLS, "maxTokens": MAX_TOKENS}


@dataclass(frozen=True, slots=True)
class Budget:
    """A limit per field; None: none (in a client's own setting: not given, the files' holds)."""

    max_tools: int | None = None
    max_tokens: int | None = None

    @property
    def off(self) -> bool:
        return self.max_tools is None and self.max_tokens is None

    def over(self, files: Budget) -> Budget:
        """This client's setting over the files' budget: a field given wins, 0 turns it off."""
        tools = files.max_tools if self.max_tools is None else self.max_tools
        tokens = files.max_tokens if self.max_tokens is None else self.max_tokens
        return Budget(tools or None, tokens or None)


@dataclass(frozen=True, slots=True)
class BudgetRead:
    budget: Budget = Budget()
    problems: tuple[str, ...] = ()


def limit_problem(field: str, value: Any, allow_zero: bool = False) -> str | None:
    """What is wrong with one field's value (the end of a sentence, never the value), or None."""
    low = 0 if allow_zero else 1
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= LIMITS[field]:
        return f"must be a whole number from {low} to {LIMITS[field]:,}"
    return None


def parse_budget(document: Any, source: str) -> BudgetRead:
    """The file's `sessionBudget`: its valid fields, and a sentence per problem (each naming the file)."""
    found = document.get(KEY) if isinstance(document, Mapping) else None
    if found is None:
        return BudgetRead()
    if not isinstance(found, Mapping):
        return BudgetRead(problems=(f"{source}: `{KEY}` must be a JSON object (`maxTools`, `maxTokens`).",))
    problems = []
    if any(k not in FIELDS for k in found):
        problems.append(f"{source}: `{KEY}` has an unsupported field (it takes `maxTools` and `maxTokens`).")
    values: dict[str, int | None] = {}
    for field, attribute in FIELDS.items():
        value = found.get(field)
        wrong = limit_problem(field, value) if value is not None else None
        if wrong is not None:
            problems.append(f"{source}: `{KEY}.{field}` {wrong} (or null: no limit); that limit is off.")
            value = None
        values[attribute] = value
    return BudgetRead(Budget(**values), tuple(problems))


def merged(global_read: BudgetRead, project_read: BudgetRead) -> BudgetRead:
    """The project's fields over the global's (a trusted project may set its own limits)."""
    project, base = project_read.budget, global_read.budget
    budget = Budget(
        project.max_tools if project.max_tools is not None else base.max_tools,
        project.max_tokens if project.max_tokens is not None else base.max_tokens,
    )
    return BudgetRead(budget, (*global_read.problems, *project_read.problems))
