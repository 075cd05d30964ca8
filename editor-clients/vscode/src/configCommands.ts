// Commands that edit the configuration: add (validated by the sidecar's dry run as you type),
// remove, reload, enable/disable, import, and the review of changed project servers.
import * as vscode from "vscode";
import { type Ctx, dryRunMessage, info, pickScope, reloadNote, type Scope } from "./commandContext";
import { describeError } from "./format";
import * as P from "./protocol";
import { pickServer } from "./ui";

/** The add wizard: name, scope, target. The sidecar's dry run of `mcp/config/add` checks each
 * answer as it is typed (name rules, conflicts, the trusted scope, how a command line splits). */
export function add(ctx: Ctx) {
  return async () => {
    const { client, store } = ctx;
    const problem = async (params: P.ConfigAddParams, fields?: string[]) => {
      try {
        return dryRunMessage(await client.request(P.configAddDryRun, { ...params, dryRun: true }), fields);
      } catch (error) {
        return describeError(error).message;
      }
    };
    const name = await vscode.window.showInputBox({
      title: "Add MCP server (1/3)",
      prompt: "Server name",
      ignoreFocusOut: true,
      // `{}`: only the name's own problems (its rules, a server that exists) are shown here.
      validateInput: async (value) =>
        value === "" ? "Enter a name." : problem({ scope: "global", server: value, definition: {} }, ["server"]),
    });
    if (!name) return undefined;
    const scope = await pickScope(store, "Add MCP server (2/3): where to save it");
    if (!scope) return undefined;
    const target = await vscode.window.showInputBox({
      title: "Add MCP server (3/3)",
      prompt:
        "An http(s) URL, or the command line that starts a stdio server (quoted like a shell, never run by a shell)",
      placeHolder: "https://mcp.example.com/mcp   or   npx -y @modelcontextprotocol/server-everything",
      ignoreFocusOut: true,
      validateInput: (value) => problem({ scope, server: name, target: value }),
    });
    if (target === undefined) return undefined;
    const result = await client.request(P.configAdd, { scope, server: name, target });
    info(
      `${result.action === "replaced" ? "Replaced" : "Added"} '${name}' in ${result.path}.${result.notes.length ? ` ${result.notes.join(" ")}` : ""}${reloadNote(result.reload)}`,
    );
    await store.refresh();
    return result;
  };
}

export function remove(ctx: Ctx) {
  return async (arg?: unknown) => {
    const { client, store } = ctx;
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
    info(
      `Removed '${server}' from ${result.path}.${result.remaining ? ` The ${result.remaining} definition is now in effect.` : ""}${reloadNote(result.reload)}`,
    );
    await store.refresh();
    return result;
  };
}

export function reload(ctx: Ctx) {
  return async () => {
    const summary = await ctx.client.request(P.configReload, {});
    const parts = [
      summary.added.length ? `added ${summary.added.join(", ")}` : "",
      summary.removed.length ? `removed ${summary.removed.join(", ")}` : "",
      summary.changed.length ? `changed ${summary.changed.join(", ")}` : "",
    ].filter(Boolean);
    info(`Configuration reloaded${parts.length ? `: ${parts.join("; ")}` : " (no changes)"}.`);
    await ctx.store.refresh();
    return summary;
  };
}

export function reviewApprovals(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = typeof arg === "string" ? arg : (arg as { server?: unknown } | undefined)?.server;
    return ctx.approvals.review(typeof server === "string" ? server : undefined);
  };
}

export function enable(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = await pickServer(ctx.store, arg, "Server to enable", (r) => r.state === "disabled");
    if (!server) return undefined;
    const result = await ctx.client.request(P.configSetEnabled, { server, enabled: true });
    info(
      `${result.changed ? "Enabled" : "Already enabled:"} '${server}' (${result.path}).${reloadNote(result.reload)}`,
    );
    await ctx.store.refresh();
    return result;
  };
}

export function disable(ctx: Ctx) {
  return async (arg?: unknown) => {
    const server = await pickServer(ctx.store, arg, "Server to disable", (r) => r.state !== "disabled");
    if (!server) return undefined;
    const result = await ctx.client.request(P.configSetEnabled, { server, enabled: false });
    const deactivated = result.deactivated.length ? ` Deactivated ${result.deactivated.join(", ")}.` : "";
    info(
      `${result.changed ? "Disabled" : "Already disabled:"} '${server}' (${result.path}).${deactivated}${reloadNote(result.reload)}`,
    );
    await ctx.store.refresh();
    return result;
  };
}

export function importServers(ctx: Ctx) {
  return async (file?: string, scopeArg?: Scope) => {
    const { client, store } = ctx;
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
      detail:
        [
          ...s.problems.map((p) => `✘ ${p}`),
          ...s.inlineValues.map((v) => `⚠ ${v} holds a literal value (possibly a credential)`),
          ...s.placeholders.map((p) => `define \${${p.variable}} (${p.source})`),
          ...s.notes,
        ].join(" · ") || undefined,
      picked: s.importable && s.alreadyDefined.length === 0,
      server: s,
    }));
    const chosen = await vscode.window.showQuickPick(
      items.filter((i) => i.server.importable),
      {
        title: `Import from ${preview.formatLabel}`,
        placeHolder: `Servers to write to ${preview.path} (connection values stay hidden)`,
        canPickMany: true,
      },
    );
    if (!chosen || chosen.length === 0) return preview;
    const replace = chosen.some((c) => c.server.alreadyDefined.length > 0);
    const result = await client.request(P.configImport, {
      file: path,
      scope,
      select: chosen.map((c) => c.label),
      confirm: true,
      replace,
    });
    info(`Imported ${result.imported.join(", ")} into ${result.path}.${reloadNote(result.reload)}`);
    await store.refresh();
    return result;
  };
}
