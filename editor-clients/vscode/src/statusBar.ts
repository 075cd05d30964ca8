// The one status bar item: connected and failed counts, a spinner while a server connects,
// a shield while a changed project server waits for approval, a tooltip listing every server;
// clicking opens the status quick pick (or, while approvals wait, the review of them; while a
// server needs a login, the login).
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { type StatusBarModel, statusBarModel } from "./format";
import type { ServerStore } from "./state";

export function createStatusBar(client: SidecarClient, store: ServerStore): vscode.Disposable {
  const item = vscode.window.createStatusBarItem("mcpSidecar.status", vscode.StatusBarAlignment.Left, 10);
  item.name = "MCP Servers";
  item.command = "mcpSidecar.status";
  const render = () => {
    const model = statusBarModel(client.state, store.rows, store.engine, store.profile, store.context);
    item.text = model.text;
    item.command = itemCommand(model);
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.isTrusted = {
      enabledCommands: [
        "mcpSidecar.showLog",
        "mcpSidecar.restart",
        "mcpSidecar.search",
        "mcpSidecar.reviewApprovals",
        "mcpSidecar.login",
      ],
    };
    tooltip.appendMarkdown("**MCP servers**\n\n");
    for (const line of model.tooltipLines) tooltip.appendText(line).appendMarkdown("  \n");
    const [engine, ...clients] = model.engineLines;
    if (engine) {
      tooltip.appendMarkdown("\n**").appendText(engine).appendMarkdown("**  \n");
      for (const line of clients) tooltip.appendText(line).appendMarkdown("  \n");
    }
    const review = model.approvals > 0 ? "[Review project server changes](command:mcpSidecar.reviewApprovals) · " : "";
    // The link's text is fixed; the server name travels only as the encoded command argument.
    const login = model.logins.length > 0 ? `[Log in](${loginUri(model.logins)}) · ` : "";
    tooltip.appendMarkdown(
      `\n---\n${review}${login}[Search](command:mcpSidecar.search) · [Open log](command:mcpSidecar.showLog) · [Restart sidecar](command:mcpSidecar.restart)`,
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

/** Approvals first (they keep servers from running), then a login, else the status quick pick. */
function itemCommand(model: StatusBarModel): vscode.Command | string {
  if (model.approvals > 0) return "mcpSidecar.reviewApprovals";
  if (model.logins.length === 1) return { title: "Log in", command: "mcpSidecar.login", arguments: [model.logins[0]] };
  return model.logins.length > 1 ? "mcpSidecar.login" : "mcpSidecar.status";
}

function loginUri(logins: string[]): string {
  const args = logins.length === 1 ? `?${encodeURIComponent(JSON.stringify([logins[0]]))}` : "";
  return `command:mcpSidecar.login${args}`;
}
