// The Context view (`mcpSidecar.context`): what tool definitions cost a model's context, from the
// store's figures (tokens.ts): the chat session's active tools, `mcp_tools`, both together, and
// every server's tools as a host connected to it directly would list them. Collapsed by default.
import * as vscode from "vscode";
import type { ServerStore } from "../state";
import { type ContextEntry, contextEntries } from "../tokens";

export class ContextView implements vscode.TreeDataProvider<ContextEntry>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly store: ServerStore) {
    this.subscriptions = [this.emitter, store.onDidChange(() => this.emitter.fire(undefined))];
  }

  /** The rows as shown now (tests read them). */
  get entries(): ContextEntry[] {
    return contextEntries(this.store.rows, this.store.context);
  }

  getTreeItem(entry: ContextEntry): vscode.TreeItem {
    const collapsed = entry.children?.length
      ? entry.id === "context:session"
        ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed
      : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(entry.label, collapsed);
    item.id = entry.id;
    item.description = entry.description;
    item.tooltip = entry.tooltip || undefined;
    item.iconPath = new vscode.ThemeIcon(entry.icon);
    item.contextValue = entry.id.split(":")[1];
    return item;
  }

  getChildren(entry?: ContextEntry): ContextEntry[] {
    if (entry) return entry.children ?? [];
    if (this.store.context.active === undefined) this.store.contextMayHaveChanged();
    return this.entries;
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
