"""A tool's MCP Apps metadata as the catalog reads it (`catalog/apps.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_sidecar.catalog import apps
from mcp_sidecar.catalog.tools import tool_view


def tool(meta: Any) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object"}, "_meta": meta}


def test_a_tools_ui_is_its_app_and_who_may_call_it() -> None:
    descriptor = tool({"ui": {"resourceUri": "ui://w/d", "visibility": ["app"]}})
    assert tool_view("s", descriptor)["ui"] == {"resourceUri": "ui://w/d", "visibility": ["app"]}
    assert not apps.for_model(descriptor)


@pytest.mark.parametrize("visibility", [None, [], "app", ["app", "agent"], [1]])
def test_a_missing_or_malformed_visibility_means_everyone(visibility: Any) -> None:
    ui: dict[str, Any] = {"resourceUri": "ui://w/d"}
    if visibility is not None:
        ui["visibility"] = visibility
    assert apps.visibility(tool({"ui": ui})) == ["model", "app"]
    assert apps.for_model(tool({"ui": ui}))


@pytest.mark.parametrize(
    "uri", ["https://example.com/app.html", "ui://", "ui://w/\u202edashboard", "ui://w/a b", 7, "ui://" + "a" * 4_092]
)
def test_an_app_uri_that_is_no_clean_ui_uri_is_ignored(uri: Any) -> None:
    descriptor = tool({"ui": {"resourceUri": uri}})
    assert apps.resource_uri(descriptor) is None
    assert tool_view("s", descriptor)["ui"] == {"visibility": ["model", "app"]}


def test_the_deprecated_flat_key_counts_only_without_the_nested_one() -> None:
    assert apps.resource_uri(tool({"ui/resourceUri": "ui://w/old"})) == "ui://w/old"
    both = tool({"ui/resourceUri": "ui://w/old", "ui": {"resourceUri": "ui://w/new"}})
    assert apps.resource_uri(both) == "ui://w/new"


def test_a_tool_without_ui_metadata_has_no_ui() -> None:
    assert "ui" not in tool_view("s", {"name": "t"})
    assert "ui" not in tool_view("s", tool({"other": 1}))
    assert apps.declaring([tool({"ui": {"resourceUri": "ui://w/d"}}), {"name": "u"}], "ui://w/d") == ["t"]
