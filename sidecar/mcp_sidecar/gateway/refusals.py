"""What a host's model is told when a name it calls is no tool it can call now, and the next step.

`natively`: the host's model calls activated tools by their native names (native mode, and a
host that lists its tools again when told); otherwise it calls them with `mcp_call` by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_sidecar.catalog.names import nfc
from mcp_sidecar.gateway.texts import COMMAND
from mcp_sidecar.output.sanitize import one_line
from mcp_sidecar.output.shaping import model_call
from mcp_sidecar.services import activation
from mcp_sidecar.services.sessions import BUDGET

if TYPE_CHECKING:
    from mcp_sidecar.gateway.hosts import Host
    from mcp_sidecar.services.app import Sidecar


def unknown(app: Sidecar, host: Host, name: str, natively: bool) -> str:
    """Why `name` is no tool of the host's, and what to call instead when it spells an active tool's id."""
    active = app.sessions.active(host.session)
    for ref in activation.tool_refs(nfc(name), app.registry.names()):
        if ref.id in active:
            how = f"mcp_call with id {ref.id!r}" if not natively else repr(host.native_name(ref.server, ref.tool))
            return f"{one_line(name)!r} is loaded: call it as {how}."
    tool_id = host.as_id(name, app.registry.names())
    if tool_id != name and natively:
        named = activation.parse_tool_id(tool_id, app.registry.names())
        if named is not None and app.activation.in_cached_catalog(named):
            activate = model_call({"activate": [named.id]})
            native_name = host.would_name(named.server, named.tool)
            return f"{one_line(name)!r} is not activated yet: {one_line(activate)}, then call {native_name}."
    return f"{one_line(name)!r} is not a tool of this gateway: find one with mcp_tools query, then activate it."


def gone(app: Sidecar, host: Host, tool_id: str, code: str, natively: bool) -> str:
    """Why a tool the host activated cannot be called now (`code`: tool_changed or tool_not_active), and
    the next step."""
    ref = activation.parse_tool_id(tool_id, app.registry.names())
    name = host.native_name(ref.server, ref.tool) if ref is not None else tool_id
    if not natively:
        name = tool_id
    again = one_line(model_call({"activate": [tool_id]}))
    reason = "tool changed" if code == "tool_changed" else host.dropped.get(tool_id)
    if reason == "server disabled":
        server = ref.server if ref is not None else "SERVER"
        return f"{name} was removed: its server was disabled. Ask the user to run `{COMMAND} enable {server}`."
    if reason == "server removed":
        return f"{name} was removed: its server is no longer configured. Query for another tool."
    if reason == BUDGET:
        return (
            f"{name} was deactivated by the session budget (the least recently used tools go first to make room). "
            f"Activate it again: {again}"
        )
    if reason in ("tool changed", "definition changed"):
        return f"{name} was removed: its server changed it. Activate it again to see what it takes now: {again}"
    return f"{name} is not activated: {again}"
