"""`--resources`: every enabled server's resources in the gateway's `resources/list`, namespaced.

A server's resource `URI` is listed as `mcp-sidecar://<server>/<URI>`: the server's name, a
slash, then the server's own URI exactly as it sent it (not encoded). Templates are namespaced
the same way, so a host expanding `mcp-sidecar://<server>/<template>` produces exactly what the
server's own expansion would, after the prefix. `resources/read` takes the prefix off and
reads through the same path as `mcp/read` (its row in `operations/table.py`) and `mcp_tools`
`read` (`services/reading.py`): the URI checks, the output limits, a spill file for what does
not fit; text is sanitised.

Without `--resources` the lists are empty and `resources/read` refuses: a model reads
resources with `mcp_tools` `read`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from mcp_sidecar.operations.table import READ
from mcp_sidecar.output.sanitize import has_controls, one_line, strip_controls
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.protocol.params import ReadParams

if TYPE_CHECKING:
    from mcp_sidecar.operations.row import Run
    from mcp_sidecar.protocol.results import ReadResult
    from mcp_sidecar.services.catalogs import ListCatalog
    from mcp_sidecar.services.reading import Reading

PREFIX = "mcp-sidecar://"
RESOURCE_NOT_FOUND = -32002
MAX_URI_CHARS = 4096
"""A URI longer than a read may ask for (`reading.check_uri`) is no URI to show."""
OFF = "This gateway lists no resources (start it with --resources); read them with mcp_tools read."


def namespaced(server: str, uri: str) -> str:
    """The gateway's URI for `uri` of `server`."""
    return f"{PREFIX}{server}/{uri}"


def split(uri: str, servers: list[str]) -> tuple[str, str] | None:
    """(server, its own URI) of a gateway URI; None when it names no configured server.

    The server is matched exactly, else without case when only one matches (some URL parsers
    lower-case what they take for a host name).
    """
    if not uri.startswith(PREFIX):
        return None
    server, slash, original = uri[len(PREFIX) :].partition("/")
    if not slash or not original:
        return None
    if server not in servers:
        same = [s for s in servers if s.lower() == server.lower()]
        if len(same) != 1:
            return None
        server = same[0]
    return server, original


def _described(server: str, item: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    """`entry` with the item's name, title, description and MIME type, sanitised and labelled."""
    entry["name"] = one_line(f"{server}/{item.get('name') or ''}")
    if isinstance(item.get("title"), str):
        entry["title"] = one_line(item["title"])
    if isinstance(item.get("description"), str):
        entry["description"] = strip_controls(f"[{server}] {item['description']}")
    if isinstance(item.get("mimeType"), str):
        entry["mimeType"] = one_line(item["mimeType"])
    return entry


def listed_resource(server: str, item: dict[str, Any]) -> dict[str, Any]:
    entry = _described(server, item, {"uri": namespaced(server, item["uri"])})
    if isinstance(item.get("size"), int):
        entry["size"] = item["size"]
    return entry


def listed_template(server: str, item: dict[str, Any]) -> dict[str, Any]:
    return _described(server, item, {"uriTemplate": namespaced(server, item["uriTemplate"])})


def read_contents(server: str, asked: str, result: ReadResult) -> list[dict[str, Any]]:
    """`resources/read` contents of a read shaped by `Reading.read`: namespaced URIs, text sanitised,
    and, when the output limits cut it, a last text saying where the whole result is."""
    contents: list[dict[str, Any]] = []
    for item in result["contents"]:
        uri = item.get("uri")
        # The server names what it returned: a URI that hides characters is shown as the one asked.
        fine = isinstance(uri, str) and not has_controls(uri) and len(uri) <= MAX_URI_CHARS
        out: dict[str, Any] = {"uri": namespaced(server, uri) if fine and isinstance(uri, str) else asked}
        if isinstance(item.get("mimeType"), str):
            out["mimeType"] = item["mimeType"]
        if isinstance(item.get("text"), str):
            out["text"] = strip_controls(item["text"])
        elif isinstance(item.get("blob"), str):
            out["blob"] = item["blob"]
        else:
            continue
        contents.append(out)
    if result["truncated"]:
        # The rendering's last line is the notice of the limits and of the spill file.
        notice = result["text"].rsplit("\n", 1)[-1]
        contents.append({"uri": asked, "mimeType": "text/plain", "text": notice})
    return contents


class Resources:
    def __init__(self, reading: Reading, run: Run, servers: Callable[[], list[str]], enabled: bool) -> None:
        """`run`: runs a row of the operation table (a read, as `mcp/read` does); `servers`: the configured
        servers' names, for the gateway URIs that name one."""
        self._reading = reading
        self._run = run
        self._servers = servers
        self.enabled = enabled

    async def _catalogs(self) -> list[tuple[str, ListCatalog]]:
        return await self._reading.enabled_resource_catalogs("gateway") if self.enabled else []

    async def listed(self) -> list[dict[str, Any]]:
        return [listed_resource(server, r) for server, catalog in await self._catalogs() for r in catalog.items]

    async def templates(self) -> list[dict[str, Any]]:
        return [listed_template(server, t) for server, catalog in await self._catalogs() for t in catalog.templates]

    def target(self, uri: str) -> tuple[str, str]:
        """(server, its URI) that a `resources/read` of `uri` reads; an MCP error when none."""
        if not self.enabled:
            raise MCPError(RESOURCE_NOT_FOUND, OFF, {"uri": uri})
        found = split(uri, self._servers())
        if found is None:
            why = f"Not a resource of this gateway: its URIs are {PREFIX}<server>/<the server's URI>."
            raise MCPError(RESOURCE_NOT_FOUND, why, {"uri": uri})
        return found

    async def read(self, server: str, original: str, asked: str) -> dict[str, Any]:
        try:
            result = await self._run(READ, ReadParams(server, original, None, {}))
        except SidecarError as exc:
            code = RESOURCE_NOT_FOUND if exc.diagnostic.code == "resource_not_found" else INVALID_PARAMS
            raise MCPError(code, one_line(exc.diagnostic.render()), {"uri": asked}) from None
        return {"contents": read_contents(server, asked, result)}
