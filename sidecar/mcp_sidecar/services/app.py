"""The composition root: the user's state and this process's one client context, wired once.

`UserState` (services/user_state.py) holds what every client shares, `ClientContext`
(services/client_context.py) what one client owns; today's process builds one of each and the
fronts read both through this object's attributes (`app.registry`, the client's view of the
user's connections, `app.sessions`, `app.hub`: the client's hub). Notifications go out through
the `notify` callable the protocol layer supplies, so nothing here knows about pygls.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path

from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.connections.registry import ConnectionFactory
from mcp_sidecar.services.client_context import ClientContext
from mcp_sidecar.services.notifier import Notify
from mcp_sidecar.services.user_state import UserState


class Sidecar:
    def __init__(
        self,
        notify: Notify,
        workspace: Path | None = None,
        trusted: bool = False,
        interactive: bool = False,
        use_disk_cache: bool = True,
        watch_config: bool = True,
        approve_project: bool = False,
        connection_factory: ConnectionFactory | None = None,
        user: UserState | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        """`connection_factory` builds each server's connection (tests pass one making fakes); `user`
        is the state this client shares with others (the engine's), else one of its own; `environ`, the
        client's environment (the engine passes its front's), else this process's own."""
        self._shares_user = user is not None
        self.user = user or UserState(connection_factory, use_disk_cache)
        """What every client shares: connections, catalogs, credentials, held approvals."""
        self.client = ClientContext(
            self.user,
            notify,
            environ=os.environ if environ is None else environ,
            workspace=workspace,
            trusted=trusted,
            interactive=interactive,
            watch_config=watch_config,
            approve_project=approve_project,
        )
        """This process's one client: its configuration view, sessions, previews, watches, roots, offer,
        notifications and questions."""
        # The fronts read the parts by these names.
        client = self.client
        self.hub = client.hub
        self.notify = notify
        self.registry = client.registry
        self.catalogs = self.user.catalogs
        self.configuration = client.configuration
        self.watches = client.watches
        self.prompts = client.prompts
        self.sessions = client.sessions
        self.auth = client.auth
        self.status = client.status
        self.notifier = client.notifier
        self.roots = client.roots
        self.offers = client.offers
        self.lifecycle = client.lifecycle
        self.approvals = client.approvals
        self.config_edits = client.config_edits
        self.config_imports = client.config_imports
        self.activation = client.activation
        self.reading = client.reading
        self.apps = client.apps
        self.app_pages = client.app_pages
        self.completion = client.completion
        self.discovery = client.discovery
        self.exposure = client.exposure
        self.model_tool = client.model_tool
        self.commands = client.commands
        self.background = client.background
        self.profiles = client.profiles

    @classmethod
    def headless(
        cls,
        workspace: Path,
        trust_project: bool,
        user: UserState | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Sidecar:
        """One CLI run: no notifications, no file watching; `--trust-project` grants trust for this run;
        `user` and `environ`, the engine's shared state and the front's environment when a front runs it there."""
        return cls(
            lambda method, params: None,
            workspace=workspace,
            trusted=trust_project,
            watch_config=False,
            approve_project=trust_project,
            user=user,
            environ=environ,
        )

    # -- what every service needs first ------------------------------------------------------

    def ensure_loaded(self) -> None:
        self.configuration.ensure_loaded()

    def connection(self, name: str, operation: str) -> ServerConnection:
        """The named server's connection, once the configuration is loaded; a diagnostic when there is none."""
        return self.configuration.connection(name, operation)

    async def shutdown(self, quick: bool = False) -> None:
        """The client's end: with state of its own, every connection closes; with the engine's shared
        state, only this client's part ends (its watches, its file watching, its place among the clients)."""
        if self._shares_user:
            await self.lifecycle.leave()
            closing = self.client.close()
            await asyncio.gather(*(conn.close() for conn in closing), return_exceptions=True)
            return
        self.background.close()
        self.app_pages.close()
        await self.lifecycle.shutdown(quick)
