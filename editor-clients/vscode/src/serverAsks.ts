// What a server asks or tells the person through the sidecar (MCP's elicitation, sampling,
// progress, logging and icons), as the text and choices the extension shows. Pure (no
// `vscode`), unit-tested; `elicitation.ts`, `sampling.ts`, `progress.ts` and `notifications.ts`
// put it on screen. Every server string is plain text here: VS Code's modal dialogs and
// notifications show it as written.
import type {
  Icon,
  McpCapabilities,
  SampleParams,
  SamplingContent,
  SamplingMessage,
  ServerLogParams,
} from "./protocol";
import { stripControls } from "./sanitize";

// ---------------------------------------------------------------- capabilities

/**
 * `initializationOptions.mcpCapabilities`: form and URL elicitation always (the extension
 * renders both), sampling only where VS Code has a language model API and the person left
 * `mcpSidecar.sampling.enabled` on, and MCP Apps unless `mcpSidecar.apps.enabled` is off (the
 * extension renders them in a webview: src/apps.ts).
 */
export function mcpCapabilities(options: {
  languageModels: boolean;
  samplingEnabled: boolean;
  appsEnabled?: boolean;
}): McpCapabilities {
  const capabilities: McpCapabilities = { elicitation: { form: {}, url: {} } };
  if (options.languageModels && options.samplingEnabled) capabilities.sampling = {};
  if (options.appsEnabled) {
    capabilities.extensions = { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } };
  }
  return capabilities;
}

function line(text: string): string {
  return stripControls(text).replace(/\s+/g, " ").trim();
}

/** Server text that keeps its lines (a message, a prompt), with nothing hidden in it. */
function block(text: string): string {
  return stripControls(text).replace(/[\u2028\u2029]/g, "\n");
}

/** At most `limit` characters of `text`, with a note of how much was left out. */
export function capped(text: string, limit: number): { text: string; truncated: boolean } {
  const chars = [...text];
  if (chars.length <= limit) return { text, truncated: false };
  const rest = chars.length - limit;
  return { text: `${chars.slice(0, limit).join("")}\n… (${rest} more characters)`, truncated: true };
}

// ---------------------------------------------------------------- URL elicitation

export interface UrlConsent {
  message: string;
  detail: string;
  /** "Open <host>", or undefined when the URL is not http(s) (then only copying is offered). */
  open?: string;
  copy: string;
  decline: string;
}

export const COPY_URL = "Copy URL (I'll open it myself)";
export const DECLINE = "Decline";

/** The modal asking before a URL elicitation's page is opened: the message, the whole URL, its host. */
export function urlConsent(params: { server: string; message: string; url: string; host: string }): UrlConsent {
  const server = line(params.server);
  const host = line(params.host);
  const web = /^https?:\/\//i.test(params.url);
  const detail = [
    block(params.message),
    "",
    `It asks you to open this address${web ? "" : " (not a web address: copy it to use it)"}:`,
    line(params.url),
    "",
    `Host: ${host}`,
    "",
    "Open it only if you expected this step and trust that host. Decline tells the server no.",
  ].join("\n");
  return {
    message: `${server} asks you to continue in the browser`,
    detail,
    open: web ? `Open ${host}` : undefined,
    copy: COPY_URL,
    decline: DECLINE,
  };
}

// ---------------------------------------------------------------- URL steps a tool call waits for

interface Group {
  server: string;
  pending: Set<string>;
  retry: () => void;
}

/**
 * The browser steps (URL elicitations) the person consented to, and the tool calls that failed
 * with `elicitation_required` until those steps are done. `complete` is the server's notice
 * that one step is done: when it finishes every pending step of a failed call, it answers
 * that call's retry (the person chooses whether to run it; nothing re-runs by itself).
 */
export class BrowserSteps {
  private readonly consented = new Map<string, string>();
  private readonly groups = new Map<string, Group>();

  private static key(server: string, id: string): string {
    return `${server}\n${id}`;
  }

  /** The person consented to the step `id` of `server` (the page was opened or copied). */
  expect(server: string, id: string): void {
    this.consented.set(BrowserSteps.key(server, id), server);
    // The notice may never come: keep the newest few hundred.
    if (this.consented.size > 200) this.consented.delete(this.consented.keys().next().value as string);
  }

  /** Whether the person consented to `id` and its completion has not been heard yet. */
  waiting(server: string, id: string): boolean {
    return this.consented.has(BrowserSteps.key(server, id));
  }

  /**
   * A call of `server` failed until the steps `ids` are done: `retry` becomes available when
   * the last of them completes. Returns false when none is pending (all done already).
   */
  afterSteps(server: string, ids: string[], retry: () => void): boolean {
    const group: Group = { server, pending: new Set(ids), retry };
    if (group.pending.size === 0) return false;
    for (const id of ids) this.groups.set(BrowserSteps.key(server, id), group);
    return true;
  }

