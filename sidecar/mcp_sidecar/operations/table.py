"""Every operation, one row each: the JSON-RPC handlers, the `/mcp` verbs, the CLI's subcommands
and the gateway are built from these rows (see `operations/row.py` for the row type).

Each row's `call` is the one place its feature is called; a front adds nothing but its params
and its text. Adding a read-only method: its params and result types, one row here, the feature
method, its `docs/protocol.md` entry and the two editors' protocol files (CONTRIBUTING.md).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp_sidecar.operations import args
from mcp_sidecar.operations.args import CLI_SESSION, DEFAULT, ToolsParams
from mcp_sidecar.operations.row import Cli, Command, Operation, by_method, invoke, result_text
from mcp_sidecar.operations.runner import run_line, runners
from mcp_sidecar.output import command_text, model_text, render, spill
from mcp_sidecar.protocol import config_params, methods, params
from mcp_sidecar.protocol.config_params import (
    ConfigAddParams,
    ConfigRemoveParams,
    LoginParams,
    SetEnabledParams,
)
from mcp_sidecar.protocol.errors import Diagnostic, SidecarError
from mcp_sidecar.protocol.params import (
    ActivateParams,
    CallIdParams,
    CallToolParams,
    CompleteParams,
    PreviewIdParams,
    PromptPreviewParams,
    ResourceParams,
    ServerParams,
)
from mcp_sidecar.services import (
    activation,
    config_edits,
)
from mcp_sidecar.services.progress import work_done

if TYPE_CHECKING:
    from argparse import Namespace
    from collections.abc import Awaitable

    from mcp_sidecar.protocol.results import (
        BackgroundCallView,
        CallsResultResult,
        CallToolResult,
        CommandResult,
        ConfigAddDryRunResult,
        ConfigAddResult,
        StatusRow,
    )
    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.background import ProgressSink


# The calls that are more than one feature call.


async def _reconnected(app: Sidecar, server: str) -> StatusRow:
    return app.status.row(await app.lifecycle.reconnect(server))


async def _call_tool(app: Sidecar, p: CallToolParams) -> CallToolResult:
    """`mcp/callTool`: progress on the client's work-done token, and a model's wording when `forModel`;
    past the client's threshold, the call goes on in the background (`mcp/calls/*`)."""

    activate = p.activate or (p.for_model and await _every_callable(app, p))

    def call(progress: ProgressSink | None) -> Awaitable[CallToolResult]:
        if activate:
            return app.activation.activate_and_call(p.id, p.arguments, p.session, progress)
        return app.activation.call_tool(p.id, p.arguments, p.session, progress)

    try:
        with work_done(app.notify, p.work_done_token, p.id) as progress:
            if p.background:
                ran = await app.background.run(p.id, p.session, call, progress)
                result = ran if isinstance(ran, dict) else _gone_to_background(app, ran.view())
            else:
                result = await call(progress)
        if p.for_model:
            result["text"] = model_text.call_text(result)
        return result
    except SidecarError as exc:
        if p.for_model:
            exc.diagnostic = model_text.for_model(exc.diagnostic)
        raise


async def _every_callable(app: Sidecar, p: CallToolParams) -> bool:
    """A chat's `mcp_call` of a tool not active: activated first while every tool of the client's servers costs
    at most the client's chat budget (`initializationOptions.chatExposeBudget`; issue 34's rule, as the gateway's
    `--expose auto`)."""
    if app.sessions.get(p.session, p.id) is not None:
        return False
    return await app.exposure.chat_within() is not None


def _gone_to_background(app: Sidecar, call: BackgroundCallView) -> CallToolResult:
    ref = activation.parse_tool_id(call["tool"], app.registry.names())
    text = model_text.background_text(call)
    return {
        "id": call["tool"],
        "server": ref.server if ref is not None else "",
        "tool": ref.tool if ref is not None else call["tool"],
        "isError": False,
        "content": [{"type": "text", "text": text}],
        "background": call,
    }


async def _call_result(app: Sidecar, p: CallIdParams) -> CallsResultResult:
    view, outcome = await app.background.result(p.call_id, p.wait)
    if outcome is None:
        return {"call": view}
    if isinstance(outcome, Diagnostic):
        return {"call": view, "diagnostic": outcome.to_json()}
    return {"call": view, "result": outcome}


async def _add(app: Sidecar, p: ConfigAddParams) -> ConfigAddResult | ConfigAddDryRunResult:
    if p.dry_run:
        return await app.config_edits.add_dry_run(p.scope, p.server, p.definition, p.target, p.replace)
    definition = p.definition if p.target is None else config_edits.definition_from_target(p.target, "add")
    assert definition is not None
    return await app.config_edits.add(p.scope, p.server, definition, p.replace)


