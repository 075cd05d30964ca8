"""Handlers of `mcp/auth/*`: params → service → result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_sidecar.handlers.base import Handler, guarded
from mcp_sidecar.protocol import config_params, methods
from mcp_sidecar.services.app import Sidecar

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import LoginResult, LogoutResult


def auth_handlers(app: Sidecar) -> dict[str, Handler]:
    @guarded("login")
    async def on_login(raw: Any) -> LoginResult:
        p = config_params.parse_login("login", raw)
        return await app.auth.login(p.server, p.no_browser, p.approve_scopes)

    @guarded("completeLogin")
    async def on_complete_login(raw: Any) -> LoginResult:
        p = config_params.parse_complete_login("completeLogin", raw)
        return await app.auth.complete_login(p.login_id, p.callback_url)

    @guarded("logout")
    async def on_logout(raw: Any) -> LogoutResult:
        return await app.auth.logout(config_params.parse_logout("logout", raw))

    return {
        methods.AUTH_LOGIN: on_login,
        methods.AUTH_COMPLETE_LOGIN: on_complete_login,
        methods.AUTH_LOGOUT: on_logout,
    }
