// What every command body gets (the rust-analyzer shape: a command is a factory
// `(ctx) => handler`), and the few helpers several of them share.
import * as vscode from "vscode";
import type { Actions } from "./actions";
import type { Approvals } from "./approvals";
import type { SidecarClient } from "./client";
import type { OutputDocuments } from "./documents";
import { finishLogin, unfinishedLogin } from "./login";
import * as P from "./protocol";
import type { ServerChannels } from "./serverLogs";
import type { ServerStore } from "./state";
import type { CallsView } from "./views/calls";
import type { Node, ServersView } from "./views/servers";

export interface CommandContext {
  client: SidecarClient;
  store: ServerStore;
  actions: Actions;
  outputs: OutputDocuments;
  view: ServersView;
  /** The running-calls view: the calls that went to the background. */
  calls: CallsView;
  log: vscode.LogOutputChannel;
  bootstrap: { install(): Promise<string | undefined>; resetPrompt(): void };
  approvals: Approvals;
  /** The per-server output channels ("MCP: <server>"), shared with the server log notifications. */
  serverChannels: ServerChannels;
}

/** The context plus what the commands share while registered. */
export interface Ctx extends CommandContext {
  /** The sidecar's `/mcp` command table (`mcp/commandSpec`), fetched once; undefined when it has none. */
  commandSpec(): Promise<P.CommandSpecResult | undefined>;
  /** Runs another command of the table with arguments. */
  run(command: string, ...args: unknown[]): Promise<unknown>;
}

// A command's arguments come from VS Code untyped (its own callback type is `(...args: any[]) => any`), and each
// handler in the table declares parameters of its own: no other type lets them all share one table.
// biome-ignore lint/suspicious/noExplicitAny: the untyped boundary of vscode.commands.registerCommand, see above
export type Cmd = (...args: any[]) => Promise<unknown>;
export type Factory = (ctx: Ctx) => Cmd;

export type Scope = "global" | "project";

export function info(message: string): void {
  void vscode.window.showInformationMessage(`MCP: ${message}`);
}

export function reloadNote(summary: P.ReloadSummary | undefined): string {
  if (!summary) return "";
  if (!summary.applied && summary.diagnostics.length > 0) {
    return ` The configuration has problems, so the previous one stays in use: ${summary.diagnostics.map((d) => d.message).join("; ")}`;
  }
  return "";
}

export async function pickScope(
  store: ServerStore,
  placeHolder: string,
  preferred?: string,
): Promise<Scope | undefined> {
  const items: (vscode.QuickPickItem & { scope: Scope })[] = [
    { label: "global", description: "mcp.json in your user configuration", scope: "global" },
    {
      label: "project",
      description: store.trustedWorkspace ? ".mcp.json in this workspace" : ".mcp.json — needs a trusted workspace",
      scope: "project",
    },
  ];
  if (preferred === "project") items.reverse();
  return (await vscode.window.showQuickPick(items, { placeHolder }))?.scope;
}

export function toolIdOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  const node = arg as Node | undefined;
  return node?.type === "tool" ? node.tool.id : undefined;
}

/** Runs one `/mcp` line and shows its text (a `prompt` line opens the preview). */
export async function runLine(ctx: Ctx, line: string): Promise<P.CommandResult> {
  const result = await ctx.client.request(P.command, { line });
  const login = unfinishedLogin(result);
  if (result.command === "prompt" && result.data && typeof result.data === "object" && "previewId" in result.data) {
    await ctx.actions.prompts.show(result.data as unknown as P.PromptSnapshot);
  } else if (login) {
    // `login NAME [--no-browser]` waiting for the person: asked as Log In would ask.
    const noBrowser = /(^|\s)--no-browser(?=\s|$)/.test(line);
    await finishLogin(ctx, noBrowser ? { server: login.server, noBrowser } : { server: login.server }, login);
  } else {
    await ctx.outputs.show(`mcp ${result.command}`, result.text);
  }
  // The sidecar's table says which commands change servers; without one, refresh anyway.
  const spec = await ctx.commandSpec();
  const entry = spec?.commands.find((c) => c.name === result.command);
  if (!spec || entry?.changes) void ctx.store.refresh();
  return result;
}

/** The first problem of a dry run among `fields` as one line, or undefined when there is none. */
export function dryRunMessage(result: P.ConfigAddDryRunResult, fields?: string[]): string | undefined {
  const problem = result.problems.find((p) => !fields || fields.includes(p.field));
  return problem ? problem.diagnostic.message : undefined;
}
