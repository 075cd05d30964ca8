"""One client's context: an editor connection, a gateway's host session, a CLI run.

Built per client over the user's state (`services/user_state.py`): its environment (the front's,
in the engine: `${VAR}`, secret commands and what its stdio servers inherit resolve in it), its
configuration view (workspace, trust, approvals waiting for its person), its sessions and active tools, its prompt
previews, watches and roots, what it offers servers, its notifications (its `notify` callable)
and its hub. Its registry view (`connections/registry.py`) maps its server names to the user's
connections; the hub carries the events of those connections (routed to it by the user's
registry until `close`), its own reconciles and the client's own events (`ToolsDeactivated`,
...); questions servers ask while this client's request is in flight are answered by its hub's
answerers only.

The features are built here too, from the client's parts and the user's: each reads this
client's configuration and sessions. The order of the subscriptions below is the order of the
client's notifications for one event (the user's own subscribers, the catalogs, run first).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.connections.registry import ServerRegistry
from mcp_sidecar.events import EventHub
from mcp_sidecar.services.activation import Activation
from mcp_sidecar.services.app_pages import AppPages
from mcp_sidecar.services.approvals import Approvals
from mcp_sidecar.services.apps import Apps
from mcp_sidecar.services.auth import Auth
from mcp_sidecar.services.background import BackgroundCalls
from mcp_sidecar.services.commands import Commands
from mcp_sidecar.services.completion import Completion
from mcp_sidecar.services.config_edits import ConfigEdits
from mcp_sidecar.services.config_imports import ConfigImports
from mcp_sidecar.services.configuration import Configuration
from mcp_sidecar.services.discovery import Discovery
from mcp_sidecar.services.exposure import ToolExposure
from mcp_sidecar.services.lifecycle import Lifecycle
from mcp_sidecar.services.model_tool import ModelTool
from mcp_sidecar.services.notifier import Notifier, Notify
from mcp_sidecar.services.offers import Offers
from mcp_sidecar.services.profiles import Profiles
from mcp_sidecar.services.prompts import Prompts
from mcp_sidecar.services.reading import Reading
from mcp_sidecar.services.roots import Roots
from mcp_sidecar.services.sessions import Sessions
from mcp_sidecar.services.status import Status
from mcp_sidecar.services.user_state import UserState
from mcp_sidecar.services.watches import Watches


class ClientContext:
    def __init__(
        self,
        user: UserState,
        notify: Notify,
        *,
        environ: Mapping[str, str],
        workspace: Path | None = None,
        trusted: bool = False,
        interactive: bool = False,
        watch_config: bool = True,
        approve_project: bool = False,
    ) -> None:
        self.user = user
        self.id = user.clients.new_id()
        self.hub = EventHub()
        """This client's events: those of the connections it uses, its own, and its questions' answerers."""
        self.notify = notify
        self.environ = environ
        """The client's environment: its front's in the engine, this process's `os.environ` in-process."""
        self.registry = registry = ServerRegistry(self.hub, shared=user.registry, client=self.id, environ=environ)
        """This client's servers: its names mapped to the user's connections (its lookups go through it)."""
        catalogs = user.catalogs
        self.configuration = Configuration(
            registry,
            self.hub,
            workspace=workspace,
            trusted=trusted,
            interactive=interactive,
            watch_files=watch_config,
            grant=approve_project,
            held=user.held_approvals,
        )
        # Subscribers run in this order for each event (see events.py).
        self.watches = Watches(notify, self.hub, self.configuration, registry)
        self.prompts = Prompts(self.configuration, registry, catalogs, self.hub)
        """Prompt previews, pending ones too: a configuration reload or their server's disconnection ends them."""
        self.sessions = Sessions(self.hub, registry)
        self.auth = Auth(self.configuration, credentials=user.credentials)
        """OAuth: how to open a URL for this client, its logins waiting for a pasted callback."""
        self.status = Status(
            self.configuration,
            registry,
            catalogs,
            self.sessions,
            self.auth,
            engine=lambda: user.engine_status(self.id),
            model_tool_tokens=lambda: self.model_tool.definition()["tokens"],  # built below; asked later
        )
        self.notifier = Notifier(
            notify,
            self.hub,
            registry,
            self.status.row,
            lambda: self.configuration.pending.values(),
            lambda: self.model_tool.definition(),  # built below; asked only once events flow
        )
        self.roots = Roots(self.configuration, registry, self.hub)
        self.offers = Offers(registry, catalogs)
        """What the servers are offered: the editor's `mcpCapabilities`, or the gateway's hosts'; nothing by default."""
        clear_watches = self.watches.clear
        self.lifecycle = Lifecycle(self.configuration, registry, catalogs, self.notifier, self.status, clear_watches)
        self.approvals = Approvals(self.configuration)
        self.config_edits = ConfigEdits(self.configuration, registry)
        self.config_imports = ConfigImports(self.configuration)
        # The discovery side's features, lower ones first.
        self.activation = Activation(self.configuration, registry, catalogs, self.sessions)
        self.reading = Reading(self.configuration, registry, catalogs)
        self.apps = Apps(self.configuration, catalogs, self.offers)
        self.app_pages = AppPages(self.apps, self.hub)
        """Its apps open in the person's browser (loopback pages), closed at its end."""
        self.completion = Completion(self.configuration, self.reading, self.prompts)
        self.discovery = Discovery(self.configuration, registry, catalogs, self.sessions, self.activation)
        self.exposure = ToolExposure(self.configuration, registry, catalogs)
        """What every tool of its searched servers would cost its model, against a budget (issue 34)."""
        self.background = BackgroundCalls(notify)
        """Its calls gone to the background (none until a front sets a threshold): its own, released at its end."""
        self.model_tool = ModelTool(
            self.configuration,
            registry,
            catalogs,
            self.sessions,
            discovery=self.discovery,
            activation=self.activation,
            reading=self.reading,
            completion=self.completion,
            prompts=self.prompts,
            background=self.background,
            exposure=self.exposure,
        )
        self.profiles = Profiles(self.configuration, self.sessions, self.activation, self.notifier, self.hub)
        """This client's profile: what it searches, and the tools it starts with."""
        self.commands = Commands(self.configuration, registry, self.profiles.choosable)
        # What this client offers and discloses is part of each of its connections' keys.
        registry.offer = self.current_offer
        registry.roots = self.current_roots
        self._detach = user.attach(self, lambda: self.configuration.workspace)

    # -- what the user's state asks of its clients (services/questions.py) ------------------------

    def current_offer(self) -> ClientOffer:
        return self.offers.current

    def current_roots(self) -> list[tuple[str, str]]:
        return self.roots.current()

    # -- what every service needs first ------------------------------------------------------

    def connection(self, name: str, operation: str) -> ServerConnection:
        """The named server's connection, once the configuration is loaded; a diagnostic when there is none."""
        return self.configuration.connection(name, operation)

    def close(self) -> list[ServerConnection]:
        """The client is gone: it hears no more events and answers no more questions. Returns the
        connections no client uses any more, for the caller to close (none with an idle time: those
        close themselves once it passes, unless a client takes them again)."""
        self._detach()
        self.background.close()
        self.app_pages.close()
        return self.registry.close()
