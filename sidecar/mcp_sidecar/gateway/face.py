"""The gateway's MCP server: `mcp_tools`, then the activated tools as native tools of the host.

`tools/list` answers `mcp_tools` (its description carries the server directory) and, in native
mode, every tool active in the host's session as `<server>__<tool>` with its full input and
output schema and annotations. `tools/call` of a native name is `mcp/callTool` of its id: the
call is re-validated against the live catalog, so a removed or changed tool answers a tool
error with the re-activate hint, never a call with a different schema. In proxy mode (hosts
that ignore `list_changed`) the list is `mcp_tools` and `mcp_call {id, arguments}`.

Prompts of every enabled server are listed as `<server>__<prompt>`; `prompts/get` goes through
the same checks and sanitising as a prompt preview (a host turns prompts into commands a person
chooses). Server text reaching the host (descriptions, titles, results) is stripped of control,
bidi, zero-width and TAG characters. With `--resources`, the servers' resources are listed too
(`resources.py`). What the servers ask and report during a host's request goes to that host
(`forwarding.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias, cast

import mcp_types as types
from mcp.server.caching import CacheableMethod, CacheHint
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_sidecar import __version__, tasks
from mcp_sidecar.catalog.context_budget import DEFAULT_BUDGET, ExposeMode
from mcp_sidecar.connections.sdk_shim import host_connection
from mcp_sidecar.gateway import apps, entries, refusals, texts
from mcp_sidecar.gateway.durable import digest
from mcp_sidecar.gateway.eras import OPEN_METHOD
from mcp_sidecar.gateway.exposure import Exposed, Exposing
from mcp_sidecar.gateway.forwarding import Forwarding, model_tool_servers
from mcp_sidecar.gateway.host_tasks import EXTENSION, HostTasks, TaskProgress, follows_tasks
from mcp_sidecar.gateway.hosts import Host, Hosts, Tell, deliver
from mcp_sidecar.gateway.prompt_snapshot import PromptSnapshot
from mcp_sidecar.gateway.prompts import Prompts
from mcp_sidecar.gateway.resources import Resources
from mcp_sidecar.gateway.texts import (
    COMMAND,
    NATIVE_HINT,
    NATIVE_LOADED,
    PROXY_HINT,
    PROXY_LOADED,
    Mode,
    profile_tools,
)
from mcp_sidecar.operations.row import runner
from mcp_sidecar.output import activation_text, model_text
from mcp_sidecar.output.sanitize import one_line, strip_controls
from mcp_sidecar.output.wording import Wording
from mcp_sidecar.protocol.apps import SCHEME
from mcp_sidecar.protocol.errors import DiagnosticCode, SidecarError
from mcp_sidecar.services import activation, model_tool
from mcp_sidecar.services.background import DEFAULT_AFTER_S, BackgroundCall
from mcp_sidecar.services.questions import acting

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.models import InitializationOptions

    from mcp_sidecar.connections.content_requests import ProgressSink
    from mcp_sidecar.gateway.durable import DurableSession
    from mcp_sidecar.protocol.results import ActivateResult, CallToolResult
    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.sessions import ActiveTool

    Ctx: TypeAlias = ServerRequestContext[Any, Any]

_HOST_KEY = "mcp-sidecar.host"
LISTS: tuple[CacheableMethod, ...] = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")
"""Every list a host may ask for: each host's own, changing with every activation, never fresh for long."""
RELIST_WAIT_S = 2.0
"""How long an activation's answer waits, by default, for the host to list its tools again."""
RELIST_SETTLE_S = 0.1
"""After that list was answered, how long the activation's answer still waits: a host may take the
new list in after answering (Gemini CLI registers its tools asynchronously)."""
RESTORE_WAIT_S = 15.0
"""How long a durable session's first `tools/list` waits for its tools to be activated again."""

log = logging.getLogger(__name__)


def _text(text: str, is_error: bool) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": strip_controls(text)}], "isError": is_error}


def _failure(error: SidecarError, wording: Wording) -> dict[str, Any]:
    """A service's diagnostic, with the hint a model can act on (`/mcp` commands as a terminal's)."""
    return _text(model_text.for_model(error.diagnostic, wording).render(), True)


def _refusal(code: DiagnosticCode, message: str, server: str | None = None) -> dict[str, Any]:
    """The gateway's own refusal: its message says what to do, so no general hint follows it."""
    return _text(f"{server + ': ' if server else ''}[{code}] {message}", True)


class TaskIdParams(types.RequestParams):
    task_id: str


