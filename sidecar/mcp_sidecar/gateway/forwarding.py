"""Forwarding between the gateway's hosts and the upstream servers, both ways.

Towards the servers: what they are offered as client capabilities (`app.offers.current`) is what the
connected hosts declared in `initialize` (elicitation form and URL, sampling), and their roots
are the hosts' roots (`roots/list`, asked again on the host's `notifications/roots/list_changed`).
A host declaring no roots leaves the sidecar's rule: the trusted workspace.

Towards the host: a server's elicitation or sampling request goes to the host whose call is in
flight on that server, as a request related to that call (over HTTP it rides the call's
stream); the host's answer goes back through `client_hooks.py`, so it is checked and mapped
exactly as an editor's (an error `-1` is a decline). No such host, or one that did not declare
the capability: the server hears a decline. The call's progress (when the host's request
carried a `progressToken`) and the server's log messages while it runs go to that host too.

Hosts of the 2026-07-28 era cannot be asked anything (the SDK refuses server-to-client
requests in that era): nothing is offered for them and their roots are not asked for; their
calls still get progress and log messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import warnings
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import unquote, urlsplit

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_sidecar import tasks
from mcp_sidecar.events import ElicitationAsked, ElicitationCompleted, SamplingAsked, ServerLogged
from mcp_sidecar.gateway.hosts import deliver
from mcp_sidecar.output.sanitize import has_controls, one_line
from mcp_sidecar.services import offers

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel.server import Server
    from mcp.server.session import ServerSession

    from mcp_sidecar.connections.client_hooks import ClientOffer
    from mcp_sidecar.gateway.hosts import Host
    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.roots import Root

    Ctx: TypeAlias = ServerRequestContext[Any, Any]

log = logging.getLogger(__name__)

ROOTS_WAIT_S = 10.0
"""How long a host's first request waits for its answer to `roots/list` before going on."""
MESSAGE_CHARS = 200
LOGS_PER_SECOND = 20
"""Log messages one call passes to its host, at most, in any second."""
PROGRESS_INTERVAL_S = 0.1
CLOSE_WAIT_S = 1.0
"""How long a call's answer waits for its queued notifications to go out."""
ROOTS_ANSWER_S = 30.0
"""How long a host's `roots/list` may take; past it, that host's roots stay unknown."""
MAX_ROOTS = 100
MAX_URL_STEPS = 100
"""URL elicitations remembered so their completion notice reaches the host that was asked."""


@dataclass(eq=False)
class _Link:
    """What the gateway knows of one handshake-era host."""

    offer: ClientOffer
    has_roots: bool
    roots: list[Root] | None = None
    """Its roots, once it answered `roots/list`."""
    log_level: str | None = None
    """Its `logging/setLevel`; None: every message that reaches the gateway."""
    first_roots: asyncio.Task[None] | None = None
    waited: bool = False
    """Its first request waited for its roots already: no later one waits again."""


