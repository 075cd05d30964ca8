// Commands about one server (inspect, log in and out, reconnect, refresh, logs) and the
// general ones (status, search, run a /mcp line, the sidecar's own lifecycle, spill files).
import * as vscode from "vscode";
import { type Ctx, info, runLine } from "./commandContext";
import { commandLine, toolsLine } from "./commandLine";
import { engineLines, serverLine, toolPickItems } from "./format";
import { finishLogin, type LoginCallback, requestLogin, type ScopeAnswer } from "./login";
import * as P from "./protocol";
import { openSearch } from "./search";
import { pickOne, pickServer } from "./ui";

async function serverActions(ctx: Ctx, server: string): Promise<unknown> {
  const row = ctx.store.row(server);
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
  const loginItems =
    row?.transport === "http"
      ? [
          { label: "$(sign-in) Log in", command: "mcpSidecar.login" },
          { label: "$(sign-in) Log in without a browser", command: "mcpSidecar.loginNoBrowser" },
          { label: "$(sign-out) Log out", command: "mcpSidecar.logout" },
        ]
      : [];
  const needsLogin = row?.state === "needs_login"; // the login is what it waits for: offered first
  const items: (vscode.QuickPickItem & { command: string })[] = [
    ...(approval ? stateItems : []),
    ...(needsLogin ? loginItems : []),
    { label: "$(list-tree) Tools", command: "mcpSidecar.tools" },
    { label: "$(info) Details", command: "mcpSidecar.get" },
    ...(approval ? [] : stateItems),
    ...(needsLogin ? [] : loginItems),
    { label: "$(output) Logs", command: "mcpSidecar.serverLogs" },
    { label: "$(trash) Remove…", command: "mcpSidecar.remove" },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: row ? serverLine(row) : server,
    placeHolder: "What to do with this server",
  });
  return picked ? vscode.commands.executeCommand(picked.command, server) : undefined;
}

export function status(ctx: Ctx) {
  return async () => {
    const { store } = ctx;
    await store.refresh();
    const items: (vscode.QuickPickItem & { server?: string; review?: true; profile?: true })[] = store.rows.map(
      (row) => ({
        label: serverLine(row),
        detail: row.description ?? undefined,
        server: row.name,
      }),
    );
    const [engine, ...clients] = engineLines(store.engine);
    if (engine) {
      // The engine and its clients, first; picking it shows the status table (the same lines).
      items.unshift({ label: `$(server-process) ${engine}`, detail: clients.join(" · ") });
    }
    if (store.pendingApprovals.length > 0) {
      const label = `$(shield) Review project server changes (${store.pendingApprovals.length})`;
      items.unshift({ label, description: "new or changed in .mcp.json", review: true });
    }
    if (store.profile || store.profiles.length > 0) {
      const label = `$(filter) Profile: ${store.profile ?? "none"}`;
      items.push({ label, description: "choose another", profile: true });
    }
    items.push({ label: "$(output) Show the status table", description: "/mcp list" });
    const picked = await vscode.window.showQuickPick(items, {
      title: "MCP servers",
      placeHolder: "Pick a server for its actions",
    });
    if (!picked) return undefined;
    if (picked.review) return ctx.approvals.review();
    if (picked.profile) return profile(ctx)();
    return picked.server ? serverActions(ctx, picked.server) : runLine(ctx, "list");
  };
}

/** MCP: Choose Profile: a profile name (from a script or a test), or picked among the profiles this
 * window can choose; "None" clears it. Runs `/mcp profile NAME` (or `--clear`), which activates
 * the profile's tools and narrows what chat searches. */
