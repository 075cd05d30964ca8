// Which tools VS Code's chat gets (`mcpSidecar.chat.tools`), and the MCP server definition of
// the gateway (`mcp-sidecar mcp`) offered to it: the same sidecar executable the extension runs,
// for the same project, with the same trust. Pure (no `vscode`), unit-tested; `chatSurface.ts`
// does the registering.
import { createHash } from "node:crypto";
import { logLevelArgs } from "./locate";

/** `gateway`: the MCP server definition (native schemas); `tools`: the `mcp_tools`/`mcp_call` chat tools. */
export type ChatTools = "gateway" | "tools";

export const CHAT_TOOLS_SETTING = "chat.tools";
export const DEFAULT_CHAT_TOOLS: ChatTools = "tools";
/** The context key package.json's `languageModelTools` read: `when` hides them while the gateway is offered. */
export const CHAT_TOOLS_CONTEXT = "mcpSidecar.chatTools";
/** package.json `contributes.mcpServerDefinitionProviders[].id`. */
export const GATEWAY_PROVIDER_ID = "mcpSidecar.gateway";
export const GATEWAY_LABEL = "MCP Sidecar";

/**
 * What the chat tools may cost before they are left to the search (`initializationOptions.chatExposeBudget`,
 * tokens): the gateway's default `--expose-budget`, 2 % of a 200,000-token window. While every tool of the
 * servers costs at most this, `mcp_call` calls any tool without an activation and `mcp_tools`' first answer
 * says so (issue 34's rule, which gateway mode inherits from the gateway itself).
 */
export const CHAT_EXPOSE_BUDGET = 4000;

/** The user's value of the setting; anything else (unset, a typo) is the default. */
export function chatToolsSetting(value: unknown): ChatTools {
  return value === "gateway" || value === "tools" ? value : DEFAULT_CHAT_TOOLS;
}

/** The part of the `vscode` module the gateway needs (VS Code 1.101 and later). */
export interface McpServerApi<Definition, Provider, Disposable> {
  registerMcpServerDefinitionProvider(id: string, provider: Provider): Disposable;
  McpStdioServerDefinition: new (
    label: string,
    command: string,
    args?: string[],
    env?: Record<string, string | number | null>,
    version?: string,
  ) => Definition;
}

/**
 * The MCP server definition API of this VS Code, or undefined when it has none (before 1.101):
 * then the chat tools stay, whatever the setting says.
 */
export function mcpServerApi<Definition, Provider, Disposable>(vscodeModule: {
  lm?: unknown;
  McpStdioServerDefinition?: unknown;
}): McpServerApi<Definition, Provider, Disposable> | undefined {
  const lm = vscodeModule.lm as { registerMcpServerDefinitionProvider?: unknown } | undefined;
  const register = lm?.registerMcpServerDefinitionProvider;
  const Definition = vscodeModule.McpStdioServerDefinition;
  if (typeof register !== "function" || typeof Definition !== "function") return undefined;
  return {
    registerMcpServerDefinitionProvider: (id, provider) => register.call(lm, id, provider),
    McpStdioServerDefinition: Definition as McpServerApi<Definition, Provider, Disposable>["McpStdioServerDefinition"],
  };
}

/** What chat gets: the gateway only when asked for and this VS Code can offer it; never both. */
export function effectiveChatTools(setting: ChatTools, gatewayAvailable: boolean): ChatTools {
  return setting === "gateway" && gatewayAvailable ? "gateway" : "tools";
}

export interface GatewayInput {
  /** The sidecar executable the extension's own sidecar was started with. */
  command: string;
  logLevel: string;
  /** The project: the first workspace folder on disk (the extension's sidecar reads the same). */
  folder: string | undefined;
  /** `vscode.workspace.isTrusted`: what the extension tells its own sidecar (`trustedWorkspace`). */
  trusted: boolean;
  /** `mcpSidecar.profile`: the gateway's `--profile`, so chat lists the profile's tools from the start. */
  profile?: string;
  /** `mcpSidecar.backgroundAfterSeconds`: the gateway's `--background-after` when not its default (120). */
  backgroundAfterSeconds?: number;
  /** `mcpSidecar.sessionBudget.*`: the gateway's `--max-active-tools` / `--max-active-tokens`. */
  budget?: { maxTools?: number; maxTokens?: number };
}

export interface GatewayLaunch {
  command: string;
  args: string[];
  cwd: string | undefined;
  /** Changes with anything above: VS Code then knows the server's tools may have changed. */
  version: string;
}

/**
 * `mcp-sidecar [-v] mcp --project FOLDER [--trust-project --approved-only]`. A trusted workspace
 * reads the project's `.mcp.json` as the extension's sidecar does (`trustedWorkspace`), and, as
 * there, a definition the person never approved (or that changed since) waits for approval:
 * `--approved-only` keeps the gateway's start from approving it (`--trust-project` alone would).
 * An untrusted workspace passes neither, so the project's file is not read.
 */
export function gatewayLaunch(input: GatewayInput, extensionVersion: string): GatewayLaunch {
  const args = [...logLevelArgs(input.logLevel), "mcp"];
  if (input.folder !== undefined) args.push("--project", input.folder);
  if (input.folder !== undefined && input.trusted) args.push("--trust-project", "--approved-only");
  if (input.profile) args.push("--profile", input.profile);
  const after = input.backgroundAfterSeconds;
  if (after !== undefined && after !== 120) args.push("--background-after", String(after));
  if (input.budget?.maxTools !== undefined) args.push("--max-active-tools", String(input.budget.maxTools));
  if (input.budget?.maxTokens !== undefined) args.push("--max-active-tokens", String(input.budget.maxTokens));
  const digest = createHash("sha256")
    .update(JSON.stringify([input.command, args, input.folder ?? null]))
    .digest("hex")
    .slice(0, 12);
  return { command: input.command, args, cwd: input.folder, version: `${extensionVersion}+${digest}` };
}
