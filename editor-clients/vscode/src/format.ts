// View models: how status rows, candidates and failures read in the status bar, the servers
// view, quick picks and messages. Pure functions (no `vscode` import), unit-tested.
import type {
  BackgroundCallView,
  Candidate,
  CatalogCounts,
  Diagnostic,
  EngineStatus,
  ServerToolsResult,
  StatusRow,
} from "./protocol";
import { stripControls } from "./sanitize";
import { type ContextFigures, sessionLines } from "./tokens";

export type ClientState = "stopped" | "starting" | "running" | "failed";

export interface StatusBarModel {
  text: string;
  tooltipLines: string[];
  /** The engine serving this window and its clients (`engineLines`); empty without one. */
  engineLines: string[];
  severity: "ok" | "warning" | "error";
  /** Servers waiting for the person's approval (clicking the item then reviews them). */
  approvals: number;
  /** Servers that need a login (`needs_login`); clicking the item then logs in (to the one, or picks). */
  logins: string[];
}

const STATE_MARK: Record<StatusRow["state"], string> = {
  idle: "○",
  connecting: "▶",
  connected: "●",
  disabled: "○",
  failed: "✘",
  needs_login: "⚿",
};

/** A project server that is new or changed on disk and waits for the person's approval. */
export function needsApproval(row: StatusRow): boolean {
  return row.approvalRequired === true;
}

/** How a row's state reads: "needs approval" instead of "disabled" while it waits for one, "needs login". */
export function stateText(row: StatusRow): string {
  return needsApproval(row) ? "needs approval" : row.state === "needs_login" ? "needs login" : row.state;
}

/** The codicon a server's state shows with in the servers view. */
export function stateIcon(state: StatusRow["state"], approvalRequired = false): { id: string; color?: string } {
  if (approvalRequired) return { id: "shield", color: "list.warningForeground" };
  switch (state) {
    case "connected":
      return { id: "pass-filled", color: "testing.iconPassed" };
    case "connecting":
      return { id: "loading~spin" };
    case "failed":
      return { id: "error", color: "testing.iconFailed" };
    case "needs_login":
      return { id: "key", color: "list.warningForeground" };
    case "disabled":
      return { id: "circle-slash", color: "disabledForeground" };
    default:
      return { id: "circle-outline" };
  }
}

function count(value: number | null | undefined): string {
  return value === null || value === undefined ? "—" : String(value);
}

/** "8 tools · 3 resources + 1 template · 2 prompts", or "not fetched yet". */
export function catalogSummary(catalog: CatalogCounts | null, source?: string | null): string {
  if (!catalog || Object.values(catalog).every((v) => v === null)) return "catalog not fetched yet";
  const parts = [`${count(catalog.tools)} tools${source === "cache" ? " (cached)" : ""}`];
  if (catalog.resources !== null || catalog.templates !== null) {
    parts.push(`${count(catalog.resources)} resources + ${count(catalog.templates)} templates`);
  }
  if (catalog.prompts !== null) parts.push(`${count(catalog.prompts)} prompts`);
  return parts.join(" · ");
}

/** "1,234 tokens": what the server's exposed tool definitions cost a model's context; "" before they are counted. */
export function tokensText(row: StatusRow): string {
  return row.tokens === null || row.tokens === undefined ? "" : `${row.tokens.toLocaleString("en-US")} tokens`;
}

/**
 * The status bar tooltip's context line: every counted server's tool definitions together, what a host
 * connected to each of them directly pays on every turn (docs/context.md); "" before any is counted.
 */
export function contextLine(rows: StatusRow[]): string {
  const counted = rows.filter((r) => r.state !== "disabled" && r.tokens !== null && r.tokens !== undefined);
  if (counted.length === 0) return "";
  const total = counted.reduce((sum, r) => sum + (r.tokens ?? 0), 0);
  const enabled = rows.filter((r) => r.state !== "disabled").length;
  return `Tool definitions: ${total.toLocaleString("en-US")} tokens (${counted.length} of ${enabled} servers counted, estimated)`;
}

/** "shared by 3" for a server whose process other clients of the engine use too; "" for one of its own. */
export function sharedText(row: StatusRow): string {
  const sharers = row.sharedBy ?? 1;
  return sharers > 1 ? `shared by ${sharers}` : "";
}

