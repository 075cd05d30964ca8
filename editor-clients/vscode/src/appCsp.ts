// The Content Security Policy an MCP App is rendered under, built from the `csp` its server
// declared on the resource (`_meta.ui.csp`, passed on by `mcp/app/resource` as `ui`), as the
// MCP Apps specification (SEP-1865) asks of hosts: its restrictive default when nothing is
// declared, and only the declared origins added, never anything else. Declared values are the
// server's strings going into a policy, so only plain origins pass (a `;` or a quote would add
// directives); the others are dropped and reported. No `vscode` import: unit-tested directly.
import { stripControls } from "./sanitize";

/** `_meta.ui.csp` of an app's resource: the origins it needs, per kind of use. */
export interface AppCsp {
  /** fetch, XHR and WebSocket: `connect-src`. */
  connectDomains?: string[];
  /** Scripts, styles, images, fonts and media: `script-src`, `style-src`, `img-src`, `font-src`, `media-src`. */
  resourceDomains?: string[];
  /** Nested frames: `frame-src`. */
  frameDomains?: string[];
  /** `<base href>`: `base-uri`. */
  baseUriDomains?: string[];
}

export const CSP_KEYS = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"] as const;

/** Origins at most per kind: a policy is one header-sized string. */
const MAX_ORIGINS = 64;

// scheme://host[:port], host labels of letters, digits and '-', optionally `*.` in front (the
// specification's wildcard subdomains). No path, no bare `*`, no other scheme (data:, blob:).
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const ORIGIN = new RegExp(`^(?:https?|wss?)://(?:\\*\\.)?${LABEL}(?:\\.${LABEL})*(?::\\d{1,5})?$`);

export interface DeclaredCsp {
  /** The origins kept, per key (keys without any left out). */
  csp: AppCsp;
  /** What was dropped, as `key: value` (values shortened), for the log and the panel. */
  rejected: string[];
}

function shown(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const clean = stripControls(text).replace(/\s+/g, " ");
  return clean.length > 80 ? `${clean.slice(0, 80)}…` : clean;
}

/** The origins of `ui.csp` that may go into a policy, and what was refused. */
export function declaredCsp(ui: unknown): DeclaredCsp {
  const result: DeclaredCsp = { csp: {}, rejected: [] };
  const csp = (ui as { csp?: unknown } | null | undefined)?.csp;
  if (csp === undefined || csp === null) return result;
  if (typeof csp !== "object" || Array.isArray(csp)) {
    result.rejected.push(`csp: ${shown(csp)}`);
    return result;
  }
  for (const key of CSP_KEYS) {
    const values = (csp as Record<string, unknown>)[key];
    if (values === undefined) continue;
    if (!Array.isArray(values)) {
      result.rejected.push(`${key}: ${shown(values)}`);
      continue;
    }
    const kept: string[] = [];
    for (const value of values) {
      const origin = typeof value === "string" ? value.replace(/\/$/, "") : "";
      if (ORIGIN.test(origin) && kept.length < MAX_ORIGINS) {
        if (!kept.includes(origin)) kept.push(origin);
      } else {
        result.rejected.push(`${key}: ${shown(value)}`);
      }
    }
    if (kept.length) result.csp[key] = kept;
  }
  return result;
}

function sources(base: string[], origins: string[] | undefined, none: string): string {
  const all = [...base, ...(origins ?? [])];
  return all.length ? all.join(" ") : none;
}

/**
 * The policy of one app: the specification's default (`default-src 'none'`, inline scripts and
 * styles, `data:` images and media, no connections) with the declared origins added where they
 * belong; `frame-src 'none'` and `base-uri 'self'` unless declared; no plugins (`object-src`)
 * and no form submissions. `extra` adds sources to `script-src` and `style-src`: the webview's
 * own page loads its relay script from the extension (`webview.cspSource`).
 */
export function appPolicy(csp: AppCsp, extra: string[] = []): string {
  const resources = csp.resourceDomains;
  return [
    "default-src 'none'",
    `script-src ${sources(["'self'", "'unsafe-inline'", ...extra], resources, "")}`,
    `style-src ${sources(["'self'", "'unsafe-inline'", ...extra], resources, "")}`,
    `img-src ${sources(["'self'", "data:"], resources, "")}`,
    `font-src ${sources(["'self'", "data:"], resources, "")}`,
    `media-src ${sources(["'self'", "data:"], resources, "")}`,
    `connect-src ${sources([], csp.connectDomains, "'none'")}`,
    `frame-src ${sources([], csp.frameDomains, "'none'")}`,
    `base-uri ${sources([], csp.baseUriDomains, "'self'")}`,
    "object-src 'none'",
    "form-action 'none'",
  ].join("; ");
}

function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

// A BOM, white space and comments, then the doctype: the policy goes right after it, so the
// parser puts it first in <head> without ending up in quirks mode.
const PROLOGUE = /^\uFEFF?(?:\s|<!--[\s\S]*?-->)*(?:<!doctype[^>]*>)?/i;

/** The app's document with `policy` as its first `<meta http-equiv="Content-Security-Policy">`. */
export function withPolicy(html: string, policy: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${attribute(policy)}">`;
  const prologue = PROLOGUE.exec(html)?.[0] ?? "";
  return `${prologue}${meta}${html.slice(prologue.length)}`;
}
