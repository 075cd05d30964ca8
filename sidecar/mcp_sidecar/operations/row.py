"""What one operation is, for every front: the row type of `operations/table.py`.

A row names its JSON-RPC method, parses its params, calls the feature, and renders its text;
a row with a `Command` is also a `/mcp` verb, one with a `Cli` also a headless subcommand. The
fronts (`handlers/registry.py`, `operations/runner.py`, `cli.py`, the gateway) build their
tables from the rows, so an operation is wired once.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from mcp_sidecar.services.questions import acting

if TYPE_CHECKING:
    from argparse import Namespace

    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.command_line import ParsedCommand

P = TypeVar("P")

Text = Callable[[Any], str]
"""A result as text (an `output/` renderer)."""


def result_text(result: Any) -> str:
    """The text a result carries already (`discover`, `activate`, `read`...)."""
    return str(result["text"])


@dataclass(frozen=True, slots=True)
class Command(Generic[P]):
    """The `/mcp` verbs that run a row: their params from the parsed line, and their text."""

    verbs: tuple[str, ...]
    from_command: Callable[[ParsedCommand], P]
    text: Text | None = None
    """None: the row's text."""


@dataclass(frozen=True, slots=True)
class Cli(Generic[P]):
    """The headless subcommand that runs a row (`mcp-sidecar NAME ...`).

    `usage` runs first and names a usage failure (printed, exit status 2, nothing run);
    `from_args` runs where a diagnostic is reported (it may parse, and fail as the method
    would); `finish` turns the awaited call into the subcommand's result; `failed` is the exit
    rule: a result that is a failure (its text to stderr, exit status 1).
    """

    name: str
    from_args: Callable[[Namespace], P]
    usage: Callable[[Namespace], str | None] | None = None
    text: Text | None = None
    """None: the row's text."""
    failed: Callable[[Any], bool] | None = None
    finish: Callable[[Sidecar, Namespace, Awaitable[Any]], Awaitable[Any]] | None = None


@dataclass(frozen=True, slots=True)
class Operation(Generic[P]):
    """One operation: `method` (protocol/methods.py), `label` (the diagnostic's operation word),
    `parse` (protocol's params parser), `call` (the feature call, sync or async), `text` (its
    `output/` renderer, or None), and the `/mcp` verbs and CLI subcommand that run it too."""

    method: str
    label: str
    parse: Callable[[str, Any], P]
    call: Callable[[Sidecar, P], Any]
    text: Text | None = None
    command: Command[P] | None = None
    cli: Cli[P] | None = None

    def command_text(self) -> Text:
        text = self.command.text if self.command is not None and self.command.text is not None else self.text
        assert text is not None, f"{self.method}: a /mcp verb needs a text"
        return text

    def cli_text(self) -> Text:
        text = self.cli.text if self.cli is not None and self.cli.text is not None else self.text
        assert text is not None, f"{self.method}: a CLI subcommand needs a text"
        return text


async def invoke(row: Operation[P], app: Sidecar, params: P) -> Any:
    """Run a row's call on typed params, awaiting it when the feature is async.

    Its client is the acting one meanwhile: a question a server asks during the call goes to
    that client's answerers (services/questions.py)."""
    with acting(app.client):
        result = row.call(app, params)
        if inspect.isawaitable(result):
            return await result
        return result


Run = Callable[[Operation[Any], Any], Awaitable[Any]]
"""Runs a row on typed params for one container: how a front that holds no container (the gateway's
resources and prompts) calls the rows."""


def runner(app: Sidecar) -> Run:
    async def run(row: Operation[Any], params: Any) -> Any:
        return await invoke(row, app, params)

    return run


def by_method(rows: tuple[Operation[Any], ...], method: str) -> Operation[Any]:
    return next(row for row in rows if row.method == method)
