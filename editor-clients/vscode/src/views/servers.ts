// The "MCP" activity-bar view: servers with state icons, scope and counts; expanding a server
// lists its tools, resources, templates and prompts, fetched only when expanded.
import * as vscode from "vscode";
import type { SidecarClient } from "../client";
import {
  catalogSummary,
  describeError,
  needsApproval,
  serverDescription,
  sharedText,
  stateIcon,
  stateText,
} from "../format";
import { iconPath } from "../icons";
import * as P from "../protocol";
import type { ServerStore } from "../state";

type Group = "tools" | "resources" | "templates" | "prompts";

export type Node =
  | { type: "server"; server: string }
  | { type: "group"; server: string; group: Group }
  | { type: "tool"; server: string; tool: P.ToolDefinition }
  | { type: "resource"; server: string; candidate: P.ResourceCandidate }
  | { type: "template"; server: string; candidate: P.TemplateCandidate }
  | { type: "prompt"; server: string; candidate: P.PromptCandidate }
  | { type: "message"; server: string; text: string; tooltip?: string; error?: boolean };

const GROUPS: { group: Group; label: string; icon: string }[] = [
  { group: "tools", label: "Tools", icon: "tools" },
  { group: "resources", label: "Resources", icon: "file" },
  { group: "templates", label: "Templates", icon: "file-symlink-file" },
  { group: "prompts", label: "Prompts", icon: "comment-discussion" },
];

const LIST_LIMIT = 50;