/** "42s", "3m 5s", "2h 4m", "3d 2h": the two largest units (as the sidecar's status text). */
export function duration(seconds: number): string {
  const units: [string, number][] = [
    ["d", 86400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(seconds));
  for (const [name, size] of units) {
    if (rest >= size || (name === "s" && parts.length === 0)) {
      parts.push(`${Math.floor(rest / size)}${name}`);
      rest %= size;
    } else if (parts.length > 0) {
      parts.push(`0${name}`);
    }
    if (parts.length === 2) break;
  }
  return parts.join(" ");
}

const CLIENT_KIND: Record<string, string> = { lsp: "editor", mcp: "host", cli: "CLI run" };

/** The engine's line, then one line per client attached to it ("this window" marked); none without an engine. */
export function engineLines(engine: EngineStatus | null | undefined): string[] {
  if (!engine) return [];
  const count = `${engine.clients.length} client${engine.clients.length === 1 ? "" : "s"}`;
  const head = `Engine pid ${engine.pid} · mcp-sidecar ${firstLine(engine.version, 40)} · up ${duration(engine.uptimeSeconds)} · ${count}`;
  const clients = engine.clients.map((client) => {
    const kind = CLIENT_KIND[client.kind] ?? firstLine(client.kind, 10);
    const workspace = client.workspace === null ? "no workspace" : firstLine(client.workspace, 200);
    return `${kind} · ${workspace}${client.thisClient ? " (this window)" : ""}`;
  });
  return [head, ...clients];
}

/** One line per server, as in the status tooltip and quick pick. */
export function serverLine(row: StatusRow): string {
  const shared = sharedText(row);
  const tokens = tokensText(row);
  const loaded =
    (tokens ? ` · ${tokens}` : "") + (row.loaded > 0 ? ` · ${row.loaded} loaded` : "") + (shared ? ` · ${shared}` : "");
  const problem =
    row.state === "needs_login"
      ? " — log in to use it"
      : row.state === "failed" && row.lastDiagnostic
        ? ` — ${row.lastDiagnostic.message}`
        : "";
  const mark = needsApproval(row) ? "⚠" : STATE_MARK[row.state];
  return `${mark} ${row.name} · ${stateText(row)} · ${row.scope} · ${row.transport}${loaded}${problem}`;
}

/** The servers view's description next to a server's name. */
export function serverDescription(row: StatusRow): string {
  const counts = row.catalog ? catalogSummary(row.catalog, row.catalogSource) : "";
  return [stateText(row), row.scope, counts, tokensText(row), sharedText(row)]
    .filter((part) => part !== "" && part !== "catalog not fetched yet")
    .join(" · ");
}

/** The status bar item for the client's state, the sidecar's server rows and the engine serving it. */
export function statusBarModel(
  state: ClientState,
  rows: StatusRow[],
  engine: EngineStatus | null = null,
  profile: string | null = null,
  context?: ContextFigures,
): StatusBarModel {
  if (state === "stopped") {
    return {
      text: "$(debug-disconnect) MCP: stopped",
      tooltipLines: ["The sidecar is not running."],
      engineLines: [],
      severity: "warning",
      approvals: 0,
      logins: [],
    };
  }
  if (state === "failed") {
    return {
      text: "$(error) MCP: sidecar failed",
      tooltipLines: ["The sidecar could not start; see the log."],
      engineLines: [],
      severity: "error",
      approvals: 0,
      logins: [],
    };
  }
  if (state === "starting") {
    return {
      text: "$(loading~spin) MCP: starting",
      tooltipLines: ["Starting the sidecar…"],
      engineLines: [],
      severity: "ok",
      approvals: 0,
      logins: [],
    };
  }
  const connected = rows.filter((r) => r.state === "connected").length;
  const failed = rows.filter((r) => r.state === "failed").length;
  const approvals = rows.filter(needsApproval).length;
  // A server that needs a login is not failed: a login fixes it, and the item offers one.
  const logins = rows.filter((r) => r.state === "needs_login").map((r) => r.name);
  const connecting = rows.some((r) => r.state === "connecting");
  const icon = connecting
    ? "$(loading~spin)"
    : approvals > 0
      ? "$(shield)"
      : failed > 0
        ? "$(warning)"
        : logins.length > 0
          ? "$(key)"
          : "$(plug)";
  const parts = [`${connected} connected`];
  if (failed > 0) parts.push(`${failed} failed`);
  if (logins.length > 0) parts.push(`${logins.length} ${logins.length === 1 ? "needs" : "need"} login`);
  if (approvals > 0) parts.push(`${approvals} ${approvals === 1 ? "needs" : "need"} approval`);
  const label = profile ? `MCP [${stripControls(profile)}]` : "MCP";
  const text = rows.length === 0 ? `${icon} ${label}: no servers` : `${icon} ${label}: ${parts.join(", ")}`;
  const servers = contextLine(rows);
  const tooltipLines =
    rows.length === 0
      ? ["No MCP servers are configured."]
      : [...rows.map(serverLine), ...(servers ? [servers] : []), ...(context ? sessionLines(context) : [])];
  if (profile) tooltipLines.unshift(`Profile: ${stripControls(profile)} (only its servers are searched)`);
  const severity = failed > 0 || approvals > 0 || logins.length > 0 ? "warning" : "ok";
  return { text, tooltipLines, engineLines: engineLines(engine), severity, approvals, logins };
}

/** Merges one `mcp/serverStatus` row into the list, keeping the sidecar's order. */
export function mergeRow(rows: StatusRow[], row: StatusRow): StatusRow[] {
  const index = rows.findIndex((r) => r.name === row.name);
  if (index < 0) return [...rows, row];
  const next = rows.slice();
  next[index] = row;
  return next;
}

const KIND_ICON: Record<Candidate["kind"], string> = {
  tool: "$(tools)",
  resource: "$(file)",
  template: "$(file-symlink-file)",
  prompt: "$(comment-discussion)",
};

/** A search result row: label, description and detail of the quick pick item; a weak candidate
 * (neither keywords nor meaning vouch for it) says so at the end of its description. */
export function candidateItem(candidate: Candidate): { label: string; description: string; detail: string } {
  const item = kindItem(candidate);
  return candidate.weak ? { ...item, description: `${item.description} · weak match` } : item;
}

function kindItem(candidate: Candidate): { label: string; description: string; detail: string } {
  const description = candidate.description ?? candidate.title ?? "";
  switch (candidate.kind) {
    case "tool": {
      const required = candidate.required.length ? `(${candidate.required.join(", ")})` : "()";
      return {
        label: `${KIND_ICON.tool} ${candidate.id}${required}`,
        description: `tool · ${candidate.server}${candidate.loaded ? " · active" : ""}`,
        detail: description,
      };
    }
    case "resource":
      return {
        label: `${KIND_ICON.resource} ${candidate.uri}`,
        description: `resource · ${candidate.server}${candidate.mimeType ? ` · ${candidate.mimeType}` : ""}`,
        detail: candidate.title ? `${candidate.title} — ${description}` : description,
      };
    case "template":
      return {
        label: `${KIND_ICON.template} ${candidate.uriTemplate}`,
        description: `template · ${candidate.server}`,
        detail: description,
      };
    case "prompt": {
      const args = candidate.arguments.map((a) => (a.required ? a.name : `${a.name}?`)).join(", ");
      return {
        label: `${KIND_ICON.prompt} ${candidate.server} · ${candidate.name}(${args})`,
        description: `prompt · ${candidate.server}`,
        detail: description,
      };
    }
  }
}

/** A row of a server's tool picker: `tool` is the name to show (`tools SERVER TOOL`), none for the whole list. */
export interface ToolPickItem {
  label: string;
  description: string;
  tool?: string;
}

/** One line of server text: controls removed, whitespace runs collapsed, at most `limit` characters. */
function firstLine(text: string | null | undefined, limit = 120): string {
  const [first = ""] = stripControls(text ?? "")
    .trim()
    .split("\n");
  const line = first.replace(/\s+/g, " ");
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/** A server's tools to pick one for its signature, after a first row that lists them all as text. */
export function toolPickItems(result: ServerToolsResult): ToolPickItem[] {
  const all = { label: "$(list-flat) All tools", description: `${result.tools.length} · the list as text` };
  const tools = result.tools.map((tool) => ({
    label: `${KIND_ICON.tool} ${firstLine(tool.name)}`,
    description: firstLine(tool.description ?? (typeof tool.title === "string" ? tool.title : "")),
    tool: tool.name,
  }));
  return [all, ...tools];
}

/** True when a value looks like the sidecar's diagnostic object. */
export function isDiagnostic(value: unknown): value is Diagnostic {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Diagnostic).code === "string" &&
    typeof (value as Diagnostic).message === "string"
  );
}

