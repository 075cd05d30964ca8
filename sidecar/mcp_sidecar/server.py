"""The pygls server: lifecycle, the handler table, and the stdio loop."""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)
from pygls.uris import to_fs_path

from mcp_sidecar import __version__, heavy, tasks
from mcp_sidecar.catalog.context_budget import MAX_BUDGET
from mcp_sidecar.config import budget
from mcp_sidecar.config.budget import Budget
from mcp_sidecar.connections.client_hooks import ClientOffer
from mcp_sidecar.events import AppCallAsked, ElicitationAsked, SamplingAsked
from mcp_sidecar.handlers.registry import request_handlers
from mcp_sidecar.protocol import methods
from mcp_sidecar.pygls_shim import pending_requests
from mcp_sidecar.services import background
from mcp_sidecar.services.app import Sidecar
from mcp_sidecar.services.user_state import UserState

log = logging.getLogger(__name__)

EOF_DRAIN_SECONDS = 60.0
WARM_UP_DELAY_SECONDS = 1.0
MAX_BACKGROUND_AFTER_S = 3600


def dict_converter() -> Any:
    """Keep custom params and results as plain dicts.

    pygls' default converter turns params of unknown methods into namedtuples (renaming
    `_meta`, `$schema`, ...). Our protocol types parse dicts themselves.
    """
    converter = default_converter()
    for message_type in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(message_type, _plain_message)
    return converter


@functools.cache
def shared_converter() -> Any:
    """One `dict_converter` for every client of this process: building one is most of the cost of a
    new client's server (about 30 ms), and it holds no client's state."""
    return dict_converter()


def _plain_message(obj: dict[str, Any], cls: Any) -> Any:
    # JSON-RPC 2.0 lets a message omit `params`; members the type lacks are ignored.
    return cls(**{field.name: obj.get(field.name) for field in attrs.fields(cls)})


class SidecarServer(LanguageServer):
    fast_handlers: dict[str, Any] = {}  # noqa: RUF012 - replaced per instance in create_server

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Never echo an exception to the client as a message; the log has its type.
        log.error("server error (%s): %s", getattr(source, "__name__", source), type(error).__name__)


def _workspace_from(params: lsp.InitializeParams) -> Path | None:
    uri = None
    if params.workspace_folders:
        uri = params.workspace_folders[0].uri
    elif params.root_uri:
        uri = params.root_uri
    if uri:
        path = to_fs_path(uri)
        return Path(path) if path else None
    if params.root_path:
        return Path(params.root_path)
    return None


def _notify(server: SidecarServer, method: str, params: Mapping[str, Any]) -> None:
    if method == lsp.PROGRESS:
        # An LSP notification pygls types: it sends ProgressParams, not a dict.
        server.protocol.notify(method, lsp.ProgressParams(token=params["token"], value=params["value"]))
        return
    server.protocol.notify(method, params)


def _offer_client_side(app: Sidecar, params: lsp.InitializeParams) -> None:
    """What the editor can render for servers (`mcpCapabilities`), and its folders as roots."""
    options = params.initialization_options
    app.offers.current = ClientOffer.from_capabilities(
        options.get("mcpCapabilities") if isinstance(options, dict) else None
    )
    folders = _folders_from(params)
    if folders is not None:
        app.roots.set_folders(folders)


def _folders_from(params: lsp.InitializeParams) -> list[Path] | None:
    """Every workspace folder the editor named, as paths; None when it named none."""
    if not params.workspace_folders:
        return None
    folders = [to_fs_path(folder.uri) for folder in params.workspace_folders]
    return [Path(folder) for folder in folders if folder]


def _bool_option(options: Any, name: str, default: bool) -> bool:
    if not isinstance(options, dict) or name not in options:
        return default
    value = options[name]
    if isinstance(value, bool):
        return value
    log.warning("initializationOptions.%s must be a boolean; using %s", name, default)
    return default


def _background_after(options: Any) -> float | None:
    """`initializationOptions.backgroundAfterSeconds`: a call still running after this many seconds goes to
    the background (default two minutes); 0 or null: never."""
    if not isinstance(options, dict) or "backgroundAfterSeconds" not in options:
        return background.DEFAULT_AFTER_S
    value = options["backgroundAfterSeconds"]
    if value is None or (value == 0 and not isinstance(value, bool)):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= MAX_BACKGROUND_AFTER_S:
        return float(value)
    log.warning(
        "initializationOptions.backgroundAfterSeconds must be seconds from 0 to %d; using %g",
        MAX_BACKGROUND_AFTER_S,
        background.DEFAULT_AFTER_S,
    )
    return background.DEFAULT_AFTER_S


