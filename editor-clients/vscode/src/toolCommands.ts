// Commands about tools, resources, watches and prompts; most hand over to `Actions`.
import * as vscode from "vscode";
import { type Ctx, info, runLine, toolIdOf } from "./commandContext";
import { toolsLine } from "./commandLine";
import * as P from "./protocol";
import { openSearch } from "./search";
import { pickServer } from "./ui";
import type { Node } from "./views/servers";

type ResourceArg = { server?: string; uri?: string } | Node;

function resourceOf(arg?: ResourceArg): { server?: string; uri?: string } {
  const node = arg as Node | undefined;
  if (node?.type === "resource") return { server: node.server, uri: node.candidate.uri };
  const target = arg as { server?: string; uri?: string } | undefined;
  return { server: target?.server, uri: target?.uri };
}

export function subscribe(ctx: Ctx) {
  return async (arg?: ResourceArg) => {
    const { client, store } = ctx;
    let { server, uri } = resourceOf(arg);
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
  };
}

export function unsubscribe(ctx: Ctx) {
  return async (arg?: ResourceArg) => {
    const { client, store } = ctx;
    let { server, uri } = resourceOf(arg);
    if (!server || !uri) {
      const subs = await client.request(P.resourceSubscriptions, {});
      const picked = await vscode.window.showQuickPick(
        subs.watches.map((w) => ({
          label: w.uri,
          description: `${w.server}${w.changed ? " · changed" : ""}`,
          watch: w,
        })),
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
  };
}

export function subscriptions(ctx: Ctx) {
  return async () => {
    const subs = await ctx.client.request(P.resourceSubscriptions, {});
    const picked = await vscode.window.showQuickPick(
      subs.watches.map((w) => ({
        label: `${w.changed ? "↻" : "○"} ${w.server} · ${w.uri}`,
        description: w.changed ? `changed (${w.updates} update${w.updates === 1 ? "" : "s"})` : "no change yet",
        watch: w,
      })),
      {
        title: `Watched resources (at most ${subs.limitPerConnection} per server)`,
        placeHolder: subs.watches.length ? "Pick one to read it" : "Nothing is watched",
      },
    );
    if (picked) await ctx.actions.openResource(picked.watch.server, picked.watch.uri);
    return subs;
  };
}

export function activeTools(ctx: Ctx) {
  return async () => {
    const active = await ctx.client.request(P.activeTools, {});
    const picked = await vscode.window.showQuickPick(
      active.tools.map((t) => ({ label: t.id, detail: t.description ?? undefined })),
      {
        title: `Active tools (session ${active.session})`,
        placeHolder: active.tools.length ? "Pick one to call it" : "No tool is active; activate one from MCP: Search",
      },
    );
    if (picked) await ctx.actions.call(picked.label);
    return active;
  };
}

/**
 * The chat started over: end the session its tools live in (`mcp/session/end`). VS Code's
 * tool API says nothing of conversations, so the person says it; the sidecar drops the
 * session's active tools and pending prompt previews, and the next activation starts afresh.
 */
export function endChatSession(ctx: Ctx) {
  return async () => {
    const ended = await ctx.client.request(P.sessionEnd, { session: P.DEFAULT_SESSION });
    const tools = ended.deactivated.length;
    void vscode.window.showInformationMessage(
      `MCP: the chat session starts over: ${tools} active tool${tools === 1 ? "" : "s"} dropped` +
        (ended.previewsDiscarded ? `, ${ended.previewsDiscarded} prompt preview(s) discarded.` : "."),
    );
    return ended;
  };
}

export function callTool(ctx: Ctx) {
  return async (arg?: unknown, args?: P.JsonObject) => {
    const id = toolIdOf(arg);
    return id ? ctx.actions.call(id, args) : openSearch(ctx.client, ctx.actions);
  };
}

export function showSchema(ctx: Ctx) {
  return async (arg?: unknown) => {
    const id = toolIdOf(arg);
    return id ? ctx.actions.showSchema(id) : undefined;
  };
}

/** A tool node's multiline signature (`/mcp tools SERVER TOOL`): parameters, description, annotations. */
export function showSignature(ctx: Ctx) {
  return async (arg?: unknown) => {
    const node = arg as Node | undefined;
    if (node?.type !== "tool") return undefined;
    return runLine(ctx, toolsLine(node.tool.server, node.tool.name));
  };
}

export function activateTool(ctx: Ctx) {
  return async (arg?: unknown) => {
    const id = toolIdOf(arg);
    return id ? ctx.actions.activate(id) : undefined;
  };
}

export function openResource(ctx: Ctx) {
  return async (arg?: ResourceArg) => {
    const { server, uri } = resourceOf(arg);
    return server && uri ? ctx.actions.openResource(server, uri) : undefined;
  };
}

export function fillTemplate(ctx: Ctx) {
  return async (arg?: Node) =>
    arg?.type === "template"
      ? ctx.actions.fillTemplate(arg.server, arg.candidate.uriTemplate, arg.candidate.variables)
      : undefined;
}

export function previewPrompt(ctx: Ctx) {
  return async (arg?: Node | { server: string; name: string; arguments?: Record<string, string> }) => {
    const { actions } = ctx;
    if ((arg as Node | undefined)?.type === "prompt") {
      const node = arg as Extract<Node, { type: "prompt" }>;
      return actions.previewPrompt(node.server, node.candidate.name, node.candidate.arguments);
    }
    const target = arg as { server?: string; name?: string; arguments?: Record<string, string> } | undefined;
    if (target?.server && target.name) {
      return target.arguments
        ? actions.prompts.preview(target.server, target.name, target.arguments)
        : actions.previewPrompt(target.server, target.name);
    }
    return undefined;
  };
}

function previewIdOf(ctx: Ctx, uri?: vscode.Uri): string | undefined {
  return uri instanceof vscode.Uri && uri.scheme === "mcp-sidecar-prompt"
    ? uri.query
    : ctx.actions.prompts.activePreviewId();
}

export function usePrompt(ctx: Ctx) {
  return async (uri?: vscode.Uri) => {
    const previewId = previewIdOf(ctx, uri);
    return previewId ? ctx.actions.prompts.use(previewId) : undefined;
  };
}

export function discardPrompt(ctx: Ctx) {
  return async (uri?: vscode.Uri) => {
    const previewId = previewIdOf(ctx, uri);
    return previewId ? ctx.actions.prompts.discard(previewId) : undefined;
  };
}
