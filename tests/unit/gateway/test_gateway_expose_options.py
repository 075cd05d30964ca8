"""`mcp-sidecar mcp --expose` and `--expose-budget`: their defaults, and a bad budget refused in words."""

from __future__ import annotations

import pytest

from mcp_sidecar.catalog.context_budget import CONTEXT_WINDOW, DEFAULT_BUDGET
from mcp_sidecar.cli_parser import build_parser


def test_auto_with_two_percent_of_a_200k_window_by_default() -> None:
    args = build_parser().parse_args(["mcp"])
    assert (args.expose, args.expose_budget) == ("auto", 4000)
    assert DEFAULT_BUDGET == CONTEXT_WINDOW * 2 // 100
    chosen = build_parser().parse_args(["mcp", "--expose", "all", "--expose-budget", "12,500"])
    assert (chosen.expose, chosen.expose_budget) == ("all", 12500)


@pytest.mark.parametrize("value", ["lots", "-1", "1.5", "1000001"])
def test_a_budget_that_is_no_whole_number_of_tokens_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["mcp", "--expose-budget", value])
    assert stopped.value.code == 2
    expected = f"argument --expose-budget: expected a whole number of tokens from 0 to 1000000 (got {value!r})"
    assert expected in capsys.readouterr().err
