"""Two clients over one user's state (issue 32 item 1): each keeps its own sessions, previews,
watches, roots, notifications and questions, and both use one connection per server.

The clients are `ClientContext`s over one `UserState` with fake connections; the questions go
through a real `ClientHooks` over the user's `ClientSide`, as a `Connection` builds it.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

import pytest

from mcp_sidecar.connections.client_hooks import ClientHooks, ClientOffer
from mcp_sidecar.connections.sharing import ConnectionRoute
from mcp_sidecar.connections.stderr_log import StderrLog
from mcp_sidecar.events import ElicitationAsked, ResourceUpdated
from mcp_sidecar.operations.row import Operation, invoke
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services.client_context import ClientContext
from mcp_sidecar.services.questions import acting
from mcp_sidecar.services.sessions import ActiveTool
from mcp_sidecar.services.user_state import UserState
from support.fake_connection import FakeConnection, FakeFactory

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar

PROMPT = {"name": "greet", "arguments": []}
FORM = ClientOffer(elicitation_form=True)


class Client:
    """One client and what reached it."""

    def __init__(self, user: UserState, name: str) -> None:
        self.name = name
        self.sent: list[tuple[str, Mapping[str, Any]]] = []
        self.context = ClientContext(
            user,
            lambda method, params: self.sent.append((method, params)),
            environ={},
            interactive=True,
            watch_config=False,
        )
        self.asked: list[ElicitationAsked] = []
        self.context.hub.answer(ElicitationAsked, self._answer)

    async def _answer(self, request: ElicitationAsked) -> dict[str, Any]:
        self.asked.append(request)
        return {"action": "accept", "content": {"who": self.name}}

    def methods(self) -> list[str]:
        return [method for method, _ in self.sent]


class Two:
    def __init__(self) -> None:
        self.factory = FakeFactory()
        self.user = UserState(self.factory, use_disk_cache=False)
        self.a = Client(self.user, "A")
        self.b = Client(self.user, "B")
        for client in (self.a, self.b):
            client.context.configuration.ensure_loaded()
        for client in (self.a, self.b):
            client.sent.clear()  # A heard its rows' sharers grow to two when B loaded

    def fake(self, name: str) -> FakeConnection:
        return self.factory.current(name)


@pytest.fixture
def two(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Two:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    servers = {"s": {"command": "python3"}, "t": {"command": "python3"}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return Two()


def test_both_clients_use_one_connection_per_server(two: Two) -> None:
    a, b = two.a.context, two.b.context

    key = a.registry.key("s")
    assert key is not None
    assert key == b.registry.key("s")
    assert a.connection("s", "get") is b.connection("s", "get") is two.user.registry.get(key)
    assert a.connection("t", "get") is b.connection("t", "get")
    assert [fake.name for fake in two.factory.built] == ["s", "t"]  # the second client's load built none
    assert a.status.status()["servers"][0]["name"] == "s"


def test_a_connection_event_reaches_every_client_once_and_a_closed_client_no_more(two: Two) -> None:
    two.fake("s").set_state("connected")

    assert two.a.methods() == two.b.methods() == [methods.SERVER_STATUS]
    two.b.context.close()
    two.fake("s").set_state("idle")
    # A hears its rows' sharers drop to itself (s and t), then s going idle; B hears nothing more.
    assert [(p["name"], p["state"], p["sharedBy"]) for _, p in two.a.sent[1:]] == [
        ("s", "connected", 1),
        ("t", "idle", 1),
        ("s", "idle", 1),
    ]
    assert two.b.methods() == [methods.SERVER_STATUS]


def test_sessions_are_one_clients(two: Two) -> None:
    a, b = two.a.context, two.b.context
    tool = ActiveTool("s", "t", {"name": "t"}, "{}", two.fake("s").config.fingerprint())
    a.sessions.activate("default", "s.t", tool)

    assert list(a.sessions.active("default")) == ["s.t"]
    assert b.sessions.active("default") == {}
    assert b.sessions.end("default") == []
    assert a.sessions.end("default") == ["s.t"]
    assert methods.ACTIVE_TOOLS_CHANGED in two.a.methods()
    assert methods.ACTIVE_TOOLS_CHANGED not in two.b.methods()  # B's editor heard of no tool it never had


async def test_a_preview_is_used_only_by_the_client_that_made_it(two: Two) -> None:
    two.fake("s").prompts = [PROMPT]
    made = await two.a.context.prompts.preview("s", "greet", {})

    with pytest.raises(SidecarError) as refused:
        two.b.context.prompts.use(made["previewId"])
    assert refused.value.diagnostic.code == "preview_not_found"
    assert two.a.context.prompts.use(made["previewId"])["accepted"] is True


async def test_a_watch_and_its_updates_are_one_clients(two: Two) -> None:
    await two.a.context.watches.subscribe("s", "file:///w")
    two.a.sent.clear()
    two.b.sent.clear()

    two.fake("s").announce(ResourceUpdated(two.fake("s").real, "file:///w"))

    assert [w["uri"] for w in two.a.context.watches.list()["watches"]] == ["file:///w"]
    assert two.b.context.watches.list()["watches"] == []
    assert two.a.methods() == [methods.RESOURCE_UPDATED]
    assert two.b.methods() == []


async def test_roots_are_one_clients(two: Two, tmp_path: Path) -> None:
    two.a.context.roots.supply([(tmp_path.as_uri(), "a")])

    assert two.a.context.roots.current() == [(tmp_path.as_uri(), "a")]
    assert two.b.context.roots.current() == []  # B's workspace is untrusted: it discloses nothing
    assert two.a.context.offers is not two.b.context.offers


def _asking_hooks(two: Two) -> ClientHooks:
    """The hooks a `Connection` builds over its clients' `ClientSide`, offering forms."""
    for client in (two.a, two.b):
        client.context.offers.change(FORM)
    route = two.fake("s").publish
    assert isinstance(route, ConnectionRoute)
    assert route.users() == [two.a.context.id, two.b.context.id]  # both offer forms now: one connection again
    side = two.user.clients.client_side(route.users)
    return ClientHooks("s", side, StderrLog(), lambda level, logger, text, notify: None)