def run_command(app: Sidecar, line: str) -> Awaitable[CommandResult]:
    """One `/mcp` line (`mcp/command`, the CLI's `run`)."""
    return run_line(app, line, RUNNERS)


async def _cli_prompt(app: Sidecar, namespace: Namespace, previewed: Awaitable[Any]) -> Any:
    """The CLI's `prompt --use`: the accepted snapshot instead of the preview."""
    result = await previewed
    return await invoke(PROMPT_USE, app, PreviewIdParams(result["previewId"])) if namespace.use else result


_SERVER_ROWS = (
    Operation(
        methods.STATUS,
        "status",
        params.parse_session,
        call=lambda app, p: app.status.status(),
        text=render.status_matrix,
        command=Command(("list",), lambda c: DEFAULT),
        cli=Cli(
            "status",
            lambda a: DEFAULT,
            text=lambda r: render.status_matrix(r, f"mcp-sidecar run '{render.ADD_EXAMPLE}'"),
        ),
    ),
    Operation(
        methods.SERVER_GET,
        "get",
        params.parse_server,
        call=lambda app, p: app.status.get_server(p.server),
        text=command_text.server_details,
        command=Command(("get",), lambda c: ServerParams(args.server(c))),
        cli=Cli("get", lambda a: ServerParams(a.server)),
    ),
    Operation(
        methods.SERVER_TOOLS,
        "tools",
        args.parse_tools,
        call=lambda app, p: (
            app.status.server_tool(p.server, p.tool) if p.tool is not None else app.status.server_tools(p.server)
        ),
        text=command_text.tool_or_tools,
        command=Command(("tools",), lambda c: ToolsParams(args.server(c), c.rest[0] if c.rest else None)),
        cli=Cli("tools", lambda a: ToolsParams(a.server, a.tool)),
    ),
    Operation(
        methods.SERVER_RECONNECT,
        "reconnect",
        params.parse_server,
        call=lambda app, p: _reconnected(app, p.server),
        text=command_text.reconnected,
        command=Command(("reconnect",), lambda c: ServerParams(args.server(c))),
    ),
    Operation(
        methods.SERVER_LOGS,
        "logs",
        params.parse_server,
        call=lambda app, p: app.status.server_logs(p.server),
        text=command_text.log_lines,
        cli=Cli("logs", lambda a: ServerParams(a.server)),
    ),
    Operation(
        methods.SERVER_REFRESH,
        "refresh",
        params.parse_server,
        call=lambda app, p: app.lifecycle.refresh(p.server),
        text=command_text.refreshed,
        command=Command(("refresh",), lambda c: ServerParams(args.server(c))),
        cli=Cli("refresh", lambda a: ServerParams(a.server), text=command_text.refresh_counts),
    ),
)

_TOOL_ROWS = (
    Operation(
        methods.ACTIVATE,
        "activate",
        params.parse_activate,
        call=lambda app, p: app.activation.activate(p.ids, p.session),
        text=result_text,
        cli=Cli(
            "activate", lambda a: ActivateParams(tuple(dict.fromkeys(a.ids)), CLI_SESSION), failed=args.nothing_loaded
        ),
    ),
    Operation(
        methods.ACTIVE_TOOLS,
        "activeTools",
        params.parse_session,
        call=lambda app, p: app.activation.active_tools(p.session),
    ),
    Operation(
        methods.CALL_TOOL,
        "call",
        params.parse_call_tool,
        call=_call_tool,
        cli=Cli(
            "call",
            lambda a: CallToolParams(a.id, args.json_object(a.arguments) or {}, CLI_SESSION, activate=True),
            usage=args.call_usage,
            text=command_text.call_or_activation,
            failed=lambda r: "activation" in r,  # a tool's own error is its result (stdout)
            finish=args.cli_call,
        ),
    ),
    Operation(
        methods.DISCOVER,
        "discover",
        params.parse_discover,
        call=lambda app, p: app.discovery.discover(p.query, p.kind, p.server, p.limit, p.session),
        text=result_text,
        cli=Cli(
            "discover",
            lambda a: replace(params.parse_discover("discover", args.discover_request(a)), session=CLI_SESSION),
        ),
    ),
    Operation(
        methods.MODEL_TOOL_DEFINITION,
        "modelTool",
        params.parse_session,
        call=lambda app, p: app.model_tool.definition(),
    ),
    Operation(
        methods.MODEL_TOOL_INVOKE,
        "mcp_tools",
        params.parse_model_tool,
        call=lambda app, p: app.model_tool.invoke(p.arguments, p.session, include_directory=p.include_directory),
    ),
    Operation(
        methods.CALLS_LIST,
        "calls",
        params.parse_calls,
        call=lambda app, p: {"calls": app.background.list(p.session)},
    ),
    Operation(
        methods.CALLS_CANCEL,
        "calls cancel",
        params.parse_call_id,
        call=lambda app, p: app.background.cancel(p.call_id),
    ),
    Operation(
        methods.CALLS_RESULT,
        "calls result",
        params.parse_call_id,
        call=_call_result,
    ),
    Operation(
        methods.PROFILE,
        "profile",
        params.parse_profile,
        call=lambda app, p: app.profiles.profile(p),
        text=result_text,
        command=Command(("profile",), args.profile_params),
    ),
    Operation(
        methods.SESSION_END,
        "session",
        params.parse_session_end,
        call=lambda app, p: app.model_tool.end_session(p),
    ),
)

