"""A server's tool catalog: descriptors as the server sent them, with filters applied on top."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_sidecar.catalog.filters import allowed
from mcp_sidecar.config.model import ServerConfig

Source = Literal["live", "cache"]


def canonical(descriptor: dict[str, Any]) -> str:
    """A stable text of a descriptor, to tell whether a tool's definition changed."""
    return json.dumps(descriptor, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(slots=True)
class ToolCatalog:
    server: str
    descriptors: list[dict[str, Any]]
    """Every tool the server listed, in its order, unfiltered."""
    source: Source
    generation: int
    """The connection generation that fetched it (0 for a disk cache)."""
    fetched_at: float = field(default_factory=time.time)
    _visible: dict[str, dict[str, Any]] | None = None
    _canonical: dict[str, str] = field(default_factory=dict)

    def canonical_of(self, descriptor: dict[str, Any]) -> str:
        """canonical(descriptor), computed once per catalog and tool."""
        text = self._canonical.get(descriptor["name"])
        if text is None:
            text = self._canonical[descriptor["name"]] = canonical(descriptor)
        return text

    def visible(self, config: ServerConfig) -> dict[str, dict[str, Any]]:
        """name → descriptor for the tools the server's filters expose, in server order."""
        if self._visible is None:
            self._visible = {
                d["name"]: d for d in self.descriptors if allowed(d["name"], config.include_tools, config.exclude_tools)
            }
        return self._visible

    def all_names(self) -> list[str]:
        return [d["name"] for d in self.descriptors]


def tool_view(server: str, descriptor: dict[str, Any]) -> dict[str, Any]:
    """The wire shape of one tool: exact ids plus the full MCP definition."""
    view: dict[str, Any] = {
        "id": f"{server}.{descriptor['name']}",
        "modelName": f"mcp__{server}__{descriptor['name']}",
        "server": server,
        "name": descriptor["name"],
    }
    for key in ("title", "description", "inputSchema", "outputSchema", "annotations"):
        if key in descriptor:
            view[key] = descriptor[key]
    return view
