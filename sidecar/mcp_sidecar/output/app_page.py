"""The loopback app page's documents (`services/app_pages.py`): the host page, its bridge, the CSPs.

The host page holds the app in a frame sandboxed with `allow-scripts` alone (an opaque origin: the
app reaches neither the page nor the sidecar, only the bridge's messages) and speaks the MCP Apps
postMessage protocol with it, as the ext-apps SDK's `App` expects its host to: it answers
`ui/initialize`, sends the tool's input and result once the app says `ui/notifications/initialized`,
follows `ui/notifications/size-changed`, answers `ping`, and sends each `tools/call` to the sidecar
(`POST call`, which asks the editor first). Anything else an app asks (open a link, send a message
to the model, change display mode) is refused: this host has no model and opens nothing.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

PROTOCOL_VERSION = "2026-01-26"
"""The MCP Apps protocol version the bridge speaks (the ext-apps SDK's latest)."""

NONE = "'none'"
_ORIGIN = re.compile(r"^(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d{1,5})?$")
_DIRECTIVES: dict[str, tuple[str, ...]] = {
    "connectDomains": ("connect-src",),
    "resourceDomains": ("script-src", "style-src", "img-src", "font-src", "media-src"),
    "frameDomains": ("frame-src",),
    "baseUriDomains": ("base-uri",),
}
_DEFAULTS: dict[str, list[str]] = {
    "default-src": ["'none'"],
    "script-src": ["'self'", "'unsafe-inline'"],
    "style-src": ["'self'", "'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "font-src": ["'self'"],
    "media-src": ["'self'", "data:"],
    "connect-src": [],
    "frame-src": [],
    "object-src": ["'none'"],
    "base-uri": ["'self'"],
    "form-action": ["'none'"],
    "frame-ancestors": ["'self'"],
}


def declared_origins(csp: object, key: str) -> list[str]:
    """The origins an app's `csp` lists under `key` that are plain origins (a scheme, a host, perhaps a
    `*.` subdomain wildcard and a port); anything else (a keyword, a path, a `;`) is dropped."""
    listed = csp.get(key) if isinstance(csp, dict) else None
    if not isinstance(listed, list):
        return []
    return [origin for origin in listed if isinstance(origin, str) and _ORIGIN.match(origin)]


def app_csp(ui: object) -> str:
    """The app document's Content Security Policy: the extension's restrictive default, widened only by
    the origins its `_meta.ui.csp` declares; framed by its host page alone."""
    csp = ui.get("csp") if isinstance(ui, dict) else None
    directives = {name: list(values) for name, values in _DEFAULTS.items()}
    for key, names in _DIRECTIVES.items():
        for origin in declared_origins(csp, key):
            for name in names:
                directives[name].append(origin)
    return "; ".join(f"{name} {' '.join(values or [NONE])}" for name, values in directives.items())


def host_csp(nonce: str) -> str:
    """The host page's policy: its own script and style (by nonce), the app's frame, calls to itself."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; frame-src 'self'; "
        "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def _script_json(value: Any) -> str:
    """JSON safe inside a `<script>` element: no `<`, `>` or `&` that could end it."""
    text = json.dumps(value, ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def host_page(nonce: str, title: str, data: dict[str, Any]) -> str:
    """The host page for one app: the frame, a status line, and the bridge."""
    return _PAGE.format(
        nonce=nonce, title=html.escape(title), data=_script_json(data), version=json.dumps(PROTOCOL_VERSION)
    )


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style nonce="{nonce}">
body {{ margin: 0; font: 13px system-ui, sans-serif; }}
header {{ padding: 4px 8px; border-bottom: 1px solid #8884; }}
#app {{ border: 0; width: 100%; height: 600px; display: block; }}
</style></head>
<body><header><strong>{title}</strong> <span id="status"></span></header>
<iframe id="app" sandbox="allow-scripts" src="app" title="{title}"></iframe>
<script type="application/json" id="mcp-app-data">{data}</script>
<script nonce="{nonce}">
"use strict";
const data = JSON.parse(document.getElementById("mcp-app-data").textContent);
const frame = document.getElementById("app");
const status = document.getElementById("status");
const post = (message) => frame.contentWindow.postMessage({{ jsonrpc: "2.0", ...message }}, "*");
const reply = (id, result) => post({{ id, result }});
const refuse = (id, code, message) => post({{ id, error: {{ code, message }} }});
const notify = (method, params) => post({{ method, params }});
const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;

async function callTool(id, params) {{
  status.textContent = "waiting for the editor to allow " + String(params && params.name);
  try {{
    const response = await fetch("call", {{
      method: "POST",
      headers: {{ "Content-Type": "application/json" }},
      body: JSON.stringify(params || {{}}),
    }});
    const answer = await response.json();
    if (answer.error) refuse(id, answer.error.code, answer.error.message);
    else reply(id, answer.result);
    status.textContent = answer.error ? answer.error.message : "";
  }} catch (error) {{
    refuse(id, -32603, "The sidecar did not answer: " + String(error));
    status.textContent = "the sidecar did not answer";
  }}
}}

window.addEventListener("message", (event) => {{
  if (event.source !== frame.contentWindow) return;
  const message = event.data;
  if (!message || message.jsonrpc !== "2.0" || typeof message.method !== "string") return;
  const id = message.id;
  switch (message.method) {{
    case "ui/initialize":
      reply(id, {{
        protocolVersion: {version},
        hostInfo: {{ name: "mcp-sidecar", version: data.version }},
        hostCapabilities: {{ serverTools: {{}} }},
        hostContext: {{
          theme: dark ? "dark" : "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web",
        }},
      }});
      return;
    case "ui/notifications/initialized":
      if (data.toolInput) notify("ui/notifications/tool-input", {{ arguments: data.toolInput }});
      if (data.toolResult) notify("ui/notifications/tool-result", data.toolResult);
      return;
    case "ui/notifications/size-changed":
      if (message.params && Number.isFinite(message.params.height)) {{
        frame.style.height = Math.max(80, Math.min(4000, message.params.height)) + "px";
      }}
      return;
    case "ping":
      reply(id, {{}});
      return;
    case "tools/call":
      callTool(id, message.params);
      return;
    default:
      if (id !== undefined) refuse(id, -32601, "Not supported by this host: " + message.method);
  }}
}});
</script></body></html>
"""
