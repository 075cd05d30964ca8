// One output channel per server ("MCP: <server>"): **MCP: Show Server Logs** fills it with the
// sidecar's `mcp/server/logs`, and the server's log messages at warning or above
// (`mcp/serverLog`) are appended as they come, as `[level] logger: text`. The first error-level
// message of a server (per sidecar run) also shows a warning with "Show Log".
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { oneLine } from "./consent";
import type * as P from "./protocol";
import { isErrorLevel, serverLogLine } from "./serverAsks";

const KEPT_LINES = 200;

export class ServerChannels implements vscode.Disposable {
  private readonly channels = new Map<string, vscode.OutputChannel>();
  /** The lines appended from `mcp/serverLog`, newest last (at most 200 per server), for tests. */
  readonly written = new Map<string, string[]>();
  private readonly warned = new Set<string>();
  private readonly disposables: vscode.Disposable[];

  constructor(client: SidecarClient) {
    this.disposables = [
      client.onServerLog((params) => this.append(params)),
      // A new sidecar connects every server afresh: its first error shows again.
      client.onDidStart(() => this.warned.clear()),
    ];
  }

  channel(server: string): vscode.OutputChannel {
    let channel = this.channels.get(server);
    if (!channel) {
      channel = vscode.window.createOutputChannel(`MCP: ${oneLine(server)}`);
      this.channels.set(server, channel);
    }
    return channel;
  }

  private append(params: P.ServerLogParams): void {
    const line = serverLogLine(params);
    this.channel(params.server).appendLine(`${new Date().toISOString()} ${line}`);
    const kept = this.written.get(params.server) ?? [];
    kept.push(line);
    if (kept.length > KEPT_LINES) kept.splice(0, kept.length - KEPT_LINES);
    this.written.set(params.server, kept);
    if (!isErrorLevel(params.level) || this.warned.has(params.server)) return;
    this.warned.add(params.server);
    void vscode.window
      .showWarningMessage(`MCP: ${oneLine(params.server)} logged an error: ${line}`, "Show Log")
      .then((choice) => choice && this.channel(params.server).show(true));
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    for (const channel of this.channels.values()) channel.dispose();
  }
}
