// The one status bar item: connected and failed counts, a spinner while a server connects,
// a shield while a changed project server waits for approval, a tooltip listing every server;
// clicking opens the status quick pick (or, while approvals wait, the review of them).
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { statusBarModel } from "./format";
import type { ServerStore } from "./state";

export function createStatusBar(client: SidecarClient, store: ServerStore): vscode.Disposable {
  const item = vscode.window.createStatusBarItem("mcpSidecar.status", vscode.StatusBarAlignment.Left, 10);
  item.name = "MCP Servers";
  item.command = "mcpSidecar.status";
  const render = () => {
    const model = statusBarModel(client.state, store.rows);
    item.text = model.text;
    item.command = model.approvals > 0 ? "mcpSidecar.reviewApprovals" : "mcpSidecar.status";
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.isTrusted = {
      enabledCommands: ["mcpSidecar.showLog", "mcpSidecar.restart", "mcpSidecar.search", "mcpSidecar.reviewApprovals"],
    };
    tooltip.appendMarkdown("**MCP servers**\n\n");
    for (const line of model.tooltipLines) tooltip.appendText(line).appendMarkdown("  \n");
    const review = model.approvals > 0 ? "[Review project server changes](command:mcpSidecar.reviewApprovals) · " : "";
    tooltip.appendMarkdown(
      `\n---\n${review}[Search](command:mcpSidecar.search) · [Open log](command:mcpSidecar.showLog) · [Restart sidecar](command:mcpSidecar.restart)`,
    );
    item.tooltip = tooltip;
    item.backgroundColor =
      model.severity === "error"
        ? new vscode.ThemeColor("statusBarItem.errorBackground")
        : model.severity === "warning"
          ? new vscode.ThemeColor("statusBarItem.warningBackground")
          : undefined;
  };
  render();
  item.show();
  const subscriptions = [store.onDidChange(render), client.onDidChangeState(render)];
  return vscode.Disposable.from(item, ...subscriptions);
}
