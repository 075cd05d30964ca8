"""docs/protocol.md and the served methods must stay in step."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_sidecar.handlers.registry import request_handlers
from mcp_sidecar.protocol import methods
from mcp_sidecar.services.app import Sidecar

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def documented(section: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^### `([^`]+)`", body, re.MULTILINE)


def test_every_request_is_documented_and_nothing_else() -> None:
    assert sorted(documented("Requests")) == sorted(methods.REQUESTS)


def test_every_notification_is_documented_and_nothing_else() -> None:
    assert sorted(documented("Notifications, sidecar to client")) == sorted(methods.NOTIFICATIONS)


def test_lifecycle_is_documented() -> None:
    assert documented("Lifecycle") == ["initialize", "initialized", "shutdown", "exit"]


def test_every_documented_request_has_a_handler() -> None:
    app = Sidecar(lambda method, params: None)
    assert set(request_handlers(app)) == set(methods.REQUESTS)


def test_each_request_section_states_params_and_result() -> None:
    text = DOC.read_text(encoding="utf-8")
    for method in methods.REQUESTS:
        section = text.split(f"### `{method}`", 1)[1].split("\n### ", 1)[0]
        assert "Params:" in section, method
        assert "Result" in section, method


def test_generic_lsp_clients_get_the_command_line_through_execute_command() -> None:
    from mcp_sidecar.server import create_server

    server, _ = create_server()
    assert list(server.protocol.fm.commands) == [methods.EXECUTE_COMMAND]
