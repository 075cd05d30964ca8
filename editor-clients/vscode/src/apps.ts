// MCP Apps in VS Code: after a call of a tool that names an app (`ui.resourceUri`), from the
// palette or chat's `mcp_call`, the app opens in a webview panel beside the editor. Its HTML
// comes from `mcp/app/resource` (checked by the sidecar) and runs in a sandboxed frame
// (`allow-scripts` only: an opaque origin) under the Content Security Policy built from what
// its server declared (src/appCsp.ts); the page relays the frame's JSON-RPC to the bridge
// (src/appBridge.ts), and this file answers for the editor: the person is asked before an
// app's tool call (once per app and tool) and before a link opens.
import * as vscode from "vscode";
import {
  AppBridge,
  type AppHost,
  type AppLaunch,
  AppRefusal,
  CallApprovals,
  callQuestion,
  type HostContext,
  type JsonObject,
  linkQuestion,
  openableLink,
  pageContext,
} from "./appBridge";
import { appPolicy, declaredCsp, withPolicy } from "./appCsp";
import type { SidecarClient } from "./client";
import { oneLine } from "./consent";
import { describeError } from "./format";
import * as P from "./protocol";
import { capped } from "./serverAsks";

export const APPS_ENABLED_SETTING = "apps.enabled";

type Ask = (message: string, options: vscode.MessageOptions, ...items: string[]) => Thenable<string | undefined>;

export const ALLOW = "Allow";
export const OPEN = "Open";

/** Whether apps are rendered (and so declared to servers): `mcpSidecar.apps.enabled`, default on. */
export function appsEnabled(): boolean {
  return vscode.workspace.getConfiguration("mcpSidecar").get<boolean>(APPS_ENABLED_SETTING, true);
}

/** One app on screen, for tests. */
export interface ShownApp {
  server: string;
  uri: string;
  tool: string;
  panel: vscode.WebviewPanel;
  bridge: AppBridge;
  policy: string;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function mcpResult(result: P.CallToolResult): AppLaunch["result"] {
  const shaped: AppLaunch["result"] = {
    content: result.content as unknown as AppLaunch["result"]["content"],
    isError: result.isError,
  };
  if (result.structuredContent !== undefined) {
    shaped.structuredContent = result.structuredContent as AppLaunch["result"]["structuredContent"];
  }
  return shaped;
}

export class Apps implements vscode.Disposable {
  /** The modals; the extension-host tests replace it. */
  ask: Ask = (message, options, ...items) => vscode.window.showWarningMessage(message, options, ...items);
  openExternal: (uri: vscode.Uri) => Thenable<boolean> = (uri) => vscode.env.openExternal(uri);
  private readonly approvals = new CallApprovals();
  private readonly shown = new Set<ShownApp>();
  private readonly shownEmitter = new vscode.EventEmitter<ShownApp>();
  /** Fires when an app's panel opened (its frame is loading). */
  readonly onDidShow = this.shownEmitter.event;

  constructor(
    private readonly client: SidecarClient,
    private readonly extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
    private readonly version: string,
  ) {}

  get apps(): ShownApp[] {
    return [...this.shown];
  }

  /**
   * Opens the app of the tool `result` came from, when it has one and apps are on; an app that
   * cannot be shown is a warning (the call's result was shown already).
   */
  async showForCall(args: P.JsonObject, result: P.CallToolResult): Promise<ShownApp | undefined> {
    // A background call has no result yet; a call waiting for a browser step is retried instead.
    if (!appsEnabled() || result.background || result.diagnostic?.code === "elicitation_required") return undefined;
    let tool: P.ToolDefinition | undefined;
    try {
      const catalog = await this.client.request(P.serverTools, { server: result.server });
      tool = catalog.tools.find((t) => t.name === result.tool);
    } catch (error) {
      // Most tools have no app: not finding out is no reason to bother the person.
      this.log.info(`Whether ${result.id} has an app is unknown: ${describeError(error).message}`);
      return undefined;
    }
    const uri = tool?.ui?.resourceUri;
    if (!tool || !uri) return undefined;
    try {
      const resource = await this.client.request(P.appResource, { server: result.server, uri });
      return this.open(tool, resource, { arguments: args as JsonObject, result: mcpResult(result) });
    } catch (error) {
      const why = describeError(error).message;
      this.log.warn(`The app of ${result.id} was not shown: ${why}`);
      void vscode.window.showWarningMessage(`MCP: the app of ${oneLine(result.id)} could not be shown: ${why}`);
      return undefined;
    }
  }