  /** The server says step `id` is done: the retry of a call now free to run, if any. */
  complete(server: string, id: string): { known: boolean; retry?: () => void } {
    const key = BrowserSteps.key(server, id);
    const known = this.consented.delete(key);
    const group = this.groups.get(key);
    if (!group) return { known };
    this.groups.delete(key);
    group.pending.delete(id);
    return group.pending.size === 0 ? { known: true, retry: group.retry } : { known: true };
  }
}

// ---------------------------------------------------------------- sampling

const SHOWN_CHARACTERS = 3000;

function contentParts(content: SamplingContent | SamplingContent[]): SamplingContent[] {
  return Array.isArray(content) ? content : [content];
}

function jsonLine(value: unknown): string {
  return JSON.stringify(value ?? null) ?? "null";
}

/**
 * One content block as the model receives it, in full: text as it is, an embedded text
 * resource with its URI, a tool use with its input and a tool result with its content (as text:
 * the editor's model API takes text); an image, audio or a binary resource is left out, said
 * so in its place.
 */
export function contentText(part: SamplingContent): { text: string; omitted?: string } {
  if (part.type === "text" && typeof part.text === "string") return { text: part.text };
  const resource = part.resource as { uri?: unknown; text?: unknown; mimeType?: unknown } | undefined;
  if (part.type === "resource" && typeof resource?.text === "string") {
    return { text: `[resource ${line(String(resource.uri ?? ""))}]\n${resource.text}` };
  }
  if (part.type === "tool_use") {
    return {
      text: `[tool use ${line(String(part.name ?? ""))} ${line(String(part.id ?? ""))}: ${jsonLine(part.input)}]`,
    };
  }
  if (part.type === "tool_result") {
    const inner = Array.isArray(part.content) ? (part.content as SamplingContent[]) : [];
    const body = inner.map((p) => contentText(p).text).join("\n");
    return {
      text: `[tool result ${line(String(part.toolUseId ?? ""))}${part.isError === true ? ", an error" : ""}]\n${body}`,
    };
  }
  const mime =
    typeof part.mimeType === "string" ? part.mimeType : typeof resource?.mimeType === "string" ? resource.mimeType : "";
  const what = `${line(String(part.type))}${mime ? ` ${line(mime)}` : ""}`;
  return { text: `[${what} left out: the editor sends text only]`, omitted: what };
}

export interface ChatTurn {
  role: "user" | "assistant";
  text: string;
}

/**
 * The conversation sent to the model: VS Code's language model API has user and assistant
 * messages only, so the system prompt goes first as a user message, said to be one.
 */
export function chatTurns(params: Pick<SampleParams, "messages" | "systemPrompt">): ChatTurn[] {
  const turns: ChatTurn[] = [];
  if (params.systemPrompt) turns.push({ role: "user", text: `System instructions:\n${params.systemPrompt}` });
  for (const message of params.messages) {
    const text = contentParts(message.content)
      .map((part) => contentText(part).text)
      .join("\n");
    turns.push({ role: message.role === "assistant" ? "assistant" : "user", text });
  }
  return turns;
}

function messageLines(message: SamplingMessage): string {
  const body = contentParts(message.content)
    .map((part) => block(contentText(part).text))
    .join("\n");
  return `[${message.role === "assistant" ? "assistant" : "user"}]\n${body}`;
}

export interface SamplingQuestion {
  message: string;
  detail: string;
  /** Everything, for "Show Full Request" when `detail` had to be cut (then it must be read before Send). */
  full: string;
  truncated: boolean;
}

/** The request's other parameters, one line each: what the model is asked to honour. */
function parameterLines(params: SampleParams): string[] {
  const lines: string[] = [];
  if (typeof params.temperature === "number") lines.push(`Temperature: ${params.temperature}`);
  if (Array.isArray(params.stopSequences) && params.stopSequences.length > 0) {
    lines.push(`Stop sequences: ${params.stopSequences.map((s) => line(jsonLine(s))).join(", ")}`);
  }
  if (params.modelPreferences)
    lines.push(`Model preferences (not used to pick the model): ${line(jsonLine(params.modelPreferences))}`);
  if (params.includeContext) lines.push(`Context asked for (none is added): ${line(String(params.includeContext))}`);
  return lines;
}

/** The tools a server offers the model, in full (they are not passed on: the extension answers with text). */
function toolLines(params: SampleParams): string[] {
  if (!Array.isArray(params.tools) || params.tools.length === 0) return [];
  const lines = [
    "",
    `Tools the server offers the model (${params.tools.length}; not passed on, so the model cannot call them):`,
  ];
  for (const tool of params.tools) {
    lines.push(`- ${line(String(tool.name ?? ""))}: ${block(String(tool.description ?? ""))}`);
    lines.push(`  input schema: ${line(jsonLine(tool.inputSchema))}`);
  }
  if (params.toolChoice) lines.push(`Tool choice: ${line(jsonLine(params.toolChoice))}`);
  return lines;
}