@dataclass(eq=False)
class Call:
    """One host request in flight on upstream servers: what they say meanwhile goes to it."""

    host: Host
    ctx: Ctx
    servers: frozenset[str]
    link: _Link | None
    _last: asyncio.Task[None] | None = None
    _window: float = 0.0
    _sent: int = 0
    _open: bool = True
    _reported: float = -math.inf
    """The last progress value passed on: progress only goes forward."""
    _reported_at: float = -math.inf
    _pending: tuple[float, float | None, str | None] | None = None
    """The newest progress held back by the throttle: it goes out before the call's answer."""

    @property
    def progress(self) -> Callable[[float | None, float | None, str | None], None] | None:
        """The call's progress sink (`ProgressSink`), when the host's request carried a `progressToken`."""
        meta = self.ctx.meta
        if meta is None or meta.get("progress_token") is None:
            return None
        return self._progressed

    def _progressed(self, progress: float | None, total: float | None, message: str | None) -> None:
        """At most one report per `PROGRESS_INTERVAL_S`, the newest kept; a value that is not finite or
        goes back is dropped (a server flooding progress must not flood the host or delay the answer)."""
        if progress is None or not math.isfinite(progress) or progress < self._reported:
            return  # MCP progress always has a value; a status message alone has no place in it
        self._reported = progress
        total = total if total is not None and math.isfinite(total) else None
        self._pending = (progress, total, one_line(message)[:MESSAGE_CHARS] if message else None)
        if time.monotonic() - self._reported_at >= PROGRESS_INTERVAL_S:
            self._flush_progress()

    def _flush_progress(self) -> None:
        if self._pending is None:
            return
        progress, total, text = self._pending
        self._pending = None
        self._reported_at = time.monotonic()
        self.send(lambda: self.ctx.session.report_progress(progress, total, text))

    @property
    def party(self) -> object:
        """Whose call this is, as far as the gateway can tell: its host; over HTTP in the 2026-07-28
        era, the request alone (every such request is a host of its own: nothing ties two together)."""
        if self.ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and self.ctx.request is not None:
            return self
        return self.host

    def logged(self, level: str, logger: str, text: str) -> None:
        wanted = self.link.log_level if self.link is not None else None
        if wanted is not None and offers.level_rank(level) < offers.level_rank(wanted):
            return
        now = time.monotonic()
        if now - self._window >= 1.0:
            self._window, self._sent = now, 0
        self._sent += 1
        if self._sent > LOGS_PER_SECOND:
            return
        session = self.ctx.session

        def send() -> Awaitable[None]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # logging is deprecated in 2026-07-28 only
                return session.send_log_message(level, text, logger, related_request_id=self.ctx.request_id)  # type: ignore[arg-type]

        self.send(send)

    def send(self, make: Callable[[], Awaitable[None]]) -> None:
        """Send a notification on the call, after the ones before it (never after its answer)."""
        if not self._open:
            return
        previous = self._last

        async def in_order() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            await deliver(make, "a notification")

        self._last = tasks.spawn(in_order(), "gateway-forward")

    async def close(self) -> None:
        """The call is answered next: what is queued goes first (for a second at most), nothing after."""
        self._flush_progress()
        self._open = False
        if self._last is not None:
            await asyncio.wait({self._last}, timeout=CLOSE_WAIT_S)


