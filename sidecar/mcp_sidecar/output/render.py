"""Readable text for results, shared by the CLI and (later) the `/mcp` command set."""

from __future__ import annotations

from typing import Any

GLYPHS = {"idle": "○", "connected": "●", "connecting": "▶", "disabled": "○", "failed": "✘"}


def _count(value: int | None) -> str:
    return "—" if value is None else str(value)


def _resources(catalog: dict[str, Any]) -> str:
    if catalog["resources"] is None:
        return "—"
    templates = catalog.get("templates") or 0
    return f"{catalog['resources']}+{templates}t" if templates else str(catalog["resources"])


def status_matrix(status: dict[str, Any]) -> str:
    rows = status["servers"]
    lines: list[str] = []
    if rows:
        header = ("", "Server", "State", "Scope", "Transport", "Tools", "Resources", "Prompts", "Loaded")
        table = [header]
        for r in rows:
            table.append(
                (
                    GLYPHS.get(r["state"], "?"),
                    r["name"],
                    r["state"],
                    r["scope"],
                    r["transport"],
                    _count(r["catalog"]["tools"]) + (" (cached)" if r.get("catalogSource") == "cache" else ""),
                    _resources(r["catalog"]),
                    _count(r["catalog"]["prompts"]),
                    str(r["loaded"]),
                )
            )
        widths = [max(len(row[i]) for row in table) for i in range(len(header))]
        for row in table:
            lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
        for r in rows:
            if r["lastDiagnostic"] and r["state"] == "failed":
                d = r["lastDiagnostic"]
                lines.append(f"{r['name']}: [{d['code']}] {d['message']} {d['hint']}")
    else:
        lines.append("No MCP servers are configured.")
    for d in status.get("diagnostics", []):
        lines.append(f"[{d['code']}] {d['message']}")
    return "\n".join(lines)


def tools_list(result: dict[str, Any]) -> str:
    lines = [f"{result['server']} · {len(result['tools'])} tools ({result['source']})"]
    for tool in result["tools"]:
        required = tool.get("inputSchema", {}).get("required", [])
        sig = f"({', '.join(required)})" if required else "()"
        desc = (tool.get("description") or "").strip().splitlines()
        lines.append(f"  {tool['id']}{sig}  {desc[0] if desc else ''}".rstrip())
    return "\n".join(lines)


def tool_result(result: dict[str, Any]) -> str:
    mark = "✘" if result.get("isError") else "✔"
    lines = ["mcp call", f" {mark} {result['id']}"]
    for block in result.get("content", []):
        if block.get("type") == "text":
            lines.append(block.get("text", ""))
        else:
            lines.append(f"[{block.get('type')} content]")
    return "\n".join(lines)