/** The modal asking before a server's sampling request reaches a model: who asks, the model, and everything sent. */
export function samplingRequest(params: SampleParams, model: string): SamplingQuestion {
  const server = line(params.server);
  const parts = [
    `Model: ${line(model)}`,
    `At most ${params.maxTokens} tokens in the answer.`,
    ...parameterLines(params),
  ];
  const omitted = params.messages.flatMap((m) => contentParts(m.content).flatMap((p) => contentText(p).omitted ?? []));
  if (omitted.length > 0) parts.push(`Not sent (the editor sends text only): ${omitted.join(", ")}.`);
  if (params.systemPrompt) parts.push("", "System prompt (sent as the first message):", block(params.systemPrompt));
  parts.push("", "Messages:", ...params.messages.map(messageLines), ...toolLines(params));
  const full = parts.join("\n");
  const shown = capped(full, SHOWN_CHARACTERS);
  return {
    message: `${server} asks to use a language model`,
    detail: shown.truncated
      ? `${shown.text}\n\nThe request is longer than this dialog: read it whole (Show Full Request) before you can send it.`
      : `${shown.text}\n\nNothing is sent to the model unless you choose Send.`,
    full,
    truncated: shown.truncated,
  };
}

/** The modal asking before a model's answer goes back to the server. */
export function samplingAnswer(server: string, model: string, text: string): SamplingQuestion {
  const shown = capped(block(text), SHOWN_CHARACTERS);
  return {
    message: `Return this answer to ${line(server)}?`,
    detail: shown.truncated
      ? `${line(model)} answered:\n\n${shown.text}\n\nThe answer is longer than this dialog: read it whole (Show Full Answer) before you can send it.`
      : `${line(model)} answered:\n\n${shown.text}\n\nThe server receives it only if you choose Send.`,
    full: block(text),
    truncated: shown.truncated,
  };
}

/** A configured `mcpSidecar.sampling.model` as a model selector, or undefined when none is set. */
export function modelSelector(value: unknown): { vendor?: string; family?: string; id?: string } | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const selector: { vendor?: string; family?: string; id?: string } = {};
  for (const key of ["vendor", "family", "id"] as const) {
    const v = (value as Record<string, unknown>)[key];
    if (typeof v === "string" && v.trim() !== "") selector[key] = v.trim();
  }
  return Object.keys(selector).length > 0 ? selector : undefined;
}

// ---------------------------------------------------------------- progress

export type WorkDone =
  | { kind: "begin"; title?: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: "report"; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: "end"; message?: string };

/**
 * Turns LSP work-done progress (absolute percentages) into VS Code's progress reports
 * (increments, and the percentage as the message when the server gave none). One per call; a
 * percentage that goes back is shown as no increment.
 */
export class ProgressSteps {
  private done = 0;

  step(value: WorkDone): { message?: string; increment?: number } | undefined {
    if (value.kind === "end") return undefined;
    const report: { message?: string; increment?: number } = {};
    if (typeof value.message === "string" && value.message !== "") report.message = line(value.message);
    if (typeof value.percentage === "number" && Number.isFinite(value.percentage)) {
      const now = Math.max(0, Math.min(100, value.percentage));
      if (now > this.done) report.increment = now - this.done;
      this.done = Math.max(this.done, now);
      // The bar has no number of its own: say how far it is when the server says nothing else.
      report.message ??= `${Math.round(this.done)}%`;
    }
    return report.message !== undefined || report.increment !== undefined ? report : undefined;
  }
}

// ---------------------------------------------------------------- server logs

const ERROR_LEVELS = new Set(["error", "critical", "alert", "emergency"]);

export function isErrorLevel(level: string): boolean {
  return ERROR_LEVELS.has(level);
}

/** One `mcp/serverLog` message as its server's output channel shows it: `[level] logger: text`. */
export function serverLogLine(params: ServerLogParams): string {
  const logger = typeof params.logger === "string" && params.logger !== "" ? ` ${line(params.logger)}:` : "";
  return `[${line(params.level)}]${logger} ${line(params.text)}`;
}

// ---------------------------------------------------------------- icons

const IMAGE_DATA = /^data:image\/(png|jpeg|gif|webp|svg\+xml)[;,]/i;

/** Whether an icon's `src` may be shown: an https: address or a data: URI of an image. */
export function showableIcon(src: string): boolean {
  return IMAGE_DATA.test(src) || /^https:\/\/[^\s]+$/i.test(src);
}

/**
 * The icon to show for the current colour theme: one made for it, else one without a theme,
 * else any; only data: images and https: sources. Undefined when there is none.
 */
export function pickIcon(icons: Icon[] | undefined, theme: "light" | "dark"): string | undefined {
  const usable = (Array.isArray(icons) ? icons : []).filter((i) => typeof i?.src === "string" && showableIcon(i.src));
  const ranked = [
    ...usable.filter((i) => i.theme === theme),
    ...usable.filter((i) => i.theme === undefined),
    ...usable.filter((i) => i.theme !== undefined && i.theme !== theme),
  ];
  return ranked[0]?.src;
}
