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


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if name == "reliability figure" and isinstance(value, list | tuple):
            scenario, text = value
            FIGURES.append((str(scenario), str(text)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The figures docs/reliability.md reports: inputs tried, RSS, counts (never asserted as timings)."""
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for scenario, text in FIGURES:
        terminalreporter.write_line(f"{scenario}: {text}")
