// SidecarClient owns the LanguageClient that runs `mcp-sidecar` over stdio: serialized
// start/stop/restart (at most one queued), restart with backoff after an unexpected exit, and
// sidecar notifications re-emitted as events that survive restarts.

import { randomUUID } from "node:crypto";
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
} from "vscode-languageclient/node";
import {
  type NotificationType,
  type RequestType,
  WorkDoneProgress,
  type WorkDoneProgressBegin,
  type WorkDoneProgressEnd,
  type WorkDoneProgressReport,
} from "vscode-languageserver-protocol";
import type { ClientState } from "./format";
import { CHAT_EXPOSE_BUDGET } from "./gateway";
import * as P from "./protocol";
import { Backoff, Serializer } from "./serial";

export class SidecarUnavailableError extends Error {}

/** Requests whose answer may mean a session's active tools changed (the Context view reads them again). */
const SESSION_CHANGES = new Set(
  [P.activate, P.callTool, P.modelToolInvoke, P.command, P.sessionEnd, P.profile].map((t) => t.method),
);

type RequestHandler = (params: unknown, token: vscode.CancellationToken) => Promise<unknown>;

export interface Launch {
  command: string;
  args: string[];
}

export class SidecarClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly serializer = new Serializer();
  private readonly backoff = new Backoff();
  private restartTimer: NodeJS.Timeout | undefined;
  private intentionalStop = false;
  /** Trust was granted while no sidecar ran: the next start says so (`trustGranted`), once. */
  private trustGrantedPending = false;
  private current: ClientState = "stopped";
  private lastLaunch: Launch | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  private readonly stateEmitter = new vscode.EventEmitter<ClientState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private readonly startEmitter = new vscode.EventEmitter<void>();
  /** Fires after every successful (re)start: a new sidecar knows nothing of the old one. */
  readonly onDidStart = this.startEmitter.event;
  private readonly sessionEmitter = new vscode.EventEmitter<void>();
  /** A request that may have changed a session's active tools was answered (or failed). */
  readonly onDidChangeSession = this.sessionEmitter.event;

  private readonly relays: { type: NotificationType<unknown>; emitter: vscode.EventEmitter<unknown> }[] = [];
  /** Requests the sidecar sends (a server asks the person), answered by whoever registered. */
  private readonly answerers: { method: string; handler: RequestHandler }[] = [];
  readonly onServerStatus = this.relay(P.serverStatus);
  readonly onCatalogChanged = this.relay(P.catalogChanged);
  readonly onResourceUpdated = this.relay(P.resourceUpdated);
  readonly onWatchesCleared = this.relay(P.watchesCleared);
  readonly onActiveToolsChanged = this.relay(P.activeToolsChanged);
  readonly onModelToolChanged = this.relay(P.modelToolChanged);
  readonly onApprovalRequired = this.relay(P.approvalRequired);
  readonly onElicitationComplete = this.relay(P.elicitationComplete);
  readonly onServerLog = this.relay(P.serverLog);
  readonly onCallBackground = this.relay(P.callBackground);
  readonly onCallProgress = this.relay(P.callProgress);
  readonly onCallFinished = this.relay(P.callFinished);

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly traceChannel: vscode.OutputChannel,
    /** Finds the executable and arguments, or undefined (it tells the user why). */
    private readonly resolveLaunch: () => Promise<Launch | undefined>,
    /** What the editor can render for servers, read at each start (`initializationOptions.mcpCapabilities`). */
    private readonly capabilities: () => P.McpCapabilities = () => ({}),
  ) {
    this.disposables.push(
      this.stateEmitter,
      this.startEmitter,
      this.sessionEmitter,
      ...this.relays.map((r) => r.emitter),
    );
  }

  private relay<T>(type: NotificationType<T>): vscode.Event<T> {
    const emitter = new vscode.EventEmitter<T>();
    this.relays.push({ type: type as NotificationType<unknown>, emitter: emitter as vscode.EventEmitter<unknown> });
    return emitter.event;
  }

  /**
   * Answers the sidecar's `type` requests with `handler` on this and every later sidecar. The
   * token is cancelled when the sidecar withdraws the question (`$/cancelRequest`). One
   * handler per method.
   */
  onRequest<Params, Result>(
    type: RequestType<Params, Result, void>,
    handler: (params: Params, token: vscode.CancellationToken) => Promise<Result>,
  ): vscode.Disposable {
    const entry = { method: type.method, handler: handler as RequestHandler };
    this.answerers.push(entry);
    this.client?.onRequest(type.method, entry.handler);
    return new vscode.Disposable(() => {
      const index = this.answerers.indexOf(entry);
      if (index >= 0) this.answerers.splice(index, 1);
    });
  }

  /** The executable and arguments of the last start attempt that found the sidecar. */
  get launch(): Launch | undefined {
    return this.lastLaunch;
  }

  get state(): ClientState {
    return this.current;
  }

  private setState(state: ClientState): void {
    if (state === this.current) return;
    this.current = state;
    this.stateEmitter.fire(state);
  }

  start(): Promise<void> {
    return this.serializer.run(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.serializer.run(() => this.doStop());
  }

  restart(): Promise<void> {
    this.backoff.reset();
    return this.serializer.run(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  private async doStart(): Promise<void> {
    if (this.client && this.current === "running") return;
    clearTimeout(this.restartTimer);
    this.setState("starting");
    const launch = await this.resolveLaunch().catch((error: unknown) => {
      this.log.error(`Could not locate the sidecar: ${String(error)}`);
      return undefined;
    });
    if (!launch) {
      this.setState("stopped");
      return;
    }
    this.lastLaunch = launch;
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: folder?.scheme === "file" ? folder.fsPath : undefined, env: process.env },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.log,
      traceOutputChannel: this.traceChannel,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // trustGranted only right after the person granted trust (the definitions present are
      // approved); on every other start, project definitions never approved are asked about.
      // workspaceFolders (every folder) and their changes, and capabilities.window.workDoneProgress,
      // come from the LanguageClient's own workspace-folder and progress features.
      initializationOptions: {
        trustedWorkspace: vscode.workspace.isTrusted,
        trustGranted: this.takeTrustGrant(),
        interactive: true,
        mcpCapabilities: this.capabilities(),
        // The chat tools follow the gateway's rule: every tool callable at once while they cost little.
        chatExposeBudget: CHAT_EXPOSE_BUDGET,
        // The window's profile (mcpSidecar.profile, a workspace setting too); MCP: Choose Profile switches.
        ...profileOption(),
        // A tool call still running after this many seconds goes on in the background (Background Calls).
        backgroundAfterSeconds: backgroundAfterSeconds(),
        // The window's session budget (mcpSidecar.sessionBudget.*), over mcp.json's sessionBudget.
        ...budgetOption(),
      },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          this.onUnexpectedClose();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient("mcpSidecar", "MCP Sidecar", serverOptions, clientOptions);
    for (const { type, emitter } of this.relays) {
      client.onNotification(type, (params: unknown) => emitter.fire(params));
    }
    for (const { method, handler } of this.answerers) client.onRequest(method, handler);
    this.client = client;
    this.intentionalStop = false;
    this.log.info(`Starting ${launch.command} ${launch.args.join(" ")}`);
    try {
      await client.start();
    } catch (error) {
      this.log.error(`The sidecar did not start: ${error instanceof Error ? error.message : String(error)}`);
      this.client = undefined;
      this.intentionalStop = true;
      await client.dispose().catch(() => undefined);
      this.setState("failed");
      this.scheduleRestart();
      return;
    }
    this.backoff.started();
    this.setState("running");
    this.startEmitter.fire();
  }

  private takeTrustGrant(): boolean {
    const granted = this.trustGrantedPending && vscode.workspace.isTrusted;
    this.trustGrantedPending = false;
    return granted;
  }

  /**
   * The person granted workspace trust: a running sidecar is told with `mcp/workspace/setTrusted`
   * (which approves the project's definitions as they are), a starting one once it runs, and
   * a stopped one at its next start (`initializationOptions.trustGranted`).
   */
  async grantTrust(): Promise<P.ReloadSummary | undefined> {
    if (this.current === "starting") await this.start();
    if (this.current !== "running") {
      this.trustGrantedPending = true;
      return undefined;
    }
    return this.request(P.workspaceSetTrusted, { trusted: true });
  }

  private async doStop(): Promise<void> {
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    if (client) {
      this.intentionalStop = true;
      try {
        await client.stop(5000);
      } catch (error) {
        this.log.warn(`Stopping the sidecar: ${error instanceof Error ? error.message : String(error)}`);
      }
      await client.dispose().catch(() => undefined);
    }
    this.setState("stopped");
  }

  private onUnexpectedClose(): void {
    if (this.intentionalStop) return;
    this.log.error("The sidecar exited unexpectedly.");
    this.client = undefined;
    this.setState("failed");
    this.scheduleRestart();
  }

  private scheduleRestart(): void {
    const delay = this.backoff.nextDelay();
    if (delay === undefined) {
      this.log.error(
        "The sidecar keeps failing; not restarting it again. Run 'MCP: Restart Sidecar' after fixing the cause.",
      );
      void vscode.window
        .showErrorMessage("The MCP sidecar keeps exiting. See its log for the reason.", "Show Log", "Restart")
        .then((choice) => {
          if (choice === "Show Log") this.log.show();
          if (choice === "Restart") void this.restart();
        });
      return;
    }
    this.log.info(`Restarting the sidecar in ${delay / 1000} s.`);
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.start(), delay);
  }

  /** Sends a request, starting the sidecar first when it is stopped. */
  async request<Params, Result>(
    type: RequestType<Params, Result, void>,
    params: Params,
    token?: vscode.CancellationToken,
  ): Promise<Result> {
    if (this.current !== "running") await this.start();
    const client = this.client;
    if (!client || this.current !== "running") {
      throw new SidecarUnavailableError(
        "The MCP sidecar is not running. Run 'MCP: Restart Sidecar', or see 'MCP: Show Sidecar Log' for why it stopped.",
      );
    }
    // By method name: a RequestType from another bundle (tests, other extensions) is fine too.
    const answer = (
      token ? client.sendRequest(type.method, params, token) : client.sendRequest(type.method, params)
    ) as Promise<Result>;
    if (!SESSION_CHANGES.has(type.method)) return answer;
    return answer.finally(() => this.sessionEmitter.fire());
  }

  /**
   * Sends a request with a fresh `workDoneToken` and passes the sidecar's `$/progress` for it
   * (begin, report, end) to `onProgress` until the request is answered.
   */
  async requestWithProgress<Params extends { workDoneToken?: string }, Result>(
    type: RequestType<Params, Result, void>,
    params: Params,
    token: vscode.CancellationToken | undefined,
    onProgress: (value: WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd) => void,
  ): Promise<Result> {
    if (this.current !== "running") await this.start();
    const client = this.client;
    if (!client || this.current !== "running") return this.request(type, params, token);
    const workDoneToken = `mcp-sidecar-${randomUUID()}`;
    const listening = client.onProgress(WorkDoneProgress.type, workDoneToken, onProgress);
    try {
      return await this.request(type, { ...params, workDoneToken }, token);
    } finally {
      listening.dispose();
    }
  }

  dispose(): void {
    clearTimeout(this.restartTimer);
    void this.stop();
    for (const d of this.disposables) d.dispose();
  }
}

