"""`Listings`: a list overtaken by its kind's change notice is fetched again, then `catalog_changed`.

A stand-in client announces the notice while it answers, as a server's notice arrives
before its answer on one stdio pipe; the end-to-end tests do it with a real server.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from mcp_sidecar.connections.listing import Listings, ListName
from mcp_sidecar.connections.live_session import LiveSession
from mcp_sidecar.output.redact import Redactor
from mcp_sidecar.protocol.errors import SidecarError

KEYS = {"tools": "name", "resources": "uri", "resource_templates": "uriTemplate", "prompts": "name"}


class Entry:
    def __init__(self, key: str, name: str) -> None:
        self.key, self.name = key, name

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return {self.key: self.name}


class Client:
    """Answers every list with one entry more each time, announcing `notice` in its first `overtaken` answers."""

    def __init__(self, listings: Listings, overtaken: int, notice: str = "tools") -> None:
        self.server_capabilities = SimpleNamespace(tools={}, resources={}, prompts={})
        self.listings, self.overtaken, self.notice = listings, overtaken, notice
        self.calls = 0
        self.in_flight_seen: list[int] = []

    async def _answer(self, field: str) -> Any:
        self.calls += 1
        self.in_flight_seen.append(self.listings.in_flight)
        names = [f"t{i}" for i in range(self.calls)]
        if self.calls <= self.overtaken:
            self.listings.changed(self.notice)
        return SimpleNamespace(**{field: [Entry(KEYS[field], n) for n in names]}, next_cursor=None)

    async def list_tools(self, cursor: str | None = None) -> Any:
        return await self._answer("tools")

    async def list_resources(self, cursor: str | None = None) -> Any:
        return await self._answer("resources")

    async def list_resource_templates(self, cursor: str | None = None) -> Any:
        return await self._answer("resource_templates")

    async def list_prompts(self, cursor: str | None = None) -> Any:
        return await self._answer("prompts")


def live(client: Client) -> Any:
    session = cast(LiveSession, SimpleNamespace(server="s", client=client, tool_tasks={}, redaction=Redactor()))

    async def get() -> LiveSession:
        return session

    return get


async def listed(overtaken: int, kind: ListName = "tools", notice: str = "tools") -> tuple[Any, Client, Listings]:
    listings = Listings("s")
    client = Client(listings, overtaken, notice)
    try:
        result: Any = await listings.settled(live(client), kind, "discover")
    except SidecarError as exc:
        result = exc
    return result, client, listings


async def test_an_answer_nothing_overtook_is_kept() -> None:
    result, client, listings = await listed(0)
    assert (result, client.calls, client.in_flight_seen, listings.in_flight) == ([{"name": "t0"}], 1, [1], 0)


async def test_a_list_overtaken_once_is_fetched_again() -> None:
    result, client, listings = await listed(1)
    assert (result, client.calls, listings.in_flight) == ([{"name": "t0"}, {"name": "t1"}], 2, 0)


async def test_a_list_overtaken_twice_is_catalog_changed() -> None:
    result, client, listings = await listed(2)
    assert isinstance(result, SidecarError)
    assert result.diagnostic.to_json() == {
        "code": "catalog_changed",
        "operation": "discover",
        "server": "s",
        "message": "The server's tools list changed while it was listed, twice in a row: retry shortly.",
        "hint": "Retry discovery (or the same request) in a moment, once the server's catalog settles.",
    }
    assert (client.calls, listings.in_flight) == (2, 0)


async def test_a_notice_of_another_kind_does_not_overtake_a_list() -> None:
    result, client, _ = await listed(2, "tools", "prompts")
    assert (result, client.calls) == ([{"name": "t0"}], 1)


async def test_a_resources_notice_overtakes_the_templates_list() -> None:
    result, client, _ = await listed(2, "resource templates", "resources")
    assert isinstance(result, SidecarError)
    assert (result.diagnostic.code, client.calls) == ("catalog_changed", 2)
    assert result.diagnostic.message.startswith("The server's resources list changed")
