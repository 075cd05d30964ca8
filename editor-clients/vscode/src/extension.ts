// Entry point: builds the objects, registers every command and view, starts the sidecar.
// VS Code does not show a notification when activation fails, so failures are shown here.
import * as vscode from "vscode";
import { Actions } from "./actions";
import { Approvals } from "./approvals";
import { Apps, appsEnabled } from "./apps";
import { Bootstrap, userSidecarPath } from "./bootstrap";
import { ChatSurface } from "./chatSurface";
import { prepareCall } from "./chatTools";
import { backgroundAfterSeconds, budgetSetting, profileOption, SidecarClient } from "./client";
import { registerCommands } from "./commands";
import {
  OUTPUT_SCHEME,
  OutputDocuments,
  PROMPT_SCHEME,
  PromptDocuments,
  RESOURCE_SCHEME,
  ResourceDocuments,
} from "./documents";
import { Elicitations } from "./elicitation";
import { registerNotifications } from "./notifications";
import { onDidRenderProgress, type RenderedProgress } from "./progress";
import { PromptPreviews } from "./prompts";
import * as P from "./protocol";
import { languageModelsAvailable, Sampling, samplingEnabled } from "./sampling";
import { Turns } from "./serial";
import { mcpCapabilities } from "./serverAsks";
import { ServerChannels } from "./serverLogs";
import { ServerStore } from "./state";
import { createStatusBar } from "./statusBar";
import { currentQuickInput, driveQuickInput, type QuickInputState } from "./ui";
import { CallsView } from "./views/calls";
import { ContextView } from "./views/context";
import { ServersView } from "./views/servers";

/** What the extension exports, for tests and other extensions. */
export interface McpSidecarApi {
  client: SidecarClient;
  store: ServerStore;
  actions: Actions;
  view: ServersView;
  /** The Background Calls view's calls. */
  calls: CallsView;
  /** The Context view: what tool definitions cost a model's context. */
  context: ContextView;
  /** Asks about changed project servers; tests replace its `ask` to answer the modal. */
  approvals: Approvals;
  /** Finds the sidecar; asks before a workspace's own .venv sidecar runs (tests replace its `ask`). */
  bootstrap: Bootstrap;
  /** The extension's open quick pick or input box (title, items, value), for tests driving the real ones. */
  quickInput: () => QuickInputState | undefined;
  /** Types `value` into our shown quick input, or checks items of a multi-select (tests cannot type). */
  driveQuickInput: (change: { value?: string; select?: string[] }) => boolean;
  /** A server's questions (`mcp/elicit`); tests replace its `ask` and `openExternal`. */
  elicitations: Elicitations;
  /** A server's sampling requests (`mcp/sample`); tests replace its `ask` to answer the approvals. */
  sampling: Sampling;
  /** The per-server output channels and what `mcp/serverLog` wrote to them. */
  serverChannels: ServerChannels;
  /** Every `$/progress` value of a tool call as the extension rendered it. */
  onDidRenderProgress: vscode.Event<RenderedProgress>;
  /** What chat gets (`mcpSidecar.chat.tools`): the chat tools, or the gateway's MCP server definition. */
  chat: ChatSurface;
  /** The MCP Apps on screen, and the modals they ask (tests replace `ask` and `openExternal`). */
  apps: Apps;
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
      samplingEnabled(),
      backgroundAfterSeconds(),
      budgetSetting(),
      appsEnabled(),
    ]);
  let launchedWith = launchSettings();
  // What servers may ask through the sidecar; sampling needs VS Code's language models.
  const capabilities = () =>
    mcpCapabilities({
      languageModels: languageModelsAvailable(),
      samplingEnabled: samplingEnabled(),
      appsEnabled: appsEnabled(),
    });
  const client = new SidecarClient(log, trace, () => bootstrap.resolveLaunch(), capabilities);
  running = client;
  const store = new ServerStore(client);
  const resources = new ResourceDocuments(client);
  const promptDocs = new PromptDocuments();
  const outputs = new OutputDocuments();
  const prompts = new PromptPreviews(client, promptDocs, log);
  // A server's questions take turns: one quick input or modal at a time.
  const turns = new Turns();
  const elicitations = new Elicitations(client, turns, log);
  const sampling = new Sampling(client, turns, outputs, log);
  const serverChannels = new ServerChannels(client);
  const version = String(context.extension.packageJSON.version ?? "0");
  const apps = new Apps(client, context.extensionUri, log, version);
  const showApp = (args: P.JsonObject, result: P.CallToolResult) => void apps.showForCall(args, result);
  const actions = new Actions(client, resources, outputs, prompts, elicitations, showApp);
  const view = new ServersView(client, store);
  const calls = new CallsView(client);
  const contextView = new ContextView(store);
  const approvals = new Approvals(client, store, log);
  const chat = new ChatSurface(client, log, version, showApp);

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
    calls,
    contextView,
    approvals,
    elicitations,
    sampling,
    serverChannels,
    apps,
    vscode.workspace.registerTextDocumentContentProvider(RESOURCE_SCHEME, resources),
    vscode.workspace.registerTextDocumentContentProvider(PROMPT_SCHEME, promptDocs),
    vscode.workspace.registerTextDocumentContentProvider(OUTPUT_SCHEME, outputs),
    vscode.workspace.onDidCloseTextDocument((doc) => doc.uri.scheme === OUTPUT_SCHEME && outputs.forget(doc.uri)),
    vscode.window.createTreeView("mcpSidecar.servers", { treeDataProvider: view, showCollapseAll: true }),
    vscode.window.createTreeView("mcpSidecar.calls", { treeDataProvider: calls }),
    vscode.window.createTreeView("mcpSidecar.context", { treeDataProvider: contextView }),
    createStatusBar(client, store),
    registerNotifications(client, actions, log),
    chat,
    ...registerCommands({ client, store, actions, outputs, view, calls, log, bootstrap, approvals, serverChannels }),
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
      if (event.affectsConfiguration("mcpSidecar.profile") && client.state === "running") {
        // Applied to the running sidecar: its sessions stay (a start passes it as initializationOptions).
        const chosen = profileOption().profile ?? null;
        void client
          .request(P.profile, { profile: chosen })
          .then(() => store.refresh())
          .catch((error: unknown) => {
            const message = error instanceof Error ? error.message : String(error);
            void vscode.window.showErrorMessage(`MCP profile: ${message}`);
          });
      }
      const restarts = [
        "mcpSidecar.path",
        "mcpSidecar.logLevel",
        "mcpSidecar.sampling.enabled",
        "mcpSidecar.backgroundAfterSeconds",
        "mcpSidecar.sessionBudget",
        "mcpSidecar.apps.enabled",
      ];
      if (!restarts.some((setting) => event.affectsConfiguration(setting))) return;
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
    calls,
    context: contextView,
    approvals,
    bootstrap,
    quickInput: () => currentQuickInput,
    driveQuickInput,
    elicitations,
    sampling,
    serverChannels,
    onDidRenderProgress,
    chat,
    apps,
    prepareCall: (input) => prepareCall(client, input),
  };
}

/** Stops the sidecar cleanly (shutdown, exit) before the extension host goes away. */
export function deactivate(): Promise<void> | undefined {
  return running?.stop();
}
