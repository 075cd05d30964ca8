from __future__ import annotations

from pathlib import Path

import pytest

from reliability.helpers import FIGURES


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty MCP_SIDECAR_HOME."""
    path = tmp_path / "home"
    path.mkdir()
    return path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The figures docs/reliability.md reports: inputs tried, RSS, counts (never asserted as timings)."""
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for scenario, text in FIGURES:
        terminalreporter.write_line(f"{scenario}: {text}")
