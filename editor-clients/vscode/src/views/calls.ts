// The running-calls view (`mcpSidecar.calls`) and its status-bar entry: the tool calls that went to
// the background (`mcp/call/background`), with their progress (`mcp/call/progress`) and their end
// (`mcp/call/finished`); each can be cancelled (`mcp/calls/cancel`) or its result shown, once
// (`mcp/calls/result`: a chat's model then no longer finds it). A restarted sidecar has no calls.
import * as vscode from "vscode";
import type { SidecarClient } from "../client";
import type { Ctx } from "../commandContext";
import { callDescription, callsStatusText } from "../format";
import * as P from "../protocol";
import { renderCallResult } from "../render";

export class CallsView implements vscode.TreeDataProvider<P.BackgroundCallView>, vscode.Disposable {
  private readonly calls = new Map<string, P.BackgroundCallView>();
  private readonly emitter = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly item = vscode.window.createStatusBarItem("mcpSidecar.calls", vscode.StatusBarAlignment.Left, 9);
  private readonly subscriptions: vscode.Disposable[];

  constructor(client: SidecarClient) {
    this.item.name = "MCP Background Calls";
    this.item.command = "mcpSidecar.calls";
    const keep = (call: P.BackgroundCallView) => this.keep(call);
    this.subscriptions = [
      this.emitter,
      this.item,
      client.onCallBackground(keep),
      client.onCallProgress(keep),
      client.onCallFinished(keep),
      client.onDidStart(() => {
        this.calls.clear();
        this.changed();
      }),
    ];
  }

  /** The calls shown, oldest first. */
  get list(): P.BackgroundCallView[] {
    return [...this.calls.values()];
  }

  keep(call: P.BackgroundCallView): void {
    if (typeof call?.callId !== "string") return;
    this.calls.set(call.callId, call);
    this.changed();
  }

  forget(callId: string): void {
    if (this.calls.delete(callId)) this.changed();
  }

  getTreeItem(call: P.BackgroundCallView): vscode.TreeItem {
    const item = new vscode.TreeItem(call.tool);
    item.id = call.callId;
    item.description = callDescription(call);
    item.tooltip = `${call.callId} · started ${call.startedAt}`;
    item.contextValue = call.status === "running" ? "callRunning" : "callEnded";
    const icons: Record<P.BackgroundCallView["status"], string> = {
      running: "sync~spin",
      completed: "check",
      failed: "error",
      cancelled: "circle-slash",
    };
    item.iconPath = new vscode.ThemeIcon(icons[call.status] ?? "question");
    item.command = { title: "Show Result", command: "mcpSidecar.showCallResult", arguments: [call] };
    return item;
  }

  getChildren(): P.BackgroundCallView[] {
    return this.list;
  }

  private changed(): void {
    this.emitter.fire(undefined);
    const text = callsStatusText(this.list);
    if (text === undefined) {
      this.item.hide();
      return;
    }
    this.item.text = text;
    this.item.show();
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}

function callOf(ctx: Ctx, arg: unknown): P.BackgroundCallView | undefined {
  const id = typeof arg === "string" ? arg : (arg as P.BackgroundCallView | undefined)?.callId;
  return ctx.calls.list.find((c) => c.callId === id);
}

/** `mcpSidecar.calls`: the view, with the sidecar's list (`mcp/calls/list`) put in it first. */
export const showCalls = (ctx: Ctx) => async (): Promise<P.BackgroundCallView[]> => {
  const listed = await ctx.client.request(P.callsList, {});
  for (const call of listed.calls) ctx.calls.keep(call);
  await vscode.commands.executeCommand("mcpSidecar.calls.focus");
  return listed.calls;
};

/** `mcpSidecar.cancelCall`: cancel a running call (its server is told). */
export const cancelCall =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<P.BackgroundCallView | undefined> => {
    const call = callOf(ctx, arg);
    if (!call) return undefined;
    const view = await ctx.client.request(P.callsCancel, { callId: call.callId });
    ctx.calls.keep(view);
    return view;
  };

/** `mcpSidecar.showCallResult`: the result of an ended call in a document (delivered once), or its state. */
export const showCallResult =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<P.CallsResultResult | undefined> => {
    const call = callOf(ctx, arg);
    if (!call) return undefined;
    const fetched = await ctx.client.request(P.callsResult, { callId: call.callId });
    if (fetched.call.status === "running") {
      ctx.calls.keep(fetched.call);
      void vscode.window.showInformationMessage(`MCP: ${call.tool} is still running.`);
      return fetched;
    }
    ctx.calls.forget(call.callId);
    if (fetched.result) {
      const rendered = renderCallResult(fetched.result);
      await ctx.outputs.show(`${call.tool} result`, rendered.text, rendered.language);
    } else {
      const why = fetched.diagnostic ? `failed: ${fetched.diagnostic.message}` : "was cancelled; it has no result";
      void vscode.window.showInformationMessage(`MCP: ${call.tool} ${why}`);
    }
    return fetched;
  };
