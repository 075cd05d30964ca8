"""What the gateway tells a host's model about itself: `instructions`, `mcp_tools` and `mcp_call`.

No SDK: the start-up front answers `initialize`, `server/discover` and the first `tools/list`
with these before `import mcp` has finished, and the SDK face answers every later request with
the same functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from mcp_sidecar.output import directory_text
from mcp_sidecar.services import model_tool

if TYPE_CHECKING:
    from mcp_sidecar.services.app import Sidecar
    from mcp_sidecar.services.model_tool import ModelTool

Mode = Literal["native", "proxy"]

NATIVE_NOTE = """\
Activated tools are added to your own tools as `<server>__<tool>` (the activation answer \
names each), with their full schemas: call them directly. When the activation answer says \
they are not among your tools, call them with `mcp_call` ({id, arguments}) instead."""
EVERY_NOTE = """\
Every tool of the servers below is already among your own tools as `<server>__<tool>`, with its \
full schema: call them directly, no query or activation needed. Use mcp_tools to read resources, \
complete arguments, find prompts and fetch background results."""
PROXY_NOTE = """\
Activated tools are called with `mcp_call` ({id, arguments}), using the signature the \
activation answer shows."""
NATIVE_HINT = "Call each loaded tool by the name after →: it is among your tools now, with its full schema."
PROXY_HINT = "Call each loaded tool with mcp_call {id, arguments}, the arguments following its signature."
NATIVE_LOADED = "Tools marked [loaded as NAME] are among your tools under that name: call them directly."
PROXY_LOADED = "Tools marked [loaded] are callable now with mcp_call, with the signature their activation showed."
COMMAND = "mcp-sidecar run"
"""How a person runs a `/mcp` command beside a host: in a terminal."""
INSTRUCTIONS = (
    "The user's MCP servers, on demand: call mcp_tools with `query` to find a capability "
    "(`server` narrows it to one of the servers below), `activate` to load exact tool ids, "
    "then call the loaded tools."
)


def profile_tools(app: Sidecar) -> bool:
    """Whether the gateway's profile (`--profile`) activates tools: a host's first `tools/list` then waits
    for them (the SDK side answers it), so that the host lists them from the start."""
    chosen = app.configuration.profile()
    return chosen is not None and bool(chosen.activate)


def instructions(tool: ModelTool) -> str:
    """The `initialize` / `server/discover` instructions: how to search, then the server directory,
    the same bounded text `mcp_tools`' description carries (a host that defers tools behind a
    search of its own shows the model these, not the tool)."""
    directory = directory_text.render(tool.directory())
    return f"{INSTRUCTIONS}\n\n{directory}" if directory else INSTRUCTIONS


def mcp_tools(tool: ModelTool, mode: Mode, every: bool = False) -> dict[str, Any]:
    """`mcp_tools` as the gateway lists it: the editors' definition, with how this gateway's host
    calls what it activates (`every`: every tool is listed already, `--expose`)."""
    described = tool.definition()
    note = PROXY_NOTE if mode != "native" else EVERY_NOTE if every else NATIVE_NOTE
    head, _, directory = described["description"].partition("\n\nServers (")
    description = f"{head}\n{note}" + (f"\n\nServers ({directory}" if directory else "")
    return {"name": model_tool.NAME, "description": description, "inputSchema": model_tool.INPUT_SCHEMA}


CALL_NATIVE = (
    'Call a tool activated with mcp_tools by its exact id ("server.tool"), the arguments following the '
    "signature its activation showed, when the activation answer says it is not among your tools (some hosts "
    "never add tools after they start); otherwise call it by the name the answer gives."
)
"""`mcp_call` in native mode: the fallback, so described in few words (it is in every host's list)."""


def mcp_call(mode: Mode) -> dict[str, Any]:
    """`mcp_call`, in both modes: in native mode it is how a host that never lists its tools again
    (Codex by default) calls what it activated, so it is listed from the start."""
    return {
        "name": model_tool.CALL_NAME,
        "description": CALL_NATIVE if mode == "native" else model_tool.CALL_DESCRIPTION,
        "inputSchema": model_tool.CALL_SCHEMA,
    }


def opening_tools(tool: ModelTool, mode: Mode, every: bool = False) -> list[dict[str, Any]]:
    """What a host lists before it activated anything (and beside every tool, when `every`)."""
    return [mcp_tools(tool, mode, every), mcp_call(mode)]


def not_listed(ids: list[str]) -> str:
    """The activation answer's last line for a host that did not list its tools again in time."""
    example = model_tool.CALL_NAME + '({"id": "' + ids[0] + '", "arguments": {…}})' if ids else ""
    return (
        "Your host has not added the loaded tools to your tools: call each with mcp_call {id, arguments}, "
        f"by its id above, the arguments following its signature, e.g. {example}."
    )
