"""`initializationOptions.sessionBudget`: an editor's own session budget, each field a whole number (0: no
limit) or null (the config files'); anything else leaves that field to the files, logged."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.config.budget import Budget
from mcp_sidecar.server import _session_budget as session_budget


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (None, Budget()),
        ({}, Budget()),
        ({"sessionBudget": None}, Budget()),
        ({"sessionBudget": {"maxTools": 8}}, Budget(8, None)),
        ({"sessionBudget": {"maxTools": 0, "maxTokens": 6000}}, Budget(0, 6000)),
        ({"sessionBudget": {"maxTools": None, "maxTokens": 1}}, Budget(None, 1)),
    ],
)
def test_valid_settings(options: Any, expected: Budget) -> None:
    assert session_budget(options) == expected


@pytest.mark.parametrize(
    ("options", "expected", "logged"),
    [
        ({"sessionBudget": [4]}, Budget(), "initializationOptions.sessionBudget must be an object"),
        ({"sessionBudget": {"maxTools": -1, "maxTokens": 90}}, Budget(None, 90), "sessionBudget.maxTools must be"),
        ({"sessionBudget": {"maxTools": True}}, Budget(), "sessionBudget.maxTools must be"),
        ({"sessionBudget": {"maxTokens": "9"}}, Budget(), "sessionBudget.maxTokens must be"),
    ],
)
def test_anything_else_is_left_to_the_files_and_logged(
    options: Any, expected: Budget, logged: str, caplog: pytest.LogCaptureFixture
) -> None:
    assert session_budget(options) == expected
    assert logged in caplog.text
