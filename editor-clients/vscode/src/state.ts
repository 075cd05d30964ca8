// What the extension knows about the sidecar's servers and watches, kept current from
// `mcp/status` after each (re)start and the sidecar's notifications. The status bar and the
// servers view render it.
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { mergeRow } from "./format";
import * as P from "./protocol";
import type { ContextFigures } from "./tokens";

export class ServerStore implements vscode.Disposable {
  rows: P.StatusRow[] = [];
  /** "server\nuri" → the watch; `changed` marks an update since subscribing. */
  readonly watches = new Map<string, P.Watch>();
  trustedWorkspace = false;
  /** Project definitions waiting for the person's approval (the sidecar's whole current set). */
  pendingApprovals: P.PendingApproval[] = [];
  /** The engine serving this window (its clients), or null: a sidecar of its own, or not known yet. */
  engine: P.EngineStatus | null = null;
  /** The profile this window chose (`mcpSidecar.profile`, MCP: Choose Profile), or null. */
  profile: string | null = null;
  /** The profiles it can choose (defined, valid, approved). */
  profiles: string[] = [];
  /** What tool definitions cost a model's context (`mcp/status`'s tokens, the chat session's active tools, `mcp_tools`). */
  context: ContextFigures = { tokens: undefined, active: undefined, modelTool: null };
  /** An `mcp/activeTools` request in flight, and whether another is due once it answers. */
  private contextRefresh: Promise<void> | undefined;
  private contextStale = false;
  /** A status request for the engine's clients in flight (one at a time; see `engineMayHaveChanged`). */
  private engineRefresh: Promise<void> | undefined;
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changeEmitter.event;
  private readonly catalogEmitter = new vscode.EventEmitter<string>();
  /** A server whose catalog (or watches) changed: its view children are stale. */
  readonly onDidChangeServer = this.catalogEmitter.event;
  private readonly pendingEmitter = new vscode.EventEmitter<P.PendingApproval[]>();
  /** The pending approvals were fetched or announced again (possibly unchanged). */
  readonly onDidChangePending = this.pendingEmitter.event;
  private readonly disposables: vscode.Disposable[] = [this.changeEmitter, this.catalogEmitter, this.pendingEmitter];

  constructor(private readonly client: SidecarClient) {
    this.disposables.push(
      client.onDidStart(() => void this.refresh()),
      client.onDidChangeState((state) => {
        if (state !== "running") {
          this.watches.clear();
          this.engine = null;
          this.context = { tokens: undefined, active: undefined, modelTool: null };
        }
        this.changeEmitter.fire();
      }),
      client.onServerStatus((row) => {
        const before = this.row(row.name);
        this.rows = mergeRow(this.rows, row);
        // Another window or session joined or left this server: the engine's clients changed too.
        if (this.engine && before && before.sharedBy !== row.sharedBy) this.engineMayHaveChanged();
        // A Loaded count or a server's figure changed: the session's tools (or their count) may have too.
        if (before?.loaded !== row.loaded || before?.tokens !== row.tokens) this.contextMayHaveChanged();
        this.changeEmitter.fire();
      }),
      client.onActiveToolsChanged(() => this.contextMayHaveChanged()),
      client.onDidChangeSession(() => this.contextMayHaveChanged()),
      client.onModelToolChanged(({ definition }) => {
        if (typeof definition?.tokens === "number") this.context.modelTool = definition.tokens;
        this.changeEmitter.fire();
      }),
      client.onCatalogChanged(({ server }) => this.catalogEmitter.fire(server)),
      client.onResourceUpdated(({ server, uri }) => {
        const watch = this.watches.get(key(server, uri));
        if (watch) watch.changed = true;
        this.catalogEmitter.fire(server);
      }),
      client.onWatchesCleared(({ server, uris }) => {
        for (const uri of uris) this.watches.delete(key(server, uri));
        this.catalogEmitter.fire(server);
      }),
      client.onApprovalRequired(({ pending }) => {
        this.setPending(Array.isArray(pending) ? pending : []);
        this.changeEmitter.fire();
      }),
    );
  }

  /** Fetches every row and watch again (after a start, a reload or a config edit). */
  async refresh(): Promise<void> {
    if (this.client.state !== "running") return;
    try {
      const result = await this.client.request(P.status, {});
      this.rows = result.servers;
      this.trustedWorkspace = result.trustedWorkspace;
      this.engine = result.engine ?? null;
      this.profile = result.profile ?? null;
      this.profiles = result.profiles ?? [];
      this.setPending(result.pendingApprovals ?? []);
      this.context.tokens = result.tokens ?? null;
      if (typeof result.tokens?.modelTool === "number") this.context.modelTool = result.tokens.modelTool;
      this.contextMayHaveChanged();
      const subs = await this.client.request(P.resourceSubscriptions, {});
      this.watches.clear();
      for (const watch of subs.watches) this.watches.set(key(watch.server, watch.uri), watch);
    } catch {
      // The state listener re-renders when the sidecar comes back; nothing to show here.
    }
    this.changeEmitter.fire();
  }

  /** Reads the engine's clients again; rows changing together (a window joined every server) ask once. */
  private engineMayHaveChanged(): void {
    if (this.engineRefresh) return;
    this.engineRefresh = (async () => {
      try {
        const result = await this.client.request(P.status, {});
        this.engine = result.engine ?? null;
        this.changeEmitter.fire();
      } catch {
        // The state listener re-renders when the sidecar comes back.
      } finally {
        this.engineRefresh = undefined;
      }
    })();
  }

  /**
   * Reads the chat session's active tools again (and `mcp_tools`' figure while it is not known): after
   * a start, an activation the extension made, a Loaded count that changed, tools deactivated. One
   * request at a time; a change meanwhile asks once more when it answers.
   */
  contextMayHaveChanged(): void {
    if (this.contextRefresh) {
      this.contextStale = true;
      return;
    }
    this.contextRefresh = (async () => {
      try {
        do {
          this.contextStale = false;
          if (this.client.state !== "running") return;
          this.context.active = await this.client.request(P.activeTools, { session: P.DEFAULT_SESSION });
          if (this.context.modelTool === null && this.context.tokens) {
            // Known once the sidecar counted a catalog (which loads its counter); asking never loads it.
            const definition = await this.client.request(P.modelToolDefinition, {});
            this.context.modelTool = definition.tokens;
          }
          this.changeEmitter.fire();
        } while (this.contextStale);
      } catch {
        // The state listener re-renders when the sidecar comes back.
      } finally {
        this.contextRefresh = undefined;
      }
    })();
  }

  private setPending(pending: P.PendingApproval[]): void {
    this.pendingApprovals = pending;
    this.pendingEmitter.fire(pending);
  }

  /** The approval a server waits for, if any. */
  pending(server: string): P.PendingApproval | undefined {
    return this.pendingApprovals.find((p) => p.server === server);
  }

  row(name: string): P.StatusRow | undefined {
    return this.rows.find((r) => r.name === name);
  }

  watch(server: string, uri: string): P.Watch | undefined {
    return this.watches.get(key(server, uri));
  }

  setWatch(watch: P.Watch | undefined, server: string, uri: string): void {
    if (watch) this.watches.set(key(server, uri), watch);
    else this.watches.delete(key(server, uri));
    this.catalogEmitter.fire(server);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

function key(server: string, uri: string): string {
  return `${server}\n${uri}`;
}
