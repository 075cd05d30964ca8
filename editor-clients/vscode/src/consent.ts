// What a person is asked before something runs: the `mcp_call` confirmation and the approval
// of changed project servers. Pure (no `vscode`), unit-tested.
//
// Every string a server (or a model) chose is made inert before it reaches Markdown: VS Code
// renders a confirmation's message as Markdown even when it is a plain string, so a tool
// description could otherwise show links, images, command links or a code block that looks
// like the arguments.
import type { PendingApproval, ToolDefinition } from "./protocol";
import { jsonEscape, stripControls } from "./sanitize";

// Line and paragraph separators: a plain newline, like the other controls that separate text.
const SEPARATORS = /[\u2028\u2029]/g;
// CommonMark reads a backslash before any ASCII punctuation as that character, literally.
const ASCII_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/** Text without the characters that hide or reorder what is shown (a carriage return is a newline, as in `stripControls`). */
export function visibleText(text: string): string {
  return stripControls(text).replace(SEPARATORS, "\n");
}

/**
 * Markdown source that renders exactly as `text`: every ASCII punctuation character escaped
 * (no emphasis, links, images, autolinks, HTML, entities, headings, lists, tables or fences),
 * leading blanks kept as no-break spaces (no indented code block), each newline a line break.
 */
export function markdownLiteral(text: string): string {
  return visibleText(text)
    .split("\n")
    .map((line) => {
      const body = line.trimStart();
      const indent = line
        .slice(0, line.length - body.length)
        .replace(/\t/g, "    ")
        .replace(/[^ ]/g, " ");
      return "&nbsp;".repeat(indent.length) + body.replace(ASCII_PUNCTUATION, "\\$&");
    })
    .join("  \n");
}

