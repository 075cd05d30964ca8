// Every command of the extension, registered at activation whether or not the sidecar runs
// (a request starts it, and a sidecar that cannot start says why). Command bodies return
// their result so tests and other extensions can use them.
import * as vscode from "vscode";
import type { Actions } from "./actions";
import type { Approvals } from "./approvals";
import type { SidecarClient } from "./client";
import { commandLine, parseServerTarget, validServerName } from "./commandLine";
import type { OutputDocuments } from "./documents";
import { serverLine } from "./format";
import * as P from "./protocol";
import { openSearch } from "./search";
import type { ServerStore } from "./state";
import { guarded, pickServer } from "./ui";
import type { Node, ServersView } from "./views/servers";

export interface CommandContext {
  client: SidecarClient;
  store: ServerStore;
  actions: Actions;
  outputs: OutputDocuments;
  view: ServersView;
  log: vscode.LogOutputChannel;
  bootstrap: { install(): Promise<string | undefined>; resetPrompt(): void };
  approvals: Approvals;
}

type Scope = "global" | "project";

function info(message: string): void {
  void vscode.window.showInformationMessage(`MCP: ${message}`);
}

function reloadNote(summary: P.ReloadSummary | undefined): string {
  if (!summary) return "";
  if (!summary.applied && summary.diagnostics.length > 0) {
    return ` The configuration has problems, so the previous one stays in use: ${summary.diagnostics.map((d) => d.message).join("; ")}`;
  }
  return "";
}

async function pickScope(store: ServerStore, placeHolder: string, preferred?: string): Promise<Scope | undefined> {
  const items: (vscode.QuickPickItem & { scope: Scope })[] = [
    { label: "global", description: "mcp.json in your user configuration", scope: "global" },
    {
      label: "project",
      description: store.trustedWorkspace ? ".mcp.json in this workspace" : ".mcp.json — needs a trusted workspace",
      scope: "project",
    },
  ];
  if (preferred === "project") items.reverse();
  return (await vscode.window.showQuickPick(items, { placeHolder }))?.scope;
}

function toolIdOf(arg: unknown): string | undefined {
  if (typeof arg === "string") return arg;
  const node = arg as Node | undefined;
  return node?.type === "tool" ? node.tool.id : undefined;
}

