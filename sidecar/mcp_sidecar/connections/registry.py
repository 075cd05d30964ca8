"""The server registry: one connection per configured server, and the reconcile of a new configuration.

Connections are built by an injected factory, so services can be tested against a fake
connection. Events a connection publishes reach the hub only while it is the registry's
current connection for its name: a replaced connection that is still closing changes nothing.
The map is keyed by `ConnectionKey`, the seam for sharing connections between clients.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.events import ConnectionEvent, EventHub, Reconciled
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, diagnostic, fail

ConnectionFactory = Callable[[ServerConfig, Path, Callable[[ConnectionEvent], None]], ServerConnection]
"""(definition, the directory it runs in, where its events go) -> a new, unconnected connection."""
RunDir = Callable[[ServerConfig], Path]

_LIVE = ("connecting", "connected", "failed", "needs_login")


@dataclass(frozen=True, slots=True)
class ConnectionKey:
    """What one connection is kept under: today a server's name, one configuration per process.

    When clients share the user's state (issue 33, one engine per user) a name no longer says
    which process: two windows may define `git` differently, or the same way in two workspaces.
    The key then becomes what makes two clients' servers one process (the sharing rule): the
    resolved definition after `${VAR}` interpolation (command, args, env, cwd, url, headers),
    the run directory, the offer and the roots, all equal; each client's configuration view
    maps its names to keys, and a connection is closed when no client's view holds its key.
    """

    name: str


class ServerRegistry:
    def __init__(self, hub: EventHub, factory: ConnectionFactory) -> None:
        self._hub = hub
        self._factory = factory
        self._connections: dict[ConnectionKey, ServerConnection] = {}
        self.config: EffectiveConfig | None = None
        """The configuration in use; None until the first load."""
        self.problems: list[Diagnostic] = []
        """Why the files last read were invalid, one sentence each (`server` set when a definition is at
        fault): left out at start, or the previous configuration stays in use."""

    # -- lookup ------------------------------------------------------------------------------

    def get(self, name: str) -> ServerConnection | None:
        return self._connections.get(ConnectionKey(name))

    def names(self) -> list[str]:
        return [key.name for key in self._connections]

    def __iter__(self) -> Iterator[ServerConnection]:
        return iter(list(self._connections.values()))

    def __len__(self) -> int:
        return len(self._connections)

    def is_current(self, conn: ServerConnection) -> bool:
        return self._connections.get(ConnectionKey(conn.name)) is conn

    def connection(self, name: str, operation: str) -> ServerConnection:
        conn = self._connections.get(ConnectionKey(name))
        if conn is not None:
            return conn
        broken = self.broken().get(name)
        if broken is not None:
            raise SidecarError(dataclasses.replace(broken, operation=operation))
        if any(problem.server is None for problem in self.problems):  # a file whose servers are unknown
            raise SidecarError(
                diagnostic(
                    "configuration_invalid",
                    operation,
                    f"No server named {name!r}: the configuration is invalid ({len(self.problems)} "
                    "problem(s), see mcp/status).",
                    name,
                )
            )
        raise fail("server_not_found", operation, f"No server named {name!r} is configured.", name)

    def broken(self) -> dict[str, Diagnostic]:
        """Per invalid definition, one `configuration_invalid` diagnostic with all its problems.

        A server still running from the configuration in use says so: its previous definition
        stays until the file is fixed.
        """
        sentences: dict[str, list[str]] = {}
        for problem in self.problems:
            if problem.server is not None:
                sentences.setdefault(problem.server, []).append(problem.message)
        out = {}
        for name, messages in sentences.items():
            if ConnectionKey(name) in self._connections:
                messages = [*messages, "Until it is fixed, the definition already in use stays."]
            out[name] = diagnostic("configuration_invalid", "configuration", " ".join(messages), name)
        return out

    # -- reconcile ---------------------------------------------------------------------------

    def reject(self, problems: list[Diagnostic]) -> None:
        """The files were invalid: remember why, keep everything else as it is."""
        self.problems = problems
        if self.config is None:
            self.config = EffectiveConfig(servers={}, files=())

    def reconcile(
        self,
        config: EffectiveConfig,
        run_dir: RunDir,
        *,
        close_all: bool = False,
        problems: list[Diagnostic] | None = None,
    ) -> Reconciled:
        """Swap in `config`; a definition whose fingerprint or run directory changed gets a new connection.

        Publishes `Reconciled` (subscribers clear what the old connections owned) and returns it;
        the caller closes `closing`. With `close_all`, unchanged live connections close too (they
        reopen on demand).
        """
        old = self._connections
        first_load = self.config is None
        self.config = config
        self.problems = list(problems or [])
        self._connections = {}
        added: list[str] = []
        changed: list[str] = []
        unchanged: list[str] = []
        closing: list[ServerConnection] = []
        for name, server in config.servers.items():
            key = ConnectionKey(name)
            previous = old.get(key)
            directory = run_dir(server)
            if previous is not None and _same(previous, server, directory):
                self._connections[key] = previous
                unchanged.append(name)
                if close_all and previous.state in _LIVE:
                    closing.append(previous)
                continue
            (changed if previous is not None else added).append(name)
            self._connections[key] = self._factory(server, directory, self._relay)
        removed = [key.name for key in old if key.name not in config.servers]
        closing += [conn for key, conn in old.items() if self._connections.get(key) is not conn]
        event = Reconciled(tuple(added), tuple(removed), tuple(changed), tuple(unchanged), tuple(closing), first_load)
        self._hub.publish(event)
        return event

    def _relay(self, event: ConnectionEvent) -> None:
        if self.is_current(event.conn):
            self._hub.publish(event)


def _same(conn: ServerConnection, server: ServerConfig, directory: Path) -> bool:
    return conn.config.fingerprint() == server.fingerprint() and conn.workspace == directory
