"""Requests for content: resource reads, prompts and completions (mixed into Connection)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.connections.sdk_streams import cancelled_by_caller
from mcp_sidecar.protocol.errors import SidecarError, fail

if TYPE_CHECKING:
    from mcp_sidecar.connections.connection import Connection

RESOURCE_NOT_FOUND = -32002
"""The MCP specification's JSON-RPC code for a resource that does not exist."""


async def mapped_failure(
    conn: Connection,
    exc: BaseException,
    operation: str,
    owner: asyncio.Task[None] | None,
    codes: dict[int, tuple[str, str]],
) -> SidecarError:
    """A server's JSON-RPC error in `codes` becomes that diagnostic; anything else is classified.

    The caller's own cancellation is re-raised as it is; any other cancellation means the
    connection was torn down under the request.
    """
    from mcp import MCPError

    if isinstance(exc, asyncio.CancelledError) and cancelled_by_caller():
        raise exc

    if isinstance(exc, MCPError) and exc.code in codes:
        code, message = codes[exc.code]
        return fail(code, operation, message, conn.name)
    if isinstance(exc, asyncio.CancelledError):
        # The SDK can cancel a waiter whose connection is torn down under it (seen on HTTP).
        exc = ConnectionError()
    return await conn._request_failed(exc, operation, owner)


async def read_resource(conn: Connection, uri: str, operation: str) -> dict[str, Any]:
    """One `resources/read`, always on the wire (the client has no cache), whole before returning."""
    client = await conn.connect(operation)
    owner = conn._owner
    if "resources" not in conn.capabilities:
        raise fail("resources_unsupported", operation, "The server does not offer resources.", conn.name)
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

    codes = {
        RESOURCE_NOT_FOUND: ("resource_not_found", "The server has no resource at that URI."),
        INVALID_PARAMS: ("resource_not_found", "The server could not read that URI."),
        METHOD_NOT_FOUND: ("resources_unsupported", "The server does not serve resources/read."),
    }
    try:
        result = await client.read_resource(uri, cache_mode="bypass")
    except (asyncio.CancelledError, Exception) as exc:
        raise await mapped_failure(conn, exc, operation, owner, codes) from None
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


async def get_prompt(conn: Connection, name: str, arguments: dict[str, str], operation: str) -> dict[str, Any]:
    """One `prompts/get`, whole: `{description?, messages}` as the server sent them (dumped).

    A result the SDK cannot validate (a role other than user/assistant, an unknown content
    block) is refused as `prompt_unsupported` without closing the session.
    """
    client = await conn.connect(operation)
    owner = conn._owner
    if "prompts" not in conn.capabilities:
        raise fail("prompt_not_found", operation, "The server does not offer prompts.", conn.name)
    import pydantic
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

    codes = {
        INVALID_PARAMS: ("prompt_invalid", "The server rejected the prompt's name or arguments."),
        METHOD_NOT_FOUND: ("prompt_not_found", "The server does not serve prompts/get."),
    }
    try:
        result = await client.get_prompt(name, arguments or None)
    except pydantic.ValidationError:
        message = "The server's prompt does not fit MCP prompt messages (role user or assistant, known content)."
        raise fail("prompt_unsupported", operation, message, conn.name) from None
    except (asyncio.CancelledError, Exception) as exc:
        raise await mapped_failure(conn, exc, operation, owner, codes) from None
    dumped: dict[str, Any] = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dumped


async def complete(
    conn: Connection,
    reference: tuple[Literal["template", "prompt"], str],
    argument: tuple[str, str],
    context: dict[str, str],
    operation: str,
) -> dict[str, Any]:
    """`completion/complete` for one template variable or prompt argument: `{values, total?, hasMore?}`."""
    client = await conn.connect(operation)
    owner = conn._owner
    if "completions" not in conn.capabilities:
        raise fail("completions_unsupported", operation, "The server does not offer completions.", conn.name)
    from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND, PromptReference, ResourceTemplateReference

    kind, name = reference
    ref = ResourceTemplateReference(uri=name) if kind == "template" else PromptReference(name=name)
    codes = {
        INVALID_PARAMS: ("completion_invalid", "The server rejected the completion request."),
        METHOD_NOT_FOUND: ("completions_unsupported", "The server does not serve completion/complete."),
    }
    try:
        result = await client.complete(
            ref, {"name": argument[0], "value": argument[1]}, context_arguments=context or None
        )
    except (asyncio.CancelledError, Exception) as exc:
        raise await mapped_failure(conn, exc, operation, owner, codes) from None
    completion = result.completion
    out: dict[str, Any] = {"values": list(completion.values)}
    if completion.total is not None:
        out["total"] = completion.total
    if completion.has_more is not None:
        out["hasMore"] = completion.has_more
    return out


# -- resource watches --------------------------------------------------------------------