export function registerCommands(ctx: CommandContext): vscode.Disposable[] {
  const { client, store, actions, outputs, view, log } = ctx;
  const serverLogChannels = new Map<string, vscode.OutputChannel>();

  /** Runs one `/mcp` line and shows its text (a `prompt` line opens the preview). */
  const runLine = async (line: string): Promise<P.CommandResult> => {
    const result = await client.request(P.command, { line });
    if (result.command === "prompt" && result.data && typeof result.data === "object" && "previewId" in result.data) {
      await actions.prompts.show(result.data as unknown as P.PromptSnapshot);
    } else {
      await outputs.show(`mcp ${result.command}`, result.text);
    }
    if (["add", "remove", "enable", "disable", "reload", "import", "reconnect", "refresh", "login", "logout"].includes(result.command)) {
      void store.refresh();
    }
    return result;
  };

  const serverActions = async (server: string): Promise<unknown> => {
    const row = store.row(server);
    const disabled = row?.state === "disabled";
    const approval = row?.approvalRequired === true;
    const stateItems = approval
      ? [{ label: "$(shield) Review the change and approve…", command: "mcpSidecar.reviewApprovals" }]
      : disabled
        ? [{ label: "$(check) Enable", command: "mcpSidecar.enable" }]
        : [
            { label: "$(debug-restart) Reconnect", command: "mcpSidecar.reconnect" },
            { label: "$(refresh) Refresh metadata", command: "mcpSidecar.refresh" },
            { label: "$(circle-slash) Disable", command: "mcpSidecar.disable" },
          ];
    const items: (vscode.QuickPickItem & { command: string })[] = [
      ...(approval ? stateItems : []),
      { label: "$(list-tree) Tools", command: "mcpSidecar.tools" },
      { label: "$(info) Details", command: "mcpSidecar.get" },
      ...(approval ? [] : stateItems),
      ...(row?.transport === "http"
        ? [
            { label: "$(sign-in) Log in", command: "mcpSidecar.login" },
            { label: "$(sign-in) Log in without a browser", command: "mcpSidecar.loginNoBrowser" },
            { label: "$(sign-out) Log out", command: "mcpSidecar.logout" },
          ]
        : []),
      { label: "$(output) Logs", command: "mcpSidecar.serverLogs" },
      { label: "$(trash) Remove…", command: "mcpSidecar.remove" },
    ];
    const picked = await vscode.window.showQuickPick(items, { title: row ? serverLine(row) : server, placeHolder: "What to do with this server" });
    return picked ? vscode.commands.executeCommand(picked.command, server) : undefined;
  };

  const handlers: Record<string, (...args: any[]) => Promise<unknown>> = {
    "mcpSidecar.status": async () => {
      await store.refresh();
      const items: (vscode.QuickPickItem & { server?: string; review?: true })[] = store.rows.map((row) => ({
        label: serverLine(row),
        detail: row.description ?? undefined,
        server: row.name,
      }));
      if (store.pendingApprovals.length > 0) {
        const label = `$(shield) Review project server changes (${store.pendingApprovals.length})`;
        items.unshift({ label, description: "new or changed in .mcp.json", review: true });
      }
      items.push({ label: "$(output) Show the status table", description: "/mcp list" });
      const picked = await vscode.window.showQuickPick(items, { title: "MCP servers", placeHolder: "Pick a server for its actions" });
      if (!picked) return undefined;
      if (picked.review) return ctx.approvals.review();
      return picked.server ? serverActions(picked.server) : runLine("list");
    },
    "mcpSidecar.search": (initial?: string) => openSearch(client, actions, typeof initial === "string" ? initial : ""),
    "mcpSidecar.runCommand": async (line?: string) => {
      const text =
        typeof line === "string"
          ? line
          : await vscode.window.showInputBox({
              title: "MCP: Run Command",
              prompt: "A /mcp command line, e.g. 'tools docs', 'disable docs', 'help' (the same as :Mcp in Neovim and `mcp-sidecar run`)",
              placeHolder: "list",
              ignoreFocusOut: true,
            });
      return text === undefined ? undefined : runLine(text);
    },
    "mcpSidecar.add": async () => {
      const name = await vscode.window.showInputBox({ title: "Add MCP server (1/3)", prompt: "Server name", validateInput: validServerName, ignoreFocusOut: true });
      if (!name) return undefined;
      const scope = await pickScope(store, "Add MCP server (2/3): where to save it");
      if (!scope) return undefined;
      const target = await vscode.window.showInputBox({
        title: "Add MCP server (3/3)",
        prompt: "An http(s) URL, or the command line that starts a stdio server (quoted like a shell, never run by a shell)",
        placeHolder: "https://mcp.example.com/mcp   or   npx -y @modelcontextprotocol/server-everything",
        ignoreFocusOut: true,
        validateInput: (value) => {
          const parsed = parseServerTarget(value);
          return parsed.ok ? undefined : parsed.error;
        },
      });
      if (target === undefined) return undefined;
      const parsed = parseServerTarget(target);
      if (!parsed.ok) return undefined;
      const result = await client.request(P.configAdd, { scope, server: name, definition: parsed.definition });
      info(`${result.action === "replaced" ? "Replaced" : "Added"} '${name}' in ${result.path}.${result.notes.length ? " " + result.notes.join(" ") : ""}${reloadNote(result.reload)}`);
      await store.refresh();
      return result;
    },
    "mcpSidecar.remove": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server to remove");
      if (!server) return undefined;
      const scope = await pickScope(store, `Remove '${server}' from`, store.row(server)?.scope);
      if (!scope) return undefined;
      const sure = await vscode.window.showWarningMessage(
        `Remove the ${scope} definition of '${server}'? OAuth credentials are kept.`,
        { modal: true },
        "Remove",
      );
      if (sure !== "Remove") return undefined;
      const result = await client.request(P.configRemove, { scope, server });
      info(`Removed '${server}' from ${result.path}.${result.remaining ? ` The ${result.remaining} definition is now in effect.` : ""}${reloadNote(result.reload)}`);
      await store.refresh();
      return result;
    },
    "mcpSidecar.get": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server to inspect");
      return server ? runLine(commandLine("get", server)) : undefined;
    },
    "mcpSidecar.tools": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server whose tools to list", (r) => r.state !== "disabled");
      return server ? runLine(commandLine("tools", server)) : undefined;
    },
    "mcpSidecar.reload": async () => {
      const summary = await client.request(P.configReload, {});
      const parts = [
        summary.added.length ? `added ${summary.added.join(", ")}` : "",
        summary.removed.length ? `removed ${summary.removed.join(", ")}` : "",
        summary.changed.length ? `changed ${summary.changed.join(", ")}` : "",
      ].filter(Boolean);
      info(`Configuration reloaded${parts.length ? `: ${parts.join("; ")}` : " (no changes)"}.`);
      await store.refresh();
      return summary;
    },
    "mcpSidecar.reviewApprovals": async (arg?: unknown) => {
      const server = typeof arg === "string" ? arg : (arg as { server?: unknown } | undefined)?.server;
      return ctx.approvals.review(typeof server === "string" ? server : undefined);
    },
    "mcpSidecar.enable": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server to enable", (r) => r.state === "disabled");
      if (!server) return undefined;
      const result = await client.request(P.configSetEnabled, { server, enabled: true });
      info(`${result.changed ? "Enabled" : "Already enabled:"} '${server}' (${result.path}).${reloadNote(result.reload)}`);
      await store.refresh();
      return result;
    },
    "mcpSidecar.disable": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server to disable", (r) => r.state !== "disabled");
      if (!server) return undefined;
      const result = await client.request(P.configSetEnabled, { server, enabled: false });
      const deactivated = result.deactivated.length ? ` Deactivated ${result.deactivated.join(", ")}.` : "";
      info(`${result.changed ? "Disabled" : "Already disabled:"} '${server}' (${result.path}).${deactivated}${reloadNote(result.reload)}`);
      await store.refresh();
      return result;
    },
    "mcpSidecar.import": async (file?: string, scopeArg?: Scope) => {
      let path = typeof file === "string" ? file : undefined;
      if (!path) {
        const picked = await vscode.window.showOpenDialog({
          title: "Import MCP servers from another client's configuration",
          canSelectMany: false,
          filters: { "MCP configuration": ["json", "jsonc", "toml"], "All files": ["*"] },
        });
        path = picked?.[0]?.fsPath;
      }
      if (!path) return undefined;
      const scope = scopeArg ?? (await pickScope(store, "Import into"));
      if (!scope) return undefined;
      const preview = await client.request(P.configImport, { file: path, scope });
      const items = preview.servers.map((s) => ({
        label: s.name,
        description: `${s.transport}${s.alreadyDefined.length ? ` · already in ${s.alreadyDefined.join(", ")}` : ""}`,
        detail: [
          ...s.problems.map((p) => `✘ ${p}`),
          ...s.inlineValues.map((v) => `⚠ ${v} holds a literal value (possibly a credential)`),
          ...s.placeholders.map((p) => `define \${${p.variable}} (${p.source})`),
          ...s.notes,
        ].join(" · ") || undefined,
        picked: s.importable && s.alreadyDefined.length === 0,
        server: s,
      }));
      const chosen = await vscode.window.showQuickPick(items.filter((i) => i.server.importable), {
        title: `Import from ${preview.formatLabel}`,
        placeHolder: `Servers to write to ${preview.path} (connection values stay hidden)`,
        canPickMany: true,
      });
      if (!chosen || chosen.length === 0) return preview;
      const replace = chosen.some((c) => c.server.alreadyDefined.length > 0);
      const result = await client.request(P.configImport, { file: path, scope, select: chosen.map((c) => c.label), confirm: true, replace });
      info(`Imported ${result.imported.join(", ")} into ${result.path}.${reloadNote(result.reload)}`);
      await store.refresh();
      return result;
    },
    "mcpSidecar.login": async (arg?: unknown, callback?: string | ((authorizationUrl: string, redirectUri: string) => Promise<string>)) => {
      const server = await pickServer(store, arg, "Server to log in to", (r) => r.transport === "http");
      if (!server) return undefined;
      if (vscode.env.remoteName) {
        // The sidecar runs on the remote machine: the browser's redirect to its loopback
        // callback (127.0.0.1) would reach the user's machine instead, so paste it back.
        log.info(`Remote window (${vscode.env.remoteName}): logging in to ${server} without the loopback callback.`);
        return handlers["mcpSidecar.loginNoBrowser"]?.(server, callback);
      }
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Logging in to ${server} in your browser…`, cancellable: true },
        (_progress, token) => client.request(P.authLogin, { server }, token),
      );
      info(result.text);
      await store.refresh();
      return result;
    },
    // `callback` (for scripts and tests): the pasted address, or a function that gets it from
    // the authorization address, instead of the input box.
    "mcpSidecar.loginNoBrowser": async (arg?: unknown, callback?: string | ((authorizationUrl: string, redirectUri: string) => Promise<string>)) => {
      const server = await pickServer(store, arg, "Server to log in to", (r) => r.transport === "http");
      if (!server) return undefined;
      const pending = await client.request(P.authLogin, { server, noBrowser: true });
      if (pending.status === "completed" || !pending.loginId || !pending.authorizationUrl) {
        info(pending.text);
        return pending;
      }
      await vscode.env.clipboard.writeText(pending.authorizationUrl);
      const redirect = pending.redirectUri ?? "";
      const callbackUrl =
        typeof callback === "string"
          ? callback
          : typeof callback === "function"
            ? await callback(pending.authorizationUrl, redirect)
            : await vscode.window.showInputBox({
              title: `Log in to ${server} without a browser here`,
              prompt: `The authorization address is on the clipboard: open it in any browser, sign in, then paste the address the browser was sent to (it starts with ${redirect}; the page itself may fail to load).`,
              placeHolder: `${redirect}?code=…&state=…`,
              ignoreFocusOut: true,
              validateInput: (value) => (redirect && !value.trim().startsWith(redirect) ? `Paste the address that starts with ${redirect}` : undefined),
            });
      if (!callbackUrl) return pending;
      const result = await client.request(P.authCompleteLogin, { loginId: pending.loginId, callbackUrl: callbackUrl.trim() });
      info(result.text);
      await store.refresh();
      return result;
    },
    "mcpSidecar.logout": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server to log out of", (r) => r.transport === "http");
      if (!server) return undefined;
      const result = await client.request(P.authLogout, { server });
      info(result.text);
      await store.refresh();
      return result;
    },
    "mcpSidecar.reconnect": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server to reconnect", (r) => r.state !== "disabled");
      if (!server) return undefined;
      const row = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: `Reconnecting ${server}` },
        () => client.request(P.serverReconnect, { server }),
      );
      info(serverLine(row));
      view.refresh();
      return row;
    },
    "mcpSidecar.refresh": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server whose metadata to fetch again", (r) => r.state !== "disabled");
      if (!server) return undefined;
      const result = await client.request(P.serverRefresh, { server });
      const problems = result.diagnostics.map((d) => `${d.kind}: ${d.diagnostic.message}`).join("; ");
      info(`Refreshed ${server}.${problems ? ` ${problems}` : ""}`);
      view.refresh();
      return result;
    },
    "mcpSidecar.subscribe": async (arg?: { server?: string; uri?: string } | Node) => {
      const node = arg as Node | undefined;
      let server = node?.type === "resource" ? node.server : (arg as { server?: string } | undefined)?.server;
      let uri = node?.type === "resource" ? node.candidate.uri : (arg as { uri?: string } | undefined)?.uri;
      server ??= await pickServer(store, undefined, "Server of the resource to watch", (r) => r.state !== "disabled");
      if (!server) return undefined;
      if (!uri) {
        const found = await client.request(P.discover, { query: "", kind: "resources", server, limit: 50 });
        const items = found.candidates
          .filter((c): c is P.ResourceCandidate => c.kind === "resource")
          .map((c) => ({ label: c.uri, description: c.title ?? c.name, detail: c.description ?? undefined }));
        uri = (await vscode.window.showQuickPick(items, { placeHolder: `Resource of ${server} to watch` }))?.label;
      }
      if (!uri) return undefined;
      const result = await client.request(P.resourceSubscribe, { server, uri });
      store.setWatch(result.watch, server, uri);
      info(`Watching ${server} · ${uri}${result.created ? "" : " (already watched)"}. A change shows a notification.`);
      return result;
    },
    "mcpSidecar.unsubscribe": async (arg?: { server?: string; uri?: string } | Node) => {
      const node = arg as Node | undefined;
      let server = node?.type === "resource" ? node.server : (arg as { server?: string } | undefined)?.server;
      let uri = node?.type === "resource" ? node.candidate.uri : (arg as { uri?: string } | undefined)?.uri;
      if (!server || !uri) {
        const subs = await client.request(P.resourceSubscriptions, {});
        const picked = await vscode.window.showQuickPick(
          subs.watches.map((w) => ({ label: w.uri, description: `${w.server}${w.changed ? " · changed" : ""}`, watch: w })),
          { placeHolder: subs.watches.length ? "Watch to stop" : "Nothing is watched" },
        );
        server = picked?.watch.server;
        uri = picked?.watch.uri;
      }
      if (!server || !uri) return undefined;
      const result = await client.request(P.resourceUnsubscribe, { server, uri });
      store.setWatch(undefined, server, uri);
      info(result.removed ? `Stopped watching ${server} · ${uri}.` : `${server} · ${uri} was not watched.`);
      return result;
    },
    "mcpSidecar.subscriptions": async () => {
      const subs = await client.request(P.resourceSubscriptions, {});
      const picked = await vscode.window.showQuickPick(
        subs.watches.map((w) => ({
          label: `${w.changed ? "↻" : "○"} ${w.server} · ${w.uri}`,
          description: w.changed ? `changed (${w.updates} update${w.updates === 1 ? "" : "s"})` : "no change yet",
          watch: w,
        })),
        { title: `Watched resources (at most ${subs.limitPerConnection} per server)`, placeHolder: subs.watches.length ? "Pick one to read it" : "Nothing is watched" },
      );
      if (picked) await actions.openResource(picked.watch.server, picked.watch.uri);
      return subs;
    },
    "mcpSidecar.spillFiles": async () => {
      const list = await client.request(P.spillList, {});
      const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
      const items: (vscode.QuickPickItem & { run?: () => Promise<unknown> })[] = [
        { label: "$(trash) Delete all spill files", description: kib(list.totalBytes), run: () => client.request(P.spillClean, {}) },
        { label: "$(history) Delete spill files older than 7 days", run: () => client.request(P.spillClean, { olderThanDays: 7 }) },
        ...list.files.map((f) => ({
          label: f.path.split(/[\\/]/).pop() ?? f.path,
          description: `${kib(f.bytes)} · ${new Date(f.modified * 1000).toLocaleString()}`,
          detail: f.path,
          run: async () => vscode.window.showTextDocument(vscode.Uri.file(f.path)),
        })),
      ];
      const picked = await vscode.window.showQuickPick(items, {
        title: `Spill files in ${list.directory} (${list.files.length}, ${kib(list.totalBytes)}; may hold sensitive data)`,
      });
      const outcome = await picked?.run?.();
      if (outcome && typeof outcome === "object" && "removed" in outcome) {
        const cleaned = outcome as P.SpillCleanResult;
        info(`Deleted ${cleaned.removed.length} spill file(s), ${kib(cleaned.freedBytes)}; ${cleaned.kept} kept.`);
      }
      return list;
    },
    "mcpSidecar.serverLogs": async (arg?: unknown) => {
      const server = await pickServer(store, arg, "Server whose logs to show");
      if (!server) return undefined;
      const logs = await client.request(P.serverLogs, { server });
      let channel = serverLogChannels.get(server);
      if (!channel) {
        channel = vscode.window.createOutputChannel(`MCP: ${server}`);
        serverLogChannels.set(server, channel);
      }
      channel.clear();
      if (logs.dropped > 0) channel.appendLine(`… ${logs.dropped} earlier lines dropped`);
      for (const line of logs.lines) channel.appendLine(`${new Date(line.time * 1000).toISOString()} ${line.text}`);
      if (logs.lines.length === 0) channel.appendLine(`${server} has written nothing to stderr since the sidecar connected it.`);
      channel.show(true);
      return logs;
    },
    "mcpSidecar.activeTools": async () => {
      const active = await client.request(P.activeTools, {});
      const picked = await vscode.window.showQuickPick(
        active.tools.map((t) => ({ label: t.id, detail: t.description ?? undefined })),
        { title: `Active tools (session ${active.session})`, placeHolder: active.tools.length ? "Pick one to call it" : "No tool is active; activate one from MCP: Search" },
      );
      if (picked) await actions.call(picked.label);
      return active;
    },
    "mcpSidecar.showLog": async () => log.show(),
    "mcpSidecar.restart": () => {
      ctx.bootstrap.resetPrompt();
      return client.restart();
    },
    "mcpSidecar.installSidecar": async () => {
      const installed = await ctx.bootstrap.install();
      if (installed) await client.restart();
      return installed;
    },
    "mcpSidecar.callTool": async (arg?: unknown, args?: P.JsonObject) => {
      const id = toolIdOf(arg);
      return id ? actions.call(id, args) : openSearch(client, actions);
    },
    "mcpSidecar.showSchema": async (arg?: unknown) => {
      const id = toolIdOf(arg);
      return id ? actions.showSchema(id) : undefined;
    },
    "mcpSidecar.activateTool": async (arg?: unknown) => {
      const id = toolIdOf(arg);
      return id ? actions.activate(id) : undefined;
    },
    "mcpSidecar.openResource": async (arg?: { server?: string; uri?: string } | Node) => {
      const node = arg as Node | undefined;
      if (node?.type === "resource") return actions.openResource(node.server, node.candidate.uri);
      const target = arg as { server?: string; uri?: string } | undefined;
      return target?.server && target.uri ? actions.openResource(target.server, target.uri) : undefined;
    },
    "mcpSidecar.fillTemplate": async (arg?: Node) =>
      arg?.type === "template" ? actions.fillTemplate(arg.server, arg.candidate.uriTemplate, arg.candidate.variables) : undefined,
    "mcpSidecar.previewPrompt": async (arg?: Node | { server: string; name: string; arguments?: Record<string, string> }) => {
      if ((arg as Node | undefined)?.type === "prompt") {
        const node = arg as Extract<Node, { type: "prompt" }>;
        return actions.previewPrompt(node.server, node.candidate.name, node.candidate.arguments);
      }
      const target = arg as { server?: string; name?: string; arguments?: Record<string, string> } | undefined;
      if (target?.server && target.name) {
        return target.arguments ? actions.prompts.preview(target.server, target.name, target.arguments) : actions.previewPrompt(target.server, target.name);
      }
      return undefined;
    },
    "mcpSidecar.usePrompt": async (uri?: vscode.Uri) => {
      const previewId = uri instanceof vscode.Uri && uri.scheme === "mcp-sidecar-prompt" ? uri.query : actions.prompts.activePreviewId();
      return previewId ? actions.prompts.use(previewId) : undefined;
    },
    "mcpSidecar.discardPrompt": async (uri?: vscode.Uri) => {
      const previewId = uri instanceof vscode.Uri && uri.scheme === "mcp-sidecar-prompt" ? uri.query : actions.prompts.activePreviewId();
      return previewId ? actions.prompts.discard(previewId) : undefined;
    },
    "mcpSidecar.refreshView": async () => {
      await store.refresh();
      view.refresh();
    },
  };

  const disposables = Object.entries(handlers).map(([id, body]) => vscode.commands.registerCommand(id, guarded(log, body)));
  disposables.push({ dispose: () => serverLogChannels.forEach((c) => c.dispose()) });
  return disposables;
}

