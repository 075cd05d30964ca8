"""Every row of the operation table is reachable from each front it names, and runs through the row.

Each front is built from a copy of the table whose calls record what they were given: a JSON-RPC
method, a `/mcp` line or a CLI argv must reach its own row's call with the params it carries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import pytest
from pygls.exceptions import JsonRpcException

from mcp_sidecar import cli
from mcp_sidecar.handlers.registry import request_handlers
from mcp_sidecar.operations.args import CLI_SESSION, DEFAULT, ToolsParams
from mcp_sidecar.operations.row import Operation
from mcp_sidecar.operations.runner import run_line, runners
from mcp_sidecar.operations.table import CLI_ROWS, ROWS, RUNNERS
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.config_params import (
    ConfigAddParams,
    ConfigImportParams,
    ConfigRemoveParams,
    LoginParams,
    SetEnabledParams,
)
from mcp_sidecar.protocol.params import (
    ActivateParams,
    CallToolParams,
    CompleteParams,
    DiscoverParams,
    ProfileParams,
    PromptPreviewParams,
    ReadParams,
    ResourceParams,
    ServerParams,
)
from mcp_sidecar.services.command_line import COMMANDS, parse_line

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar

APP = cast("Sidecar", SimpleNamespace(client=None))
"""The recording calls never touch the container: they only check it is the one passed (`invoke` reads
its acting client, none here)."""


@dataclass
class Recorder:
    calls: list[tuple[str, Any]]

    def rows(self, *, parsed: bool = False) -> tuple[Operation[Any], ...]:
        """The table with recording calls (and, with `parsed`, parsers that answer a marker)."""
        return tuple(self._row(row, parsed) for row in ROWS)

    def _row(self, row: Operation[Any], parsed: bool) -> Operation[Any]:
        def call(app: Sidecar, params: Any) -> dict[str, Any]:
            assert app is APP
            self.calls.append((row.method, params))
            return {"method": row.method, "activation": None}

        def marker(operation: str, raw: Any) -> Any:
            return ("parsed", row.method, operation, raw)

        return replace(row, call=call, parse=marker if parsed else row.parse, text=lambda r: f"text of {r['method']}")


def test_every_request_has_exactly_one_row() -> None:
    named = [row.method for row in ROWS]
    assert len(named) == len(set(named))
    assert set(named) == set(methods.REQUESTS)


async def test_every_method_runs_its_row_through_the_handler() -> None:
    recorder = Recorder([])
    handlers = request_handlers(APP, recorder.rows(parsed=True))
    for row in ROWS:
        result = await handlers[row.method]({"raw": row.method})
        assert result["method"] == row.method
        assert recorder.calls[-1] == (row.method, ("parsed", row.method, row.label, {"raw": row.method}))
    assert len(recorder.calls) == len(ROWS)


async def test_a_failing_call_is_reported_under_the_row_label() -> None:
    def fail(app: Sidecar, params: Any) -> Any:
        raise RuntimeError("private detail")

    rows = tuple(replace(row, call=fail) for row in ROWS)
    handlers = request_handlers(APP, rows)
    row = next(r for r in ROWS if r.method == methods.PROMPT_DISCARD)
    with pytest.raises(JsonRpcException) as raised:
        await handlers[row.method]({"previewId": "p1"})
    data = raised.value.data
    assert isinstance(data, dict)
    assert (data["code"], data["operation"]) == ("operation_failed", "prompt discard")
    assert "private detail" not in str(data)


def test_the_handlers_refuse_a_table_that_misses_a_method() -> None:
    with pytest.raises(RuntimeError, match="no handler"):
        request_handlers(APP, tuple(row for row in ROWS if row.method != methods.SESSION_END))


LINES: dict[str, tuple[str, str, Any]] = {
    "list": ("list", methods.STATUS, DEFAULT),
    "get": ("get docs", methods.SERVER_GET, ServerParams("docs")),
    "tools": ("tools docs search", methods.SERVER_TOOLS, ToolsParams("docs", "search")),
    "reload": ("reload", methods.CONFIG_RELOAD, DEFAULT),
    "enable": ("enable docs", methods.CONFIG_SET_ENABLED, SetEnabledParams("docs", True)),
    "disable": ("disable docs", methods.CONFIG_SET_ENABLED, SetEnabledParams("docs", False)),
    "add": (
        "add --scope project docs https://example.com/mcp",
        methods.CONFIG_ADD,
        ConfigAddParams("project", "docs", {"url": "https://example.com/mcp"}, False),
    ),
    "remove": ("remove --scope global docs", methods.CONFIG_REMOVE, ConfigRemoveParams("global", "docs")),
    "reconnect": ("reconnect docs", methods.SERVER_RECONNECT, ServerParams("docs")),
    "refresh": ("refresh docs", methods.SERVER_REFRESH, ServerParams("docs")),
    "import": (
        "import --scope global other.json --select a,b --confirm",
        methods.CONFIG_IMPORT,
        ConfigImportParams("other.json", "global", ("a", "b"), True, False),
    ),
    "prompt": (
        "prompt docs greet who=world",
        methods.PROMPT_PREVIEW,
        PromptPreviewParams("docs", "greet", {"who": "world"}, methods.DEFAULT_SESSION),
    ),
    "subscribe": ("subscribe docs file:///a", methods.RESOURCE_SUBSCRIBE, ResourceParams("docs", "file:///a")),
    "unsubscribe": ("unsubscribe docs file:///a", methods.RESOURCE_UNSUBSCRIBE, ResourceParams("docs", "file:///a")),
    "subscriptions": ("subscriptions", methods.RESOURCE_SUBSCRIPTIONS, DEFAULT),
    "login": ("login docs --no-browser", methods.AUTH_LOGIN, LoginParams("docs", True)),
    "logout": ("logout docs", methods.AUTH_LOGOUT, "docs"),
    "profile": ("profile review", methods.PROFILE, ProfileParams("review", True, methods.DEFAULT_SESSION)),
}
"""One line per `/mcp` verb: the row it must run and the params it must carry."""


def test_every_verb_is_a_command_of_the_parser_and_runs_a_row() -> None:
    assert parse_line("status").name == "list"  # an alias, the parser's own
    assert set(LINES) | {"status", "help"} == set(COMMANDS)
    assert set(RUNNERS) == set(LINES) | {"help"}


@pytest.mark.parametrize("verb", sorted(LINES))
async def test_each_verb_runs_its_row_with_the_params_of_the_line(verb: str) -> None:
    line, method, expected = LINES[verb]
    recorder = Recorder([])
    result = await run_line(APP, line, runners(recorder.rows()))
    assert recorder.calls == [(method, expected)]
    assert result == {"command": verb, "data": {"method": method, "activation": None}, "text": f"text of {method}"}


async def test_help_runs_no_row() -> None:
    recorder = Recorder([])
    result = await run_line(APP, "help get", runners(recorder.rows()))
    assert recorder.calls == []
    assert result["text"].startswith("Usage: get NAME")


ARGVS: dict[str, tuple[list[str], str, Any]] = {
    "status": (["status"], methods.STATUS, DEFAULT),
    "get": (["get", "docs"], methods.SERVER_GET, ServerParams("docs")),
    "tools": (["tools", "docs"], methods.SERVER_TOOLS, ToolsParams("docs")),
    "logs": (["logs", "docs"], methods.SERVER_LOGS, ServerParams("docs")),
    "discover": (
        ["discover", "search the web", "--kind", "tools", "--server", "docs", "--limit", "3"],
        methods.DISCOVER,
        DiscoverParams("search the web", "tools", "docs", 3, CLI_SESSION),
    ),
    "refresh": (["refresh", "docs"], methods.SERVER_REFRESH, ServerParams("docs")),
    "activate": (
        ["activate", "docs.a", "docs.b", "docs.a"],
        methods.ACTIVATE,
        ActivateParams(("docs.a", "docs.b"), CLI_SESSION),
    ),
    "read": (
        ["read", "docs", "--template", "file:///{name}", "name=a", "name=b"],
        methods.READ,
        ReadParams("docs", None, "file:///{name}", {"name": ["a", "b"]}),
    ),
    "complete": (
        ["complete", "docs", "file:///{name}", "name", "re", "--arg", "kind=x"],
        methods.COMPLETE,
        CompleteParams("docs", "template", "file:///{name}", "name", "re", {"kind": "x"}),
    ),
    "prompt": (
        ["prompt", "docs", "greet", "who=world"],
        methods.PROMPT_PREVIEW,
        PromptPreviewParams("docs", "greet", {"who": "world"}, methods.DEFAULT_SESSION),
    ),
    "call": (
        ["call", "docs.search", '{"q": "x"}'],
        methods.CALL_TOOL,
        CallToolParams("docs.search", {"q": "x"}, CLI_SESSION, activate=True),
    ),
}
"""One argv per subcommand that runs a row: the row and the params it must carry."""

ELSEWHERE = {"serve", "engine", "run", "mcp", "login", "logout", "conformance-client", "app"}
"""Subcommands no row runs: serving, the engine, `/mcp` lines (through the `mcp/command` row), the
gateway, OAuth at a terminal (`cli_auth.py`), the conformance client, an app served until the end of
input (`cli_app.py`)."""


def _subcommands() -> set[str]:
    help_text = cli.build_parser().format_help()
    return set(re.findall(r"^    (\S+)", help_text, flags=re.MULTILINE))


def test_every_subcommand_runs_a_row_or_is_named_elsewhere() -> None:
    assert set(CLI_ROWS) == set(ARGVS)
    assert _subcommands() == set(ARGVS) | ELSEWHERE


@pytest.mark.parametrize("name", sorted(ARGVS))
async def test_each_subcommand_runs_its_row_with_the_params_of_its_arguments(name: str) -> None:
    argv, method, expected = ARGVS[name]
    args = cli.parse_args(argv)
    assert args.command == name
    recorder = Recorder([])
    row = next(r for r in recorder.rows() if r.method == CLI_ROWS[name].method)
    assert row.method == method
    result = await cli.run_row(APP, row, args)
    assert recorder.calls == [(method, expected)]
    assert result["method"] == method


def test_every_front_that_shows_text_has_a_renderer() -> None:
    for row in ROWS:
        if row.command is not None:
            assert callable(row.command_text()), row.method
        if row.cli is not None:
            assert callable(row.cli_text()), row.method
