"""One client's servers: its configuration in use, and its names mapped to the user's connections.

The connections themselves are the user's (`connections/sharing.py`'s `SharedRegistry`, one per
`ConnectionKey`); this view holds which key each of this client's server names stands for, so
every lookup by name (`get`, `connection`, iteration) reaches only the connections this
client's own configuration asked for: a project server of a workspace this client has not
trusted is never in its map, even when another client started it. Reconciling a new
configuration says which keys the client wants now; `Reconciled` goes to this client's hub
only. Built without a shared registry (tests, one client per process) it makes one of its own
over the same hub.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from mcp_sidecar import tasks
from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.connections.sharing import (
    ClientId,
    ConnectionFactory,
    ConnectionKey,
    ConnectionRoute,
    Roots,
    SharedRegistry,
    Wanted,
)
from mcp_sidecar.events import EventHub, Reconciled
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError, diagnostic, fail

__all__ = ["ConnectionFactory", "ConnectionKey", "ConnectionRoute", "RunDir", "ServerRegistry", "SharedRegistry"]

RunDir = Callable[[ServerConfig], Path]

_LIVE = ("connecting", "connected", "failed", "needs_login")


class ServerRegistry:
    def __init__(
        self,
        hub: EventHub,
        factory: ConnectionFactory | None = None,
        *,
        shared: SharedRegistry | None = None,
        client: ClientId = "client",
        environ: Mapping[str, str],
    ) -> None:
        """`hub` is this client's; `shared` the user's connections (else a registry of its own, built
        by `factory`, whose events reach `hub` once); `environ`, the client's environment."""
        self._hub = hub
        if shared is None:
            assert factory is not None, "a registry of its own needs a connection factory"
            shared = SharedRegistry(hub, factory)
            shared.attach(client, lambda event: None)  # the user hub is this client's: heard there already
        else:
            shared.attach(client, hub.publish)
        self.shared = shared
        self.client = client
        self.environ = environ
        """The client's environment (its front's, in the engine): its definitions resolve in it, so it is
        part of each key as far as a server would get anything of it (`connections/sharing.py`)."""
        self._keys: dict[str, ConnectionKey] = {}
        self._run_dir: RunDir | None = None
        self.offer: Callable[[], ClientOffer] = ClientOffer
        """What this client offers servers now (`services/offers.py` sets it): part of each key."""
        self.roots: Callable[[], Roots] = list
        """The roots this client discloses now (`services/roots.py` sets it): part of each key."""
        self.config: EffectiveConfig | None = None
        """The configuration in use; None until the first load."""
        self.problems: list[Diagnostic] = []
        """Why the files last read were invalid, one sentence each (`server` set when a definition is at
        fault): left out at start, or the previous configuration stays in use."""

    # -- lookup ------------------------------------------------------------------------------

    def get(self, name: str) -> ServerConnection | None:
        key = self._keys.get(name)
        return self.shared.get(key) if key is not None else None

    def key(self, name: str) -> ConnectionKey | None:
        return self._keys.get(name)

    def names(self) -> list[str]:
        return list(self._keys)

    def __iter__(self) -> Iterator[ServerConnection]:
        return iter([conn for key in self._keys.values() if (conn := self.shared.get(key)) is not None])

    def __len__(self) -> int:
        return len(self._keys)

    def sharers(self, conn: ServerConnection) -> int:
        """How many clients use `conn`, this one included (1 once it is no longer held: it was this one's)."""
        key = self.shared.key_of(conn)
        return max(1, len(self.shared.users(key))) if key is not None else 1

    def is_current(self, conn: ServerConnection) -> bool:
        key = self._keys.get(conn.name)
        return key is not None and self.shared.get(key) is conn

    def connection(self, name: str, operation: str) -> ServerConnection:
        conn = self.get(name)
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
            if name in self._keys:
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
        """Swap in `config`; a server whose key changed (its definition, run directory, offer or roots)
        stands for another connection from now on.

        Publishes `Reconciled` on this client's hub (subscribers clear what the old connections
        owned) and returns it; the caller closes `closing`: the connections no client wants any
        more and, with `close_all`, this client's unchanged live ones that no other client uses
        (they reopen on demand).
        """
        first_load = self.config is None
        self.config = config
        self.problems = list(problems or [])
        self._run_dir = run_dir
        return self._swap(close_all=close_all, first_load=first_load)

    def rekey(self) -> None:
        """The offer or the roots changed: the same configuration, keyed again. `Reconciled` is published
        only when a server now stands for another connection (another client's, or a new one)."""
        if self.config is None or self._run_dir is None:
            return
        event = self._swap(publish=False)
        if event.changed:
            self._hub.publish(event)
        for conn in event.closing:
            tasks.spawn(conn.close(), f"close:{conn.name}")

    def _swap(self, *, close_all: bool = False, first_load: bool = False, publish: bool = True) -> Reconciled:
        assert self.config is not None
        assert self._run_dir is not None
        old = self._keys
        before = {name: self.shared.get(key) for name, key in old.items()}
        offer, roots = self.offer(), self.roots()
        keys: dict[str, ConnectionKey] = {}
        wanted: dict[ConnectionKey, Wanted] = {}
        for name, server in self.config.servers.items():
            directory = self._run_dir(server)
            keys[name] = key = ConnectionKey.of(server, directory, offer, roots, self.client, self.environ)
            wanted[key] = Wanted(server, directory, self.environ)
        closing = self.shared.reconcile_client(self.client, wanted)
        self._keys = keys
        added = [name for name in keys if name not in old]
        removed = [name for name in old if name not in keys]
        changed = [name for name in keys if name in old and self.shared.get(keys[name]) is not before[name]]
        unchanged = [name for name in keys if name in old and name not in changed]
        if close_all:
            closing += [
                conn
                for name in unchanged
                if (conn := self.get(name)) is not None
                and conn.state in _LIVE
                and self.shared.users(keys[name]) == [self.client]
            ]
        event = Reconciled(tuple(added), tuple(removed), tuple(changed), tuple(unchanged), tuple(closing), first_load)
        if publish:
            self._hub.publish(event)
        return event

    def close(self) -> list[ServerConnection]:
        """This client is gone: it wants no connection now. Returns those no client wants, to close."""
        self._keys = {}
        return self.shared.detach(self.client)