  private open(tool: P.ToolDefinition, resource: P.AppResourceResult, launch: AppLaunch): ShownApp {
    const app = { server: resource.server, uri: resource.uri };
    const declared = declaredCsp(resource.ui);
    const policy = appPolicy(declared.csp);
    // The specification asks hosts to keep a record of the policies apps ran under.
    this.log.info(`App ${app.server} · ${app.uri}: Content-Security-Policy: ${policy}`);
    if (declared.rejected.length) {
      this.log.warn(`App ${app.server} · ${app.uri}: declared values left out: ${declared.rejected.join(", ")}`);
    }
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const panel = vscode.window.createWebviewPanel(
      "mcpSidecar.app",
      `${oneLine(tool.title ?? tool.name)} · ${oneLine(app.server)}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media] },
    );
    const webview = panel.webview;
    // The frame inherits the page's policy: the page's is the app's, plus the relay script.
    const pagePolicy = appPolicy(declared.csp, [webview.cspSource]);
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, "appHost.js"));
    const border = (resource.ui as { prefersBorder?: unknown } | undefined)?.prefersBorder === true;
    webview.html = pageHtml(pagePolicy, script.toString(), `${tool.name} · ${app.uri}`, border);
    let shown: ShownApp | undefined;
    // Questions an app queued are not asked once its panel is closed.
    let open = true;
    const host: AppHost = {
      send: (message) => void webview.postMessage({ kind: "app", message }),
      callTool: (name, args) => this.callTool(app, name, args, () => open),
      openLink: (url) => this.openLink(app, url, () => open),
      showMessage: (text) =>
        void vscode.window.showInformationMessage(
          `MCP app of ${oneLine(app.server)} says (not sent to chat): ${capped(oneLine(text), 500).text}`,
        ),
      log: (level, text) => this.log.info(`App ${app.server} · ${app.uri} [${oneLine(level)}]: ${oneLine(text)}`),
      resize: (size) => void webview.postMessage({ kind: "resize", ...size }),
      close: () => panel.dispose(),
    };
    const bridge = new AppBridge(
      host,
      launch,
      this.baseContext(tool),
      { name: "mcp-sidecar-vscode", version: this.version },
      declared.csp as JsonObject,
    );
    shown = { ...app, tool: tool.name, panel, bridge, policy };
    const status = this.statusLine(declared.csp.connectDomains, declared.rejected.length);
    const html = withPolicy(resource.html, policy);
    const subscription = webview.onDidReceiveMessage(
      (message: { kind?: string; context?: unknown; message?: unknown }) => {
        if (message?.kind === "ready") {
          bridge.updateContext(pageContext(message.context));
          void webview.postMessage({ kind: "load", html, status });
        } else if (message?.kind === "context") {
          bridge.updateContext(pageContext(message.context));
        } else if (message?.kind === "app") {
          void bridge.receive(message.message);
        }
      },
    );
    panel.onDidDispose(() => {
      open = false;
      bridge.dispose();
      subscription.dispose();
      if (shown) this.shown.delete(shown);
    });
    this.shown.add(shown);
    this.shownEmitter.fire(shown);
    return shown;
  }

  private statusLine(connect: string[] | undefined, rejected: number): string {
    const network = connect?.length ? `may connect to ${connect.join(", ")}` : "no network";
    const left = rejected ? ` · ${rejected} declared source(s) refused (see the log)` : "";
    return `Sandboxed MCP app · ${network}${left}`;
  }

  private baseContext(tool: P.ToolDefinition): HostContext {
    const kind = vscode.window.activeColorTheme.kind;
    const light = kind === vscode.ColorThemeKind.Light || kind === vscode.ColorThemeKind.HighContrastLight;
    const described: JsonObject = { name: tool.name, inputSchema: tool.inputSchema as JsonObject };
    if (tool.title) described.title = tool.title;
    if (tool.description) described.description = tool.description;
    if (tool.ui) described._meta = { ui: tool.ui as unknown as JsonObject };
    return {
      toolInfo: { tool: described },
      theme: light ? "light" : "dark",
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      locale: vscode.env.language,
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      userAgent: `${vscode.env.appName} ${vscode.version} (mcp-sidecar)`,
      platform: vscode.env.uiKind === vscode.UIKind.Web ? "web" : "desktop",
      deviceCapabilities: { touch: false, hover: true },
    };
  }

  private async callTool(
    app: { server: string; uri: string },
    name: string,
    args: JsonObject,
    showing: () => boolean,
  ): Promise<AppLaunch["result"]> {
    const allowed = await this.approvals.decide(app, name, async () => {
      if (!showing()) return false;
      const question = callQuestion(app, name, args);
      return (await this.ask(question.message, { modal: true, detail: question.detail }, ALLOW)) === ALLOW;
    });
    if (!allowed || !showing()) throw new AppRefusal("The person declined the tool call.");
    try {
      const result = await this.client.request(P.appCallTool, { ...app, name, arguments: args as P.JsonObject });
      return mcpResult(result);
    } catch (error) {
      throw new AppRefusal(describeError(error).message);
    }
  }

  private async openLink(app: { server: string; uri: string }, url: string, showing: () => boolean): Promise<boolean> {
    const parsed = openableLink(url);
    if (!parsed) {
      this.log.warn(`App ${app.server} · ${app.uri} asked to open a link that is not http(s) or mailto; refused.`);
      return false;
    }
    if (!showing()) return false;
    const question = linkQuestion(app, parsed);
    if ((await this.ask(question.message, { modal: true, detail: question.detail }, OPEN)) !== OPEN) return false;
    return this.openExternal(vscode.Uri.parse(parsed.href, true));
  }

  dispose(): void {
    for (const app of [...this.shown]) app.panel.dispose();
    this.shownEmitter.dispose();
  }
}

function pageHtml(policy: string, script: string, title: string, border: boolean): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(policy)}">
<title>${escapeHtml(title)}</title>
<style>
  html, body { margin: 0; padding: 0; height: 100%; }
  #status { font: 11px var(--vscode-font-family); color: var(--vscode-descriptionForeground); padding: 2px 8px; }
  #app { display: block; width: 100%; height: calc(100vh - 20px); border: ${border ? "1px solid var(--vscode-panel-border)" : "0"}; box-sizing: border-box; background: transparent; }
</style>
</head>
<body>
<div id="status">Loading the app…</div>
<iframe id="app" sandbox="allow-scripts" referrerpolicy="no-referrer" title="${escapeHtml(title)}"></iframe>
<script src="${escapeHtml(script)}"></script>
</body>
</html>`;
}