_CONFIG_ROWS = (
    Operation(
        methods.COMMAND,
        "command",
        config_params.parse_command,
        call=lambda app, p: run_command(app, p.line),
    ),
    Operation(
        methods.COMMAND_SPEC,
        "commandSpec",
        config_params.parse_command_spec,
        call=lambda app, p: app.commands.command_spec(p),
    ),
    Operation(
        methods.CONFIG_ADD,
        "add",
        config_params.parse_config_add,
        call=_add,
        text=command_text.added,
        command=Command(("add",), lambda c: ConfigAddParams(args.scope(c), args.server(c), c.definition, c.replace)),
    ),
    Operation(
        methods.CONFIG_REMOVE,
        "remove",
        config_params.parse_config_remove,
        call=lambda app, p: app.config_edits.remove(p.scope, p.server),
        text=command_text.removed,
        command=Command(("remove",), lambda c: ConfigRemoveParams(args.scope(c), args.server(c))),
    ),
    Operation(
        methods.CONFIG_SET_ENABLED,
        "setEnabled",
        config_params.parse_set_enabled,
        call=lambda app, p: app.config_edits.set_enabled(p.server, p.enabled),
        text=command_text.toggled,
        command=Command(("enable", "disable"), lambda c: SetEnabledParams(args.server(c), c.name == "enable")),
    ),
    Operation(
        methods.CONFIG_RELOAD,
        "reload",
        params.parse_session,
        call=lambda app, p: app.config_edits.reload(),
        text=command_text.reload_summary,
        command=Command(("reload",), lambda c: DEFAULT),
    ),
    Operation(
        methods.CONFIG_IMPORT,
        "import",
        config_params.parse_config_import,
        call=lambda app, p: app.config_imports.import_servers(p.file, p.scope, p.select, p.confirm, p.replace),
        text=command_text.import_result,
        command=Command(("import",), args.import_params),
    ),
    Operation(
        methods.WORKSPACE_SET_TRUSTED,
        "setTrusted",
        config_params.parse_set_trusted,
        call=lambda app, p: app.config_edits.set_trusted(p),
    ),
    Operation(
        methods.WORKSPACE_APPROVE,
        "approve",
        config_params.parse_approve,
        call=lambda app, p: app.approvals.approve(p),
    ),
)


_AUTH_ROWS = (
    Operation(
        methods.AUTH_LOGIN,
        "login",
        config_params.parse_login,
        call=lambda app, p: app.auth.login(p.server, p.no_browser, p.approve_scopes),
        text=result_text,
        command=Command(("login",), lambda c: LoginParams(args.server(c), c.no_browser)),
    ),
    Operation(
        methods.AUTH_COMPLETE_LOGIN,
        "completeLogin",
        config_params.parse_complete_login,
        call=lambda app, p: app.auth.complete_login(p.login_id, p.callback_url),
    ),
    Operation(
        methods.AUTH_LOGOUT,
        "logout",
        config_params.parse_logout,
        call=lambda app, p: app.auth.logout(p),
        text=result_text,
        command=Command(("logout",), args.server),
    ),
)

READ = Operation(
    methods.READ,
    "read",
    params.parse_read,
    call=lambda app, p: app.reading.read(p.server, p.uri, p.template, p.arguments),
    text=result_text,
    cli=Cli("read", lambda a: params.parse_read("read", args.read_request(a)), usage=args.read_usage),
)