export function profile(ctx: Ctx) {
  return async (arg?: unknown) => {
    if (typeof arg === "string") return runLine(ctx, arg === "" ? "profile --clear" : commandLine("profile", arg));
    await ctx.store.refresh();
    const current = ctx.store.profile;
    const items: (vscode.QuickPickItem & { name: string | null })[] = ctx.store.profiles.map((name) => ({
      label: name,
      description: name === current ? "current" : undefined,
      name,
    }));
    items.push({ label: "$(clear-all) None", description: "every server is searched", name: null });
    const picked = await pickOne(items, {
      title: "MCP: Choose Profile",
      placeHolder: current ? `Profile: ${current}` : "No profile: every server is searched",
    });
    if (!picked) return undefined;
    return runLine(ctx, picked.name === null ? "profile --clear" : commandLine("profile", picked.name));
  };
}

export function search(ctx: Ctx) {
  return async (initial?: string) => openSearch(ctx.client, ctx.actions, typeof initial === "string" ? initial : "");
}

/** A `/mcp` line: given, or typed after picking a command from the sidecar's command table
 * (its usage and summary shown; a command without arguments runs at once). */
export function runCommand(ctx: Ctx) {
  return async (line?: string) => {
    if (typeof line === "string") return runLine(ctx, line);
    const spec = await ctx.commandSpec();
    let name: string | undefined;
    let usage =
      "A /mcp command line, e.g. 'tools docs', 'disable docs', 'help' (the same as :Mcp in Neovim and `mcp-sidecar run`)";
    if (spec) {
      const picked = await pickOne(
        spec.commands.map((c) => ({
          label: c.name,
          description: c.usage.slice(c.name.length).trim(),
          detail: c.summary,
          entry: c,
        })),
        { title: "MCP: Run Command", placeHolder: "The /mcp command to run" },
      );
      if (!picked) return undefined;
      const entry = picked.entry;
      if (entry.positionals.length === 0 && !entry.options.some((o) => o.required)) return runLine(ctx, entry.name);
      name = entry.name;
      usage = `Usage: ${entry.usage}`;
    }
    const text = await vscode.window.showInputBox({
      title: "MCP: Run Command",
      prompt: usage,
      placeHolder: "list",
      value: name ? `${name} ` : undefined,
      ignoreFocusOut: true,
    });
    return text === undefined ? undefined : runLine(ctx, text);
  };
}

export function get(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = await pickServer(ctx.store, arg, "Server to inspect");
    return server ? runLine(ctx, commandLine("get", server)) : undefined;
  };
}

/** A server's tools: pick one for its multiline signature (`/mcp tools SERVER TOOL`), or the
 * whole list as text. `tool` (for scripts and tests) shows that tool's signature at once. */
export function tools(ctx: Ctx) {
  return async (arg?: unknown, tool?: unknown) => {
    const server = await pickServer(ctx.store, arg, "Server whose tools to list", (r) => r.state !== "disabled");
    if (!server) return undefined;
    if (typeof tool === "string" && tool !== "") return runLine(ctx, toolsLine(server, tool));
    const catalog = await ctx.client.request(P.serverTools, { server });
    const picked = await pickOne(toolPickItems(catalog), {
      title: `Tools of ${server}`,
      placeHolder: "Pick a tool for its parameters and description, or the first row for the list",
    });
    if (!picked) return undefined;
    return runLine(ctx, picked.tool === undefined ? commandLine("tools", server) : toolsLine(server, picked.tool));
  };
}

/**
 * `callback` and `scopes` (for scripts and tests): the pasted callback address, or a function
 * that gets it, instead of the input box (see `loginNoBrowser`), and the answer to the
 * more-scopes question, or a function that gives it, instead of the modal.
 */
export function login(ctx: Ctx) {
  return async (arg?: unknown, callback?: LoginCallback, scopes?: ScopeAnswer) => {
    const server = await pickServer(ctx.store, arg, "Server to log in to", (r) => r.transport === "http");
    if (!server) return undefined;
    if (vscode.env.remoteName) {
      // The sidecar runs on the remote machine: the browser's redirect to its loopback
      // callback (127.0.0.1) would reach the user's machine instead, so paste it back.
      ctx.log.info(`Remote window (${vscode.env.remoteName}): logging in to ${server} without the loopback callback.`);
      return ctx.run("mcpSidecar.loginNoBrowser", server, callback, scopes);
    }
    const result = await requestLogin(ctx, { server });
    return finishLogin(ctx, { server }, result, { callback, scopes });
  };
}

