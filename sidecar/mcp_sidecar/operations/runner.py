"""Run one `/mcp` command line: parse it, run the operation row its verb names, and render its text.

Every editor and the CLI come through here, so a command behaves the same everywhere. The
result is `{command, data, text}`: `data` is what the matching structured method returns.
The renderers sanitise each server string where they place it; `text` passes the sanitiser
once more as a whole, since some of it (a login's text, say) is built elsewhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_sidecar.operations.row import Operation, invoke
from mcp_sidecar.output.sanitize import strip_controls
from mcp_sidecar.protocol.errors import command_invalid
from mcp_sidecar.services.command_line import CommandLineError, ParsedCommand, parse_line, usage_of

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import CommandResult
    from mcp_sidecar.services.app import Sidecar

Outcome = tuple[Any, str]
Runner = Callable[["Sidecar", ParsedCommand], Awaitable[Outcome]]

HELP = "help"
"""The one verb no operation runs: its text is the usage."""


def verb_runner(row: Operation[Any]) -> Runner:
    """What a verb of `row` runs: the row's call on the params the line carries, and its text."""
    assert row.command is not None
    from_command, text = row.command.from_command, row.command_text()

    async def run(app: Sidecar, parsed: ParsedCommand) -> Outcome:
        result = await invoke(row, app, from_command(parsed))
        return result, text(result)

    return run


async def _help(app: Sidecar, parsed: ParsedCommand) -> Outcome:
    text = usage_of(parsed.topic)
    return {"usage": text}, text


def runners(rows: tuple[Operation[Any], ...]) -> dict[str, Runner]:
    """Every `/mcp` verb: one runner per verb of each row that has a `Command`, and `help`."""
    table: dict[str, Runner] = {HELP: _help}
    for row in rows:
        if row.command is not None:
            run = verb_runner(row)
            for verb in row.command.verbs:
                assert verb not in table, f"/mcp {verb} is run by two rows"
                table[verb] = run
    return table


async def run_line(app: Sidecar, line: str, table: Mapping[str, Runner]) -> CommandResult:
    try:
        parsed = parse_line(line)
    except CommandLineError as exc:
        raise command_invalid("command", exc.message, exc.usage) from None
    data, text = await table[parsed.name](app, parsed)
    return {"command": parsed.name, "data": data, "text": strip_controls(text)}
