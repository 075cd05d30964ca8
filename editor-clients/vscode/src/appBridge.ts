// The host side of the MCP Apps bridge (SEP-1865): JSON-RPC over postMessage between one app
// (its sandboxed frame, relayed by the webview page) and the extension. It answers the app's
// `ui/initialize` with the host's context, sends the call's input and result once the app says
// `ui/notifications/initialized` (never before, as the specification requires), passes the
// app's `tools/call` on (the `AppHost` asks the person and sends `mcp/app/callTool`), its
// `ui/open-link` (asked too), shows `ui/message` without sending it anywhere, and reports size
// changes and log lines. No `vscode` import: the unit tests drive it with plain objects.
import { oneLine } from "./consent";
import { jsonEscape } from "./sanitize";
import { capped } from "./serverAsks";

export const APPS_PROTOCOL_VERSION = "2026-01-26";
export const APPS_EXTENSION = "io.modelcontextprotocol/ui";
export const APP_MIME_TYPE = "text/html;profile=mcp-app";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** What an app's frame reads about where it is (`McpUiHostContext`); fields may grow. */
export interface HostContext {
  toolInfo?: { tool: JsonObject };
  theme?: "light" | "dark";
  styles?: { variables?: Record<string, string> };
  displayMode?: "inline";
  availableDisplayModes?: "inline"[];
  containerDimensions?: { width: number; maxHeight?: number } | { width: number; height: number };
  locale?: string;
  timeZone?: string;
  userAgent?: string;
  platform?: "web" | "desktop";
  deviceCapabilities?: { touch: boolean; hover: boolean };
}

/** The tool call an app was opened for: its arguments and its result, as MCP has them. */
export interface AppLaunch {
  arguments: JsonObject;
  result: { content: Json[]; structuredContent?: Json; isError: boolean };
}

/** Raised by `AppHost` methods: `message` is what the app's error carries. */
export class AppRefusal extends Error {}

/** What the bridge needs of the editor. */
export interface AppHost {
  /** A message to the app's frame. */
  send(message: JsonObject): void;
  /** The app's `tools/call` of a tool of its server, asked of the person first; throws `AppRefusal`. */
  callTool(name: string, args: JsonObject): Promise<AppLaunch["result"]>;
  /** Opens `url` after asking; false when the person declined or the URL is not allowed. */
  openLink(url: string): Promise<boolean>;
  /** The app's `ui/message` text (there is no chat to put it in): shown to the person. */
  showMessage(text: string): void;
  /** The app's `notifications/message`. */
  log(level: string, text: string): void;
  /** The app's content size changed (`ui/notifications/size-changed`), in CSS pixels. */
  resize(size: { width?: number; height?: number }): void;
  /** The app asked to be closed (`ui/notifications/request-teardown`). */
  close(): void;
}

const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
/** The specification's implementation-defined error code for refusals. */
const REFUSED = -32000;
const MAX_SIZE = 20_000;
/** A frame may send this many messages a second; past it, the rest of that second is refused. */
export const MAX_MESSAGES_PER_SECOND = 200;
/** Requests of one app that may wait for an answer at once (its tool calls wait on the person). */
export const MAX_PENDING_REQUESTS = 16;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class BridgeError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The text of an app's content blocks (`ui/message`): text blocks only, others named by type. */
export function contentText(content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((block) =>
      isObject(block) && typeof block.text === "string"
        ? block.text
        : `[${String(isObject(block) ? block.type : "?")}]`,
    )
    .join("\n");
}

function size(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.min(value, MAX_SIZE) : undefined;
}

export class AppBridge {
  private initialized = false;
  private closed = false;
  private context: HostContext;
  private windowStart = Number.NEGATIVE_INFINITY;
  private inWindow = 0;
  private pending = 0;
  private floodLogged = false;
  /** Milliseconds, for the flood limit (tests pass their own clock). */
  now: () => number = () => Date.now();

  constructor(
    private readonly host: AppHost,
    private readonly launch: AppLaunch,
    context: HostContext,
    private readonly hostInfo: { name: string; version: string },
    /** The sandbox's policy as applied (`hostCapabilities.sandbox.csp`). */
    private readonly appliedCsp: JsonObject,
  ) {
    this.context = { ...context };
  }

