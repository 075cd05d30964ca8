"""A server's tool catalog: descriptors as the server sent them, with refusals and filters applied on top.

A tool whose name is outside the MCP form is refused (`catalog/names.py`): it is in no view,
index or activation, and `refused` reports it. Filters apply to the accepted tools.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.catalog import apps, names
from mcp_sidecar.catalog.documents import canonical
from mcp_sidecar.catalog.filters import allowed
from mcp_sidecar.catalog.icons import safe_icons
from mcp_sidecar.config.model import ServerConfig

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import ToolDefinition

Source = Literal["live", "cache"]


class ToolCatalog:
    """One server's tools. A copy from the disk cache may come with its descriptors still unparsed
    (`loader`): discovery from a stored index needs only the few it returns, so the rest are
    parsed on the first use that needs them all."""

    __slots__ = (
        "_accepted",
        "_canonical",
        "_descriptors",
        "_for_people",
        "_loader",
        "_refused",
        "_visible",
        "disk",
        "fetched_at",
        "fresh_s",
        "generation",
        "server",
        "source",
        "tokens",
    )

    def __init__(
        self,
        server: str,
        descriptors: list[dict[str, Any]] | None,
        source: Source,
        generation: int,
        fetched_at: float | None = None,
        fresh_s: float = math.inf,
        disk: bytes | None = None,
        *,
        loader: Callable[[], list[dict[str, Any]]] | None = None,
        refused: list[dict[str, Any]] | None = None,
    ) -> None:
        if descriptors is None and loader is None:
            raise ValueError("a tool catalog needs its descriptors or a loader for them")
        self.server = server
        self._descriptors = descriptors
        self._loader = loader
        self.source: Source = source
        self.generation = generation
        """The connection generation that fetched it (0 for a disk cache)."""
        self.fetched_at = time.time() if fetched_at is None else fetched_at
        self.fresh_s = fresh_s
        """How long after `fetched_at` it is used without asking the server again: a server's TTL
        (`catalog/freshness.py`), a disk copy's remaining life; unbounded for a live copy without a
        TTL, which change notices and reconnections keep current instead."""
        self.disk = disk
        """The bytes of its copy in the disk cache (a private list never has one), so its index
        may be kept there too (`catalog/stored_index.py`)."""
        self._visible: dict[str, dict[str, Any]] | None = None
        self._for_people: dict[str, dict[str, Any]] | None = None
        self._accepted: list[dict[str, Any]] | None = None
        self._refused: list[dict[str, Any]] | None = refused
        self._canonical: dict[str, str] = {}
        self.tokens: dict[str, int] | None = None
        """name → token estimate of each accepted tool (`catalog/token_count.py`), once counted or
        read from beside its disk copy (`services/catalogs.py`)."""

    @property
    def descriptors(self) -> list[dict[str, Any]]:
        """Every tool the server listed, in its order, unfiltered."""
        if self._descriptors is None:
            assert self._loader is not None
            self._descriptors = self._loader()
            self._loader = None
        return self._descriptors

    def expired(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) - self.fetched_at > self.fresh_s

    def canonical_of(self, descriptor: dict[str, Any]) -> str:
        """canonical(descriptor), computed once per catalog and tool."""
        text = self._canonical.get(descriptor["name"])
        if text is None:
            text = self._canonical[descriptor["name"]] = canonical(descriptor)
        return text

    def accepted(self) -> list[dict[str, Any]]:
        """The tools whose names have the MCP form, in server order (filters not applied)."""
        if self._accepted is None:
            self._accepted, self._refused = names.screen(self.server, "tool", self.descriptors)
        return self._accepted

    @property
    def refused(self) -> list[dict[str, Any]]:
        """`{kind: "tool", name, diagnostic}` for every tool left out for its name (known without
        parsing the descriptors when a stored index recorded them)."""
        if self._refused is None:
            self.accepted()
        assert self._refused is not None
        return self._refused

    def refused_entry(self, name: str) -> dict[str, Any] | None:
        """The refusal of the tool `name` denotes (compared after NFC normalisation), if any."""
        return names.find(self.refused, name)

    def visible(self, config: ServerConfig) -> dict[str, dict[str, Any]]:
        """name → descriptor for the accepted tools the server's filters expose to the model, in server
        order: an app's own tools (`_meta.ui.visibility` without `"model"`, `catalog/apps.py`) are not."""
        if self._visible is None:
            self._visible = {n: d for n, d in self.allowed(config).items() if apps.for_model(d)}
        return self._visible

    def allowed(self, config: ServerConfig) -> dict[str, dict[str, Any]]:
        """name → descriptor for the accepted tools the server's filters expose, apps' own tools too."""
        if self._for_people is None:
            self._for_people = {
                d["name"]: d for d in self.accepted() if allowed(d["name"], config.include_tools, config.exclude_tools)
            }
        return self._for_people

    def listed_as(self, descriptors: list[dict[str, Any]]) -> bool:
        """Whether a server's new list is this very one (compared only when its own is parsed)."""
        return self._descriptors is not None and self._descriptors == descriptors

    def visible_tokens(self, config: ServerConfig) -> int | None:
        """The estimate for every tool the filters expose, together; None until counted."""
        if self.tokens is None:
            return None
        return sum(self.tokens.get(name, 0) for name in self.visible(config))

    def all_names(self) -> list[str]:
        """Every accepted tool's name, filtered out or not."""
        return [d["name"] for d in self.accepted()]


def tool_view(server: str, descriptor: dict[str, Any], tokens: int | None = None) -> ToolDefinition:
    """The wire shape of one tool: exact ids plus the full MCP definition (its icons screened), and
    its token estimate when known."""
    view: ToolDefinition = {
        "id": f"{server}.{descriptor['name']}",
        "modelName": f"mcp__{server}__{descriptor['name']}",
        "server": server,
        "name": descriptor["name"],
    }
    if "title" in descriptor:
        view["title"] = descriptor["title"]
    if "description" in descriptor:
        view["description"] = descriptor["description"]
    if "inputSchema" in descriptor:
        view["inputSchema"] = descriptor["inputSchema"]
    if "outputSchema" in descriptor:
        view["outputSchema"] = descriptor["outputSchema"]
    if "annotations" in descriptor:
        view["annotations"] = descriptor["annotations"]
    if icons := safe_icons(descriptor.get("icons")):
        view["icons"] = icons
    if tokens is not None:
        view["tokens"] = tokens
    if (ui := apps.tool_ui(descriptor)) is not None:
        view["ui"] = ui
    return view
