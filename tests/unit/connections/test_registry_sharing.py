"""The sharing key (issue 33): two clients' views over one user's registry share a connection only
when every part of the key is equal, and each client's reconcile touches only its own share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.config.loader import EffectiveConfig
from mcp_sidecar.config.model import ServerConfig
from mcp_sidecar.config.validate import ConfigProblems, parse_server
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.connections.registry import ServerRegistry
from mcp_sidecar.connections.sharing import ConnectionKey, ConnectionRoute, SharedRegistry
from mcp_sidecar.events import ConnectionKeysChanged, EventHub, Reconciled, RowMayHaveChanged, StatusChanged
from support.fake_connection import FakeConnection, FakeFactory
from support.sidecar import wait_until

FORM = ClientOffer(elicitation_form=True)


def config(**servers: dict[str, Any]) -> EffectiveConfig:
    return EffectiveConfig(servers={name: parse_server(name, d, "global") for name, d in servers.items()}, files=())


class View:
    """One client: its hub (what reached it) and its view of the user's registry."""

    def __init__(
        self, shared: SharedRegistry, client: str, run_dir: Path, environ: dict[str, str] | None = None
    ) -> None:
        self.hub = EventHub()
        self.heard: list[object] = []
        for kind in (StatusChanged, Reconciled):
            self.hub.subscribe(kind, self.heard.append)
        self.rows: list[str] = []
        """The servers whose rows it was told may have changed."""
        self.hub.subscribe(RowMayHaveChanged, lambda event: self.rows.append(event.server))
        self.registry = ServerRegistry(
            self.hub, shared=shared, client=client, environ=BASICS if environ is None else environ
        )
        self.run_dir = run_dir

    def load(self, effective: EffectiveConfig, *, close_all: bool = False) -> Reconciled:
        return self.registry.reconcile(effective, lambda server: self.run_dir, close_all=close_all)

    def conn(self, name: str) -> FakeConnection:
        conn = self.registry.get(name)
        assert isinstance(conn, FakeConnection)
        return conn


class User:
    def __init__(self, tmp_path: Path) -> None:
        self.hub = EventHub()
        self.factory = FakeFactory()
        self.shared = SharedRegistry(self.hub, self.factory)
        self.released: list[ConnectionKeysChanged] = []
        self.hub.subscribe(ConnectionKeysChanged, self.released.append)
        self.a = View(self.shared, "a", tmp_path)
        self.b = View(self.shared, "b", tmp_path)


@pytest.fixture
def user(tmp_path: Path) -> User:
    return User(tmp_path)


GIT = {"command": "python3", "args": ["-m", "git_server"]}
BASICS = {"HOME": "/home/u", "PATH": "/usr/bin:/bin", "USER": "u"}
"""A client's environment, as a front's hello carries it (the parts a stdio server inherits)."""


def test_two_clients_with_the_same_configuration_share_one_connection(user: User) -> None:
    user.a.load(config(git=GIT))
    user.b.load(config(git=GIT))

    assert user.a.conn("git") is user.b.conn("git")
    assert len(user.factory.built) == 1
    route = user.a.conn("git").publish
    assert isinstance(route, ConnectionRoute)
    assert route.users() == ["a", "b"]


@pytest.mark.parametrize(
    "part",
    ["definition", "run directory", "offer", "roots", "not shared"],
)
def test_each_part_of_the_key_keeps_two_clients_apart(user: User, tmp_path: Path, part: str) -> None:
    theirs: dict[str, Any] = dict(GIT)
    if part == "definition":
        theirs["args"] = ["-m", "other_git_server"]  # the same name, another server
    elif part == "run directory":
        user.b.run_dir = tmp_path / "trusted-workspace"
    elif part == "offer":
        user.b.registry.offer = lambda: FORM
    elif part == "roots":
        user.b.registry.roots = lambda: [("file:///b", "b")]
    else:
        theirs["shared"] = False
    user.a.load(config(git=GIT if part != "not shared" else theirs))
    user.b.load(config(git=theirs))

    assert user.a.conn("git") is not user.b.conn("git")
    assert len(user.factory.built) == 2
    a_key, b_key = user.a.registry.key("git"), user.b.registry.key("git")
    assert a_key is not None
    assert b_key is not None
    assert (a_key.name, b_key.name) == ("git", "git")  # sharers agree on the name: it stays in the key


