"""The user's connections, shared between clients: one connection per `ConnectionKey`, and who uses it.

Issue 33's sharing rule: two clients share a server process only when the resolved definition,
the run directory, the offer and the roots are all equal; `"shared": false` keeps a server to
one client. `ConnectionKey` is exactly that, digested (a key never holds a secret). The
definition is resolved in each client's own environment, and its digest covers everything the
server would get from that environment: the values `${VAR}` put in the definition, the few
variables a stdio server inherits (`connections/stdio.py`'s list, so clients whose environments
differ elsewhere still share it), the self-start chain, and, when a secret command runs, the
environment it runs in (`config/secrets.py`: all of it but the shell's own bookkeeping). Each client's
view (`connections/registry.py`'s `ServerRegistry`) says which keys it wants now
(`reconcile_client`); a connection no client wants any more is handed back to be closed at once
(an idle-time stop may come later).

A connection's events go through its `ConnectionRoute`: to the user hub first (the catalogs),
then to the clients attached to its key, in the order they attached, and only while it is the
key's current connection (a replaced connection that is still closing changes nothing). When a
client joins or leaves a connection others use, those others hear `RowMayHaveChanged`: their
status row counts its sharers (`sharedBy`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mcp_sidecar import tasks
from mcp_sidecar.config.interpolate import MissingVariable, ResolvedServer, SecretCommand, resolve
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.secrets import command_environment
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.connections.launch import process_environment
from mcp_sidecar.connections.protocol import ServerConnection
from mcp_sidecar.events import ConnectionEvent, ConnectionKeysChanged, EventHub, RowMayHaveChanged

ClientId = str
Roots = list[tuple[str, str]]


def _digest(material: object) -> str:
    canonical = json.dumps(material, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _secret_free(values: Mapping[str, str | SecretCommand]) -> dict[str, str]:
    return {k: f"!{v.command}" if isinstance(v, SecretCommand) else v for k, v in values.items()}


def _secret_text(value: str | SecretCommand | None) -> str | None:
    return f"!{value.command}" if isinstance(value, SecretCommand) else value


def definition_digest(server: ServerConfig, run_dir: Path, environ: Mapping[str, str]) -> str:
    """The definition as written (every field: filters, time limits, OAuth settings) and as resolved
    in the client's `environ` (command, args, cwd, url, headers and the OAuth client after `${VAR}`
    interpolation; a secret command by its text, never its output), with everything a stdio
    server's process gets (`launch.process_environment`: the inherited basics, its own variables,
    the chain) and the environment its secret commands would run in, as one digest."""
    try:
        resolved = resolve(server, run_dir, environ)
    except MissingVariable as exc:  # the connection fails to start anyway; say which variable
        material: object = {"missing": exc.variable}
    else:
        material = {
            "command": resolved.command,
            "args": list(resolved.args),
            "cwd": resolved.cwd,
            "env": (
                process_environment(server, resolved, environ)
                if server.transport == "stdio"
                else _secret_free(resolved.env)
            ),
            "url": resolved.url,
            "headers": _secret_free(resolved.headers),
            "oauth": [resolved.oauth_client_id, _secret_text(resolved.oauth_client_secret)],
            "commands": command_environment(environ) if _runs_commands(resolved) else None,
        }
    return _digest({"written": server.fingerprint(), "resolved": material})


def _runs_commands(resolved: ResolvedServer) -> bool:
    """A secret command may run for this server: what it prints depends on all of its environment."""
    return bool(resolved.secret_commands()) or isinstance(resolved.oauth_client_secret, SecretCommand)


@dataclass(frozen=True, slots=True)
class ConnectionKey:
    """What one connection is kept under: the sharing rule's parts, digested.

    The server's name stays in the key (events and catalogs name it, so sharers must agree on
    it); `client` is set only for a `"shared": false` server, which then serves one client.
    """

    name: str
    definition: str = ""
    run_dir: str = ""
    offer: str = ""
    roots: str = ""
    client: ClientId | None = None

    @classmethod
    def of(
        cls,
        server: ServerConfig,
        run_dir: Path,
        offer: ClientOffer,
        roots: Roots,
        client: ClientId,
        environ: Mapping[str, str],
    ) -> ConnectionKey:
        return cls(
            name=server.name,
            definition=definition_digest(server, run_dir, environ),
            run_dir=str(run_dir),
            offer=_digest(offer.to_json()),
            roots=_digest(roots if server.roots else []),
            client=None if server.shared else client,
        )

    def same_process(self, other: ConnectionKey) -> bool:
        """The same server in the same place for the same clients: only the offer or the roots differ."""
        return (self.name, self.definition, self.run_dir, self.client) == (
            other.name,
            other.definition,
            other.run_dir,
            other.client,
        )


class ConnectionRoute:
    """Where one connection's events go; also who uses it now (`users`), for its client side."""

    def __init__(self, registry: SharedRegistry, key: ConnectionKey) -> None:
        self._registry = registry
        self.key = key
        """Moves with the connection when only its offer or roots changed (see `reconcile_client`)."""

    def __call__(self, event: ConnectionEvent) -> None:
        self._registry.route(self.key, event)

    def users(self) -> list[ClientId]:
        """The clients attached to this connection, in the order they attached."""
        return self._registry.users(self.key)