def _session_budget(options: Any) -> Budget:
    """`initializationOptions.sessionBudget`: `{maxTools?, maxTokens?}`, each a whole number (0: no limit) or
    null (the config files' limit); a field that is neither is left to the files (logged)."""
    given = options.get("sessionBudget") if isinstance(options, dict) else None
    if given is None:
        return Budget()
    if not isinstance(given, dict):
        log.warning("initializationOptions.sessionBudget must be an object (maxTools, maxTokens); ignored")
        return Budget()
    values: dict[str, int | None] = {}
    for field, attribute in budget.FIELDS.items():
        value = given.get(field)
        wrong = budget.limit_problem(field, value, allow_zero=True) if value is not None else None
        if wrong is not None:
            log.warning("initializationOptions.sessionBudget.%s %s (0: no limit); the files' limit holds", field, wrong)
            value = None
        values[attribute] = value
    return Budget(**values)


def _chat_budget(options: Any) -> int | None:
    """`initializationOptions.chatExposeBudget`: while every tool costs at most this many tokens, the chat's
    `mcp_call` calls any tool without an activation; absent or null: never (the default)."""
    value = options.get("chatExposeBudget") if isinstance(options, dict) else None
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_BUDGET:
        return value
    log.warning("initializationOptions.chatExposeBudget must be tokens from 0 to %d, or null; using null", MAX_BUDGET)
    return None


def _choose_profile(app: Sidecar, options: Any) -> None:
    """`initializationOptions.profile`: a profile's name (null: none); anything else is none (logged).
    Without it, the command line's `--profile` stays."""
    if not isinstance(options, dict) or "profile" not in options:
        return
    value = options["profile"]
    if value is not None and not (isinstance(value, str) and value):
        log.warning("initializationOptions.profile must be a profile's name; no profile is used")
        value = None
    app.profiles.choose_at_start(value)


def _start_profile(app: Sidecar) -> None:
    """The profile the editor chose at `initialize`: its tools start active in the editor's session (the
    editor asks `mcp/activeTools`; `mcp/status` names the profile)."""
    if app.configuration.profile_name is not None:
        tasks.spawn(app.profiles.start(methods.DEFAULT_SESSION), "profile-start")