def test_a_key_holds_no_secret(user: User) -> None:
    user.a.registry.environ = {**BASICS, "CANARY_TOKEN": "canary-7f3a9c2e"}
    user.a.load(config(git={**GIT, "env": {"TOKEN": "${CANARY_TOKEN}"}}))
    user.b.load(config(git=GIT))

    assert "canary-7f3a9c2e" not in repr(user.a.registry.key("git"))
    assert user.a.conn("git") is not user.b.conn("git")  # the resolved environment differs


def test_roots_do_not_part_clients_of_a_server_offered_none(user: User) -> None:
    withheld = {**GIT, "roots": False}
    user.b.registry.roots = lambda: [("file:///b", "b")]
    user.a.load(config(git=withheld))
    user.b.load(config(git=withheld))

    assert user.a.conn("git") is user.b.conn("git")


def test_one_clients_reload_leaves_the_others_connections_alone(user: User) -> None:
    user.a.load(config(git=GIT, db={"command": "db"}))
    user.b.load(config(git=GIT, db={"command": "db"}))
    shared_git, shared_db = user.a.conn("git"), user.a.conn("db")
    shared_db.state = "connected"
    user.b.heard.clear()

    done = user.a.load(config(git={**GIT, "args": ["-m", "new_git"]}, db={"command": "db"}), close_all=True)

    assert (done.changed, done.unchanged) == (("git",), ("db",))
    assert done.closing == ()  # b still uses both: neither the old git nor the live db closes
    assert user.b.conn("git") is shared_git
    assert user.a.conn("git") is not shared_git
    assert user.b.heard == []  # no Reconciled for b: its previews and active tools stay
    assert user.released == []


@pytest.mark.parametrize("idle_s", [0.0, 60.0])
async def test_a_client_joining_or_leaving_a_connection_tells_its_other_clients(user: User, idle_s: float) -> None:
    """Their rows count the connection's sharers (`sharedBy`); clients of other connections hear nothing."""
    user.shared.idle_s = idle_s
    user.a.load(config(git=GIT, db={"command": "db"}))
    assert user.a.registry.sharers(user.a.conn("git")) == 1

    user.b.load(config(git=GIT, db={"command": "other-db"}))

    assert user.a.rows == ["git"]  # not db: b's db is another connection
    assert user.b.rows == []  # the one joining reads its rows itself
    assert user.a.registry.sharers(user.a.conn("git")) == user.b.registry.sharers(user.b.conn("git")) == 2
    assert user.a.registry.sharers(user.a.conn("db")) == 1

    user.b.registry.close()

    assert user.a.rows == ["git", "git"]
    assert user.a.registry.sharers(user.a.conn("git")) == 1


def test_a_connection_no_client_wants_is_released_and_closed(user: User) -> None:
    user.a.load(config(git=GIT))
    user.b.load(config(git=GIT))
    old = user.a.conn("git")
    assert user.a.load(config()).closing == ()  # b still uses it
    key = user.b.registry.key("git")

    closing = user.b.registry.close()

    assert closing == [old]
    assert user.released == [ConnectionKeysChanged((key,), ())]
    assert key is not None
    assert user.shared.get(key) is None


def test_a_connections_events_reach_only_its_clients(user: User) -> None:
    user.a.load(config(git=GIT, db={"command": "db"}))
    user.b.load(config(git={**GIT, "args": ["-m", "other"]}, db={"command": "db"}))
    user.a.heard.clear()
    user.b.heard.clear()
    heard_by_user: list[object] = []
    user.hub.subscribe(StatusChanged, heard_by_user.append)

    user.a.conn("git").set_state("connected")
    user.a.conn("db").set_state("connected")

    assert [e.conn.name for e in user.a.heard if isinstance(e, StatusChanged)] == ["git", "db"]
    assert [e.conn.name for e in user.b.heard if isinstance(e, StatusChanged)] == ["db"]
    assert len(heard_by_user) == 2  # the user's own subscribers (the catalogs) hear each once