/** A failure as one sentence for a person: the diagnostic's message and hint, never a stack. */
export function describeError(error: unknown): { message: string; code?: string; usage?: string } {
  const data = (error as { data?: unknown } | null)?.data;
  if (isDiagnostic(data)) {
    const hint = data.hint ? ` ${data.hint}` : "";
    return { message: `${data.message}${hint}`, code: data.code, usage: data.usage };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message: message.split("\n")[0] ?? message };
}

/** The language a read-only resource document opens in. */
export function languageFor(mimeType: string | undefined, text: string): string {
  if (mimeType && /^application\/(.+\+)?json$/.test(mimeType)) return "json";
  if (mimeType === "text/markdown") return "markdown";
  if (!mimeType) {
    const trimmed = text.trim();
    if ((trimmed.startsWith("{") && trimmed.endsWith("}")) || (trimmed.startsWith("[") && trimmed.endsWith("]"))) {
      try {
        JSON.parse(trimmed);
        return "json";
      } catch {
        return "plaintext";
      }
    }
  }
  return "plaintext";
}

/** The "↻ server · uri changed" line of a watch notification. */
export function watchMessage(server: string, uri: string): string {
  return `↻ ${server} · ${uri} changed`;
}

/** A background call's line in the running-calls view: its status, then its progress (`3/10 step 3`). */
export function callDescription(call: BackgroundCallView): string {
  const parts: string[] = [call.status];
  const progress = call.progress ?? {};
  if (typeof progress.progress === "number") {
    parts.push(typeof progress.total === "number" ? `${progress.progress}/${progress.total}` : `${progress.progress}`);
  }
  if (progress.message) parts.push(stripControls(progress.message).replace(/\s+/g, " "));
  return parts.join(" · ");
}

/** The status-bar entry of the background calls: undefined when there are none. */
export function callsStatusText(calls: BackgroundCallView[]): string | undefined {
  if (calls.length === 0) return undefined;
  const running = calls.filter((c) => c.status === "running").length;
  const ended = calls.length - running;
  if (running === 0) return `$(check) ${ended} MCP result${ended === 1 ? "" : "s"}`;
  return `$(sync~spin) ${running} MCP call${running === 1 ? "" : "s"}${ended > 0 ? ` · ${ended} done` : ""}`;
}