  /** Whether the app finished its handshake (input and result were sent). */
  get ready(): boolean {
    return this.initialized;
  }

  /**
   * Context that changed (the theme, the panel's size): merged, and sent to an initialized app
   * as `ui/notifications/host-context-changed` with only the fields given.
   */
  updateContext(change: HostContext): void {
    this.context = { ...this.context, ...change };
    if (this.initialized && !this.closed) {
      this.notify("ui/notifications/host-context-changed", change as JsonObject);
    }
  }

  /** The panel went away: nothing more is sent. */
  dispose(): void {
    this.closed = true;
  }

  /** One message from the app's frame; whatever is not JSON-RPC 2.0 is ignored. */
  async receive(message: unknown): Promise<void> {
    if (this.closed || !isObject(message) || message.jsonrpc !== "2.0") return;
    const { id, method } = message;
    if (typeof method !== "string") return; // a response: the bridge sends no requests
    const params = isObject(message.params) ? message.params : {};
    if (id !== undefined && typeof id !== "string" && typeof id !== "number") return;
    const flooded = this.flooded();
    if (id === undefined) return flooded ? undefined : this.onNotification(method, params);
    if (flooded || this.pending >= MAX_PENDING_REQUESTS) {
      const why = flooded
        ? `More than ${MAX_MESSAGES_PER_SECOND} messages in a second: refused.`
        : `More than ${MAX_PENDING_REQUESTS} requests waiting for an answer: refused.`;
      this.respond({ jsonrpc: "2.0", id, error: { code: REFUSED, message: why } });
      return;
    }
    this.pending += 1;
    try {
      const result = await this.onRequest(method, params);
      this.respond({ jsonrpc: "2.0", id, result });
    } catch (error) {
      const code = error instanceof BridgeError ? error.code : REFUSED;
      const text = error instanceof Error ? error.message : String(error);
      this.respond({ jsonrpc: "2.0", id, error: { code, message: text } });
    } finally {
      this.pending -= 1;
    }
  }

  /** Whether this message is past the second's limit (logged once per app: a flood is not logged whole). */
  private flooded(): boolean {
    const now = this.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    this.inWindow += 1;
    if (this.inWindow <= MAX_MESSAGES_PER_SECOND) return false;
    if (!this.floodLogged) {
      this.floodLogged = true;
      this.host.log(
        "warning",
        `the app sent more than ${MAX_MESSAGES_PER_SECOND} messages in a second; the rest are refused`,
      );
    }
    return true;
  }

  private respond(message: JsonObject): void {
    if (!this.closed) this.host.send(message);
  }

  private notify(method: string, params: JsonObject): void {
    this.host.send({ jsonrpc: "2.0", method, params });
  }

  private async onRequest(method: string, params: Record<string, unknown>): Promise<JsonObject> {
    switch (method) {
      case "ui/initialize":
        return this.initializeResult();
      case "ping":
        return {};
      case "tools/call":
        return this.callTool(params);
      case "ui/open-link":
        return this.openLink(params);
      case "ui/message":
        this.host.showMessage(contentText(params.content));
        throw new BridgeError(REFUSED, "This host has no chat to send the message to; it was shown to the person.");
      case "ui/request-display-mode":
        return { mode: "inline" };
      default:
        throw new BridgeError(METHOD_NOT_FOUND, `Method not supported by this host: ${method.slice(0, 80)}`);
    }
  }

  private initializeResult(): JsonObject {
    return {
      protocolVersion: APPS_PROTOCOL_VERSION,
      hostInfo: this.hostInfo,
      hostCapabilities: {
        openLinks: {},
        serverTools: {},
        logging: {},
        sandbox: { permissions: {}, csp: this.appliedCsp },
      },
      hostContext: this.context as JsonObject,
    };
  }

  private async callTool(params: Record<string, unknown>): Promise<JsonObject> {
    const name = params.name;
    const args = params.arguments ?? {};
    if (typeof name !== "string" || !name || !isObject(args)) {
      throw new BridgeError(INVALID_PARAMS, "tools/call needs a tool name and an arguments object.");
    }
    const result = await this.host.callTool(name, args as JsonObject);
    return { ...result } as JsonObject;
  }

