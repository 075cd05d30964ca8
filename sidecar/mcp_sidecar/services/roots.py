"""MCP roots: the editor's workspace folders, disclosed to servers only while the workspace is trusted.

`roots/list` answers `current()`. A change of the folders (`workspace/didChangeWorkspaceFolders`)
or of trust (which reloads the configuration) tells every connected server that was offered
roots, once per actual change.

A client of the sidecar that has roots of its own (an MCP host of the gateway) supplies them
instead: they are what that client chose to disclose, so they are the servers' roots whatever
the workspace's trust, until it withdraws them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcp_sidecar import tasks
from mcp_sidecar.events import EventHub, Reconciled

if TYPE_CHECKING:
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.services.configuration import Configuration

Root = tuple[str, str]
"""(file: URI, name)"""


class Roots:
    def __init__(self, configuration: Configuration, registry: ServerRegistry, hub: EventHub) -> None:
        self._configuration = configuration
        self._registry = registry
        self._folders: tuple[Path, ...] | None = None
        """The editor's folders; None until it says (then the workspace alone stands for them)."""
        self._announced: list[Root] | None = None
        self._supplied: tuple[Root, ...] | None = None
        """Roots a client gave for its servers (the gateway's hosts); None: the workspace's rule."""
        hub.subscribe(Reconciled, lambda event: self._maybe_announce())

    def set_folders(self, folders: list[Path]) -> None:
        self._folders = tuple(dict.fromkeys(folders))
        self._rekey_and_announce()

    def supply(self, roots: list[Root] | None) -> None:
        """The servers' roots are `roots` from now on (None: the trusted workspace's again)."""
        self._supplied = None if roots is None else tuple(dict.fromkeys(roots))
        self._rekey_and_announce()

    def current(self) -> list[Root]:
        if self._supplied is not None:
            return list(self._supplied)
        if not self._configuration.trusted:
            return []
        folders = self._folders
        if folders is None:
            workspace = self._configuration.workspace
            folders = (workspace,) if workspace is not None else ()
        return [(folder.resolve().as_uri(), folder.name or str(folder)) for folder in folders if folder.is_absolute()]

    def _rekey_and_announce(self) -> None:
        self._registry.rekey()  # the roots are part of each connection's key
        self._maybe_announce()

    def _maybe_announce(self) -> None:
        now = self.current()
        if self._announced is None:
            self._announced = now  # servers connected so far asked for (or were told) this list
            return
        if now != self._announced:
            self._announced = now
            tasks.spawn(self._announce(), "roots-changed")

    async def _announce(self) -> None:
        for conn in list(self._registry):
            await conn.roots_changed()
