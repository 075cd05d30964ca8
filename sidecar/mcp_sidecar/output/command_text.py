"""Readable text for `/mcp` command results (the structured result travels beside it).

Every string from a server, a configuration or an imported file is shown through `one_line`
(`_s`): no control sequence, invisible character or line break of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_sidecar.output import signature
from mcp_sidecar.output.render import GLYPHS, state_label, tool_result, tools_list
from mcp_sidecar.output.sanitize import one_line

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import (
        ConfigAddResult,
        ConfigImportResult,
        ConfigRemoveResult,
        ConfigSetEnabledResult,
        ImportServer,
        PromptSnapshot,
        ServerGetResult,
        ServerLogsResult,
        ServerRefreshResult,
        StatusRow,
        SubscribeResult,
        SubscriptionsResult,
        UnsubscribeResult,
    )

_s = one_line


def quote_word(word: str) -> str:
    """A word as the `/mcp` command parser reads it back (single quotes keep everything)."""
    if word and all(c.isalnum() or c in "-_./:,=@%+" for c in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def _names(names: list[str]) -> str:
    return _s(", ".join(names))


def tool_or_tools(result: Any) -> str:
    """`tools NAME`: a server's tools; `tools NAME TOOL` (a result with an `id`): that tool's signature."""
    return signature.multiline(result["id"], result) if "id" in result else tools_list(result)


def call_or_activation(result: Any) -> str:
    """The CLI's `call`: the tool's result, or the activation of an id that did not load."""
    return str(result["activation"]["text"]) if "activation" in result else tool_result(result)


def reload_summary(summary: Mapping[str, Any]) -> str:
    if not summary["applied"]:
        lines = ["Configuration not applied: it is invalid, so the previous setup stays in use."]
        lines += [f"  [{d['code']}] {_s(d['message'])}" for d in summary["diagnostics"]]
        return "\n".join(lines)
    parts = []
    for key in ("added", "removed", "changed"):
        if summary[key]:
            parts.append(f"{key} {_names(summary[key])}")
    parts.append(f"{len(summary['unchanged'])} unchanged")
    lines = ["Configuration applied: " + "; ".join(parts) + "."]
    for d in summary["deactivated"]:
        lines.append(f"  Deactivated in session {_s(repr(d['session']))} ({d['reason']}): {_names(d['removed'])}")
    lines += [f"  Left out, invalid: [{d['code']}] {_s(d['message'])}" for d in summary["diagnostics"]]
    return "\n".join(lines)


def _applied_tail(result: Mapping[str, Any]) -> list[str]:
    summary = result.get("reload")
    if summary is None or summary["applied"]:
        return []
    return [reload_summary(summary)]


def added(result: ConfigAddResult) -> str:
    verb = "Replaced" if result["action"] == "replaced" else "Added"
    where = "in" if result["action"] == "replaced" else "to"
    lines = [f"{verb} {result['server']!r} {where} the {result['scope']} configuration ({_s(str(result['path']))})."]
    if result.get("overrides"):
        lines.append(f"It overrides the global definition of {result['server']!r}.")
    lines.append("Nothing was started: it connects when first needed.")
    lines += [_s(note) for note in result["notes"]]
    return "\n".join(lines + _applied_tail(result))


def removed(result: ConfigRemoveResult) -> str:
    lines = [f"Removed {result['server']!r} from the {result['scope']} configuration ({_s(str(result['path']))})."]
    if result["remaining"]:
        lines.append(f"A {result['remaining']} definition of {result['server']!r} remains and is now in effect.")
    lines += [_s(note) for note in result["notes"]]
    return "\n".join(lines + _applied_tail(result))


def toggled(result: ConfigSetEnabledResult) -> str:
    state = "enabled" if result["enabled"] else "disabled"
    where = f"the {result['scope']} configuration ({_s(str(result['path']))})"
    if not result["changed"]:
        lines = [f"{result['server']!r} is already {state} in {where}; nothing changed."]
        if result.get("approvalRequired"):
            lines.append(
                "Its project definition is new or changed since it was approved, so it still does not run: "
                "approve it first (the editor asks; mcp/workspace/approve)."
            )
    else:
        lines = [f"{state.capitalize()} {result['server']!r} in {where}."]
        if result["enabled"]:
            lines.append("Nothing was connected: it connects when first needed.")
        else:
            tools = result["deactivated"]
            lines.append(
                "It will not connect (an open connection was closed)"
                + (f"; {len(tools)} active tool(s) were deactivated: {_names(tools)}." if tools else ".")
            )
    return "\n".join(lines + _applied_tail(result))


def server_details(result: ServerGetResult) -> str:
    row = result["status"]
    glyph = GLYPHS.get(row["state"], "?")
    lines = [f"{glyph} {_s(result['name'])} · {state_label(row['state'])} · {result['scope']} · {result['transport']}"]
    if result["description"]:
        lines.append(f"  {_s(result['description'])}")
    if result["overridesGlobal"]:
        lines.append("  overrides a global definition of the same name")
    protocol = result["protocol"]
    lines.append(f"  protocol: {protocol['configured']} (negotiated: {protocol['negotiated'] or '—'})")
    filters = result["filters"]
    include = filters["includeTools"]
    lines.append(
        f"  tools filter: include {_s(', '.join(include)) if include is not None else 'all'}"
        f"; exclude {_s(', '.join(filters['excludeTools'])) or 'none'}"
    )
    timeouts = result["timeouts"]
    lines.append(f"  timeouts: requests {timeouts['requestMs']} ms, tool calls {timeouts['toolCallMs']} ms")
    for key, value in result["connection"].items():
        if isinstance(value, dict):
            shown = _s(", ".join(f"{k}={v}" for k, v in value.items())) or "none"
            lines.append(f"  {key}: {shown}")
        elif value is not None:
            lines.append(f"  {key}: {_s(str(value))}")
    auth = result["authentication"]
    lines.append(f"  authentication: {auth['kind']}, credentials {auth['credentials']}")
    catalog = row["catalog"]
    counts = ", ".join(f"{k} {'—' if v is None else v}" for k, v in catalog.items())
    lines.append(f"  catalog: {counts}; loaded {row['loaded']}")
    if row["lastDiagnostic"]:
        d = row["lastDiagnostic"]
        # A server that needs a login says how to log in (the hint names the server).
        fix = f" {_s(d['hint'])}" if row["state"] == "needs_login" else ""
        lines.append(f"  last failure: [{d['code']}] {_s(d['message'])}{fix}")
    return "\n".join(lines)


def reconnected(row: StatusRow) -> str:
    tools = row["catalog"]["tools"]
    state = f"{GLYPHS.get(row['state'], '?')} {state_label(row['state'])}"
    return f"Reconnected {_s(repr(row['name']))}: {state}, {tools} tools."


def refreshed(result: ServerRefreshResult) -> str:
    return _refresh_text(f"Refreshed {_s(repr(result['server']))}: {_counts(result)}.", result)


def refresh_counts(result: ServerRefreshResult) -> str:
    """The CLI's `refresh`: the server's catalog counts, then each kind that failed."""
    return _refresh_text(f"{_s(result['server'])}: {_counts(result)}", result)


def _counts(result: ServerRefreshResult) -> str:
    return ", ".join(f"{k} {'—' if v is None else v}" for k, v in result["status"]["catalog"].items())


def _refresh_text(first: str, result: ServerRefreshResult) -> str:
    """`first`, then one line per kind that failed."""
    lines = [first]
    lines += [
        f"  {d['kind']}: [{d['diagnostic']['code']}] {_s(d['diagnostic']['message'])}" for d in result["diagnostics"]
    ]
    return "\n".join(lines)


def log_lines(result: ServerLogsResult) -> str:
    """The CLI's `logs`: a server's captured stderr, one line each."""
    return "\n".join(_s(line["text"]) for line in result["lines"]) or "(no output captured)"


def import_result(result: ConfigImportResult) -> str:
    head = f"mcp import · {_s(str(result['file']))} ({result['formatLabel']})"
    lines = [head]
    if result["written"]:
        lines.append(
            f"Imported {_names(result['imported'])} into the {result['scope']} configuration "
            f"({_s(str(result['path']))})."
        )
        lines.append("Nothing was started or authenticated: imported servers connect when first needed.")
    for server in result["servers"]:
        lines += _import_candidate(server)
    if not result["written"]:
        importable = [s["name"] for s in result["servers"] if s["importable"]]
        # The user's own --select stays in the command to run; without one, every importable server.
        importable = [s["name"] for s in result["servers"] if s["importable"] and s["selected"]] or importable
        lines.append(
            "Preview only: nothing was written. Review the file before trusting it: inline credentials are copied "
            "with each selected definition, and imported servers can run programs when used."
        )
        if importable:
            lines.append(
                _s(
                    f"To import: import --scope {result['scope']} {quote_word(result['file'])} "
                    f"--select {','.join(importable)} --confirm"
                )
            )
    return "\n".join(lines + _applied_tail(result))


def _import_candidate(server: ImportServer) -> list[str]:
    """One server of an import preview: its row, then what the user should know about it."""
    mark = "✘" if not server["importable"] else ("●" if server["selected"] else "○")
    row = f" {mark} {_s(server['name'])}"
    if server["importable"]:
        row += f" · {_s(str(server['transport']))}"
        fields = []
        for key, value in server["connection"].items():
            fields.append(f"{key} [{', '.join(value)}]" if isinstance(value, dict) else key)
        row += " · " + _s(", ".join(fields)) + " (values hidden)"
        if server["disabled"]:
            row += " · disabled"
    else:
        row += " · cannot import: " + _s(" ".join(server["problems"]))
    lines = [row]
    if server["inlineValues"]:
        lines.append(f"     inline values (possibly credentials): {_s(', '.join(server['inlineValues']))}")
    for p in server["placeholders"]:
        described = f" ({p['description']})" if p["description"] else ""
        lines.append(_s(f"     placeholder: `{p['field']}` needs ${{{p['variable']}}} for {p['source']}{described}"))
    if server["alreadyDefined"]:
        lines.append(f"     already defined in: {', '.join(server['alreadyDefined'])} (needs --replace)")
    lines.extend(f"     note: {_s(note)}" for note in server["notes"])
    return lines


def subscribed(result: SubscribeResult) -> str:
    watch = result["watch"]
    if not result["created"]:
        return f"Already watching {_s(watch['uri'])} on {watch['server']!r}."
    return f"Watching {_s(watch['uri'])} on {watch['server']!r}. An update marks it changed (↻); nothing is read."


def unsubscribed(result: UnsubscribeResult) -> str:
    if not result["removed"]:
        return f"{_s(result['uri'])} on {result['server']!r} was not watched."
    return f"Stopped watching {_s(result['uri'])} on {result['server']!r}."


def subscriptions(result: SubscriptionsResult) -> str:
    watches = result["watches"]
    if not watches:
        return "No resource watches."
    lines = [f"{len(watches)} resource watch(es):"]
    for w in watches:
        mark = "↻" if w["changed"] else "·"
        lines.append(f" {mark} {_s(w['server'])} · {_s(w['uri'])}" + (" (changed)" if w["changed"] else ""))
    return "\n".join(lines)


def prompt_previewed(result: PromptSnapshot) -> str:
    """A preview's snapshot, then how to use or discard it."""
    after = f"Preview {result['previewId']}: use it (mcp/prompt/use) or discard it (mcp/prompt/discard)."
    return result["text"] + "\n" + after
