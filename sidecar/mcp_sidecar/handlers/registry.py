"""Every request handler, one line of glue each: params → service → result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_sidecar.handlers.auth import auth_handlers
from mcp_sidecar.handlers.base import Handler, guarded
from mcp_sidecar.handlers.config import config_handlers
from mcp_sidecar.handlers.prompts import prompt_handlers
from mcp_sidecar.handlers.resources import resource_handlers
from mcp_sidecar.output import model_text
from mcp_sidecar.protocol import methods, params
from mcp_sidecar.protocol.errors import SidecarError
from mcp_sidecar.services.app import Sidecar
from mcp_sidecar.services.progress import work_done

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        ActivateResult,
        ActiveToolsResult,
        CallToolResult,
        DiscoverResult,
        ModelToolDefinition,
        ModelToolInvokeResult,
        ServerGetResult,
        ServerLogsResult,
        ServerRefreshResult,
        ServerToolsResult,
        SessionEndResult,
        StatusResult,
        StatusRow,
    )


def request_handlers(app: Sidecar) -> dict[str, Handler]:
    table: dict[str, Handler] = {
        **_server_handlers(app),
        **_tool_handlers(app),
        **_model_tool_handlers(app),
        **config_handlers(app),
        **auth_handlers(app),
        **resource_handlers(app),
        **prompt_handlers(app),
    }
    missing = set(methods.REQUESTS) - set(table)
    if missing:
        raise RuntimeError(f"no handler for {sorted(missing)}")
    return table


def _server_handlers(app: Sidecar) -> dict[str, Handler]:
    """The status matrix and one server's details, logs and connection."""

    @guarded("status")
    async def on_status(raw: Any) -> StatusResult:
        params.parse_session("status", raw)  # validates that params, if any, are an object
        return app.status.status()

    @guarded("get")
    async def on_get(raw: Any) -> ServerGetResult:
        return await app.status.get_server(params.parse_server("get", raw).server)

    @guarded("tools")
    async def on_tools(raw: Any) -> ServerToolsResult:
        return await app.status.server_tools(params.parse_server("tools", raw).server)

    @guarded("reconnect")
    async def on_reconnect(raw: Any) -> StatusRow:
        conn = await app.lifecycle.reconnect(params.parse_server("reconnect", raw).server)
        return app.status.row(conn)

    @guarded("logs")
    async def on_logs(raw: Any) -> ServerLogsResult:
        return app.status.server_logs(params.parse_server("logs", raw).server)

    @guarded("refresh")
    async def on_refresh(raw: Any) -> ServerRefreshResult:
        return await app.lifecycle.refresh(params.parse_server("refresh", raw).server)

    return {
        methods.STATUS: on_status,
        methods.SERVER_GET: on_get,
        methods.SERVER_TOOLS: on_tools,
        methods.SERVER_RECONNECT: on_reconnect,
        methods.SERVER_LOGS: on_logs,
        methods.SERVER_REFRESH: on_refresh,
    }


def _tool_handlers(app: Sidecar) -> dict[str, Handler]:
    """Discovery over every catalog, and a session's tools: activating and calling them."""

    @guarded("activate")
    async def on_activate(raw: Any) -> ActivateResult:
        p = params.parse_activate("activate", raw)
        return await app.activation.activate(p.ids, p.session)

    @guarded("activeTools")
    async def on_active_tools(raw: Any) -> ActiveToolsResult:
        return app.activation.active_tools(params.parse_session("activeTools", raw).session)

    @guarded("call")
    async def on_call_tool(raw: Any) -> CallToolResult:
        p = params.parse_call_tool("call", raw)
        try:
            with work_done(app.notify, p.work_done_token, p.id) as progress:
                if p.activate:
                    result = await app.activation.activate_and_call(p.id, p.arguments, p.session, progress)
                else:
                    result = await app.activation.call_tool(p.id, p.arguments, p.session, progress)
            if p.for_model:
                result["text"] = model_text.call_text(result)
            return result
        except SidecarError as exc:
            if p.for_model:
                exc.diagnostic = model_text.for_model(exc.diagnostic)
            raise

    @guarded("discover")
    async def on_discover(raw: Any) -> DiscoverResult:
        p = params.parse_discover("discover", raw)
        return await app.discovery.discover(p.query, p.kind, p.server, p.limit, p.session)

    return {
        methods.ACTIVATE: on_activate,
        methods.ACTIVE_TOOLS: on_active_tools,
        methods.CALL_TOOL: on_call_tool,
        methods.DISCOVER: on_discover,
    }


def _model_tool_handlers(app: Sidecar) -> dict[str, Handler]:
    """`mcp_tools`, the one tool an AI integration registers: its definition and its invocation."""

    @guarded("modelTool")
    async def on_model_tool_definition(raw: Any) -> ModelToolDefinition:
        params.parse_session("modelTool", raw)
        return app.model_tool.definition()

    @guarded("mcp_tools")
    async def on_model_tool_invoke(raw: Any) -> ModelToolInvokeResult:
        p = params.parse_model_tool("mcp_tools", raw)
        return await app.model_tool.invoke(p.arguments, p.session, include_directory=p.include_directory)

    @guarded("session")
    async def on_session_end(raw: Any) -> SessionEndResult:
        return app.model_tool.end_session(params.parse_session_end("session", raw))

    return {
        methods.MODEL_TOOL_DEFINITION: on_model_tool_definition,
        methods.MODEL_TOOL_INVOKE: on_model_tool_invoke,
        methods.SESSION_END: on_session_end,
    }