async def _server_asks(hooks: ClientHooks) -> str:
    import mcp_types as types

    elicit = hooks.kwargs()["elicitation_callback"]
    form = types.ElicitRequestFormParams(
        message="Who?", requested_schema={"type": "object", "properties": {"who": {"type": "string"}}}
    )
    answer = await elicit(None, form)
    return str(answer.content["who"])


def _call_row(hooks: ClientHooks, owner: contextvars.Context) -> Operation[None]:
    """A row whose call has the server ask while it runs, in the connection's task: as the SDK does,
    whose context is the one its owner task was started in (`owner`), not the request's."""

    async def call(app: Sidecar, params: None) -> str:
        with hooks.request_in_flight():
            return await asyncio.create_task(_server_asks(hooks), context=owner)

    return Operation("test/call", "call", lambda operation, raw: None, call)


def _app(client: ClientContext) -> Sidecar:
    return cast("Sidecar", SimpleNamespace(client=client))


async def test_a_question_goes_to_the_client_whose_request_is_in_flight(two: Two) -> None:
    hooks = _asking_hooks(two)
    with acting(two.b.context):
        owner = contextvars.copy_context()  # the connection was opened during one of B's requests

    answered = await invoke(_call_row(hooks, owner), _app(two.a.context), None)

    assert answered == "A"
    assert [r.params["message"] for r in two.a.asked] == ["Who?"]
    assert two.b.asked == []  # never B's, though B came last and opened the connection
    answered = await invoke(_call_row(hooks, owner), _app(two.b.context), None)
    assert (answered, len(two.a.asked), len(two.b.asked)) == ("B", 1, 1)


async def test_with_no_request_of_a_client_the_question_goes_to_the_last_attached(two: Two) -> None:
    hooks = _asking_hooks(two)

    with hooks.request_in_flight():  # a request no front started (a background connection's)
        answered = await asyncio.create_task(_server_asks(hooks), context=contextvars.Context())
    assert (answered, two.a.asked) == ("B", [])

    two.b.context.close()
    with acting(two.b.context), hooks.request_in_flight():  # a closed client answers nothing more
        answered = await asyncio.create_task(_server_asks(hooks), context=contextvars.Context())
    assert answered == "A"