class Forwarding:
    def __init__(self, app: Sidecar, server: Server[Any], host_of: Callable[[Ctx], Host]) -> None:
        self._app = app
        self._host_of = host_of
        self._links: dict[Host, _Link] = {}
        self._calls: list[Call] = []
        self._url_steps: OrderedDict[tuple[str, str], ServerSession] = OrderedDict()
        app.hub.answer(ElicitationAsked, self._elicit)
        app.hub.answer(SamplingAsked, self._sample)
        app.hub.subscribe(ServerLogged, self._logged)
        app.hub.subscribe(ElicitationCompleted, self._completed)
        import mcp_types as types

        # Registered here, not as constructor arguments: the SDK warns of both as deprecated in 2026-07-28.
        roots_changed = "notifications/roots/list_changed"
        server.add_notification_handler(roots_changed, types.NotificationParams, self._roots_changed)
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self._set_level)

    # -- hosts ------------------------------------------------------------------------------

    def opened(self, host: Host, ctx: Ctx) -> None:
        """A handshake-era host's first request: offer what it declared, and ask for its roots."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        capabilities = ctx.session.client_capabilities
        declared = capabilities.model_dump(by_alias=True, mode="json", exclude_none=True) if capabilities else {}
        link = _Link(offers.declared(declared), has_roots=isinstance(declared.get("roots"), dict))
        self._links[host] = link
        self._reoffer()
        if link.has_roots:
            link.first_roots = tasks.spawn(self._fetch_roots(link, ctx, related=True), "gateway-roots")

    def closed(self, host: Host) -> None:
        """The host disconnected: its roots go; servers keep the offer they had (their questions
        are declined when no connected host can answer them), so a host coming and going cannot
        make them reconnect again and again."""
        if self._links.pop(host, None) is not None:
            self._supply_roots()

    async def ready(self, host: Host) -> None:
        """The host's roots are known (or it took too long to say): servers may be connected now."""
        link = self._links.get(host)
        if link is not None and not link.waited and link.first_roots is not None and not link.first_roots.done():
            link.waited = True
            await asyncio.wait({link.first_roots}, timeout=ROOTS_WAIT_S)

    def _reoffer(self) -> None:
        """The servers are offered what any host connected so far could answer (`Offers.change`): the
        offer only grows, so a server reconnects at most once per capability gained."""
        self._app.offers.change(
            offers.union([self._app.offers.current, *(link.offer for link in self._links.values())])
        )

    # -- roots ------------------------------------------------------------------------------

    async def _fetch_roots(self, link: _Link, ctx: Ctx, related: bool) -> None:
        import mcp_types as types
        from mcp.shared.message import ServerMessageMetadata

        scoped = related and ctx.request_id is not None and ctx.session.can_send_request
        metadata = ServerMessageMetadata(related_request_id=ctx.request_id) if scoped else None
        try:
            listed = await ctx.session.send_request(
                types.ListRootsRequest(), types.ListRootsResult, ROOTS_ANSWER_S, metadata=metadata
            )
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            log.info("gateway: the host did not list its roots: %s", type(exc).__name__)
            return
        link.roots = host_roots(listed.model_dump(by_alias=True, mode="json", exclude_none=True).get("roots", []))
        self._supply_roots()

    def _supply_roots(self) -> None:
        """The servers' roots: the host's; with several hosts (over HTTP, sharing the servers), only the
        roots every one of them listed, so no host's folders reach the servers by another's call and
        no host widens what the servers may touch for the others."""
        self._app.roots.supply(shared_roots([link.roots for link in self._links.values() if link.roots is not None]))

    async def _roots_changed(self, ctx: Ctx, params: Any) -> None:
        link = self._links.get(self._host_of(ctx))
        if link is not None and link.has_roots:
            await self._fetch_roots(link, ctx, related=False)

    async def _set_level(self, ctx: Ctx, params: Any) -> dict[str, Any]:
        link = self._links.get(self._host_of(ctx))
        if link is not None:
            link.log_level = str(params.level)
        return {}

    # -- calls ------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def call(self, ctx: Ctx, host: Host, servers: Iterable[str]) -> AsyncIterator[Call]:
        """A host request going to `servers`: their questions, progress and logs meanwhile go to it."""
        call = Call(host, ctx, frozenset(servers), self._links.get(host))
        self._calls.append(call)
        try:
            yield call
        finally:
            self._calls.remove(call)
            await call.close()

    def _route(self, server: str, can: Callable[[ClientOffer], bool]) -> Call | None:
        return route(self._calls, server, can)

    def _logged(self, event: ServerLogged) -> None:
        call = only_call(self._calls, event.conn.name)
        if call is not None:
            logger = f"{event.conn.name}/{event.logger}" if event.logger else event.conn.name
            call.logged(event.level, logger, event.text)

    # -- questions --------------------------------------------------------------------------

    async def _elicit(self, request: ElicitationAsked) -> Any:
        import mcp_types as types

        params = request.params
        url = params.get("mode") == "url"
        call = self._route(request.server, lambda o: o.elicitation_url if url else o.elicitation_form)
        if call is None:
            return {"action": "decline"}
        asked: types.ElicitRequestParams = (
            types.ElicitRequestURLParams(
                message=labelled(request.server, params["message"]) + _opens(params["url"]),  # a line of its own
                url=params["url"],
                elicitation_id=params.get("elicitationId") or "",
            )
            if url
            else types.ElicitRequestFormParams(
                message=labelled(request.server, params["message"]), requested_schema=params["requestedSchema"]
            )
        )
        result = await _ask(call, types.ElicitRequest(params=asked), types.ElicitResult)
        answer = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        if url and answer.get("action") == "accept" and params.get("elicitationId"):
            self._remember_step(request.server, params["elicitationId"], call.ctx.session)
        return answer

    async def _sample(self, request: SamplingAsked) -> Any:
        import mcp_types as types

        call = self._route(request.server, lambda o: o.sampling)
        if call is None:
            raise offers.Declined
        params = {k: v for k, v in request.params.items() if k != "server"}
        # Whose request it is, for the host's approval and its model: the server's own words follow,
        # each line marked, so a line of the server's cannot pass for the label (another server's).
        label = f"[Request from MCP server {request.server} through mcp-sidecar]"
        system = params.get("systemPrompt")
        marked = labelled(request.server, system) if isinstance(system, str) and system else None
        params["systemPrompt"] = f"{label}\n{marked}" if marked is not None else label
        asked = types.CreateMessageRequest(params=types.CreateMessageRequestParams.model_validate(params))
        tools = "tools" in params or "toolChoice" in params
        shape = types.CreateMessageResultWithTools if tools else types.CreateMessageResult
        result = await _ask(call, asked, shape)
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    def _remember_step(self, server: str, elicitation_id: str, session: ServerSession) -> None:
        self._url_steps[(server, elicitation_id)] = session
        while len(self._url_steps) > MAX_URL_STEPS:
            self._url_steps.popitem(last=False)

    def _completed(self, event: ElicitationCompleted) -> None:
        session = self._url_steps.pop((event.conn.name, event.elicitation_id), None)
        if session is not None:
            tasks.spawn(_tell_completed(session, event.elicitation_id), "gateway-elicitation-complete")


