"""Status rows, `get` and logs: inspection that never reveals a connection value."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mcp_sidecar.catalog import token_count
from mcp_sidecar.catalog.tools import tool_view
from mcp_sidecar.output.sanitize import quoted
from mcp_sidecar.protocol.errors import SidecarError, diagnostic
from mcp_sidecar.services import approvals, budget

if TYPE_CHECKING:
    from mcp_sidecar.connections.protocol import ServerConnection
    from mcp_sidecar.connections.registry import ServerRegistry
    from mcp_sidecar.protocol.results import (
        Authentication,
        ContextTokens,
        EngineStatus,
        ServerGetResult,
        ServerLogsResult,
        ServerToolsResult,
        StatusResult,
        StatusRow,
        ToolDefinition,
    )
    from mcp_sidecar.services.auth import Auth
    from mcp_sidecar.services.catalogs import Catalogs
    from mcp_sidecar.services.configuration import Configuration
    from mcp_sidecar.services.sessions import Sessions

HIDDEN = "hidden"


def _hidden_map(values: dict[str, str]) -> dict[str, str]:
    return dict.fromkeys(values, HIDDEN)


def _authentication(conn: ServerConnection, has_auth_header: bool, stored: dict[str, Any]) -> Authentication:
    config = conn.config
    found: Authentication = {
        "kind": "header" if has_auth_header else ("oauth" if config.transport == "http" else "none"),
        "credentials": _credentials(conn, stored),
        "tokensStored": stored["tokensStored"],
        "credentialStore": stored["store"],
    }
    if found["kind"] == "oauth":
        if config.oauth_client_id and config.oauth_client_secret:
            found["client"] = "confidential"
        elif config.oauth_client_id:
            found["client"] = "pre-registered"
        elif config.oauth_client_metadata_url:
            found["client"] = "metadata document"  # when the authorization server accepts one; else dynamic
        else:
            found["client"] = "dynamic"
        found["dpop"] = config.oauth_dpop
    return found


def _credentials(conn: ServerConnection, stored: dict[str, Any]) -> str:
    """`stored`, `none`, `store locked`, `store unavailable`, or `externally managed` (headers, env)."""
    config = conn.config
    if config.env or config.headers:
        return "externally managed"
    if stored["store"] in ("locked", "unavailable"):
        return f"store {stored['store']}"
    return "stored" if stored["tokensStored"] else "none"


class Status:
    """Status rows, `get`, a server's tools and logs: read from the registry, the catalogs and the sessions."""

    def __init__(
        self,
        configuration: Configuration,
        registry: ServerRegistry,
        catalogs: Catalogs,
        sessions: Sessions,
        auth: Auth,
        engine: Callable[[], EngineStatus | None] = lambda: None,
        model_tool_tokens: Callable[[], int | None] = lambda: None,
    ) -> None:
        """`engine`: the engine serving this client and its clients, as this client sees them (None in a
        process of its own); `model_tool_tokens`: the estimate of `mcp_tools`' definition."""
        self._configuration = configuration
        self._registry = registry
        self._catalogs = catalogs
        self._sessions = sessions
        self._auth = auth
        self._engine = engine
        self._model_tool_tokens = model_tool_tokens

    def row(self, conn: ServerConnection) -> StatusRow:
        config = conn.config
        catalog = self._catalogs.tools_in_memory(conn)
        resources = self._catalogs.list_in_memory(conn, "resources")
        prompts = self._catalogs.list_in_memory(conn, "prompts")
        row: StatusRow = {
            "name": conn.name,
            "scope": config.scope,
            "transport": config.transport,
            "state": conn.state,
            "description": config.description,
            "protocolVersion": conn.protocol_version,
            "catalog": {
                "tools": len(catalog.visible(config)) if catalog is not None else None,
                "resources": len(resources.items) if resources is not None else None,
                "templates": len(resources.templates) if resources is not None else None,
                "prompts": len(prompts.items) if prompts is not None else None,
            },
            "catalogSource": catalog.source if catalog is not None else None,
            "loaded": self._sessions.loaded_count(conn.name),
            "lastDiagnostic": conn.last_diagnostic.to_json() if conn.last_diagnostic else None,
            "approvalRequired": config.approval_required,
            "sharedBy": self._registry.sharers(conn),
            "tokens": self._tokens(conn),
        }
        if conn.server_icons:
            row["icons"] = conn.server_icons
        return row

    def _tokens(self, conn: ServerConnection) -> int | None:
        """The estimate of the server's exposed tools, when its catalog is in memory and counted (a count
        starts in the background otherwise, and its row is sent again when it is done)."""
        catalog = self._catalogs.tools_in_memory(conn)
        if catalog is None or self._catalogs.tokens_at_hand(conn, catalog) is None:
            return None
        return catalog.visible_tokens(conn.config)

    def _context_tokens(self, rows: list[StatusRow]) -> ContextTokens | None:
        if not self._catalogs.tokenizer_installed():
            return None
        enabled = [row for conn, row in zip(self._registry, rows, strict=True) if not conn.config.disabled]
        counted = [row["tokens"] for row in enabled if row["tokens"] is not None]
        return {
            "tokenizer": token_count.TOKENIZER,
            "allTools": sum(counted),
            "counted": len(counted),
            "enabled": len(enabled),
            "modelTool": self._model_tool_tokens(),
        }

    def status(self) -> StatusResult:
        self._configuration.ensure_loaded()
        for conn in self._registry:
            if not conn.config.disabled:
                self._catalogs.cached_tools(conn)  # counts from the disk cache; never connects
        files = self._registry.config.files if self._registry.config else ()
        rows = [self.row(c) for c in self._registry]
        return {
            "servers": rows,
            "configFiles": [{"scope": f.scope, "path": f.path, "exists": f.exists, "read": f.read} for f in files],
            "trustedWorkspace": self._configuration.trusted,
            "pendingApprovals": approvals.pending_json(self._configuration),
            "diagnostics": [
                d.to_json()
                for d in [
                    *self._registry.problems,
                    *self._configuration.profile_diagnostics(),
                    *self._configuration.budget_problems,
                ]
            ],
            "engine": self._engine(),
            "profile": self._configuration.profile_name,
            "profiles": sorted(n for n, p in self._configuration.profiles.items() if not p.approval_required),
            "tokens": self._context_tokens(rows),
            "budget": budget.to_json(self._configuration.budget()),
        }

    async def get_server(self, name: str) -> ServerGetResult:
        conn = self._configuration.connection(name, "get")
        config = conn.config
        connection: dict[str, Any]
        if config.transport == "stdio":
            connection = {
                "command": HIDDEN,
                "args": f"{HIDDEN} ({len(config.args)} values)",
                "cwd": HIDDEN if config.cwd else None,
                "env": _hidden_map(config.env),
            }
        else:
            connection = {"url": HIDDEN, "headers": _hidden_map(config.headers)}
        has_auth_header = any(k.lower() == "authorization" for k in config.headers)
        shadowed = self._registry.config.shadowed.get(name) if self._registry.config else None
        stored = await self._auth.credentials_status(conn)
        return {
            "name": name,
            "scope": config.scope,
            "overridesGlobal": shadowed is not None,
            "description": config.description,
            "disabled": config.disabled,
            "transport": config.transport,
            "protocol": {"configured": config.protocol, "negotiated": conn.protocol_version},
            "filters": config.filters_json(),
            "timeouts": {
                "requestMs": int(config.request_timeout_s * 1000),
                "toolCallMs": int(config.call_timeout_s * 1000),
            },
            "connection": connection,
            "authentication": _authentication(conn, has_auth_header, stored),
            "status": self.row(conn),
        }

    async def server_tools(self, name: str) -> ServerToolsResult:
        conn = self._configuration.connection(name, "tools")
        catalog = await self._catalogs.tool_catalog(conn, "tools", live=True)
        visible = catalog.allowed(conn.config)  # an app's own tools too: a person sees every tool
        tokens = await self._catalogs.tool_tokens(conn, catalog) or {}
        return {
            "server": name,
            "source": catalog.source,
            "tools": [tool_view(name, d, tokens.get(d["name"])) for d in visible.values()],
            "hiddenByFilters": len(catalog.accepted()) - len(visible),
            "refused": [{"name": r["name"], "diagnostic": r["diagnostic"]} for r in catalog.refused],
            "tokens": catalog.visible_tokens(conn.config),
        }

    async def server_tool(self, name: str, tool: str) -> ToolDefinition:
        """One tool of `server_tools` by its exact name; `tool_not_found` with the nearby names otherwise."""
        conn = self._configuration.connection(name, "tools")
        catalog = await self._catalogs.tool_catalog(conn, "tools", live=True)
        visible = catalog.allowed(conn.config)
        if tool in visible:
            tokens = await self._catalogs.tool_tokens(conn, catalog) or {}
            return tool_view(name, visible[tool], tokens.get(tool))
        nearby = difflib.get_close_matches(tool, sorted(visible), n=5, cutoff=0.5)
        if any(d.get("name") == tool for d in catalog.accepted()):
            why = "is hidden by the server's tool filters"
        elif catalog.refused_entry(tool) is not None:
            why = "was refused: its name is outside the MCP form"
        else:
            why = "is not in its catalog"
        message = f"The server's tool {quoted(tool)} {why}."
        if nearby:
            message += " Nearby: " + ", ".join(f"{name}.{n}" for n in nearby) + "."
        diag = diagnostic("tool_not_found", "tools", message, name)
        raise SidecarError(replace(diag, nearby=tuple(f"{name}.{n}" for n in nearby)))

    def server_logs(self, name: str) -> ServerLogsResult:
        conn = self._configuration.connection(name, "logs")
        return {
            "server": name,
            "lines": [{"time": line.time, "text": line.text} for line in conn.log.lines],
            "dropped": conn.log.dropped,
        }
