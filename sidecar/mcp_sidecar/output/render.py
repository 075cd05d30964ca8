"""Readable text for results, shared by the CLI and the `/mcp` command set.

Every string that came from a server or a configuration file goes through `one_line` (a
cell or a row) or `strip_controls` (a tool result's text), so nothing in it can move the
cursor, rewrite a row or hide words.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_sidecar.catalog import names
from mcp_sidecar.output import activation_text
from mcp_sidecar.output.redact import redaction_note
from mcp_sidecar.output.sanitize import one_line, removal_note, removed_hidden, strip_controls

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        CatalogCounts,
        ContextTokens,
        EngineStatus,
        ServerToolsResult,
        StatusResult,
        StatusRow,
    )

GLYPHS = {"idle": "○", "connected": "●", "connecting": "▶", "disabled": "○", "failed": "✘", "needs_login": "⚿"}


def state_label(state: str) -> str:
    """How a state reads to a person: `needs login` for `needs_login`."""
    return state.replace("_", " ")


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def tokens(value: int) -> str:
    """An estimate as a person reads it: `1,234 tokens`."""
    return f"{value:,} token{'' if value == 1 else 's'}"


def context_line(context: ContextTokens | None) -> str | None:
    """What the tool definitions cost a model's context, once a server's were counted; else None."""
    if context is None or not context["counted"]:
        return None
    servers = f"{context['counted']} of {context['enabled']} enabled servers counted"
    own = f"; mcp_tools itself {tokens(context['modelTool'])}" if context["modelTool"] is not None else ""
    return f"Tool definitions: {tokens(context['allTools'])} ({servers}){own} · estimated ({context['tokenizer']})"


def _resources(catalog: CatalogCounts) -> str:
    if catalog["resources"] is None:
        return "—"
    templates = catalog.get("templates") or 0
    return f"{catalog['resources']}+{templates}t" if templates else str(catalog["resources"])


ADD_EXAMPLE = "add --scope global docs https://example.com/mcp"


def status_matrix(status: StatusResult, add_command: str = f"/mcp {ADD_EXAMPLE}") -> str:
    """The server table (with a `Shared` column when an engine serves the client), then what waits, the
    configuration's problems and the engine; `add_command` is the one example shown when nothing is
    configured."""
    rows = status["servers"]
    engine = status.get("engine")
    lines: list[str] = []
    if rows:
        lines += _server_table(rows, shared=engine is not None)
        for r in rows:
            if r["lastDiagnostic"] and (r["state"] in ("failed", "needs_login") or r.get("approvalRequired")):
                d = r["lastDiagnostic"]
                lines.append(f"{one_line(r['name'])}: [{d['code']}] {one_line(d['message'])} {d['hint']}")
        if (context := context_line(status.get("tokens"))) is not None:
            lines.append(context)
    else:
        lines.append("No MCP servers are configured.")
        lines += [f"{f['scope'].capitalize()} configuration: {one_line(f['path'])}" for f in _config_files(status)]
        lines.append(f"Add one: {add_command}")
    if status.get("profile") is not None:
        lines.append(f"Profile: {one_line(str(status['profile']))}")
    if (budget := status.get("budget")) is not None:
        lines.append(f"Session budget: {activation_text.budget_words(budget)} active at once")
    for pending in status.get("pendingApprovals", []):
        lines.append(f"{one_line(pending['server'])} waits for approval ({pending['change']}): {pending['summary']}")
    for d in status.get("diagnostics", []):
        lines.append(f"[{d['code']}] {one_line(d['message'])}")
    if engine:
        lines += engine_lines(engine)
    return "\n".join(lines)


def _server_table(rows: list[StatusRow], shared: bool) -> list[str]:
    header: tuple[str, ...] = ("", "Server", "State", "Scope", "Transport", "Tools", "Tokens", "Resources")
    header += ("Prompts",)
    header += ("Loaded", "Shared") if shared else ("Loaded",)
    table = [header]
    for r in rows:
        table.append(
            (
                GLYPHS.get(r["state"], "?"),
                one_line(r["name"]),
                state_label(r["state"]),
                r["scope"],
                r["transport"],
                _count(r["catalog"]["tools"]) + (" (cached)" if r.get("catalogSource") == "cache" else ""),
                "—" if r.get("tokens") is None else f"{r.get('tokens'):,}",
                _resources(r["catalog"]),
                _count(r["catalog"]["prompts"]),
                str(r["loaded"]),
                *((str(r.get("sharedBy", 1)),) if shared else ()),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in table]


def duration(seconds: int) -> str:
    """`42s`, `3m 5s`, `2h 4m`, `3d 2h`: the two largest units."""
    units = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
    parts: list[str] = []
    for name, size in units:
        if seconds >= size or (name == "s" and not parts):
            parts.append(f"{seconds // size}{name}")
            seconds %= size
        elif parts:
            parts.append(f"0{name}")
        if len(parts) == 2:
            break
    return " ".join(parts)


def engine_lines(engine: EngineStatus) -> list[str]:
    """`Engine pid 4242 · mcp-sidecar 0.1.0 · up 3m 5s · 3 clients:`, then one indented line per client."""
    clients = engine["clients"]
    count = f"{len(clients)} client{'' if len(clients) == 1 else 's'}"
    lines = [
        f"Engine pid {engine['pid']} · mcp-sidecar {one_line(engine['version'])} · "
        f"up {duration(engine['uptimeSeconds'])} · {count}:"
    ]
    for client in clients:
        workspace = one_line(client["workspace"]) if client["workspace"] is not None else "(no workspace)"
        this = " (this client)" if client["thisClient"] else ""
        lines.append(f"  {client['kind']:<3}  {workspace}{this}")
    return lines


def _config_files(status: StatusResult) -> list[Any]:
    """The global file (where `add --scope global` writes) and a project file that was read."""
    return [f for f in status["configFiles"] if f["scope"] == "global" or f["read"]]


def tools_list(result: ServerToolsResult) -> str:
    """The header (with the tools' estimate together), then one line per tool: its id, required
    arguments, estimate and the first line of its description."""
    total = result.get("tokens")
    cost = f" · {tokens(total)} (estimated)" if total is not None else ""
    lines = [f"{one_line(result['server'])} · {len(result['tools'])} tools ({result['source']}){cost}"]
    for tool in result["tools"]:
        schema: dict[str, Any] = tool.get("inputSchema", {})
        required = schema.get("required", [])
        sig = f"({one_line(', '.join(str(r) for r in required))})" if required else "()"
        own = f" · {tokens(tool['tokens'])}" if "tokens" in tool else ""
        desc = strip_controls(tool.get("description") or "").strip().splitlines()
        lines.append(f"  {one_line(tool['id'])}{sig}{own}  {one_line(desc[0]) if desc else ''}".rstrip())
    lines += [f"  refused {line}" for line in names.summary(result.get("refused") or [])]
    return "\n".join(lines)


def tool_result(result: dict[str, Any]) -> str:
    """The result's text blocks sanitised, then a note if that removed what could hide words."""
    mark = "✘" if result.get("isError") else "✔"
    lines = ["mcp call", f" {mark} {one_line(result['id'])}"]
    hidden = 0
    for block in result.get("content", []):
        if block.get("type") == "text":
            text = block.get("text", "")
            hidden += removed_hidden(text)
            lines.append(strip_controls(text))
        else:
            lines.append(f"[{one_line(str(block.get('type')))} content]")
    if hidden:
        lines.append(removal_note(hidden))
    if result.get("redacted"):
        lines.append(redaction_note(result["redacted"]))
    diag = result.get("diagnostic")
    if diag:
        lines.append(f"[{diag['code']}] {diag['hint']}")  # ours (`tool_error`): what to check before retrying
    return "\n".join(lines)