ConnectionFactory = Callable[[ServerConfig, Path, ConnectionRoute, Mapping[str, str]], ServerConnection]
"""(definition, the directory it runs in, where its events go, the environment it resolves in) -> a new,
unconnected connection."""


@dataclass(frozen=True, slots=True)
class Wanted:
    """One server a client wants: its definition, the directory it runs in and the client's environment."""

    server: ServerConfig
    run_dir: Path
    environ: Mapping[str, str] = field(repr=False)


class SharedRegistry:
    def __init__(self, hub: EventHub, factory: ConnectionFactory, idle_s: float = 0.0) -> None:
        """`idle_s`: how long a connection whose last client left stays up for the next one (the
        engine's windows come and go); 0 closes it at once (a process with one client)."""
        self._hub = hub
        self._factory = factory
        self.idle_s = idle_s
        self._idle: dict[ConnectionKey, asyncio.TimerHandle] = {}
        self._connections: dict[ConnectionKey, ServerConnection] = {}
        self._routes: dict[ConnectionKey, ConnectionRoute] = {}
        self._users: dict[ConnectionKey, list[ClientId]] = {}
        self._keys: dict[int, ConnectionKey] = {}
        """By `id(conn)` of the connections held (a connection is held while it is in the map)."""
        self._clients: dict[ClientId, Callable[[object], None]] = {}
        self._moved: list[tuple[Hashable, Hashable]] = []

    # -- clients -----------------------------------------------------------------------------

    def attach(self, client: ClientId, publish: Callable[[object], None]) -> None:
        """`client`'s connection events go to `publish` (its hub's)."""
        self._clients[client] = publish

    def detach(self, client: ClientId) -> list[ServerConnection]:
        """`client` is gone: it wants nothing now. Returns the connections no client wants, to close;
        with an idle time, none: each stays that long for the next client, then closes itself."""
        if self.idle_s <= 0:
            closing = self.reconcile_client(client, {})
            self._clients.pop(client, None)
            return closing
        left = self.keys_of(client)
        for key in left:
            users = self._users[key]
            users.remove(client)
            if not users:
                conn = self._connections[key]
                self._idle[key] = asyncio.get_running_loop().call_later(self.idle_s, self._expire, key, conn)
        self._clients.pop(client, None)
        self._tell_sharers(left, client)
        return []

    def _expire(self, key: ConnectionKey, conn: ServerConnection) -> None:
        """An idle connection's time is up: closed, unless a client took it again meanwhile."""
        self._idle.pop(key, None)
        if self._connections.get(key) is not conn or self._users.get(key):
            return
        self._drop(key)
        self._hub.publish(ConnectionKeysChanged((key,), ()))
        tasks.spawn(conn.close(), f"idle-close-{key.name}")

    def close_idle(self) -> list[ServerConnection]:
        """Every connection no client uses, taken out now (the engine is exiting)."""
        closing = []
        for key in list(self._idle):
            self._idle.pop(key).cancel()
            if key in self._connections and not self._users.get(key):
                closing.append(self._drop(key))
        return closing

    # -- lookup ------------------------------------------------------------------------------

    def get(self, key: ConnectionKey) -> ServerConnection | None:
        return self._connections.get(key)

    def key_of(self, conn: ServerConnection) -> ConnectionKey | None:
        """The key `conn` is held under; None once it is no longer held."""
        key = self._keys.get(id(conn))
        return key if key is not None and self._connections.get(key) is conn else None

    def users(self, key: ConnectionKey) -> list[ClientId]:
        return list(self._users.get(key, ()))

    def keys_of(self, client: ClientId) -> list[ConnectionKey]:
        return [key for key, users in self._users.items() if client in users]

    def __iter__(self) -> Iterator[ServerConnection]:
        return iter(list(self._connections.values()))

    def __len__(self) -> int:
        return len(self._connections)

    # -- events ------------------------------------------------------------------------------

    def _tell_sharers(self, keys: list[ConnectionKey], but: ClientId) -> None:
        """`but` joined or left `keys`: each one's other clients hear that their row's sharers changed."""
        for key in keys:
            for client in self.users(key):
                publish = self._clients.get(client)
                if client != but and publish is not None:
                    publish(RowMayHaveChanged(key.name, key))

    def route(self, key: ConnectionKey, event: ConnectionEvent) -> None:
        """The user hub first (the catalogs), then each client attached to `key`, in attach order."""
        if self._connections.get(key) is not event.conn:
            return
        self._hub.publish(event)
        for client in self.users(key):
            publish = self._clients.get(client)
            if publish is not None:
                publish(event)

    # -- reconcile ---------------------------------------------------------------------------

    def reconcile_client(self, client: ClientId, wanted: Mapping[ConnectionKey, Wanted]) -> list[ServerConnection]:
        """`client` now wants exactly `wanted`; returns the connections no client wants any more.

        A key already held is shared; a new key whose only difference from one this client alone
        used is the offer or the roots takes that connection over (its session stays, as an
        offer or roots change always did); otherwise a new connection is made.
        """
        before = [key for key in self.keys_of(client) if key not in wanted]
        shared: list[ConnectionKey] = []  # joined or left: their other clients' rows change
        for key, want in wanted.items():
            if key in self._connections:
                if (idle := self._idle.pop(key, None)) is not None:
                    idle.cancel()  # an idle connection taken again: it stays up
                if client not in self._users[key]:
                    self._users[key].append(client)
                    shared.append(key)
                continue
            previous = next((old for old in before if old.same_process(key) and self._users[old] == [client]), None)
            if previous is not None:
                before.remove(previous)
                self._move(previous, key)
                continue
            route = ConnectionRoute(self, key)
            conn = self._factory(want.server, want.run_dir, route, want.environ)
            self._connections[key], self._routes[key], self._users[key] = conn, route, [client]
            self._keys[id(conn)] = key
        closing: list[ServerConnection] = []
        released: list[Hashable] = []
        moved = self._moved
        for key in before:
            users = self._users[key]
            users.remove(client)
            if not users:
                closing.append(self._drop(key))
                released.append(key)
            else:
                shared.append(key)
        self._moved = []
        if released or moved:
            self._hub.publish(ConnectionKeysChanged(tuple(released), tuple(moved)))
        self._tell_sharers(shared, client)
        return closing

    def _move(self, old: ConnectionKey, new: ConnectionKey) -> None:
        conn = self._connections.pop(old)
        route = self._routes.pop(old)
        route.key = new
        self._moved.append((old, new))
        self._connections[new], self._routes[new], self._users[new] = conn, route, self._users.pop(old)
        self._keys[id(conn)] = new

    def _drop(self, key: ConnectionKey) -> ServerConnection:
        conn = self._connections.pop(key)
        del self._routes[key], self._users[key]
        self._keys.pop(id(conn), None)
        return conn