/** `callback` (for scripts and tests): the pasted address, or a function that gets it from the
 * authorization address, instead of the input box; `scopes` as for `login`. */
export function loginNoBrowser(ctx: Ctx) {
  return async (arg?: unknown, callback?: LoginCallback, scopes?: ScopeAnswer) => {
    const server = await pickServer(ctx.store, arg, "Server to log in to", (r) => r.transport === "http");
    if (!server) return undefined;
    const result = await requestLogin(ctx, { server, noBrowser: true });
    return finishLogin(ctx, { server, noBrowser: true }, result, { callback, scopes });
  };
}

export function logout(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = await pickServer(ctx.store, arg, "Server to log out of", (r) => r.transport === "http");
    if (!server) return undefined;
    const result = await ctx.client.request(P.authLogout, { server });
    info(result.text);
    await ctx.store.refresh();
    return result;
  };
}

export function reconnect(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = await pickServer(ctx.store, arg, "Server to reconnect", (r) => r.state !== "disabled");
    if (!server) return undefined;
    const row = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Reconnecting ${server}` },
      () => ctx.client.request(P.serverReconnect, { server }),
    );
    info(serverLine(row));
    ctx.view.refresh();
    return row;
  };
}

export function refresh(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = await pickServer(
      ctx.store,
      arg,
      "Server whose metadata to fetch again",
      (r) => r.state !== "disabled",
    );
    if (!server) return undefined;
    const result = await ctx.client.request(P.serverRefresh, { server });
    const problems = result.diagnostics.map((d) => `${d.kind}: ${d.diagnostic.message}`).join("; ");
    info(`Refreshed ${server}.${problems ? ` ${problems}` : ""}`);
    ctx.view.refresh();
    return result;
  };
}

export function serverLogs(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = await pickServer(ctx.store, arg, "Server whose logs to show");
    if (!server) return undefined;
    const logs = await ctx.client.request(P.serverLogs, { server });
    const channel = ctx.serverChannels.channel(server);
    channel.clear();
    if (logs.dropped > 0) channel.appendLine(`… ${logs.dropped} earlier lines dropped`);
    for (const line of logs.lines) channel.appendLine(`${new Date(line.time * 1000).toISOString()} ${line.text}`);
    if (logs.lines.length === 0)
      channel.appendLine(`${server} has written nothing to stderr since the sidecar connected it.`);
    channel.show(true);
    return logs;
  };
}

export function spillFiles(ctx: Ctx) {
  return async () => {
    const { client } = ctx;
    const list = await client.request(P.spillList, {});
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
    const items: (vscode.QuickPickItem & { run?: () => Promise<unknown> })[] = [
      {
        label: "$(trash) Delete all spill files",
        description: kib(list.totalBytes),
        run: () => client.request(P.spillClean, {}),
      },
      {
        label: "$(history) Delete spill files older than 7 days",
        run: () => client.request(P.spillClean, { olderThanDays: 7 }),
      },
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
  };
}

export function showLog(ctx: Ctx) {
  return async () => ctx.log.show();
}

export function restart(ctx: Ctx) {
  return () => {
    ctx.bootstrap.resetPrompt();
    return ctx.client.restart();
  };
}

export function installSidecar(ctx: Ctx) {
  return async () => {
    const installed = await ctx.bootstrap.install();
    if (installed) await ctx.client.restart();
    return installed;
  };
}

export function refreshView(ctx: Ctx) {
  return async () => {
    await ctx.store.refresh();
    ctx.view.refresh();
  };
}