APP_RESOURCE = Operation(
    methods.APP_RESOURCE,
    "app",
    params.parse_resource,
    call=lambda app, p: app.apps.resource(p.server, p.uri),
)
APP_CALL_TOOL = Operation(
    methods.APP_CALL_TOOL,
    "app call",
    params.parse_app_call,
    call=lambda app, p: app.apps.call_tool(p.server, p.uri, p.name, p.arguments),
)
APP_OPEN = Operation(
    methods.APP_OPEN,
    "app page",
    params.parse_app_open,
    call=lambda app, p: app.app_pages.open(p.server, p.uri, p.tool_input, p.tool_result),
)

_RESOURCE_ROWS = (
    READ,
    APP_RESOURCE,
    APP_CALL_TOOL,
    APP_OPEN,
    Operation(
        methods.COMPLETE,
        "complete",
        params.parse_complete,
        call=lambda app, p: app.completion.complete(
            p.server, (args.completion_kind(p.kind), p.name), (p.argument_name, p.argument_value), p.arguments
        ),
        text=result_text,
        cli=Cli(
            "complete",
            lambda a: CompleteParams(a.server, "template", a.template, a.name, a.value, args.single_pairs(a.arg) or {}),
            usage=lambda a: args.single_pairs_usage(a.arg, "--arg takes NAME=VALUE, once per name"),
        ),
    ),
    Operation(
        methods.RESOURCE_SUBSCRIBE,
        "subscribe",
        params.parse_resource,
        call=lambda app, p: app.watches.subscribe(p.server, p.uri),
        text=command_text.subscribed,
        command=Command(("subscribe",), lambda c: ResourceParams(args.server(c), args.uri(c))),
    ),
    Operation(
        methods.RESOURCE_UNSUBSCRIBE,
        "unsubscribe",
        params.parse_resource,
        call=lambda app, p: app.watches.unsubscribe(p.server, p.uri),
        text=command_text.unsubscribed,
        command=Command(("unsubscribe",), lambda c: ResourceParams(args.server(c), args.uri(c))),
    ),
    Operation(
        methods.RESOURCE_SUBSCRIPTIONS,
        "subscriptions",
        params.parse_session,
        call=lambda app, p: app.watches.list(),
        text=command_text.subscriptions,
        command=Command(("subscriptions",), lambda c: DEFAULT),
    ),
    Operation(
        methods.SPILL_LIST,
        "spill",
        params.parse_session,
        call=lambda app, p: asyncio.to_thread(spill.list_files),
    ),
    Operation(
        methods.SPILL_CLEAN,
        "spill",
        params.parse_spill_clean,
        call=lambda app, p: asyncio.to_thread(spill.clean, p.older_than_days),
    ),
)

PROMPT_PREVIEW = Operation(
    methods.PROMPT_PREVIEW,
    "prompt",
    params.parse_prompt_preview,
    call=lambda app, p: app.prompts.preview(p.server, p.name, p.arguments, p.session),
    text=command_text.prompt_previewed,
    command=Command(
        ("prompt",),
        lambda c: PromptPreviewParams(args.server(c), c.rest[0], args.prompt_arguments(c), methods.DEFAULT_SESSION),
    ),
    cli=Cli(
        "prompt",
        lambda a: PromptPreviewParams(a.server, a.name, args.single_pairs(a.values) or {}, methods.DEFAULT_SESSION),
        usage=lambda a: args.single_pairs_usage(a.values, "prompt arguments are ARG=VALUE, once per name"),
        text=result_text,
        finish=_cli_prompt,
    ),
)

PROMPT_USE = Operation(
    methods.PROMPT_USE,
    "prompt use",
    params.parse_preview_id,
    call=lambda app, p: app.prompts.use(p.preview_id),
)

_PROMPT_ROWS = (
    PROMPT_PREVIEW,
    PROMPT_USE,
    Operation(
        methods.PROMPT_DISCARD,
        "prompt discard",
        params.parse_preview_id,
        call=lambda app, p: app.prompts.discard(p.preview_id),
    ),
)

ROWS: tuple[Operation[Any], ...] = (
    *_SERVER_ROWS,
    *_TOOL_ROWS,
    *_CONFIG_ROWS,
    *_AUTH_ROWS,
    *_RESOURCE_ROWS,
    *_PROMPT_ROWS,
)

RUNNERS = runners(ROWS)
"""The `/mcp` verbs (`mcp/command`, `workspace/executeCommand`, the CLI's `run`)."""

COMMAND = by_method(ROWS, methods.COMMAND)
CLI_ROWS: dict[str, Operation[Any]] = {row.cli.name: row for row in ROWS if row.cli is not None}
"""The headless subcommands that run a row."""
