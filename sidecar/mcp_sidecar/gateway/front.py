"""The gateway's start-up front: a host's opening requests answered before the SDK is imported.

`import mcp` with its server half takes about a second here (more on a loaded box), and a host
waits for its handshake: Claude Code's `server/discover` probe gives up after about 2.6 s. The
front answers what a host sends first from the sidecar's own state, with no server started and
no model loaded: `initialize`, `server/discover`, `ping`, the first `tools/list` (`mcp_tools`, and
`mcp_call` in proxy mode: nothing can be active yet), `prompts/list` from the prompts a gateway
listed before (`prompt_snapshot.py`), and the empty resource lists of a gateway without
`--resources`. Everything else, and anything unusual (an incomplete envelope, a cursor, a
request before `initialize`), waits in order for the SDK, which answers it as it would have; once
one request waits, so does every later one, so nothing is answered out of the host's order.

When the SDK is in (`eras.py`), the waiting lines go to it, after the `initialize` the front
answered, replayed so the SDK's session knows the host. From then on the front only passes
lines on. Every answer here is the SDK's answer to the same request:
`tests/unit/gateway/test_gateway_front.py` compares them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp_sidecar.gateway import stdio, texts, wire
from mcp_sidecar.protocol import apps
from mcp_sidecar.services import offers

if TYPE_CHECKING:
    from mcp_sidecar.gateway.eras import Router
    from mcp_sidecar.gateway.prompt_snapshot import PromptSnapshot
    from mcp_sidecar.gateway.stdio import HostPipes
    from mcp_sidecar.services.app import Sidecar

log = logging.getLogger(__name__)

Message = dict[str, Any]
CAPABILITIES = {
    "handshake": {
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": False, "subscribe": False},
        "tools": {"listChanged": True},
    },
    "modern": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "logging": {},
        "prompts": {"listChanged": True},
        "resources": {"listChanged": True, "subscribe": True},
        "tools": {"listChanged": True},
    },
}
"""What the SDK's server advertises for the gateway's handlers, per era (pinned by the tests)."""


class Front:
    def __init__(
        self,
        app: Sidecar,
        mode: texts.Mode,
        pipes: HostPipes,
        *,
        resources: bool = False,
        restoring: bool = False,
        prompts: PromptSnapshot | None = None,
        prepare: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """`restoring`: a durable session's tools come back after the SDK is in, so its first
        `tools/list` waits for them; `prompts`: the prompts listed before, for `prompts/list`;
        `prepare`: starts the servers an `mcp_tools` call that waits for the SDK will contact."""
        self.app = app
        self.mode = mode
        self.pipes = pipes
        self.resources = resources
        self.restoring = restoring
        self.prompts = prompts
        self.prepare = prepare
        self.unanswered = stdio.Unanswered()
        self.router: Router | None = None
        self._waiting: list[bytes | Exception] = []
        self._listens: list[bytes] = []
        """`subscriptions/listen` requests acknowledged here, for the SDK to serve from the hand-off on."""
        self._opened: Message | None = None
        """The `initialize` the front answered, to replay to the SDK."""
        self._initialized = False
        self.answered = 0
        """Requests the front answered itself (for the tests and the log)."""
        self.prompts_served = False
        """It answered `prompts/list` from the snapshot: the real list is due once the SDK is in."""

    # -- serving ----------------------------------------------------------------------------

    async def serve(self, sdk: asyncio.Future[Callable[[], Awaitable[Router]]]) -> None:
        """Read the host's lines until its input ends; `sdk` resolves to what starts the SDK side."""
        reading: asyncio.Task[bytes | Exception | None] = asyncio.ensure_future(stdio.next_line(self.pipes.reader))
        try:
            while True:
                pending: set[asyncio.Future[Any]] = {reading} if self.router is not None else {reading, sdk}
                done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if sdk in done and self.router is None:
                    await self._hand_off(sdk.result())
                if reading in done:
                    line = reading.result()
                    if line is None:
                        break
                    await self.take(line)
                    reading = asyncio.ensure_future(stdio.next_line(self.pipes.reader))
        finally:
            reading.cancel()
        await self._end_of_input(sdk)

    async def _end_of_input(self, sdk: asyncio.Future[Callable[[], Awaitable[Router]]]) -> None:
        """The host's input ended: what it asked is answered (by the SDK, if anything waits for it)."""
        if self.router is None and not self._waiting:
            return  # the front answered everything: no need to wait for the SDK at all
        if self.router is None:
            await self._hand_off(await sdk)
        await self.unanswered.answered()

    async def _hand_off(self, start: Callable[[], Awaitable[Router]]) -> None:
        log.info("gateway: the SDK is in; the front answered %d requests, %d wait", self.answered, len(self._waiting))
        router = await start()
        if self._opened is not None:
            await router.replay_initialize(self._opened, self._initialized)
        for listen in self._listens:
            router.acknowledged(json.loads(listen)["id"])
            await router.send(listen)
        waiting, self._waiting = self._waiting, []
        for line in waiting:
            await router.send(line)
        self.router = router

    async def take(self, line: bytes | Exception) -> None:
        """One line from the host: passed on, answered here, or kept for the SDK."""
        message = _decoded(line)
        if message is not None:
            self.unanswered.read(message)
        if self.router is not None:
            await self.router.send(line)
            return
        answer = self._answer(message) if message is not None and not self._waiting else None
        if answer is not None and answer.get("method") == LISTEN_ACK:
            # The stream's first frame; the stream itself is the SDK's, from the hand-off on. A listen
            # request is answered only when its stream ends, so nothing after it waits for it.
            assert not isinstance(line, Exception)
            self._listens.append(line)
            await self.pipes.write_json(answer)
            return
        if answer is None:
            if message is not None:
                self._prepare(message)
            if message is not None and message.get("method") == "notifications/initialized" and not self._waiting:
                self._initialized = self._opened is not None  # replayed after `initialize`, not kept twice
                if self._initialized:
                    return
            self._waiting.append(line)
            return
        self.answered += 1
        await self.pipes.write_json(answer)
        self.unanswered.written(answer["id"])

    def _prepare(self, message: Message) -> None:
        """An `mcp_tools` call waits for the SDK: its servers start meanwhile (a server's start and the
        SDK's import overlap, as for the editors), unless the host has roots of its own, which the
        servers should have from their start (the SDK side asks for them first)."""
        params = wire.params_of(message)
        arguments = params.get("arguments")
        if self.prepare is None or message.get("method") != "tools/call" or params.get("name") != "mcp_tools":
            return
        capabilities = wire.params_of(self._opened).get("capabilities") if self._opened is not None else None
        if not isinstance(arguments, dict) or (isinstance(capabilities, dict) and "roots" in capabilities):
            return
        try:
            self.prepare(arguments)
        except Exception as exc:  # a head start only: the call itself goes on as always
            log.info("gateway: servers not started ahead of a call: %s", type(exc).__name__)

    # -- answers ----------------------------------------------------------------------------

    def _answer(self, message: Message) -> Message | None:
        """The answer to `message`, when the front can give the SDK's; None: it waits for the SDK."""
        if not wire.is_request(message):
            return None
        method = message["method"]
        if method == "initialize":
            return self._initialize(message)
        if method == "subscriptions/listen":
            return _acknowledged(message) if wire.modern_version(message) is not None else None
        version = wire.modern_version(message)
        if version is not None:
            self._offer_apps(message)
        if version is None and wire.has_envelope(message):
            return None  # an envelope the SDK refuses, with the reason
        if version is None and self._opened is None:
            return None  # a handshake-era request before `initialize`
        result = self._result(method, wire.params_of(message), version)
        if result is None:
            return None
        if version is not None:
            result = wire.modern_result(result, listing=method != "ping")
        return wire.response(message["id"], result)

    def _initialize(self, message: Message) -> Message | None:
        params = wire.params_of(message)
        info = params.get("clientInfo")
        capabilities = params.get("capabilities")
        if self._opened is not None or not isinstance(params.get("protocolVersion"), str):
            return None
        if not isinstance(capabilities, dict) or not isinstance(info, dict):
            return None
        if not isinstance(info.get("name"), str) or not isinstance(info.get("version"), str):
            return None
        self._opened = message
        # What this host can answer is offered to the servers, as the SDK side does at its first
        # request: the catalogs named in the directory are the ones this offer lists.
        self.app.offers.change(offers.union([self.app.offers.current, offers.declared(capabilities)]))
        result = {
            "protocolVersion": wire.negotiated(params["protocolVersion"]),
            "capabilities": CAPABILITIES["handshake"],
            "serverInfo": wire.server_info(),
            "instructions": texts.instructions(self.app.model_tool),
        }
        return wire.response(message["id"], result)

    def _offer_apps(self, message: Message) -> None:
        """A 2026-07-28 request declaring MCP Apps: the servers are offered them before any starts (the
        SDK side does the same at each request, `face.host`); the offer only grows."""
        meta = wire.params_of(message).get("_meta")
        capabilities = meta.get(wire.CAPABILITIES_KEY) if isinstance(meta, dict) else None
        if not self.app.offers.current.apps and apps.declared(capabilities):
            self.app.offers.change(replace(self.app.offers.current, apps=True))

    def _result(self, method: str, params: dict[str, Any], version: str | None) -> dict[str, Any] | None:
        if "cursor" in params:
            return None  # nothing is paged here: the SDK says what it makes of a cursor
        if method == "server/discover" and version is not None:
            return {
                "supportedVersions": list(wire.MODERN_VERSIONS),
                "capabilities": CAPABILITIES["modern"],
                "instructions": texts.instructions(self.app.model_tool),
            }
        if method == "ping" and version is None:
            return {}
        if method == "tools/list" and not self.restoring:
            return {"tools": texts.opening_tools(self.app.model_tool, self.mode)}
        if method in ("resources/list", "resources/templates/list") and not self.resources:
            return {"resources": []} if method == "resources/list" else {"resourceTemplates": []}
        if method == "prompts/list" and self.prompts is not None:
            self.prompts_served = True
            return {"prompts": self.prompts.listed(version is not None)}
        return None


LISTEN_ACK = "notifications/subscriptions/acknowledged"
LISTEN_KINDS = ("toolsListChanged", "promptsListChanged", "resourcesListChanged")


def _acknowledged(message: Message) -> Message | None:
    """The SDK's acknowledgement of a `subscriptions/listen` request: the filter it honours (every
    kind asked for), stamped with the request's id as the subscription's; None for an odd filter."""
    asked = wire.params_of(message).get("notifications")
    if not isinstance(asked, dict) or set(asked) - {*LISTEN_KINDS, "resourceSubscriptions"}:
        return None
    honored: dict[str, Any] = {kind: True for kind in LISTEN_KINDS if asked.get(kind) is True}
    if any(asked.get(kind) not in (None, True, False) for kind in LISTEN_KINDS):
        return None
    uris = asked.get("resourceSubscriptions")
    if uris is not None:
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            return None
        if uris:
            honored["resourceSubscriptions"] = uris
    meta = {wire.SUBSCRIPTION_KEY: message["id"]}
    return {"jsonrpc": "2.0", "method": LISTEN_ACK, "params": {"notifications": honored, "_meta": meta}}


def _decoded(line: bytes | Exception) -> Message | None:
    if isinstance(line, Exception):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else None