def create_server(
    app_defaults: dict[str, Any] | None = None,
    user: UserState | None = None,
    initialized_hook: Callable[[Sidecar], None] = lambda app: None,
) -> tuple[SidecarServer, Sidecar]:
    """One client's LSP server and its `Sidecar`; `user`, the engine's shared state, when it has one;
    `initialized_hook`, called once the client said `initialized` (the engine restores sessions then)."""
    server = SidecarServer("mcp-sidecar", __version__, converter_factory=shared_converter)
    defaults = app_defaults or {}

    def notify(method: str, params: Mapping[str, Any]) -> None:
        _notify(server, method, params)

    app = Sidecar(
        notify,
        workspace=defaults.get("workspace"),
        trusted=bool(defaults.get("trusted", False)),
        interactive=bool(defaults.get("interactive", False)),
        user=user,
        environ=defaults.get("environ"),
    )

    app.profiles.choose_at_start(defaults.get("profile"))

    @server.feature(lsp.INITIALIZE)
    def on_initialize(params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if options is not None and not isinstance(options, dict):
            log.warning("initializationOptions must be an object; using defaults")
        app.configuration.configure(
            workspace=_workspace_from(params) or app.configuration.workspace,
            trusted=_bool_option(options, "trustedWorkspace", app.configuration.trusted),
            interactive=_bool_option(options, "interactive", True),
            granted=_bool_option(options, "trustGranted", False),
        )
        _offer_client_side(app, params)
        app.background.after = _background_after(options)
        app.exposure.chat_budget = _chat_budget(options)
        _choose_profile(app, options)
        app.configuration.budget_setting = _session_budget(options)
        # numpy and the embedding model (about 60 ms) now, when the disk cache holds catalogs a
        # first discovery would rank; otherwise on the first discovery (they cost memory).
        app.catalogs.load_model_if_cached()
        window = params.capabilities.window if params.capabilities else None
        if window is not None and window.show_document is not None and window.show_document.support:
            app.auth.open_external = _show_document
        else:
            app.auth.open_external = None

    async def _show_document(url: str) -> bool:
        # OAuth login: the editor opens the authorization URL in the user's browser.
        result = await asyncio.wait_for(
            server.window_show_document_async(lsp.ShowDocumentParams(uri=url, external=True)), 30
        )
        success = result.get("success") if isinstance(result, dict) else getattr(result, "success", False)
        return bool(success)

    _serve_client_side(server, app)

    @server.feature(lsp.INITIALIZED)
    def on_initialized(params: Any) -> None:
        # The SDK import costs seconds; start it soon, in its owner's thread, not on first use.
        tasks.spawn(_warm_sdk(), "warm-imports")
        initialized_hook(app)
        _start_profile(app)

    @server.feature(lsp.SHUTDOWN)
    async def on_shutdown(params: Any) -> None:
        await app.shutdown()

    @server.command(methods.EXECUTE_COMMAND)
    async def on_execute_command(*arguments: Any) -> Any:
        # Generic LSP clients run `/mcp` lines here: the same handler as `mcp/command`.
        return await server.fast_handlers[methods.COMMAND](_command_params(arguments))

    server.fast_handlers = request_handlers(app)
    for method, handler in server.fast_handlers.items():
        server.feature(method)(handler)
    return server, app


def _serve_client_side(server: SidecarServer, app: Sidecar) -> None:
    """Workspace folders as roots, and the servers' questions as requests to the editor."""

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders_changed(params: Any) -> None:
        # pygls' own handler has applied the change to its workspace already.
        folders = [to_fs_path(folder.uri) for folder in server.workspace.folders.values()]
        app.roots.set_folders([Path(folder) for folder in folders if folder])

    ids = itertools.count(1)

    def ask_editor(method: str) -> Any:
        async def ask(request: ElicitationAsked | SamplingAsked | AppCallAsked) -> Any:
            # A server's question, as a request to the editor; abandoning it cancels it there too.
            msg_id = f"sidecar-{next(ids)}"
            try:
                params = {**request.params, "requestId": msg_id}
                return await server.protocol.send_request_async(method, params, msg_id=msg_id)
            except asyncio.CancelledError:
                server.protocol.notify(methods.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
                raise

        return ask

    app.hub.answer(ElicitationAsked, ask_editor(methods.ELICIT))
    app.hub.answer(SamplingAsked, ask_editor(methods.SAMPLE))
    app.hub.answer(AppCallAsked, ask_editor(methods.APP_CONFIRM_CALL))


async def _warm_sdk() -> None:
    # Let the editor's first requests (often a discovery from the disk cache) run before the
    # import competes with them for the interpreter; a connection starts it at once if it must.
    # Every path that needs the SDK awaits this same load (`heavy.SDK`), never imports beside it.
    await asyncio.sleep(WARM_UP_DELAY_SECONDS)
    await heavy.SDK.ready()


def _command_params(arguments: tuple[Any, ...]) -> Any:
    """`arguments: [line]` or `[{line}]`; anything else fails `mcp/command`'s own validation."""
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        return arguments[0]
    return {"line": arguments[0] if len(arguments) == 1 else None}


async def _run(server: SidecarServer, app: Sidecar) -> None:
    from mcp_sidecar.rpc_io import StdoutWriter

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    await run_client(server, app, reader, StdoutWriter(sys.stdout.buffer))


async def run_client(
    server: SidecarServer,
    app: Sidecar,
    reader: asyncio.StreamReader,
    writer: Any,
    hung_up: Callable[[], bool] = lambda: False,
) -> None:
    """Serve one client's stream until its end of input: stdin here, or a front's socket in the engine.

    `writer` is pygls' (write, flush, close); `hung_up` tells, at the end of input, whether the client
    is gone for good (nobody left to read an answer) rather than only done asking.
    """
    from mcp_sidecar.rpc_io import serve

    server.protocol.set_writer(writer)
    try:
        await serve(reader, server.protocol, server.fast_handlers)
        pending = list(pending_requests(server.protocol))
        if pending and hung_up():
            # Nobody reads the answers: end the requests now (a call is cancelled at its server).
            for request in pending:
                request.cancel()
            await asyncio.wait(pending, timeout=EOF_DRAIN_SECONDS)
        elif pending:
            # End of input: answer what was already asked (a script may pipe requests and close).
            await asyncio.wait(pending, timeout=EOF_DRAIN_SECONDS)
    finally:
        # End of input without `exit`: still close every server process cleanly.
        try:
            await app.shutdown()
        finally:
            writer.flush()


def serve_stdio(app_defaults: dict[str, Any] | None = None) -> int:
    server, app = create_server(app_defaults)
    try:
        asyncio.run(_run(server, app))
    except SystemExit as exc:  # pygls' `exit` handler
        return int(exc.code or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        log.error("the client closed the connection")
        return 1
    return 0
