"""Handlers of prompt previews: params → service → result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_sidecar.handlers.base import Handler, guarded
from mcp_sidecar.protocol import methods, params
from mcp_sidecar.services.app import Sidecar

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import PromptDiscardResult, PromptSnapshot, PromptUseResult


def prompt_handlers(app: Sidecar) -> dict[str, Handler]:
    @guarded("prompt")
    async def on_preview(raw: Any) -> PromptSnapshot:
        p = params.parse_prompt_preview("prompt", raw)
        return await app.prompts.preview(p.server, p.name, p.arguments, p.session)

    @guarded("prompt use")
    async def on_use(raw: Any) -> PromptUseResult:
        return app.prompts.use(params.parse_preview_id("prompt use", raw).preview_id)

    @guarded("prompt discard")
    async def on_discard(raw: Any) -> PromptDiscardResult:
        return app.prompts.discard(params.parse_preview_id("prompt discard", raw).preview_id)

    return {methods.PROMPT_PREVIEW: on_preview, methods.PROMPT_USE: on_use, methods.PROMPT_DISCARD: on_discard}