/** A fenced code block that `code` cannot close: its fence is longer than any backtick run in it. */
export function codeBlock(code: string, language: string): string {
  const longest = Math.max(0, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${visibleText(code)}\n${fence}`;
}

/**
 * A value that will be sent, as a JSON code block that shows exactly what is sent: nothing is
 * removed, every invisible, bidirectional, TAG or control character is a `\uXXXX` escape
 * (a TAG character as its surrogate pair), and the text stays valid JSON of the same value.
 */
export function jsonBlock(value: unknown): string {
  return codeBlock(jsonEscape(JSON.stringify(value ?? {}, null, 2)), "json");
}

/** A string that will be sent, as an inert JSON string literal: quoted, hidden characters escaped. */
export function sentString(text: string): string {
  return markdownLiteral(jsonEscape(JSON.stringify(text)));
}

/** One line of plain text (a title, a dialog line): no line breaks, no invisible characters. */
export function oneLine(text: string): string {
  return visibleText(text).replace(/\s+/g, " ").trim();
}

/**
 * Text for a quick pick item's label, description or detail, which render `$(name)` as an
 * icon: each such reference is escaped so it shows as written.
 */
export function iconLiteral(text: string): string {
  return text.replace(/\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g, "\\$($1)");
}

/**
 * Text for an input box's prompt or validation message, which render `[label](https://...)`
 * (also `command:` and `file:`) as a link and `$(name)` as an icon: the icons are escaped and a
 * space between `]` and `(` keeps a link from forming, so the text reads as the server wrote it.
 */
export function quickInputLiteral(text: string): string {
  return iconLiteral(oneLine(text)).replace(/\]\(/g, "] (");
}

/** The servers whose read-only tools run without asking, from the user's setting value. */
export function autoApprovedServers(value: unknown): Set<string> {
  return new Set(Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : []);
}

function readOnlyHint(tool: ToolDefinition): boolean {
  return (tool.annotations as { readOnlyHint?: unknown } | null | undefined)?.readOnlyHint === true;
}

/** The server says the tool may delete or overwrite data (`destructiveHint: true`, stated, not defaulted). */
export function destructiveHint(tool: ToolDefinition | undefined): boolean {
  return (tool?.annotations as { destructiveHint?: unknown } | null | undefined)?.destructiveHint === true;
}

/**
 * Whether `mcp_call` may skip the confirmation: only for a tool the server marks read-only
 * AND whose server the person listed in `mcpSidecar.autoApproveReadOnly`. A hint is the
 * server's claim about itself, so on its own it never waives the question.
 */
export function skipsConfirmation(tool: ToolDefinition | undefined, autoApproved: ReadonlySet<string>): boolean {
  return tool !== undefined && autoApproved.has(tool.server) && readOnlyHint(tool);
}

export interface CallConfirmation {
  /** Plain text without any server- or model-provided string (VS Code renders it as Markdown in chat and as is in a dialog). */
  title: string;
  /** Markdown source in which every server- or model-provided string is inert. */
  markdown: string;
}

export const CALL_CONFIRMATION_TITLE = "Call an MCP tool?";
export const DESTRUCTIVE_CALL_TITLE = "Call a destructive MCP tool?";
export const DESTRUCTIVE_NOTE =
  "**Destructive**: the server marks this tool destructive (`destructiveHint`): it may delete or overwrite data. Check the arguments.";

/** The confirmation `mcp_call` shows before calling `id` with `args`. */
export function callConfirmation(id: string, tool: ToolDefinition | undefined, args: unknown): CallConfirmation {
  const parts: string[] = [];
  if (tool) {
    const title = tool.title && tool.title !== tool.name ? ` (${oneLine(tool.title)})` : "";
    const name = markdownLiteral(oneLine(tool.name) + title);
    parts.push(
      `**${markdownLiteral(oneLine(tool.id))}**: the tool ${name} of the MCP server ${markdownLiteral(oneLine(tool.server))}.`,
    );
    if (destructiveHint(tool)) parts.push(`⚠ ${DESTRUCTIVE_NOTE}`);
    if (tool.description) parts.push("Its description, as the server gives it:", markdownLiteral(tool.description));
    if (readOnlyHint(tool)) {
      parts.push(
        "The server marks this tool read-only; that is its own claim. To call the read-only tools of this server without being asked, add its name to the setting `mcpSidecar.autoApproveReadOnly`.",
      );
    }
  } else {
    parts.push(
      `**${sentString(id)}** is not an active tool: the sidecar refuses the call unless it was activated with \`mcp_tools\`.`,
    );
  }
  // What will be sent is shown whole: escaped, never stripped.
  parts.push("Arguments:", jsonBlock(args));
  const title = destructiveHint(tool) ? DESTRUCTIVE_CALL_TITLE : CALL_CONFIRMATION_TITLE;
  return { title, markdown: parts.join("\n\n") };
}

// ---------------------------------------------------------------- project server approvals

/** "server\nhash": what one approval is about (the same server with a new hash is a new question). */
export function approvalKey(pending: Pick<PendingApproval, "server" | "definitionHash">): string {
  return `${pending.server}\n${pending.definitionHash}`;
}

export interface ApprovalQuestion {
  message: string;
  detail: string;
}

/**
 * A summary exactly as the sidecar wrote it (it escapes invisible characters itself): only
 * characters that would hide or reorder text are dropped, and no run of spaces is folded, so
 * a quoted argument reads as it runs. Never shortened.
 */
export function exactLine(text: string): string {
  return visibleText(text)
    .replace(/[\n\t]/g, " ")
    .trim();
}

/** The fields a changed definition changed, as the sidecar names them (`args`, `env.TOKEN`, `env.X (removed)`). */
export function changedFieldsOf(pending: Pick<PendingApproval, "change" | "changedFields">): string[] {
  if (pending.change !== "changed" || !Array.isArray(pending.changedFields)) return [];
  return pending.changedFields
    .filter((f): f is string => typeof f === "string")
    .map(oneLine)
    .filter((f) => f !== "");
}

/**
 * The modal's text for one pending approval: server, new or changed, and what would run. The
 * message stays short; the full summary (which may be long: it is never cut) and the changed
 * fields go into the detail.
 */
/** A project profile (`profile:NAME`): what a window choosing it would search and activate. */
function profileQuestion(pending: PendingApproval, reviewCommand: string): ApprovalQuestion {
  const name = oneLine(pending.server.replace(/^profile:/, ""));
  const message =
    pending.change === "new"
      ? `The project's .mcp.json defines a new profile '${name}'. Allow it?`
      : `The project's .mcp.json changed the profile '${name}'. Allow the new definition?`;
  const fields = changedFieldsOf(pending);
  const detail = [
    "A window choosing it would use:",
    exactLine(pending.summary),
    ...(fields.length > 0 ? ["", `Changed since you approved it: ${fields.join(", ")}`] : []),
    "",
    `Cancel keeps the profile unusable; run "${reviewCommand}" to be asked again.`,
  ].join("\n");
  return { message, detail };
}

export function approvalQuestion(pending: PendingApproval, reviewCommand: string): ApprovalQuestion {
  const server = oneLine(pending.server);
  if (pending.transport === "profile") return profileQuestion(pending, reviewCommand);
  const message =
    pending.change === "new"
      ? `The project's .mcp.json defines a new MCP server '${server}'. Start it?`
      : `The project's .mcp.json changed the MCP server '${server}'. Start it with the new definition?`;
  const what = pending.transport === "http" ? "It would connect to" : "It would run";
  const fields = changedFieldsOf(pending);
  const detail = [
    `${what}:`,
    exactLine(pending.summary),
    ...(fields.length > 0 ? ["", `Changed since you approved it: ${fields.join(", ")}`] : []),
    "",
    "Approve only if you expected this change (for example from a pull you made). " +
      `Cancel keeps '${server}' disabled; run "${reviewCommand}" to be asked again.`,
  ].join("\n");
  return { message, detail };
}
