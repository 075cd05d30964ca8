"""What every test's processes inherit, and the mode the run is in."""

from __future__ import annotations

import os

import pytest

from mcp_sidecar.engine.kinds import ENGINE_ENV, OFF

# The engine (the default) that a test's sidecars start for its own MCP_SIDECAR_HOME outlives its
# last front by this grace period: short here, so a finished test leaves nothing running long.
os.environ.setdefault("MCP_SIDECAR_ENGINE_GRACE", "2")


def pytest_report_header() -> str:
    off = os.environ.get(ENGINE_ENV, "").strip().lower() in OFF
    return f"mcp-sidecar engine: {'off, each client in its own process' if off else 'on (the default)'}"


FIGURES: list[tuple[str, str]] = []
"""The reliability suite's figures as its reports carried them (tests/reliability/conftest.py)."""
FILE_SECONDS: dict[str, float] = {}
"""Each test file's time, setup to teardown: with files spread over workers (`--dist loadfile`), the
longest file is the least the run can take; printed for whoever balances them."""


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    file = report.nodeid.split("::", 1)[0]
    FILE_SECONDS[file] = FILE_SECONDS.get(file, 0.0) + report.duration
    for name, value in report.user_properties:
        if name == "reliability figure" and isinstance(value, list | tuple):
            scenario, text = value
            FIGURES.append((str(scenario), str(text)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The figures docs/reliability.md reports: inputs tried, RSS, counts (never asserted as timings);
    and the slowest files, with a duration report asked for (`--durations`)."""
    if terminalreporter.config.getoption("durations", None) and len(FILE_SECONDS) > 1:
        terminalreporter.section("slowest 10 files")
        for file, seconds in sorted(FILE_SECONDS.items(), key=lambda item: -item[1])[:10]:
            terminalreporter.write_line(f"{seconds:8.1f}s {file}")
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for scenario, text in FIGURES:
        terminalreporter.write_line(f"{scenario}: {text}")
