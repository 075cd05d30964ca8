"""Handlers of reads, completions, watches and spill files: params → service → result."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.handlers.base import Handler, guarded
from mcp_sidecar.output import spill
from mcp_sidecar.protocol import methods, params
from mcp_sidecar.services.app import Sidecar

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        CompleteResult,
        ReadResult,
        SpillCleanResult,
        SpillListResult,
        SubscribeResult,
        SubscriptionsResult,
        UnsubscribeResult,
    )


def resource_handlers(app: Sidecar) -> dict[str, Handler]:
    @guarded("read")
    async def on_read(raw: Any) -> ReadResult:
        p = params.parse_read("read", raw)
        return await app.reading.read(p.server, p.uri, p.template, p.arguments)

    @guarded("complete")
    async def on_complete(raw: Any) -> CompleteResult:
        p = params.parse_complete("complete", raw)
        kind: Literal["template", "prompt"] = "template" if p.kind == "template" else "prompt"
        return await app.completion.complete(p.server, (kind, p.name), (p.argument_name, p.argument_value), p.arguments)

    @guarded("subscribe")
    async def on_subscribe(raw: Any) -> SubscribeResult:
        p = params.parse_resource("subscribe", raw)
        return await app.watches.subscribe(p.server, p.uri)

    @guarded("unsubscribe")
    async def on_unsubscribe(raw: Any) -> UnsubscribeResult:
        p = params.parse_resource("unsubscribe", raw)
        return await app.watches.unsubscribe(p.server, p.uri)

    @guarded("subscriptions")
    async def on_subscriptions(raw: Any) -> SubscriptionsResult:
        params.parse_session("subscriptions", raw)
        return app.watches.list()

    @guarded("spill")
    async def on_spill_list(raw: Any) -> SpillListResult:
        params.parse_session("spill", raw)
        return await asyncio.to_thread(spill.list_files)

    @guarded("spill")
    async def on_spill_clean(raw: Any) -> SpillCleanResult:
        p = params.parse_spill_clean("spill", raw)
        return await asyncio.to_thread(spill.clean, p.older_than_days)

    return {
        methods.READ: on_read,
        methods.COMPLETE: on_complete,
        methods.RESOURCE_SUBSCRIBE: on_subscribe,
        methods.RESOURCE_UNSUBSCRIBE: on_unsubscribe,
        methods.RESOURCE_SUBSCRIPTIONS: on_subscriptions,
        methods.SPILL_LIST: on_spill_list,
        methods.SPILL_CLEAN: on_spill_clean,
    }