  private async openLink(params: Record<string, unknown>): Promise<JsonObject> {
    if (typeof params.url !== "string") throw new BridgeError(INVALID_PARAMS, "ui/open-link needs a url.");
    if (!(await this.host.openLink(params.url))) throw new BridgeError(REFUSED, "Link opening denied by user");
    return {};
  }

  private onNotification(method: string, params: Record<string, unknown>): void {
    switch (method) {
      case "ui/notifications/initialized":
        if (this.initialized) return;
        this.initialized = true;
        this.notify("ui/notifications/tool-input", { arguments: this.launch.arguments });
        this.notify("ui/notifications/tool-result", this.launch.result as JsonObject);
        return;
      case "ui/notifications/size-changed": {
        const change = { width: size(params.width), height: size(params.height) };
        if (change.width !== undefined || change.height !== undefined) this.host.resize(change);
        return;
      }
      case "notifications/message":
        this.host.log(typeof params.level === "string" ? params.level : "info", logText(params.data));
        return;
      case "ui/notifications/request-teardown":
        this.host.close();
        return;
      default:
        return;
    }
  }
}

function logText(data: unknown): string {
  return typeof data === "string" ? data : (JSON.stringify(data) ?? "");
}

/**
 * Which of an app's tool calls the person allowed: asked once per app (server and URI) and
 * tool for as long as the window lives, one question at a time; a refusal is not remembered
 * (the next call asks again).
 */
export class CallApprovals {
  private readonly allowed = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  /** Whether the call may go; `ask` runs only when this app's tool was not allowed before. */
  decide(app: { server: string; uri: string }, tool: string, ask: () => Promise<boolean>): Promise<boolean> {
    const key = JSON.stringify([app.server, app.uri, tool]);
    const turn = this.queue.then(async () => {
      if (this.allowed.has(key)) return true;
      const yes = await ask();
      if (yes) this.allowed.add(key);
      return yes;
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }
}

/** Whether `url` may be offered to the browser from an app: http(s) and mailto only. */
export function openableLink(url: string): URL | undefined {
  try {
    const parsed = new URL(url);
    return ["http:", "https:", "mailto:"].includes(parsed.protocol) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The modal before an app's tool call: one line naming the app's server and tool, the arguments below. */
export function callQuestion(
  app: { server: string; uri: string },
  tool: string,
  args: JsonObject,
): { message: string; detail: string } {
  const json = jsonEscape(JSON.stringify(args, null, 2));
  return {
    message: `An app of ${oneLine(app.server)} asks to call its tool ${JSON.stringify(oneLine(tool))}.`,
    detail: `App: ${oneLine(app.uri)}\nArguments:\n${capped(json, 2000).text}\n\nAllowed, this app may call this tool again until the window closes.`,
  };
}

/** The modal before an app's link opens in the browser: the whole URL and its host. */
export function linkQuestion(app: { server: string; uri: string }, url: URL): { message: string; detail: string } {
  return {
    message: `An app of ${oneLine(app.server)} asks to open ${oneLine(url.host || url.protocol)} in the browser.`,
    detail: `App: ${oneLine(app.uri)}\nURL: ${capped(oneLine(url.href), 2000).text}`,
  };
}

/**
 * What the webview page reports about itself (its theme class, VS Code's colours, its size),
 * as the host context's fields: the panel's width is the app's, its height grows with the app
 * (the panel scrolls).
 */
export function pageContext(page: unknown): HostContext {
  const value = isObject(page) ? page : {};
  const context: HostContext = {};
  if (value.theme === "light" || value.theme === "dark") context.theme = value.theme;
  if (isObject(value.variables)) {
    const variables: Record<string, string> = {};
    for (const [name, css] of Object.entries(value.variables)) {
      if (name.startsWith("--") && typeof css === "string" && css.length <= 500) variables[name] = css;
    }
    context.styles = { variables };
  }
  const width = size(value.width);
  if (width !== undefined) context.containerDimensions = { width };
  return context;
}