def test_an_offer_change_of_the_only_client_keeps_its_connection(user: User) -> None:
    user.a.load(config(git=GIT))
    conn = user.a.conn("git")
    before = user.a.registry.key("git")
    user.a.heard.clear()

    user.a.registry.offer = lambda: FORM
    user.a.registry.rekey()

    assert user.a.conn("git") is conn  # today's behaviour with one client: the session stays
    assert user.a.registry.key("git") != before
    assert user.a.heard == []
    assert user.released == [ConnectionKeysChanged((), ((before, user.a.registry.key("git")),))]


def test_an_offer_change_of_one_sharer_moves_it_to_its_own_connection(user: User) -> None:
    user.a.load(config(git=GIT))
    user.b.load(config(git=GIT))
    shared = user.a.conn("git")
    user.a.heard.clear()
    user.b.heard.clear()

    user.a.registry.offer = lambda: FORM
    user.a.registry.rekey()

    assert user.b.conn("git") is shared
    assert user.a.conn("git") is not shared
    assert [e.changed for e in user.a.heard if isinstance(e, Reconciled)] == [("git",)]
    assert user.b.heard == []


def test_a_view_of_its_own_makes_its_own_shared_registry(tmp_path: Path) -> None:
    hub = EventHub()
    heard: list[object] = []
    hub.subscribe(StatusChanged, heard.append)
    registry = ServerRegistry(hub, FakeFactory(), environ={})
    registry.reconcile(config(git=GIT), lambda server: tmp_path)
    conn = registry.get("git")
    assert isinstance(conn, FakeConnection)

    conn.set_state("connected")

    assert len(heard) == 1  # one hub for the user and the client: heard once


def test_shared_must_be_a_boolean() -> None:
    with pytest.raises(ConfigProblems, match="shared"):
        parse_server("git", {**GIT, "shared": "no"}, "global")
    assert parse_server("git", {**GIT, "shared": False}, "global").shared is False
    assert parse_server("git", GIT, "global").shared is True


def test_the_key_of_a_server_not_shared_names_its_client(tmp_path: Path) -> None:
    server: ServerConfig = parse_server("git", {**GIT, "shared": False}, "global")
    key = ConnectionKey.of(server, tmp_path, ClientOffer(), [], "client-7", {})
    assert key.client == "client-7"
    assert (
        ConnectionKey.of(parse_server("git", GIT, "global"), tmp_path, ClientOffer(), [], "client-7", {}).client is None
    )


async def test_a_connection_whose_last_client_left_waits_its_idle_time_for_the_next(user: User) -> None:
    """The engine's windows come and go: a server outlives its last window by the idle time, and a
    window opened meanwhile gets the same connection; after it, the connection closes itself."""
    user.shared.idle_s = 0.05
    user.a.load(config(git=GIT))
    first = user.a.conn("git")
    assert user.a.registry.close() == []  # nothing to close now: it idles
    assert first.closed == 0

    user.b.load(config(git=GIT))
    assert user.b.conn("git") is first  # taken again before its time was up
    assert len(user.factory.built) == 1
    assert user.b.registry.close() == []

    await wait_until(lambda: first.closed == 1, within=5, what="the idle connection to close itself")
    assert user.shared.get(ConnectionKey.of(first.config, user.a.run_dir, ClientOffer(), [], "a", BASICS)) is None
    assert [event.released for event in user.released if event.released] == [
        (ConnectionKey.of(first.config, user.a.run_dir, ClientOffer(), [], "a", BASICS),)
    ]


