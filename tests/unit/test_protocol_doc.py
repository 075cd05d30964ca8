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


def test_every_request_to_the_client_is_documented_and_nothing_else() -> None:
    assert sorted(documented("Requests, sidecar to client")) == sorted(methods.CLIENT_REQUESTS)
    for method in methods.CLIENT_REQUESTS:
        assert "Params:" in section(method), method
        assert "Result:" in section(method), method


def test_notifications_from_the_client_are_documented() -> None:
    assert documented("Notifications, client to sidecar") == ["workspace/didChangeWorkspaceFolders", "$/cancelRequest"]


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


def section(method: str) -> str:
    return DOC.read_text(encoding="utf-8").split(f"### `{method}`", 1)[1].split("\n### ", 1)[0]


def test_every_method_refusing_a_disabled_server_names_the_approval_wait_too() -> None:
    waiting = "`trust_required` (a project definition waiting for approval, see `mcp/workspace/approve`)"
    refusing = [m for m in methods.REQUESTS if "`server_disabled`" in section(m).split("Errors:", 1)[-1]]
    assert sorted(refusing) == sorted(
        [
            "mcp/server/tools",
            "mcp/callTool",
            "mcp/discover",
            "mcp/read",
            "mcp/complete",
            "mcp/resource/subscribe",
            "mcp/prompt/preview",
            "mcp/app/resource",
            "mcp/app/callTool",
        ]
    )
    for method in refusing:
        assert waiting in " ".join(section(method).split()), method
    for method in ("mcp/server/reconnect", "mcp/server/refresh"):
        assert "Errors: as `mcp/server/tools`" in section(method)
    assert "`trust_required`, see `mcp/workspace/approve`" in " ".join(section("mcp/activate").split())


def test_the_spill_methods_document_an_unsafe_directory() -> None:
    for method in ("mcp/spill/list", "mcp/spill/clean"):
        assert "`directory_unsafe`" in section(method).split("Errors:", 1)[1], method


def test_refused_entries_are_documented_as_they_are_sent() -> None:
    conventions = " ".join(DOC.read_text(encoding="utf-8").split("## Lifecycle", 1)[0].split())
    assert (
        '`mcp/discover` reports each as `{server, kind: "tool" | "prompt" | "resource" | "template", '
        "name | uri | uriTemplate, diagnostic}`, `mcp/server/tools` its tools as `{name, diagnostic}`"
    ) in conventions
    assert '`{server, kind: "tool", name, collidesWith: [id, ...], diagnostic}`' in conventions
    assert "`catalog_entry_invalid`" in conventions
    assert "refused entries" in section("mcp/server/refresh")
    assert '"dropped": 0' in section("mcp/complete")
