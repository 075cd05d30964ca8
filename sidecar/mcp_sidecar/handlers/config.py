"""Handlers of `mcp/command` and the `mcp/config/*` methods: params → service → result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_sidecar.handlers.base import Handler, guarded
from mcp_sidecar.protocol import config_params, methods, params
from mcp_sidecar.services import config_edits
from mcp_sidecar.services.app import Sidecar

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        ApproveResult,
        CommandResult,
        CommandSpecResult,
        ConfigAddDryRunResult,
        ConfigAddResult,
        ConfigImportResult,
        ConfigRemoveResult,
        ConfigSetEnabledResult,
        ReloadSummary,
    )


def config_handlers(app: Sidecar) -> dict[str, Handler]:
    return {**_workspace_handlers(app), **_command_handlers(app), **_edit_handlers(app)}


def _workspace_handlers(app: Sidecar) -> dict[str, Handler]:
    """Trust and approvals: what the workspace's project files may do."""

    @guarded("setTrusted")
    async def on_set_trusted(raw: Any) -> ReloadSummary:
        return await app.config_edits.set_trusted(config_params.parse_set_trusted("setTrusted", raw))

    @guarded("approve")
    async def on_approve(raw: Any) -> ApproveResult:
        return await app.approvals.approve(config_params.parse_approve("approve", raw))

    return {methods.WORKSPACE_SET_TRUSTED: on_set_trusted, methods.WORKSPACE_APPROVE: on_approve}


def _command_handlers(app: Sidecar) -> dict[str, Handler]:
    """`/mcp` command lines and the spec clients complete them from."""

    @guarded("command")
    async def on_command(raw: Any) -> CommandResult:
        return await app.commands.run_line(config_params.parse_command("command", raw).line)

    @guarded("commandSpec")
    async def on_command_spec(raw: Any) -> CommandSpecResult:
        return app.commands.command_spec(config_params.parse_command_spec("commandSpec", raw))

    return {methods.COMMAND: on_command, methods.COMMAND_SPEC: on_command_spec}


def _edit_handlers(app: Sidecar) -> dict[str, Handler]:
    """The `mcp/config/*` methods: edits of the configuration files, and reloading them."""

    @guarded("add")
    async def on_add(raw: Any) -> ConfigAddResult | ConfigAddDryRunResult:
        p = config_params.parse_config_add("add", raw)
        if p.dry_run:
            return await app.config_edits.add_dry_run(p.scope, p.server, p.definition, p.target, p.replace)
        definition = p.definition if p.target is None else config_edits.definition_from_target(p.target, "add")
        assert definition is not None
        return await app.config_edits.add(p.scope, p.server, definition, p.replace)

    @guarded("remove")
    async def on_remove(raw: Any) -> ConfigRemoveResult:
        p = config_params.parse_config_remove("remove", raw)
        return await app.config_edits.remove(p.scope, p.server)

    @guarded("setEnabled")
    async def on_set_enabled(raw: Any) -> ConfigSetEnabledResult:
        p = config_params.parse_set_enabled("setEnabled", raw)
        return await app.config_edits.set_enabled(p.server, p.enabled)

    @guarded("reload")
    async def on_reload(raw: Any) -> ReloadSummary:
        params.parse_session("reload", raw)  # validates that params, if any, are an object
        return await app.config_edits.reload()

    @guarded("import")
    async def on_import(raw: Any) -> ConfigImportResult:
        p = config_params.parse_config_import("import", raw)
        return await app.config_imports.import_servers(p.file, p.scope, p.select, p.confirm, p.replace)

    return {
        methods.CONFIG_ADD: on_add,
        methods.CONFIG_REMOVE: on_remove,
        methods.CONFIG_SET_ENABLED: on_set_enabled,
        methods.CONFIG_RELOAD: on_reload,
        methods.CONFIG_IMPORT: on_import,
    }
