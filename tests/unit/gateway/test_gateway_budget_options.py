"""`mcp-sidecar mcp --max-active-tools N --max-active-tokens N`: the host's own session budget, over the
config files' field by field (0: none); anything but a whole number in range is a usage error."""

from __future__ import annotations

import pytest

from mcp_sidecar.cli_parser import parse_args
from mcp_sidecar.config.budget import Budget
from mcp_sidecar.gateway.options import budget_of


def test_not_given_leaves_the_files_budget() -> None:
    assert budget_of(parse_args(["mcp"])) == Budget()


def test_both_limits_and_zero() -> None:
    args = parse_args(["mcp", "--max-active-tools", "8", "--max-active-tokens", "0"])
    assert budget_of(args) == Budget(8, 0)
    assert budget_of(args).over(Budget(3, 5000)) == Budget(8, None)


@pytest.mark.parametrize("value", ["-1", "1001", "many", "2.5"])
def test_a_bad_count_is_a_usage_error(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_args(["mcp", "--max-active-tools", value])
    assert "--max-active-tools: must be a whole number from 0 to 1,000 (0: no limit)" in capsys.readouterr().err