async def test_an_exiting_engine_takes_its_idle_connections_out_at_once(user: User) -> None:
    user.shared.idle_s = 60
    user.a.load(config(git=GIT))
    idle = user.a.conn("git")
    user.a.registry.close()
    assert user.shared.close_idle() == [idle]
    assert list(user.shared) == []


# -- the client's environment: the key covers exactly what a server would get of it -----------

HTTP = {"url": "https://mcp.example.test/mcp"}


def with_env(view: View, **variables: str) -> None:
    view.registry.environ = {**BASICS, **variables}


@pytest.mark.parametrize(
    ("definition", "a", "b"),
    [
        ({**GIT, "args": ["--token", "${TOKEN}"]}, {"TOKEN": "one"}, {"TOKEN": "two"}),
        ({**GIT, "env": {"TOKEN": "$TOKEN"}}, {"TOKEN": "one"}, {"TOKEN": "two"}),
        (GIT, {"PATH": "/opt/a/bin"}, {"PATH": "/opt/b/bin"}),  # what every stdio server inherits
        (GIT, {"HOME": "/home/a"}, {}),
        (GIT, {"MCP_SIDECAR_SERVER_CHAIN": "0123456789abcdef"}, {}),  # a front started by a server
        ({**GIT, "env": {"TOKEN": "!pass show git"}}, {"PASSWORD_STORE_DIR": "/a"}, {}),  # what the command reads
        ({**HTTP, "headers": {"Authorization": "Bearer ${TOKEN}"}}, {"TOKEN": "one"}, {"TOKEN": "two"}),
        ({**HTTP, "headers": {"Authorization": "!gh auth token"}}, {"GH_CONFIG_DIR": "/a"}, {}),
        ({**HTTP, "oauthClientId": "c", "oauthClientSecret": "${SECRET}"}, {"SECRET": "one"}, {"SECRET": "two"}),
    ],
)
def test_clients_whose_server_would_get_different_values_never_share(
    user: User, definition: dict[str, Any], a: dict[str, str], b: dict[str, str]
) -> None:
    with_env(user.a, **a)
    with_env(user.b, **b)
    user.a.load(config(s=definition))
    user.b.load(config(s=definition))

    assert user.a.conn("s") is not user.b.conn("s")
    # Each connection resolves in the environment of the client it was made for.
    assert (user.a.conn("s").environ, user.b.conn("s").environ) == (user.a.registry.environ, user.b.registry.environ)


@pytest.mark.parametrize(
    ("definition", "a", "b"),
    [
        ({**GIT, "args": ["--token", "${TOKEN}"]}, {"TOKEN": "same", "EDITOR": "vim"}, {"TOKEN": "same"}),
        (GIT, {"TERM_PROGRAM": "vscode", "VSCODE_PID": "41"}, {"TMUX_PANE": "%3", "GITHUB_TOKEN": "other"}),
        (HTTP, {"PATH": "/opt/a/bin", "HOME": "/home/a"}, {}),  # an HTTP server inherits nothing
        ({**GIT, "env": {"TOKEN": "!pass show git"}}, {"PWD": "/a", "SHLVL": "2", "_": "/a/x"}, {"PWD": "/b"}),
    ],
)
def test_clients_whose_environments_differ_only_where_the_server_gets_nothing_share(
    user: User, definition: dict[str, Any], a: dict[str, str], b: dict[str, str]
) -> None:
    with_env(user.a, **a)
    with_env(user.b, **b)
    user.a.load(config(s=definition))
    user.b.load(config(s=definition))

    assert user.a.conn("s") is user.b.conn("s")
    assert len(user.factory.built) == 1


def test_a_client_whose_variable_is_unset_gets_its_own_failing_server(user: User) -> None:
    with_env(user.a, TOKEN="one")
    user.a.load(config(s={**GIT, "args": ["${TOKEN}"]}))
    user.b.load(config(s={**GIT, "args": ["${TOKEN}"]}))

    assert user.a.conn("s") is not user.b.conn("s")
    assert user.b.conn("s").environ == BASICS  # it fails to start there, naming TOKEN
