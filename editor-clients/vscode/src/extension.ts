// Entry point: builds the objects, registers every command and view, starts the sidecar.
// VS Code does not show a notification when activation fails, so failures are shown here.
import * as vscode from "vscode";
import { Actions } from "./actions";
import { Approvals } from "./approvals";
import { Bootstrap, userSidecarPath } from "./bootstrap";
import { prepareCall, registerChatTools } from "./chatTools";
import { SidecarClient } from "./client";
import { registerCommands } from "./commands";
import {
  OUTPUT_SCHEME,
  OutputDocuments,
  PROMPT_SCHEME,
  PromptDocuments,
  RESOURCE_SCHEME,
  ResourceDocuments,
} from "./documents";
import { registerNotifications } from "./notifications";
import { PromptPreviews } from "./prompts";
import type * as P from "./protocol";
import { ServerStore } from "./state";
import { createStatusBar } from "./statusBar";
import { currentQuickInput, type QuickInputState } from "./ui";
import { ServersView } from "./views/servers";

/** What the extension exports, for tests and other extensions. */
export interface McpSidecarApi {
  client: SidecarClient;
  store: ServerStore;
  actions: Actions;
  view: ServersView;
  /** Asks about changed project servers; tests replace its `ask` to answer the modal. */
  approvals: Approvals;
  /** Finds the sidecar; asks before a workspace's own .venv sidecar runs (tests replace its `ask`). */
  bootstrap: Bootstrap;
  /** The extension's open quick pick (title, item labels), for tests driving the real pickers. */
  quickInput: () => QuickInputState | undefined;
  /** What `mcp_call` would show before calling (VS Code asks only inside a chat session). */
  prepareCall: (input: { id: string; arguments?: P.JsonObject }) => Promise<vscode.PreparedToolInvocation>;
}

let running: SidecarClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<McpSidecarApi> {
  const log = vscode.window.createOutputChannel("MCP Sidecar", { log: true });
  const trace = vscode.window.createOutputChannel("MCP Sidecar Trace");
  const bootstrap = new Bootstrap(context, log);
  const launchSettings = () =>
    JSON.stringify([
      userSidecarPath(),
      vscode.workspace.getConfiguration("mcpSidecar").get<string>("logLevel", "warning"),
    ]);
  let launchedWith = launchSettings();
  const client = new SidecarClient(log, trace, () => bootstrap.resolveLaunch());
  running = client;
  const store = new ServerStore(client);
  const resources = new ResourceDocuments(client);
  const promptDocs = new PromptDocuments();
  const outputs = new OutputDocuments();
  const prompts = new PromptPreviews(client, promptDocs, log);
  const actions = new Actions(client, resources, outputs, prompts);
  const view = new ServersView(client, store);
  const approvals = new Approvals(client, store, log);

  context.subscriptions.push(
    log,
    trace,
    client,
    store,
    resources,
    promptDocs,
    outputs,
    prompts,
    view,
    approvals,
    vscode.workspace.registerTextDocumentContentProvider(RESOURCE_SCHEME, resources),
    vscode.workspace.registerTextDocumentContentProvider(PROMPT_SCHEME, promptDocs),
    vscode.workspace.registerTextDocumentContentProvider(OUTPUT_SCHEME, outputs),
    vscode.workspace.onDidCloseTextDocument((doc) => doc.uri.scheme === OUTPUT_SCHEME && outputs.forget(doc.uri)),
    vscode.window.createTreeView("mcpSidecar.servers", { treeDataProvider: view, showCollapseAll: true }),
    createStatusBar(client, store),
    registerNotifications(client, actions, log),
    registerChatTools(client),
    ...registerCommands({ client, store, actions, outputs, view, log, bootstrap, approvals }),
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      try {
        const summary = await client.grantTrust();
        if (!summary) return log.info("Workspace trusted: the sidecar is told when it starts.");
        log.info(`Workspace trusted: project servers added ${summary.added.join(", ") || "none"}.`);
        await store.refresh();
      } catch (error) {
        log.warn(`Telling the sidecar about workspace trust failed: ${String(error)}`);
      }
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration("mcpSidecar.path") && !event.affectsConfiguration("mcpSidecar.logLevel")) return;
      // Only a change of what is used restarts: a workspace's mcpSidecar.path (ignored) does not.
      const now = launchSettings();
      if (now === launchedWith) return;
      launchedWith = now;
      bootstrap.resetPrompt();
      void client.restart();
    }),
  );

  // Start without blocking activation: commands work meanwhile (a request waits for the start).
  void client.start().catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    log.error(`Starting the sidecar failed: ${message}`);
    void vscode.window
      .showErrorMessage(`MCP: the sidecar did not start: ${message}`, "Show Log")
      .then((c) => c && log.show());
  });
  return {
    client,
    store,
    actions,
    view,
    approvals,
    bootstrap,
    quickInput: () => currentQuickInput,
    prepareCall: (input) => prepareCall(client, input),
  };
}

/** Stops the sidecar cleanly (shutdown, exit) before the extension host goes away. */
export function deactivate(): Promise<void> | undefined {
  return running?.stop();
}