class UpdateTaskParams(types.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _Server(Server[Any]):
    """The SDK's low-level server, saying by default that it sends list changes (its HTTP sessions
    ask for the initialization options without arguments, and must advertise what stdio does), and
    whose `instructions` are the server directory as it is when a host asks."""

    describe: Callable[[], str] | None = None

    @property
    def instructions(self) -> str | None:
        return self.describe() if self.describe is not None else None

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """The SDK's constructor sets it; ours come from `describe`."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        changes = notification_options or NotificationOptions(tools_changed=True, prompts_changed=True)
        return super().create_initialization_options(changes, experimental_capabilities, extensions)


class Gateway:
    def __init__(
        self,
        app: Sidecar,
        mode: Mode = "native",
        durable: DurableSession | None = None,
        *,
        resources: bool = False,
        relist_wait_s: float = RELIST_WAIT_S,
        prompts: PromptSnapshot | None = None,
        background_after_s: float | None = DEFAULT_AFTER_S,
        expose: ExposeMode = "search",
        expose_budget: int = DEFAULT_BUDGET,
    ) -> None:
        """`durable`: the session the first host continues (`--session NAME`), else none;
        `resources`: list the servers' resources (`--resources`); `relist_wait_s`: how long an
        activation's answer waits for the host to list its tools again (`--list-wait`);
        `prompts`: the prompts listed at the last start; `background_after_s`: how long a host's call
        holds its turn before it goes on in the background (`--background-after`; None: never); `expose` and
        `expose_budget`: whether every tool is listed from the start (`--expose`, `exposure.py`; proxy mode
        never lists them)."""
        self.app = app
        app.background.after = background_after_s
        self.mode = mode
        self.relist_wait_s = relist_wait_s
        self.hosts = Hosts(app, lists_active=mode == "native")
        self.exposing = Exposing(app, self.hosts, expose if mode == "native" else "search", expose_budget)
        self._durable = durable
        self._bus = InMemorySubscriptionBus()
        self._modern: Host | None = None
        self.prompts = Prompts(app.prompts, runner(app), prompts or PromptSnapshot(app), self._prompts_changed)
        self.resources = Resources(app.reading, runner(app), app.registry.names, resources)
        self.server: Server[Any] = _Server(
            "mcp-sidecar",
            version=__version__,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
            on_subscriptions_listen=ListenHandler(self._bus),
            # Each host's lists are its own and change with every activation: never fresh for long.
            # 2026-07-28 list results must say how long they stay fresh; the SDK fills this in from here.
            cache_hints=dict.fromkeys(LISTS, CacheHint(0, "private")),
        )
        self.server.describe = lambda: texts.instructions(app.model_tool)
        self.server.middleware = []  # no tracing span per message: the face adds as little as it can
        self.forwarding = Forwarding(app, self.server, self.host)
        self.server.add_request_handler(OPEN_METHOD, types.RequestParams, self._opened)
        # 2026-07-28's tasks extension (host_tasks.py): a long call goes on as a task the host follows.
        self.host_tasks = HostTasks()
        self.server.extensions[EXTENSION] = {}
        self.server.add_request_handler("tasks/get", TaskIdParams, self._get_task)
        self.server.add_request_handler("tasks/update", UpdateTaskParams, self._update_task)
        self.server.add_request_handler("tasks/cancel", TaskIdParams, self._cancel_task)

    def initialization_options(self) -> InitializationOptions:
        return self.server.create_initialization_options()

    # -- hosts ------------------------------------------------------------------------------

    def host(self, ctx: ServerRequestContext[Any, Any]) -> Host:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            offer = self.app.offers.current
            if not offer.apps and apps.declares(ctx):  # a handshake host's is offered in `forwarding.opened`
                self.app.offers.change(replace(offer, apps=True))
            if self._modern is None:
                self._modern = self._open(self._tell_modern, ctx.protocol_version, self._tell_modern_prompts)
            return self._modern
        conn = host_connection(ctx)
        host = conn.state.get(_HOST_KEY)
        if not isinstance(host, Host):
            host = self._open(conn.send_tool_list_changed, ctx.protocol_version, conn.send_prompt_list_changed)
            if self.prompts.news:
                self.hosts.prompts_changed(host)  # it may have been answered from the snapshot
            self.forwarding.opened(host, ctx)
            conn.state[_HOST_KEY] = host
            conn.exit_stack.callback(self.hosts.close, host)
            conn.exit_stack.callback(self.forwarding.closed, host)
        return host

    async def _opened(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        """The start-up front answered this host's `initialize`: open it now, as its first request would."""
        self.host(ctx)
        return {}

    async def _host(self, ctx: ServerRequestContext[Any, Any]) -> Host:
        """`host(ctx)`, once its roots are known: a request that may connect servers waits for them."""
        host = self.host(ctx)
        await self.forwarding.ready(host)
        return host

    def _open(self, tell: Tell, version: str, tell_prompts: Tell) -> Host:
        """A new host: the first one continues the durable session, if any, restoring its tools."""
        durable, self._durable = self._durable, None
        host = self.hosts.open(tell, durable, tell_prompts)
        host.version = version
        if durable is not None or profile_tools(self.app):
            host.restoring = tasks.spawn(self._begin(host, durable), "gateway-restore")
        tasks.spawn(self._expose(host), "gateway-expose-start")
        return host

    async def _expose(self, host: Host) -> None:
        """Measure what every tool costs (`--expose`) once the first host's roots are known: the servers
        a measure connects get them from their start."""
        await self.forwarding.ready(host)
        self.exposing.start()

    async def _begin(self, host: Host, durable: DurableSession | None) -> None:
        """A new host's first tools: the durable session's, then its profile's (`--profile`), so that its
        first `tools/list` has them."""
        if durable is not None:
            await self._restore(host, durable)
        if profile_tools(self.app):
            await self.forwarding.ready(host)
            await self.app.profiles.start(host.session)
            for problem in self.app.configuration.profile_left_out:
                log.warning("gateway profile: %s", one_line(problem.message))
            self.hosts.changed(host)

    async def _restore(self, host: Host, durable: DurableSession) -> None:
        """The durable session's saved tools, active again once the host's roots are known
        (`Activation.restore`: a tool changed since is not)."""
        saved = durable.load()
        if not saved:
            return
        await self.forwarding.ready(host)
        lost = await self.app.activation.restore(host.session, saved, digest, "gateway")
        if lost:
            log.warning("gateway session %s: not restored: %s", durable.name, one_line(", ".join(lost)))
        self.hosts.changed(host)

    async def _restored(self, host: Host) -> None:
        """Wait (a while) for a durable session's tools, so a host listing once at start sees them."""
        if host.restoring is not None and not host.restoring.done():
            await asyncio.wait({host.restoring}, timeout=RESTORE_WAIT_S)

    async def _tell_modern(self) -> None:
        await self._bus.publish(ToolsListChanged())

    async def _tell_modern_prompts(self) -> None:
        await self._bus.publish(PromptsListChanged())

    def _prompts_changed(self) -> None:
        for host in self.hosts:
            self.hosts.prompts_changed(host)
        if self._modern is None:  # a 2026-07-28 host listening before its first request made it a host
            tasks.spawn(deliver(self._tell_modern_prompts, "prompts/list_changed"), "gateway-prompts-changed")

    # -- tools ------------------------------------------------------------------------------

    def _native(self, host: Host, tool: ActiveTool, with_apps: bool = False) -> dict[str, Any] | None:
        return self._entry(host, tool.server, tool.descriptor, with_apps)

    def _entry(self, host: Host, server: str, descriptor: dict[str, Any], with_apps: bool) -> dict[str, Any] | None:
        name = host.native_name(server, descriptor["name"])
        meta = apps.tool_meta(server, descriptor) if with_apps else None
        return entries.tool_entry(name, server, descriptor, host.version, meta)

    def tools_of(self, host: Host, with_apps: bool = False, exposed: Exposed | None = None) -> list[dict[str, Any]]:
        """`mcp_tools` and `mcp_call`, then in native mode the host's active tools, then the `exposed` tools
        not active (`--expose`) (with their MCP Apps `_meta.ui` when `with_apps`: the host declared the extension)."""
        tools = texts.opening_tools(self.app.model_tool, self.mode, bool(exposed))
        if self.mode == "proxy":
            return tools
        active = self.app.sessions.active(host.session)
        natives = [self._native(host, t, with_apps) for t in active.values()]
        natives += [
            self._entry(host, server, descriptor, with_apps)
            for tool_id, (server, descriptor, _) in (exposed or {}).items()
            if tool_id not in active
        ]
        return tools + [entry for entry in natives if entry is not None]

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> Any:
        self.app.ensure_loaded()
        host = await self._host(ctx)
        await self._restored(host)
        await self.exposing.ready(RESTORE_WAIT_S)
        host.exposed = self.exposing.tools()
        listed = self.tools_of(host, apps.declares(ctx), host.exposed)
        host.listed()
        return _result(ctx, {"tools": listed})

    async def _call_tool(self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> Any:
        # Not a row of the operation table: it marks its client as `invoke` does, for its servers' questions.
        with acting(self.app.client):
            return _result(ctx, await self._answer_call(ctx, params))

    async def _answer_call(self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> Any:
        host = await self._host(ctx)
        await self._restored(host)
        arguments = dict(params.arguments or {})
        if params.name == model_tool.NAME:
            async with self.forwarding.call(ctx, host, model_tool_servers(arguments)):
                return await self._model_tool(host, arguments)
        if params.name == model_tool.CALL_NAME:
            tool_id = arguments.get("id")
            given = arguments.get("arguments", {})
            if not isinstance(tool_id, str) or not isinstance(given, dict) or set(arguments) - {"id", "arguments"}:
                why = "mcp_call takes {id: string, arguments: object}."
                return _refusal("invalid_params", why)
            refused = await self._activate_exposed(host, tool_id, self.exposing.tools())
            return refused or await self._forwarded_call(ctx, host, tool_id, given)
        tool_id = host.tool_id(params.name) if self.mode == "native" else None
        if tool_id is None and (named := host.as_id(params.name, self.app.registry.names())) in host.dropped:
            return _refusal(
                "tool_not_active", refusals.gone(self.app, host, named, "tool_not_active", self._natively(host))
            )
        if tool_id is None and host.apps and apps.declares(ctx):
            called = await self._app_call(ctx, host, params.name, arguments)
            if called is not None:
                return called
        if tool_id is None:
            return _refusal("tool_not_found", refusals.unknown(self.app, host, params.name, self._natively(host)))
        refused = await self._activate_exposed(host, tool_id, host.exposed)
        return refused or await self._forwarded_call(ctx, host, tool_id, arguments)

    async def _activate_exposed(self, host: Host, tool_id: str, exposed: Exposed) -> dict[str, Any] | None:
        """A tool listed because every tool is (`--expose`), called before anything activated it: activated
        now, as the definition `exposed` has (the host listed it so), else refused as changed. None: the
        call goes on (also for a tool that is active, or not exposed: the call says what is wrong)."""
        listed = exposed.get(tool_id)
        if listed is None or self.app.sessions.get(host.session, tool_id) is not None:
            return None
        done = await self.app.activation.activate((tool_id,), host.session, self.wording(host))
        active = self.app.sessions.get(host.session, tool_id)
        if active is None:
            return _text(done["text"], True)
        if active.canonical != listed[2]:
            self.app.sessions.deactivate(host.session, [tool_id], "tool changed")  # the host is told (`Hosts`)
            why = refusals.gone(self.app, host, tool_id, "tool_changed", self._natively(host))
            return _refusal("tool_changed", why, listed[0])
        self.hosts.changed(host, tell=False)  # listed already: a durable session keeps it, nothing to tell
        return None

    async def _app_call(self, ctx: Ctx, host: Host, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """An app's call back to its server, by the server's own tool name (`gateway/apps.py`): no session,
        no activation, never in the background (the app waits for it); None when no app it opened has it."""
        try:
            target = await apps.route(self.app.apps, host.apps, name)
            if target is None:
                return None
            async with self.forwarding.call(ctx, host, {target.server}):
                result = await self.app.apps.call_tool(target.server, target.uri, target.tool, arguments)
        except SidecarError as exc:
            return _failure(exc, self.wording(host))
        return entries.call_answer(result, host.version, False)

    async def _forwarded_call(
        self, ctx: ServerRequestContext[Any, Any], host: Host, tool_id: str, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        servers = {ref.server for ref in activation.tool_refs(tool_id, self.app.registry.names())}
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS or not follows_tasks(ctx.meta):
            return await self._background_call(ctx, host, tool_id, arguments, servers)

        async def work(progress: TaskProgress) -> dict[str, Any]:  # a job of its own: the context (`acting`) is copied
            async with self.forwarding.call(ctx, host, servers) as call:
                return await self._call(host, tool_id, arguments, progress.around(call.progress))

        return await self.host_tasks.run(work)

    # -- tasks (2026-07-28's extension) -------------------------------------------------------

    async def _get_task(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        _modern_only(ctx)
        task = self.host_tasks.get(params.task_id)
        if task is None:
            raise MCPError(INVALID_PARAMS, "Task not found")
        return task

    async def _update_task(self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams) -> dict[str, Any]:
        """No question is ever outstanding (a 2026-07-28 host is asked none): responses are ignored."""
        _modern_only(ctx)
        if not self.host_tasks.known(params.task_id):
            raise MCPError(INVALID_PARAMS, "Task not found")
        return {"resultType": "complete"}

    async def _cancel_task(self, ctx: ServerRequestContext[Any, Any], params: TaskIdParams) -> dict[str, Any]:
        _modern_only(ctx)
        if not self.host_tasks.cancel(params.task_id):
            raise MCPError(INVALID_PARAMS, "Task not found")
        return {"resultType": "complete"}

    def _natively(self, host: Host) -> bool:
        """Whether the host's model calls activated tools by their native names: native mode, and a
        host that lists its tools again when told (else `mcp_call`)."""
        return self.mode == "native" and host.lists != "never"

    def wording(self, host: Host) -> Wording:
        """How this host's model calls what it loaded, and how its person runs a command or a prompt."""
        if not self._natively(host):
            return Wording(None, COMMAND, self.prompts.command, PROXY_HINT, PROXY_LOADED)

        def call_name(tool_id: str) -> str:
            ref = activation.parse_tool_id(tool_id, self.app.registry.names())
            return host.native_name(ref.server, ref.tool) if ref is not None else tool_id

        return Wording(call_name, COMMAND, self.prompts.command, NATIVE_HINT, NATIVE_LOADED)

    async def _model_tool(self, host: Host, arguments: dict[str, Any]) -> dict[str, Any]:
        before = set(self.app.sessions.active(host.session))
        if isinstance(arguments.get("activate"), list):
            arguments["activate"] = [host.as_id(i, self.app.registry.names()) for i in arguments["activate"]]
        wording = self.wording(host)
        result = await self.app.model_tool.invoke(arguments, host.session, wording=wording)
        if set(self.app.sessions.active(host.session)) == before:
            return _text(result["text"], result["isError"])
        since = host.listings
        self.hosts.changed(host)
        if "activate" in arguments:
            self.app.activation.connect_soon(cast("ActivateResult", result["details"]))
        if "activate" not in arguments or self.mode != "native":
            return _text(result["text"], result["isError"])
        if host.lists == "before" and await self._relisted(host, since):
            return _text(result["text"], result["isError"])
        host.watch_lists(since)  # what it does after this answer decides how the next one is worded
        if host.lists == "after":
            return _text(result["text"], result["isError"])
        # Its model's next request would not carry the tools the answer names: say how to call them
        # instead (`mcp_call` is in every host's list), and go on saying so unless it lists them after all.
        host.lists = "never"
        done = cast("ActivateResult", result["details"])
        loaded = [r["id"] for r in done["results"] if r["status"] != "not loaded"]
        log.info("gateway: host %s did not list its tools again within %.1f s", host.session, self.relist_wait_s)
        told = replace(self.wording(host), call_hint=texts.not_listed(loaded))
        text = activation_text.render_result(done, told)
        return _text(text, result["isError"])

    async def _relisted(self, host: Host, since: int) -> bool:
        """Whether the host listed its tools again (told just now) within `relist_wait_s`, and then had
        RELIST_SETTLE_S to take the new list in (Gemini CLI registers it after its answer)."""
        if self.relist_wait_s <= 0:
            return True
        if not await host.listed_since(since, self.relist_wait_s):
            return False
        await asyncio.sleep(RELIST_SETTLE_S)
        return True

    async def _background_call(
        self,
        ctx: ServerRequestContext[Any, Any],
        host: Host,
        tool_id: str,
        arguments: dict[str, Any],
        servers: set[str],
    ) -> dict[str, Any]:
        """A call that holds the host's turn up to the gateway's threshold (`--background-after`), then goes
        on in the background: the host's model is told the call id to fetch its result with `mcp_tools`."""
        forward: list[ProgressSink | None] = [None]

        def relay(value: float | None, total: float | None, message: str | None) -> None:
            if (sink := forward[0]) is not None:
                sink(value, total, message)

        async def work(progress: ProgressSink | None) -> CallToolResult:  # a job: the context (`acting`) is copied
            async with self.forwarding.call(ctx, host, servers) as call:
                forward[0] = call.progress
                return await self.app.activation.call_listed_tool(tool_id, arguments, host.session, progress)

        try:
            ran = await self.app.background.run(tool_id, host.session, work, relay)
        except SidecarError as exc:
            return self._refused(host, tool_id, exc)
        if isinstance(ran, BackgroundCall):
            return entries.background_answer(
                model_text.background_text(ran.view()), self._declares_output(host, tool_id)
            )
        return self._answer(host, tool_id, ran)

    def _refused(self, host: Host, tool_id: str, exc: SidecarError) -> dict[str, Any]:
        code = exc.diagnostic.code
        if code in ("tool_changed", "tool_not_active"):
            return _refusal(
                code, refusals.gone(self.app, host, tool_id, code, self._natively(host)), exc.diagnostic.server
            )
        return _failure(exc, self.wording(host))

    async def _call(
        self, host: Host, tool_id: str, arguments: dict[str, Any], progress: ProgressSink | None = None
    ) -> dict[str, Any]:
        try:
            result = await self.app.activation.call_listed_tool(tool_id, arguments, host.session, progress)
        except SidecarError as exc:
            return self._refused(host, tool_id, exc)
        return self._answer(host, tool_id, result)

    def _answer(self, host: Host, tool_id: str, result: CallToolResult) -> dict[str, Any]:
        """The call's result for the host: sanitised, and valid against what its list declared."""
        return entries.call_answer(result, host.version, self._declares_output(host, tool_id))

    def _declares_output(self, host: Host, tool_id: str) -> bool:
        """Whether the host's list declared the tool with an output schema (native mode)."""
        active = self.app.sessions.get(host.session, tool_id)
        listed = self._native(host, active) if active is not None and self.mode == "native" else None
        return listed is not None and "outputSchema" in listed

    # -- prompts ----------------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> Any:
        self.app.ensure_loaded()
        host = await self._host(ctx)
        return _result(ctx, {"prompts": await self.prompts.listed(host.version)})

    async def _get_prompt(self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams) -> Any:
        host = await self._host(ctx)
        target = await self.prompts.target(params.name, host.version)
        if target is None:
            raise MCPError(INVALID_PARAMS, f"No prompt named {one_line(params.name)!r}: list the prompts again.")
        server, name = target
        try:
            async with self.forwarding.call(ctx, host, {server}):
                got = await self.prompts.get(server, name, dict(params.arguments or {}), host.session)
        except SidecarError as exc:
            raise MCPError(INVALID_PARAMS, one_line(exc.diagnostic.render())) from None
        return _result(ctx, got)

    # -- resources (`--resources`) ------------------------------------------------------------

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> Any:
        await self._host(ctx)
        return _result(ctx, {"resources": await self.resources.listed()})

    async def _list_resource_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> Any:
        await self._host(ctx)
        return _result(ctx, {"resourceTemplates": await self.resources.templates()})

    async def _read_resource(self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams) -> Any:
        host = await self._host(ctx)
        if params.uri.startswith(SCHEME):  # an MCP App (`gateway/apps.py`), with or without --resources
            if not apps.declares(ctx):
                raise MCPError(apps.RESOURCE_NOT_FOUND, apps.NOT_DECLARED, {"uri": params.uri})
            found = apps.split(params.uri, self.app.registry.names())
            if found is None:
                why = "Not an app of this gateway: its app URIs are ui://<server>/<the rest of the server's URI>."
                raise MCPError(apps.RESOURCE_NOT_FOUND, why, {"uri": params.uri})
            async with self.forwarding.call(ctx, host, {found[0]}):
                read = await apps.read(self.app.apps, found[0], found[1], params.uri)
            host.apps[found[0]] = found[1]  # its app may now call its server's tools (`_app_call`)
            return _fresh(ctx, read)
        server, uri = self.resources.target(params.uri)
        async with self.forwarding.call(ctx, host, {server}):
            return _fresh(ctx, await self.resources.read(server, uri, params.uri))


def _modern_only(ctx: ServerRequestContext[Any, Any]) -> None:
    """The tasks extension is not defined on 2025-11-25 (whose own tasks the gateway does not serve)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        raise MCPError(METHOD_NOT_FOUND, "Method not found")


def _fresh(ctx: ServerRequestContext[Any, Any], read: dict[str, Any]) -> dict[str, Any]:
    """A `resources/read` result: on 2026-07-28 it must say how long it stays fresh (never, here: every
    read is fresh), or the SDK's result sieve answers the host a read without its contents."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        read.update(ttlMs=0, cacheScope="private")
    return _result(ctx, read)


def _result(ctx: ServerRequestContext[Any, Any], result: dict[str, Any]) -> dict[str, Any]:
    """A result as the request's era wants it: 2026-07-28 results say they are complete."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        result.setdefault("resultType", "complete")  # or "task" (host_tasks.py)
    return result
