// What VS Code's chat gets from the extension, by `mcpSidecar.chat.tools`: the `mcp_tools` and
// `mcp_call` language model tools (`tools`), or the gateway (`gateway`): an MCP server
// definition running `mcp-sidecar mcp`, so Copilot chat lists the activated tools natively with
// their own schemas. Never both: in gateway mode the chat tools are unregistered and hidden
// (their `when` clause reads the context key), in tools mode the provider offers no server.
// A change of the setting applies at once. A VS Code without the MCP server definition API
// (before 1.101) keeps the chat tools.
import * as vscode from "vscode";
import { registerChatTools } from "./chatTools";
import { backgroundAfterSeconds, budgetSetting, profileOption, type SidecarClient } from "./client";
import {
  CHAT_TOOLS_CONTEXT,
  CHAT_TOOLS_SETTING,
  type ChatTools,
  chatToolsSetting,
  effectiveChatTools,
  GATEWAY_LABEL,
  GATEWAY_PROVIDER_ID,
  type GatewayLaunch,
  gatewayLaunch,
  type McpServerApi,
  mcpServerApi,
} from "./gateway";
import type * as P from "./protocol";

// The shapes of vscode.d.ts 1.101 that the gateway uses: the engine's floor (1.95) fixes
// @types/vscode, which has none of them, so they are declared here and feature-detected.
export interface McpStdioServerDefinition {
  readonly label: string;
  cwd?: vscode.Uri;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  version?: string;
}

export interface McpServerDefinitionProvider {
  readonly onDidChangeMcpServerDefinitions?: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): vscode.ProviderResult<McpStdioServerDefinition[]>;
  resolveMcpServerDefinition?(
    server: McpStdioServerDefinition,
    token: vscode.CancellationToken,
  ): vscode.ProviderResult<McpStdioServerDefinition>;
}

type Api = McpServerApi<McpStdioServerDefinition, McpServerDefinitionProvider, vscode.Disposable>;

/**
 * The user's own value (user or remote settings). The setting is application-scoped and read
 * from the global value alone: a workspace cannot switch chat to the gateway, whose calls VS
 * Code confirms by its own rules rather than by `mcpSidecar.autoApproveReadOnly`.
 */
export function userChatTools(): ChatTools {
  return chatToolsSetting(
    vscode.workspace.getConfiguration("mcpSidecar").inspect<unknown>(CHAT_TOOLS_SETTING)?.globalValue,
  );
}

export class ChatSurface implements vscode.Disposable {
  private api: Api | undefined;
  private registration: vscode.Disposable | undefined;
  private tools: vscode.Disposable | undefined;
  private current: ChatTools | undefined;
  /** The version of the definition VS Code was last given (undefined: none). */
  private offered: string | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly disposables: vscode.Disposable[] = [this.changed];
  readonly provider: McpServerDefinitionProvider;

  constructor(
    private readonly client: SidecarClient,
    private readonly log: vscode.LogOutputChannel,
    private readonly extensionVersion: string,
    /** Opens a called tool's MCP App (`mcp_call`). */
    private readonly onCalled?: (args: P.JsonObject, result: P.CallToolResult) => void,
  ) {
    this.provider = {
      onDidChangeMcpServerDefinitions: this.changed.event,
      provideMcpServerDefinitions: () => this.definitions(),
      resolveMcpServerDefinition: (server) => this.resolve(server),
    };
    this.api = mcpServerApi<McpStdioServerDefinition, McpServerDefinitionProvider, vscode.Disposable>(vscode);
    this.apply();
    if (this.api) {
      try {
        this.registration = this.api.registerMcpServerDefinitionProvider(GATEWAY_PROVIDER_ID, this.provider);
      } catch (error) {
        this.log.warn(`VS Code refused the gateway's MCP server definition provider: ${String(error)}`);
        this.api = undefined;
        this.apply();
      }
    }
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`mcpSidecar.${CHAT_TOOLS_SETTING}`)) this.apply();
        else if (
          ["logLevel", "profile", "backgroundAfterSeconds", "sessionBudget"].some((s) =>
            event.affectsConfiguration(`mcpSidecar.${s}`),
          )
        )
          this.refresh();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.refresh()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.refresh()),
      // The executable is the one the extension's own sidecar started with: known after a start.
      client.onDidStart(() => this.refresh()),
    );
  }

  /** Whether this VS Code can offer chat an MCP server definition (1.101 and later). */
  get gatewayAvailable(): boolean {
    return this.api !== undefined;
  }

  /** What chat gets now. */
  get mode(): ChatTools {
    return this.current ?? "tools";
  }

  /** Applies the setting: registers one of the two, removes the other, tells VS Code. */
  private apply(): void {
    const mode = effectiveChatTools(userChatTools(), this.gatewayAvailable);
    if (mode === this.current) return;
    this.current = mode;
    void vscode.commands.executeCommand("setContext", CHAT_TOOLS_CONTEXT, mode);
    if (mode === "tools") {
      this.tools ??= registerChatTools(this.client, this.onCalled);
    } else {
      this.tools?.dispose();
      this.tools = undefined;
    }
    this.offered = undefined;
    this.changed.fire();
    this.log.info(
      mode === "gateway"
        ? "Chat gets the gateway (mcp-sidecar mcp) as an MCP server; the mcp_tools and mcp_call chat tools are off."
        : `Chat gets the mcp_tools and mcp_call tools${userChatTools() === "gateway" ? " (this VS Code has no MCP server definition API)" : ""}.`,
    );
  }

  /** Tells VS Code again when the definition it was given would now differ. */
  private refresh(): void {
    if (this.current === "gateway" && this.launch()?.version !== this.offered) this.changed.fire();
  }

  /** The gateway's command line now: the extension's executable, project, trust and log level. */
  launch(): GatewayLaunch | undefined {
    const command = this.client.launch?.command;
    if (!command) return undefined;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    return gatewayLaunch(
      {
        command,
        logLevel: vscode.workspace.getConfiguration("mcpSidecar").get<string>("logLevel", "warning"),
        folder: folder?.scheme === "file" ? folder.fsPath : undefined,
        trusted: vscode.workspace.isTrusted,
        ...profileOption(),
        backgroundAfterSeconds: backgroundAfterSeconds(),
        budget: budgetSetting(),
      },
      this.extensionVersion,
    );
  }

  private definitions(): McpStdioServerDefinition[] {
    const launch = this.current === "gateway" ? this.launch() : undefined;
    this.offered = launch?.version;
    if (!launch || !this.api) return [];
    const definition = new this.api.McpStdioServerDefinition(
      GATEWAY_LABEL,
      launch.command,
      launch.args,
      {},
      launch.version,
    );
    if (launch.cwd !== undefined) definition.cwd = vscode.Uri.file(launch.cwd);
    return [definition];
  }

  /** Right before VS Code starts it: the command line as of now (trust may have changed). */
  private async resolve(server: McpStdioServerDefinition): Promise<McpStdioServerDefinition | undefined> {
    if (this.current !== "gateway") return undefined;
    if (!this.client.launch) await this.client.start();
    const launch = this.launch();
    if (!launch)
      throw new Error("mcp-sidecar was not found (mcpSidecar.path, PATH): see 'MCP: Show Sidecar Log' for why.");
    server.command = launch.command;
    server.args = launch.args;
    server.cwd = launch.cwd !== undefined ? vscode.Uri.file(launch.cwd) : undefined;
    return server;
  }

  dispose(): void {
    this.registration?.dispose();
    this.tools?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
