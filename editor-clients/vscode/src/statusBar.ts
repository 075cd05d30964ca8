// The one status bar item: connected and failed counts, a spinner while a server connects,
// a tooltip listing every server; clicking opens the status quick pick.
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
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.isTrusted = { enabledCommands: ["mcpSidecar.showLog", "mcpSidecar.restart", "mcpSidecar.search"] };
    tooltip.appendMarkdown("**MCP servers**\n\n");
    for (const line of model.tooltipLines) tooltip.appendText(line).appendMarkdown("  \n");
    tooltip.appendMarkdown(
      "\n---\n[Search](command:mcpSidecar.search) · [Open log](command:mcpSidecar.showLog) · [Restart sidecar](command:mcpSidecar.restart)",
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