def only_call(calls: list[Call], server: str) -> Call | None:
    """The latest call in flight on `server` when all of them are one host's; None otherwise.

    A server's request carries nothing saying which of our calls it belongs to: with two hosts'
    calls on one server (over HTTP), a question or log message could be the other host's, so it
    reaches neither (questions are declined, messages stay in the log). Over HTTP, two
    2026-07-28 requests are two hosts (`Call.party`), though they share one set of tools.
    """
    on = [c for c in calls if server in c.servers]
    if not on or len({c.party for c in on}) != 1:
        return None
    return on[-1]


def route(calls: list[Call], server: str, can: Callable[[ClientOffer], bool]) -> Call | None:
    """The call a question of `server` goes to, when its host can answer; None: nobody can."""
    call = only_call(calls, server)
    return call if call is not None and call.link is not None and can(call.link.offer) else None


def shared_roots(told: list[list[Root]]) -> list[Root] | None:
    """The servers' roots from what the hosts listed: one host's; several hosts' (over HTTP, sharing
    the servers), only those every one listed, so no host's folders reach the servers by another's
    call and no host widens what the servers may touch for the others. None: no host said."""
    if not told:
        return None
    shared = set.intersection(*(set(roots) for roots in told))
    return [root for root in told[0] if root in shared]


async def _ask(call: Call, request: Any, result_type: type[Any]) -> Any:
    """`request` to the call's host, related to the call; its errors reach `client_hooks` as they came."""
    from mcp.shared.message import ServerMessageMetadata

    related = ServerMessageMetadata(related_request_id=call.ctx.request_id)
    return await call.ctx.session.send_request(request, result_type, metadata=related)


async def _tell_completed(session: ServerSession, elicitation_id: str) -> None:
    with contextlib.suppress(Exception):  # a host that went away: nothing to tell
        await session.send_elicit_complete(elicitation_id)


def model_tool_servers(arguments: dict[str, Any]) -> set[str]:
    """The servers an `mcp_tools` call reads from or completes on (and may hear questions from)."""
    parts = (arguments.get(key) for key in ("read", "complete"))
    return {part["server"] for part in parts if isinstance(part, dict) and isinstance(part.get("server"), str)}


def labelled(server: str, message: str) -> str:
    """The question as the host shows it: which server asks, on every line of its (already
    sanitised) text, so no line of the server's can pass for another server's label."""
    return "\n".join(f"[{server}] {line}" for line in (message.splitlines() or [""]))


def _opens(url: str) -> str:
    """The site a URL step opens, as a browser resolves its host (the URL was checked already), on a
    line of its own: after the server's text on its line, the server could have written one before it."""
    from mcp_sidecar.output.elicitation import url_host

    try:
        return f"\n(opens {url_host(url)})"
    except ValueError:
        return ""


def host_roots(listed: list[Any]) -> list[Root]:
    """The host's `roots/list` as the sidecar's roots: `file:` URIs with a name on one line.

    A root without a name is named after the last segment of its path, as a workspace folder is.
    """
    roots: list[Root] = []
    for root in listed[:MAX_ROOTS]:
        uri = root.get("uri") if isinstance(root, dict) else None
        if not isinstance(uri, str) or not uri.startswith("file:") or len(uri) > 4096:
            continue
        if has_controls(uri) or any(c.isspace() for c in uri):
            continue
        name = root.get("name")
        if not isinstance(name, str) or not name.strip():
            name = unquote(urlsplit(uri).path.rstrip("/").rpartition("/")[2]) or uri
        roots.append((uri, one_line(name)[:MESSAGE_CHARS]))
    return roots


__all__ = ["Call", "Forwarding", "host_roots", "model_tool_servers", "only_call", "route", "shared_roots"]
