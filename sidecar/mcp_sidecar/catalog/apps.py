"""A tool's MCP Apps metadata (`_meta.ui`, SEP-1865): its app's `ui://` resource and who may call it.

The descriptors keep `_meta` as the server sent it (and so does the disk cache); this reads it.
`visibility` says who may call the tool: `"model"` (the agent) and `"app"` (an app of the same
server); both when absent. A tool without `"model"` is the app's alone: it is left out of every
list a model sees (discovery, activation, `mcp_tools`, the gateway), as the extension requires,
and is listed only where a person or an app looks (`mcp/server/tools`). A `resourceUri` that is
not a `ui://` URI without controls is ignored, as is the deprecated flat `_meta["ui/resourceUri"]`
when `_meta.ui.resourceUri` is present.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, cast

from mcp_sidecar.output.sanitize import has_controls
from mcp_sidecar.protocol import apps

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import ToolUi

Visibility = Literal["model", "app"]
EVERYONE: list[Visibility] = ["model", "app"]
MAX_URI_CHARS = 4_096
DEPRECATED_KEY = "ui/resourceUri"


def valid_uri(uri: object) -> bool:
    """A `ui://` URI an app may be read from: no controls or invisible characters, not too long."""
    return (
        isinstance(uri, str)
        and uri.startswith(apps.SCHEME)
        and len(uri) > len(apps.SCHEME)
        and len(uri) <= MAX_URI_CHARS
        and not has_controls(uri)
        and not any(c.isspace() for c in uri)
    )


def _meta_ui(descriptor: dict[str, Any]) -> tuple[dict[str, Any] | None, object]:
    meta = descriptor.get("_meta")
    if not isinstance(meta, dict):
        return None, None
    ui = meta.get("ui")
    return (ui if isinstance(ui, dict) else None), meta.get(DEPRECATED_KEY)


def visibility(descriptor: dict[str, Any]) -> list[Visibility]:
    """Who may call the tool; a malformed list counts as absent, so a tool is hidden only when it says so."""
    ui, _ = _meta_ui(descriptor)
    listed = ui.get("visibility") if ui is not None else None
    if not isinstance(listed, list) or not listed or not all(v in EVERYONE for v in listed):
        return list(EVERYONE)
    return [v for v in EVERYONE if v in listed]


def for_model(descriptor: dict[str, Any]) -> bool:
    """The model may see and call the tool."""
    return "model" in visibility(descriptor)


def resource_uri(descriptor: dict[str, Any]) -> str | None:
    """The tool's app (`_meta.ui.resourceUri`, else the deprecated flat key), when it is a valid `ui://` URI."""
    ui, flat = _meta_ui(descriptor)
    uri = ui.get("resourceUri") if ui is not None and "resourceUri" in ui else flat
    return uri if isinstance(uri, str) and valid_uri(uri) else None


def tool_ui(descriptor: dict[str, Any]) -> ToolUi | None:
    """The `ui` of a tool's wire view: present when the tool names an app or limits who calls it."""
    ui, flat = _meta_ui(descriptor)
    if ui is None and flat is None:
        return None
    out = cast("ToolUi", {"visibility": visibility(descriptor)})
    uri = resource_uri(descriptor)
    if uri is not None:
        out["resourceUri"] = uri
    return out


def declaring(descriptors: Iterable[dict[str, Any]], uri: str) -> list[str]:
    """The names of the tools whose app is `uri`."""
    return [d["name"] for d in descriptors if resource_uri(d) == uri]