export class ServersView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly serverNodes = new Map<string, Node>();
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(
    private readonly client: SidecarClient,
    private readonly store: ServerStore,
  ) {
    this.disposables.push(
      store.onDidChange(() => this.emitter.fire(undefined)),
      store.onDidChangeServer((server) => this.emitter.fire(this.serverNodes.get(server))),
    );
  }

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.type) {
      case "server": {
        const row = this.store.row(node.server);
        const item = new vscode.TreeItem(node.server, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `server:${node.server}`;
        if (!row) return item;
        const approval = needsApproval(row);
        const icon = stateIcon(row.state, approval);
        // The server's own icon while all is well; a state that needs attention keeps its state icon.
        const own = row.state === "connected" && !approval ? iconPath(row.icons) : undefined;
        item.iconPath =
          own ?? new vscode.ThemeIcon(icon.id, icon.color ? new vscode.ThemeColor(icon.color) : undefined);
        item.description = serverDescription(row);
        item.contextValue = `server state=${row.state} transport=${row.transport} scope=${row.scope}${approval ? " approval=required" : ""}`;
        const tooltip = new vscode.MarkdownString();
        tooltip
          .appendMarkdown("**")
          .appendText(row.name)
          .appendMarkdown(`** · ${stateText(row)} · ${row.scope} · ${row.transport}\n\n`);
        const pending = approval ? this.store.pending(row.name) : undefined;
        if (pending) {
          tooltip.appendText(
            `${pending.change === "new" ? "New" : "Changed"} in .mcp.json; it would ${pending.transport === "http" ? "connect to" : "run"}: `,
          );
          tooltip
            .appendText(`${pending.summary}\n\n`)
            .appendText('Run "MCP: Review Project Server Changes" to approve it.\n\n');
        }
        if (row.description) tooltip.appendText(`${row.description}\n\n`);
        tooltip.appendText(catalogSummary(row.catalog, row.catalogSource));
        if (row.loaded > 0) tooltip.appendText(` · ${row.loaded} loaded`);
        const shared = sharedText(row);
        if (shared) tooltip.appendText(` · ${shared} (windows and sessions on one engine)`);
        if (row.lastDiagnostic)
          tooltip.appendMarkdown("\n\n").appendText(`${row.lastDiagnostic.message} ${row.lastDiagnostic.hint}`);
        item.tooltip = tooltip;
        if (row.state === "disabled") item.collapsibleState = vscode.TreeItemCollapsibleState.None;
        return item;
      }
      case "group": {
        const spec = GROUPS.find((g) => g.group === node.group);
        const item = new vscode.TreeItem(spec?.label ?? node.group, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `group:${node.server}:${node.group}`;
        item.iconPath = new vscode.ThemeIcon(spec?.icon ?? "folder");
        const counts = this.store.row(node.server)?.catalog;
        const count = counts ? counts[node.group] : null;
        if (count !== null && count !== undefined) item.description = String(count);
        item.contextValue = "group";
        return item;
      }
      case "tool": {
        const item = new vscode.TreeItem(node.tool.name, vscode.TreeItemCollapsibleState.None);
        item.id = `tool:${node.tool.id}`;
        item.iconPath = iconPath(node.tool.icons) ?? new vscode.ThemeIcon("tools");
        item.description = node.tool.title ?? node.tool.description?.split("\n")[0] ?? "";
        item.tooltip = `${node.tool.id}\n${node.tool.description ?? ""}`;
        item.contextValue = "tool";
        item.command = { command: "mcpSidecar.showSchema", title: "Show Tool Schema", arguments: [node.tool.id] };
        return item;
      }
      case "resource": {
        const watch = this.store.watch(node.server, node.candidate.uri);
        const item = new vscode.TreeItem(
          node.candidate.name || node.candidate.uri,
          vscode.TreeItemCollapsibleState.None,
        );
        item.id = `resource:${node.server}:${node.candidate.uri}`;
        // A watch's state shows instead of the resource's own icon.
        item.iconPath =
          (watch ? undefined : iconPath(node.candidate.icons)) ??
          new vscode.ThemeIcon(watch ? (watch.changed ? "bell-dot" : "eye") : "file");
        item.description = watch
          ? `${node.candidate.uri} · ${watch.changed ? "changed" : "watching"}`
          : node.candidate.uri;
        item.tooltip = `${node.candidate.uri}\n${node.candidate.description ?? ""}`;
        item.contextValue = watch ? "resource.watched" : "resource";
        item.command = {
          command: "mcpSidecar.openResource",
          title: "Open Resource",
          arguments: [{ server: node.server, uri: node.candidate.uri }],
        };
        return item;
      }
      case "template": {
        const item = new vscode.TreeItem(node.candidate.uriTemplate, vscode.TreeItemCollapsibleState.None);
        item.id = `template:${node.server}:${node.candidate.uriTemplate}`;
        item.iconPath = iconPath(node.candidate.icons) ?? new vscode.ThemeIcon("file-symlink-file");
        item.description = node.candidate.title ?? node.candidate.name;
        item.tooltip = node.candidate.description ?? undefined;
        item.contextValue = "template";
        item.command = { command: "mcpSidecar.fillTemplate", title: "Fill Template", arguments: [node] };
        return item;
      }
      case "prompt": {
        const args = node.candidate.arguments.map((a) => (a.required ? a.name : `${a.name}?`)).join(", ");
        const item = new vscode.TreeItem(`${node.candidate.name}(${args})`, vscode.TreeItemCollapsibleState.None);
        item.id = `prompt:${node.server}:${node.candidate.name}`;
        item.iconPath = iconPath(node.candidate.icons) ?? new vscode.ThemeIcon("comment-discussion");
        item.description = node.candidate.description ?? "";
        item.contextValue = "prompt";
        item.command = { command: "mcpSidecar.previewPrompt", title: "Preview Prompt", arguments: [node] };
        return item;
      }
      case "message": {
        const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
        item.tooltip = node.tooltip;
        item.contextValue = "message";
        if (node.error) item.iconPath = new vscode.ThemeIcon("error", new vscode.ThemeColor("errorForeground"));
        return item;
      }
    }
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) {
      if (this.client.state === "running" && this.store.rows.length === 0) await this.store.refresh();
      return this.store.rows.map((row) => this.serverNode(row.name));
    }
    if (node.type === "server") return GROUPS.map(({ group }) => ({ type: "group", server: node.server, group }));
    if (node.type !== "group") return [];
    try {
      return await this.fetchGroup(node.server, node.group);
    } catch (error) {
      const { message } = describeError(error);
      return [{ type: "message", server: node.server, text: message, tooltip: message, error: true }];
    }
  }

  getParent(node: Node): Node | undefined {
    if (node.type === "server") return undefined;
    if (node.type === "group") return this.serverNode(node.server);
    return undefined;
  }

  private serverNode(server: string): Node {
    let node = this.serverNodes.get(server);
    if (!node) {
      node = { type: "server", server };
      this.serverNodes.set(server, node);
    }
    return node;
  }

  private async fetchGroup(server: string, group: Group): Promise<Node[]> {
    if (group === "tools") {
      const result = await this.client.request(P.serverTools, { server });
      const nodes: Node[] = result.tools.map((tool) => ({ type: "tool", server, tool }));
      if (result.hiddenByFilters > 0)
        nodes.push({ type: "message", server, text: `${result.hiddenByFilters} hidden by the server's filters` });
      return nodes.length ? nodes : [{ type: "message", server, text: "No tools" }];
    }
    const kind = group === "prompts" ? "prompts" : "resources";
    const result = await this.client.request(P.discover, { query: "", kind, server, limit: LIST_LIMIT });
    const missing = result.unavailable.find((u) => u.server === server);
    if (missing) throw { data: missing.diagnostic };
    const nodes: Node[] = [];
    for (const candidate of result.candidates) {
      if (group === "resources" && candidate.kind === "resource") nodes.push({ type: "resource", server, candidate });
      if (group === "templates" && candidate.kind === "template") nodes.push({ type: "template", server, candidate });
      if (group === "prompts" && candidate.kind === "prompt") nodes.push({ type: "prompt", server, candidate });
    }
    if (result.candidates.length >= LIST_LIMIT)
      nodes.push({ type: "message", server, text: "More entries: use MCP: Search" });
    return nodes.length ? nodes : [{ type: "message", server, text: `No ${group}` }];
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
