// Every command of the extension, registered at activation whether or not the sidecar runs
// (a request starts it, and a sidecar that cannot start says why). As in rust-analyzer's
// editors/code: one table from command id to a factory `(ctx) => handler`, each command a
// small function of its own. Command bodies return their result so tests and other
// extensions can use them.
import * as vscode from "vscode";
import type { CommandContext, Ctx, Factory } from "./commandContext";
import * as config from "./configCommands";
import * as P from "./protocol";
import * as servers from "./serverCommands";
import * as tools from "./toolCommands";
import { guarded } from "./ui";
import * as calls from "./views/calls";

export type { CommandContext } from "./commandContext";

const COMMANDS: Record<string, Factory> = {
  "mcpSidecar.status": servers.status,
  "mcpSidecar.calls": calls.showCalls,
  "mcpSidecar.cancelCall": calls.cancelCall,
  "mcpSidecar.showCallResult": calls.showCallResult,
  "mcpSidecar.search": servers.search,
  "mcpSidecar.runCommand": servers.runCommand,
  "mcpSidecar.profile": servers.profile,
  "mcpSidecar.add": config.add,
  "mcpSidecar.remove": config.remove,
  "mcpSidecar.get": servers.get,
  "mcpSidecar.tools": servers.tools,
  "mcpSidecar.reload": config.reload,
  "mcpSidecar.reviewApprovals": config.reviewApprovals,
  "mcpSidecar.enable": config.enable,
  "mcpSidecar.disable": config.disable,
  "mcpSidecar.import": config.importServers,
  "mcpSidecar.login": servers.login,
  "mcpSidecar.loginNoBrowser": servers.loginNoBrowser,
  "mcpSidecar.logout": servers.logout,
  "mcpSidecar.reconnect": servers.reconnect,
  "mcpSidecar.refresh": servers.refresh,
  "mcpSidecar.subscribe": tools.subscribe,
  "mcpSidecar.unsubscribe": tools.unsubscribe,
  "mcpSidecar.subscriptions": tools.subscriptions,
  "mcpSidecar.spillFiles": servers.spillFiles,
  "mcpSidecar.serverLogs": servers.serverLogs,
  "mcpSidecar.activeTools": tools.activeTools,
  "mcpSidecar.endChatSession": tools.endChatSession,
  "mcpSidecar.showLog": servers.showLog,
  "mcpSidecar.restart": servers.restart,
  "mcpSidecar.installSidecar": servers.installSidecar,
  "mcpSidecar.callTool": tools.callTool,
  "mcpSidecar.showSchema": tools.showSchema,
  "mcpSidecar.showSignature": tools.showSignature,
  "mcpSidecar.activateTool": tools.activateTool,
  "mcpSidecar.openResource": tools.openResource,
  "mcpSidecar.fillTemplate": tools.fillTemplate,
  "mcpSidecar.previewPrompt": tools.previewPrompt,
  "mcpSidecar.usePrompt": tools.usePrompt,
  "mcpSidecar.discardPrompt": tools.discardPrompt,
  "mcpSidecar.refreshView": servers.refreshView,
};

export function registerCommands(context: CommandContext): vscode.Disposable[] {
  const handlers = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  let spec: Promise<P.CommandSpecResult | undefined> | undefined;
  const ctx: Ctx = {
    ...context,
    // An older sidecar without mcp/commandSpec answers an error: no table, and it is asked again next time.
    commandSpec: () => (spec ??= context.client.request(P.commandSpec, {}).catch(() => (spec = undefined))),
    run: (command, ...args) => handlers.get(command)?.(...args) ?? Promise.resolve(undefined),
  };
  const disposables = Object.entries(COMMANDS).map(([id, factory]) => {
    const handler = guarded(context.log, factory(ctx));
    handlers.set(id, handler);
    return vscode.commands.registerCommand(id, handler);
  });
  return disposables;
}
