"""The registry, the event hub and their subscribers, against fake connections (no process, no SDK).

Reconcile, deactivation of stale tools, watches and previews are each driven by events here;
the end-to-end suites prove the same behaviour with real servers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from mcp_sidecar.events import (
    CatalogInvalidated,
    EventHub,
    NoAnswerer,
    ResourceUpdated,
    StatusChanged,
    WatchesLost,
)
from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.results import ActiveToolsChanged
from mcp_sidecar.services.app import Sidecar
from support.fake_connection import FakeConnection, FakeFactory

TOOL = {"name": "t", "inputSchema": {"type": "object"}}


def server(*args: str, **extra: Any) -> dict[str, Any]:
    return {"command": "python3", "args": list(args), **extra}


class Env:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.sent: list[tuple[str, Mapping[str, Any]]] = []
        self.factory = FakeFactory()
        self.app = Sidecar(
            lambda m, p: self.sent.append((m, p)),
            use_disk_cache=False,
            watch_config=False,
            connection_factory=self.factory,
        )

    def write(self, **servers: dict[str, Any]) -> None:
        (self.home / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")

    def fake(self, name: str) -> FakeConnection:
        return self.factory.current(name)

    def of(self, method: str) -> list[Mapping[str, Any]]:
        return [p for m, p in self.sent if m == method]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    monkeypatch.setenv("MCP_SIDECAR_HOME", str(tmp_path))
    return Env(tmp_path)


async def test_reconcile_keeps_unchanged_replaces_changed_and_closes_removed(env: Env) -> None:
    env.write(a=server("a.py"), b=server("b.py"), c=server("c.py"))
    env.app.ensure_loaded()
    a, b, c = env.fake("a"), env.fake("b"), env.fake("c")
    env.write(a=server("a.py"), b=server("b2.py"), d=server("d.py"))

    summary = await env.app.configuration.reload()

    assert (summary.added, summary.removed, summary.changed, summary.unchanged) == (["d"], ["c"], ["b"], ["a"])
    assert env.app.registry.get("a") is a.real
    assert env.app.registry.get("b") is env.fake("b").real
    assert env.fake("b") is not b
    assert env.app.registry.names() == ["a", "b", "d"]
    assert (a.closed, b.closed, c.closed, env.fake("b").closed) == (0, 1, 1, 0)


async def test_an_explicit_reload_closes_live_unchanged_connections_and_keeps_them(env: Env) -> None:
    env.write(a=server("a.py"), idle=server("i.py"))
    env.app.ensure_loaded()
    env.fake("a").set_state("connected")

    summary = await env.app.configuration.reload(close_all=True)

    assert summary.unchanged == ["a", "idle"]
    assert env.app.registry.get("a") is env.fake("a").real
    assert (env.fake("a").closed, env.fake("idle").closed) == (1, 0)
    assert env.fake("a").state == "idle"


async def test_invalid_files_keep_the_previous_connections_and_say_why(env: Env) -> None:
    env.write(a=server("a.py"))
    env.app.ensure_loaded()
    (env.home / "mcp.json").write_text("{not json", encoding="utf-8")

    summary = await env.app.configuration.reload()

    assert not summary.applied
    assert env.app.registry.get("a") is env.fake("a").real
    assert [d["code"] for d in summary.diagnostics] == ["configuration_invalid"]
    with pytest.raises(Exception, match="configuration is invalid"):
        env.app.connection("missing", "get")


async def test_without_a_valid_setup_each_read_applies_the_valid_definitions(env: Env) -> None:
    env.write(a=server("a.py"), bad=server("b.py", colour="blue"))
    env.app.ensure_loaded()  # at start: nothing to keep
    assert env.app.registry.names() == ["a"]
    assert list(env.app.registry.broken()) == ["bad"]

    env.write(a=server("a2.py"), b=server("b.py"), bad=server("b.py", colour="blue"))
    summary = await env.app.configuration.reload()  # still never valid: the valid part applies again
    assert (summary.applied, summary.changed, summary.added) == (True, ["a"], ["b"])
    assert [d["server"] for d in summary.diagnostics] == ["bad"]

    env.write(a=server("a2.py"), b=server("b.py"))
    assert (await env.app.configuration.reload()).diagnostics == []
    env.write(a=server("a3.py", colour="blue"), c=server("c.py"))
    summary = await env.app.configuration.reload()  # valid once: an invalid file keeps that setup
    assert not summary.applied
    assert env.app.registry.names() == ["a", "b"]
    assert [(d["server"], d["message"].endswith("stays in use.")) for d in summary.diagnostics] == [
        ("a", False),
        ("c", True),
    ]
    assert env.app.registry.broken()["a"].message.endswith("Until it is fixed, the definition already in use stays.")


async def test_events_of_a_replaced_connection_reach_no_one(env: Env) -> None:
    env.write(a=server("a.py"))
    env.app.ensure_loaded()
    old = env.fake("a")
    env.write(a=server("a2.py"))
    await env.app.configuration.reload()
    env.sent.clear()

    old.set_state("failed")
    old.announce(CatalogInvalidated(old.real, "tools"))
    assert env.sent == []

    new = env.fake("a")
    new.announce(CatalogInvalidated(new.real, "tools"))
    assert env.of(methods.CATALOG_CHANGED) == [{"server": "a", "kind": "tools"}]


async def test_a_status_row_is_sent_only_when_it_changes(env: Env) -> None:
    env.write(a=server("a.py"))
    env.app.ensure_loaded()
    a = env.fake("a")
    a.set_state("connected")
    a.publish(StatusChanged(a.real))  # nothing changed since
    rows = env.of(methods.SERVER_STATUS)
    assert [r["state"] for r in rows] == ["connected"]


async def test_reconcile_deactivates_stale_tools_once_per_session_and_reason(env: Env) -> None:
    env.write(keep=server("k.py"), change=server("c.py"), gone=server("g.py"), off=server("o.py"))
    env.app.ensure_loaded()
    for name in ("keep", "change", "gone", "off"):
        env.fake(name).tools = [TOOL]
    ids = ("keep.t", "change.t", "gone.t", "off.t")
    result = await env.app.activation.activate(ids, "s1")
    assert [r["status"] for r in result["results"]] == ["loaded"] * 4
    await env.app.activation.activate(("keep.t",), "s2")
    assert env.app.sessions.loaded_count("keep") == 1
    env.sent.clear()
    env.write(keep=server("k.py"), change=server("c2.py"), off=server("o.py", disabled=True))

    summary = await env.app.configuration.reload()

    expected: list[ActiveToolsChanged] = [
        {"session": "s1", "removed": ["change.t"], "reason": "definition changed"},
        {"session": "s1", "removed": ["gone.t"], "reason": "server removed"},
        {"session": "s1", "removed": ["off.t"], "reason": "server disabled"},
    ]
    assert sorted(summary.deactivated, key=lambda d: d["reason"]) == sorted(expected, key=lambda d: d["reason"])
    assert env.of(methods.ACTIVE_TOOLS_CHANGED) == summary.deactivated
    assert list(env.app.sessions.active("s1")) == ["keep.t"]
    assert list(env.app.sessions.active("s2")) == ["keep.t"]


async def test_sessions_are_reported_in_the_order_of_their_first_activation_request(env: Env) -> None:
    env.write(a=server("a.py"))
    env.app.ensure_loaded()
    env.fake("a").tools = [TOOL]
    first = await env.app.activation.activate(("a.missing",), "first")  # loads nothing yet
    assert first["results"][0]["status"] == "not loaded"
    await env.app.activation.activate(("a.t",), "second")
    await env.app.activation.activate(("a.t",), "first")
    env.write()

    summary = await env.app.configuration.reload()

    assert [d["session"] for d in summary.deactivated] == ["first", "second"]


async def test_watches_coalesce_updates_and_end_with_their_connection(env: Env) -> None:
    env.write(a=server("a.py"), b=server("b.py"))
    env.app.ensure_loaded()
    env.app.configuration.interactive = True
    await env.app.watches.subscribe("a", "file:///x")
    await env.app.watches.subscribe("b", "file:///y")
    a, b = env.fake("a"), env.fake("b")

    a.announce(ResourceUpdated(a.real, "file:///x"))
    a.announce(ResourceUpdated(a.real, "file:///x"))
    a.announce(ResourceUpdated(a.real, "file:///not-watched"))
    assert env.of(methods.RESOURCE_UPDATED) == [{"server": "a", "uri": "file:///x", "changed": True}]
    assert env.app.watches.list()["watches"][0]["updates"] == 2

    a.set_state("failed")
    b.announce(WatchesLost(b.real))
    assert env.of(methods.WATCHES_CLEARED) == [
        {"server": "a", "uris": ["file:///x"], "reason": "disconnected"},
        {"server": "b", "uris": ["file:///y"], "reason": "subscription stream lost"},
    ]
    assert env.app.watches.list()["watches"] == []


async def test_a_reload_that_replaces_a_connection_clears_its_watches(env: Env) -> None:
    env.write(a=server("a.py"))
    env.app.ensure_loaded()
    env.app.configuration.interactive = True
    await env.app.watches.subscribe("a", "file:///x")
    env.write(a=server("a2.py"))

    await env.app.configuration.reload()

    assert env.of(methods.WATCHES_CLEARED) == [{"server": "a", "uris": ["file:///x"], "reason": "configuration reload"}]


async def test_previews_end_with_their_connection_and_with_a_reload(env: Env) -> None:
    env.write(a=server("a.py"), b=server("b.py"))
    env.app.ensure_loaded()
    for name in ("a", "b"):
        env.fake(name).prompts = [{"name": "p"}]
    first = await env.app.prompts.preview("a", "p", {})
    kept = await env.app.prompts.preview("b", "p", {})
    assert len(env.app.prompts) == 2

    env.fake("a").set_state("idle")
    assert len(env.app.prompts) == 1
    with pytest.raises(Exception, match="No pending preview"):
        env.app.prompts.use(first["previewId"])

    await env.app.configuration.reload()
    assert len(env.app.prompts) == 0
    with pytest.raises(Exception, match="No pending preview"):
        env.app.prompts.use(kept["previewId"])


# -- the hub itself ----------------------------------------------------------------------------


def test_a_failing_subscriber_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    hub = EventHub()
    seen: list[str] = []

    def broken(event: WatchesLost) -> None:
        raise RuntimeError("secret-canary")

    hub.subscribe(WatchesLost, broken)
    hub.subscribe(WatchesLost, lambda event: seen.append("second"))
    hub.publish(WatchesLost(object()))  # type: ignore[arg-type]

    assert seen == ["second"]
    assert "RuntimeError" in caplog.text
    assert "secret-canary" not in caplog.text


def test_collect_sees_only_what_is_published_inside_it() -> None:
    hub = EventHub()
    hub.publish(WatchesLost(object()))  # type: ignore[arg-type]
    with hub.collect(WatchesLost) as seen:
        event = WatchesLost(object())  # type: ignore[arg-type]
        hub.publish(event)
    hub.publish(WatchesLost(object()))  # type: ignore[arg-type]
    assert seen == [event]


async def test_a_request_goes_to_its_one_answerer_within_a_time_limit() -> None:
    hub = EventHub()
    cancelled = asyncio.Event()

    async def answer(event: WatchesLost) -> str:
        return "yes"

    withdraw = hub.answer(WatchesLost, answer)
    with pytest.raises(ValueError, match="already has an answerer"):
        hub.answer(WatchesLost, answer)
    assert await hub.ask(WatchesLost(object()), 1.0) == "yes"  # type: ignore[arg-type]
    withdraw()
    with pytest.raises(NoAnswerer):
        await hub.ask(WatchesLost(object()), 1.0)  # type: ignore[arg-type]

    async def never(event: StatusChanged) -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    hub.answer(StatusChanged, never)
    with pytest.raises(TimeoutError):
        await hub.ask(StatusChanged(object()), 0.05)  # type: ignore[arg-type]
    assert cancelled.is_set()
