from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest

from reliability.helpers import FIGURES

_sent = 0
"""How many of FIGURES have been handed to a report."""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty MCP_SIDECAR_HOME."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Each figure rides on the next report made (a test's, or its teardown's for what a module's
    fixture records when it ends), so it reaches the run's summary from a worker process too
    (pytest-xdist); `tests/conftest.py` collects and prints them."""
    global _sent
    report = yield
    if len(FIGURES) > _sent:
        report.user_properties.extend(("reliability figure", list(f)) for f in FIGURES[_sent:])
        _sent = len(FIGURES)
    return report