/** The window's own session budget (`mcpSidecar.sessionBudget.maxTools` / `.maxTokens`); unset: mcp.json's. */
export interface BudgetSetting {
  maxTools?: number;
  maxTokens?: number;
}

/** A whole number from 0 up, else unset (VS Code validates the settings' ranges; the sidecar checks them again). */
function limit(value: unknown): number | undefined {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : undefined;
}

export function budgetSetting(): BudgetSetting {
  const settings = vscode.workspace.getConfiguration("mcpSidecar.sessionBudget");
  const budget: BudgetSetting = {};
  const tools = limit(settings.get<unknown>("maxTools"));
  const tokens = limit(settings.get<unknown>("maxTokens"));
  if (tools !== undefined) budget.maxTools = tools;
  if (tokens !== undefined) budget.maxTokens = tokens;
  return budget;
}

/** `initializationOptions.sessionBudget` from the settings; nothing when neither is set. */
export function budgetOption(): { sessionBudget?: BudgetSetting } {
  const budget = budgetSetting();
  return Object.keys(budget).length ? { sessionBudget: budget } : {};
}

/** `initializationOptions.profile` from `mcpSidecar.profile` (empty: none). */
export function profileOption(): { profile?: string } {
  const value = vscode.workspace.getConfiguration("mcpSidecar").get<string>("profile", "").trim();
  return value ? { profile: value } : {};
}

/** `mcpSidecar.backgroundAfterSeconds`, within what the sidecar takes (0 to 3600; 0: never). */
export function backgroundAfterSeconds(): number {
  const value = vscode.workspace.getConfiguration("mcpSidecar").get<number>("backgroundAfterSeconds", 120);
  return typeof value === "number" && Number.isFinite(value) ? Math.min(Math.max(value, 0), 3600) : 120;
}
