// The extension's suite inside a real VS Code extension host (code-server's VS Code server,
// loaded through --enable-smoke-test-driver), against the real sidecar and the fixture MCP
// servers that scripts/test.sh configures: "basic" (resources, prompts, watches,
// completions), "spare" (plain), "broken" (exits at start) globally, "proj" in the workspace.
// Waits poll a condition with a deadline; nothing sleeps a fixed time.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import type { ApprovalOutcome } from "../../approvals";
import { commandLine } from "../../commandLine";
import type { McpSidecarApi } from "../../extension";
import { statusBarModel } from "../../format";
import type { ScopeAnswer } from "../../login";
import type { ScopeDecision, ScopeQuestion } from "../../loginScopes";
import * as P from "../../protocol";
import type { Node } from "../../views/servers";
import { registerServerAskTests } from "./asks";
import { registerContextTests } from "./context";
import { registerGatewayTests } from "./gateway";
import { activeText, cases, EXTENSION_ID, rejectsWithCode, setApi, test, waitFor } from "./harness";

let api: McpSidecarApi;

/**
 * Waits until our quick pick offers an item matching `label` and the workbench has highlighted
 * one (items reach it asynchronously: Enter before that accepts nothing), then accepts `select`
 * or the first item.
 */
async function acceptQuickPick(label: RegExp, select?: string): Promise<string[]> {
  const shown = await waitFor(`a quick pick offering ${label}`, () => {
    const input = api.quickInput();
    return input && !input.busy && input.active.length > 0 && input.items.some((i) => label.test(i))
      ? input.items
      : undefined;
  });
  if (select !== undefined) {
    // Move the selection down to the wanted item, then accept it.
    const index = shown.indexOf(select);
    assert.ok(index >= 0, `${select} in ${shown.join(", ")}`);
    for (let i = 0; i < index; i++) await vscode.commands.executeCommand("workbench.action.quickOpenSelectNext");
    await waitFor(`${select} to be highlighted`, () => api.quickInput()?.active[0] === select);
  }
  await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
  return shown;
}

async function children(node?: Node): Promise<Node[]> {
  return api.view.getChildren(node);
}

async function group(server: string, name: string): Promise<Node[]> {
  const groups = await children({ type: "server", server });
  const node = groups.find((g) => g.type === "group" && g.group === name);
  assert.ok(node, `${server} has a ${name} group`);
  return children(node);
}

// ------------------------------------------------------------------ lifecycle and status

test("activates, starts the sidecar of the user's mcpSidecar.path and lists every server", async () => {
  const extension = vscode.extensions.getExtension<McpSidecarApi>(EXTENSION_ID);
  assert.ok(extension, "the extension is loaded");
  api = await extension.activate();
  setApi(api);
  await waitFor("the sidecar to run", () => api.client.state === "running");
  const names = await waitFor("status rows", () =>
    api.store.rows.length >= 5 ? api.store.rows.map((r) => r.name) : undefined,
  );
  assert.deepEqual([...names].sort(), ["basic", "broken", "proj", "secure", "spare"]);
  assert.equal(api.store.trustedWorkspace, true, "the trusted workspace's .mcp.json is read");
  assert.equal(api.store.row("proj")?.scope, "project");
});

interface Asked {
  message: string;
  options: vscode.MessageOptions;
  items: string[];
}

const REVIEW_HINT =
  "Approve only if you expected this change (for example from a pull you made). " +
  "Cancel keeps 'proj' disabled; run \"MCP: Review Project Server Changes\" to be asked again.";

test("first sight of a trusted workspace: its project server is asked about before it runs; approving starts it", async () => {
  // Nothing approved this workspace's definitions yet (no grant of trust happened while the
  // extension ran): the sidecar keeps proj disabled and the extension asked at once. The test
  // host refuses modal dialogs, so that first question counts as declined.
  const file = projectFile();
  const first = await waitFor(
    "the first-sight question",
    () => api.approvals.history.find((h) => h.server === "proj"),
    30_000,
  );
  assert.equal(first.message, "The project's .mcp.json defines a new MCP server 'proj'. Start it?");
  assert.equal(first.detail, `It would run:\n${file.argsLine()}\n\n${REVIEW_HINT}`);
  assert.equal(first.outcome, "declined");
  const pending = await waitFor("proj to wait for approval", () =>
    api.store.pendingApprovals.length > 0 ? api.store.pendingApprovals : undefined,
  );
  assert.deepEqual(
    pending.map((p) => [p.server, p.change, p.summary, p.changedFields]),
    [["proj", "new", file.argsLine(), []]],
  );
  assert.equal(api.store.row("proj")?.state, "disabled");
  assert.equal(api.store.row("proj")?.approvalRequired, true);

  const { asked, restore } = answerApprovals(["Approve and Start"]);
  try {
    const outcomes = (await vscode.commands.executeCommand("mcpSidecar.reviewApprovals")) as ApprovalOutcome[];
    assert.deepEqual(
      outcomes.map((o) => [o.server, o.outcome]),
      [["proj", "approved"]],
    );
    assert.deepEqual(
      asked.map((a) => [a.message, a.options.detail]),
      [[first.message, first.detail]],
    );
    await waitFor(
      "proj to run",
      () => api.store.row("proj")?.state === "connected" && !api.store.row("proj")?.approvalRequired,
      30_000,
    );
    assert.deepEqual(api.store.pendingApprovals, []);
    const tools = await api.client.request(P.serverTools, { server: "proj" });
    assert.ok(
      tools.tools.some((t) => t.name === "echo"),
      "the approved definition runs",
    );
  } finally {
    restore();
  }
});

test("a trusted workspace's own .venv sidecar runs only after a confirmation naming it, once per binary; a workspace cannot set mcpSidecar.path", async () => {
  const config = () => vscode.workspace.getConfiguration("mcpSidecar");
  const userPath = config().inspect<string>("path")?.globalValue;
  assert.ok(userPath, "scripts/test.sh sets mcpSidecar.path in the remote (machine) settings");
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(folder, "a workspace folder");
  const settingsDir = path.join(folder, ".vscode");
  const venv = path.join(folder, ".venv");
  const binary = path.join(venv, "bin", "mcp-sidecar");
  const asked: Asked[] = [];
  let answer: string | undefined = "Start This Sidecar";
  const original = api.bootstrap.ask;
  api.bootstrap.ask = async (message, options, ...items) => {
    asked.push({ message, options, items });
    return answer;
  };
  try {
    // A workspace's .vscode/settings.json (say, from a pull) cannot point the path elsewhere.
    mkdirSync(settingsDir, { recursive: true });
    writeFileSync(
      path.join(settingsDir, "settings.json"),
      JSON.stringify({ "mcpSidecar.path": "/bin/false", "mcpSidecar.search.limit": 9 }),
    );
    await waitFor("VS Code to read the workspace settings", () => config().get("search.limit") === 9);
    assert.equal(config().inspect("path")?.workspaceValue, undefined);
    assert.equal(config().get("path"), userPath);
    assert.deepEqual(await api.bootstrap.locate(), { found: true, command: userPath, source: "setting" });
    assert.equal(asked.length, 0);

    // Without the setting: the workspace's own sidecar, after the question.
    mkdirSync(path.dirname(binary), { recursive: true });
    writeFileSync(binary, `#!/bin/sh\nexec "${userPath}" "$@"\n`, { mode: 0o755 });
    assert.deepEqual(await api.bootstrap.locate(""), { found: true, command: binary, source: "workspace" });
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.message, "Start the mcp-sidecar that this workspace's .venv contains?");
    assert.equal(asked[0]?.options.modal, true);
    assert.ok(asked[0]?.options.detail?.startsWith(binary), asked[0]?.options.detail);
    assert.match(asked[0]?.options.detail ?? "", /start it only if you created this virtual environment yourself/);
    assert.deepEqual(asked[0]?.items, ["Start This Sidecar"]);
    assert.deepEqual(await api.bootstrap.locate(""), { found: true, command: binary, source: "workspace" });
    assert.equal(asked.length, 1, "remembered: not asked twice");

    // Replaced (a pull, a script): asked again; declining falls back to PATH or the private copy.
    writeFileSync(binary, `#!/bin/sh\n# replaced\nexec "${userPath}" "$@"\n`);
    answer = undefined;
    const declined = await api.bootstrap.locate("");
    assert.equal(asked.length, 2);
    assert.ok(!declined.found || declined.source !== "workspace", JSON.stringify(declined));
    await api.bootstrap.locate("");
    assert.equal(asked.length, 2, "a refusal holds for this window");
  } finally {
    api.bootstrap.ask = original;
    rmSync(settingsDir, { recursive: true, force: true });
    rmSync(venv, { recursive: true, force: true });
  }
  assert.equal(api.client.state, "running");
});

test("every command is registered while the sidecar runs", async () => {
  const all = await vscode.commands.getCommands(true);
  const contributed = (vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON.contributes.commands ?? []) as {
    command: string;
  }[];
  assert.ok(contributed.length >= 30);
  for (const { command } of contributed) assert.ok(all.includes(command), command);
});

test("calling a tool through the command activates it, shows the result and the status bar counts it", async () => {
  const result = (await vscode.commands.executeCommand("mcpSidecar.callTool", "basic.add", {
    a: 2,
    b: 3,
  })) as P.CallToolResult;
  assert.equal(result.isError, false);
  assert.deepEqual(result.content, [{ type: "text", text: "5" }]);
  assert.match(activeText("mcp-sidecar-output"), /^5$/m);
  await waitFor("basic to be connected", () => api.store.row("basic")?.state === "connected");
  await waitFor("the loaded count", () => api.store.row("basic")?.loaded === 1);
  assert.match(statusBarModel(api.client.state, api.store.rows).text, /MCP: [1-9] connected/);
  const active = await api.client.request(P.activeTools, {});
  assert.deepEqual(
    active.tools.map((t) => t.id),
    ["basic.add"],
  );
});

test("MCP: Search queries as you type, and its tool action calls through the real quick inputs", async () => {
  const done = vscode.commands.executeCommand("mcpSidecar.search", "echo the giv");
  const items = await acceptQuickPick(/basic\.echo\(text\)/);
  assert.match(items[0] ?? "", /basic\.echo\(text\)/, `first candidate: ${items.join(" | ")}`);
  const actions = await acceptQuickPick(/Call with arguments/, "$(json) Show schema");
  assert.deepEqual(actions, ["$(play) Call with arguments…", "$(zap) Activate for chat", "$(json) Show schema"]);
  await done;
  const schema = JSON.parse(activeText("mcp-sidecar-output")) as { id: string; inputSchema: { required: string[] } };
  assert.equal(schema.id, "basic.echo");
  assert.deepEqual(schema.inputSchema.required, ["text"]);
  assert.equal(vscode.window.activeTextEditor?.document.languageId, "json");
});

test("a tool result that is an error is a result, not a failure", async () => {
  const result = (await vscode.commands.executeCommand("mcpSidecar.callTool", "basic.fail", {
    message: "nope",
  })) as P.CallToolResult;
  assert.equal(result.isError, true);
  assert.match(activeText("mcp-sidecar-output"), /basic\.fail · the tool reported an error[\s\S]*nope/);
});

// ------------------------------------------------------------------ resources, templates, watches

test("a resource opens as a read-only mcp-sidecar-resource document in the language of its MIME type", async () => {
  await vscode.commands.executeCommand("mcpSidecar.openResource", { server: "basic", uri: "config://settings" });
  assert.equal(activeText("mcp-sidecar-resource"), "contents of config://settings\n");
  assert.equal(vscode.window.activeTextEditor?.document.languageId, "json");
  await vscode.commands.executeCommand("mcpSidecar.openResource", { server: "basic", uri: "notes://readme" });
  assert.equal(activeText("mcp-sidecar-resource"), "contents of notes://readme\n");
  assert.equal(vscode.window.activeTextEditor?.document.languageId, "markdown");
});

test("filling a template asks each variable with the server's completions", async () => {
  const [templateNode] = await group("basic", "templates");
  assert.equal(templateNode?.type, "template");
  const done = vscode.commands.executeCommand("mcpSidecar.fillTemplate", templateNode);
  const folders = await acceptQuickPick(/^ideas$/, "ideas");
  assert.deepEqual(folders, ["inbox", "ideas", "archive"]);
  const names = await acceptQuickPick(/^talks$/, "talks");
  assert.deepEqual(names, ["tools", "talks"], "name completions use the chosen folder");
  const read = (await done) as P.ReadResult;
  assert.equal(read.uri, "notes://ideas/talks");
  assert.equal(activeText("mcp-sidecar-resource"), "note ideas/talks\n");
});

test("a watch marks the resource in the view and reports the change", async () => {
  const watched = (await vscode.commands.executeCommand("mcpSidecar.subscribe", {
    server: "basic",
    uri: "notes://changelog",
  })) as P.SubscribeResult;
  assert.equal(watched.created, true);
  const resourceItem = async () => {
    const nodes = await group("basic", "resources");
    const node = nodes.find((n) => n.type === "resource" && n.candidate.uri === "notes://changelog");
    assert.ok(node);
    return api.view.getTreeItem(node);
  };
  assert.equal((await resourceItem()).description, "notes://changelog · watching");
  assert.equal((await resourceItem()).contextValue, "resource.watched");
  const updated = new Promise<P.ResourceUpdatedParams>((resolve) => {
    const sub = api.client.onResourceUpdated((params) => {
      sub.dispose();
      resolve(params);
    });
  });
  await vscode.commands.executeCommand("mcpSidecar.callTool", "basic.touch", { uri: "notes://changelog" });
  assert.deepEqual(await updated, { server: "basic", uri: "notes://changelog", changed: true });
  await waitFor(
    "the view to mark the change",
    async () => (await resourceItem()).description === "notes://changelog · changed",
  );
  const unwatched = (await vscode.commands.executeCommand("mcpSidecar.unsubscribe", {
    server: "basic",
    uri: "notes://changelog",
  })) as P.UnsubscribeResult;
  assert.equal(unwatched.removed, true);
  assert.equal((await resourceItem()).description, "notes://changelog");
});

// ------------------------------------------------------------------ prompts

test("a prompt preview opens read-only and Use prompt accepts it once", async () => {
  const snapshot = (await vscode.commands.executeCommand("mcpSidecar.previewPrompt", {
    server: "basic",
    name: "summarize_notes",
    arguments: { folder: "ideas" },
  })) as P.PromptSnapshot;
  assert.equal(snapshot.messageCount, 1);
  const text = activeText("mcp-sidecar-prompt");
  assert.match(text, /nothing has been sent yet/);
  assert.match(text, /Summarize the notes in ideas\./);
  const used = (await vscode.commands.executeCommand("mcpSidecar.usePrompt")) as {
    snapshot: P.PromptUseResult;
    target: string;
  };
  assert.equal(used.snapshot.accepted, true);
  assert.ok(["chat", "clipboard"].includes(used.target));
  if (used.target === "clipboard") assert.equal(await vscode.env.clipboard.readText(), used.snapshot.text);
  await waitFor(
    "the preview tab to close",
    () =>
      !vscode.window.tabGroups.all.some((g) =>
        g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.scheme === "mcp-sidecar-prompt"),
      ),
  );
  await rejectsWithCode(api.client.request(P.promptUse, { previewId: snapshot.previewId }), "preview_not_found");
});

test("Discard drops a preview, and closing a preview's tab discards it too", async () => {
  const first = (await vscode.commands.executeCommand("mcpSidecar.previewPrompt", {
    server: "basic",
    name: "summarize_notes",
    arguments: {},
  })) as P.PromptSnapshot;
  const discarded = (await vscode.commands.executeCommand("mcpSidecar.discardPrompt")) as P.PromptDiscardResult;
  assert.deepEqual(discarded, {
    previewId: first.previewId,
    server: "basic",
    name: "summarize_notes",
    discarded: true,
  });
  const second = (await vscode.commands.executeCommand("mcpSidecar.previewPrompt", {
    server: "basic",
    name: "summarize_notes",
    arguments: {},
  })) as P.PromptSnapshot;
  await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
  await waitFor("the closed preview to be discarded", async () => {
    try {
      await api.client.request(P.promptDiscard, { previewId: second.previewId });
      return false;
    } catch (error) {
      return (error as { data?: P.Diagnostic }).data?.code === "preview_not_found";
    }
  });
});

test("a prompt with arguments asks each one with the server's completions before previewing", async () => {
  const promptNode = (await group("basic", "prompts")).find(
    (n) => n.type === "prompt" && n.candidate.name === "review_code",
  );
  assert.ok(promptNode);
  const done = vscode.commands.executeCommand("mcpSidecar.previewPrompt", promptNode);
  // The fixture completes every review_code argument with languages.
  const code = await acceptQuickPick(/^perl$/, "perl");
  assert.deepEqual(code, ["python", "perl", "rust"]);
  await acceptQuickPick(/^rust$/, "rust");
  const snapshot = (await done) as P.PromptSnapshot;
  assert.equal(snapshot.name, "review_code");
  assert.match(activeText("mcp-sidecar-prompt"), /Review this rust code:\nperl/);
  await vscode.commands.executeCommand("mcpSidecar.discardPrompt");
});

// ------------------------------------------------------------------ the servers view

test("the servers view lists servers with state, and their catalogs on expand", async () => {
  const servers = await children();
  assert.deepEqual(servers.map((n) => n.type === "server" && n.server).sort(), [
    "basic",
    "broken",
    "proj",
    "secure",
    "spare",
  ]);
  const basic = api.view.getTreeItem({ type: "server", server: "basic" });
  assert.match(String(basic.contextValue), /^server state=connected transport=stdio scope=global$/);
  assert.match(String(basic.description), /^connected · global · \d+ tools/);
  const tools = (await group("basic", "tools")).map((n) => (n.type === "tool" ? n.tool.id : n.type));
  assert.ok(tools.includes("basic.echo") && tools.includes("basic.add"), tools.join(", "));
  const resources = (await group("basic", "resources")).map((n) => (n.type === "resource" ? n.candidate.uri : n.type));
  assert.deepEqual(resources, ["notes://readme", "notes://changelog", "config://settings"]);
  const prompts = (await group("basic", "prompts")).map((n) => (n.type === "prompt" ? n.candidate.name : n.type));
  assert.deepEqual(prompts, ["review_code", "summarize_notes"]);
});

test("a server that fails shows its diagnostic in the view and the status bar", async () => {
  const [failure] = await group("broken", "tools");
  assert.equal(failure?.type, "message");
  assert.ok(failure?.type === "message" && failure.error);
  await waitFor("broken to be failed", () => api.store.row("broken")?.state === "failed");
  const model = statusBarModel(api.client.state, api.store.rows);
  // The OAuth fixture `secure` may already have refused discovery: it counts as needing a login, not failed.
  assert.match(model.text, /^\$\(warning\) MCP: \d+ connected, [1-9] failed(, 1 needs login)?$/);
  assert.ok(model.tooltipLines.some((l) => l.startsWith("✘ broken · failed")));
});

// ------------------------------------------------------------------ the /mcp command set

test("MCP: Run Command runs a /mcp line and shows its text", async () => {
  const tools = (await vscode.commands.executeCommand("mcpSidecar.runCommand", "tools spare")) as P.CommandResult;
  assert.equal(tools.command, "tools");
  assert.match(activeText("mcp-sidecar-output"), /echo/);
  const help = (await vscode.commands.executeCommand("mcpSidecar.runCommand", "help")) as P.CommandResult;
  assert.equal(help.command, "help");
  await rejectsWithCode(api.client.request(P.command, { line: "frobnicate" }), "command_invalid");
  const prompt = (await vscode.commands.executeCommand(
    "mcpSidecar.runCommand",
    "prompt basic summarize_notes folder=archive",
  )) as P.CommandResult;
  assert.equal(prompt.command, "prompt");
  assert.match(activeText("mcp-sidecar-prompt"), /Summarize the notes in archive\./);
  const discarded = (await vscode.commands.executeCommand("mcpSidecar.discardPrompt")) as P.PromptDiscardResult;
  assert.equal(discarded.discarded, true);
});

test("the sidecar serves the command table, the add dry run and activate-then-call the palette uses", async () => {
  const spec = await api.client.request(P.commandSpec, {});
  const remove = spec.commands.find((c) => c.name === "remove");
  assert.deepEqual(
    remove?.options.map((o) => [o.name, o.values]),
    [["--scope", ["global", "project"]]],
  );
  assert.ok(remove?.positionals[0]?.values.includes("basic"));
  assert.equal(spec.commands.find((c) => c.name === "reconnect")?.changes, "status");
  // quoteWord's output reads back unchanged through the sidecar's own parser.
  for (const word of ["docs", "my server", "it's", "", 'a"b', "$(x)", "C:\\x y"]) {
    const dry = await api.client.request(P.configAddDryRun, {
      scope: "global",
      server: "dry",
      target: commandLine("run", word),
      dryRun: true,
    });
    assert.deepEqual(dry.definition, { command: "run", args: [word] }, word);
  }
  const bad = await api.client.request(P.configAddDryRun, {
    scope: "global",
    server: "my notes",
    definition: {},
    dryRun: true,
  });
  assert.equal(bad.problems[0]?.field, "server");
  assert.match(bad.problems[0]?.diagnostic.message ?? "", /the name must be 1 to 64 letters/);
  const unclosed = await api.client.request(P.configAddDryRun, {
    scope: "global",
    server: "ok",
    target: "node 'x",
    dryRun: true,
  });
  assert.equal(unclosed.problems[0]?.diagnostic.message, "The line has an unclosed single quote (').");
  assert.equal(
    await vscode.commands.executeCommand("mcpSidecar.callTool", "spare.ech", {}),
    undefined,
    "not activated, nothing called",
  );
  const failed = await rejectsWithCode(
    api.client.request(P.callTool, { id: "spare.ech", activate: true, session: "palette" }),
    "tool_not_found",
  );
  assert.equal(failed.nearby?.[0], "spare.echo");
});

test("disable deactivates the server's tools and enable brings it back", async () => {
  await vscode.commands.executeCommand("mcpSidecar.activateTool", "spare.echo");
  const deactivated = new Promise<P.ActiveToolsChangedParams>((resolve) => {
    const sub = api.client.onActiveToolsChanged((params) => {
      sub.dispose();
      resolve(params);
    });
  });
  const disabled = (await vscode.commands.executeCommand("mcpSidecar.disable", "spare")) as P.ConfigSetEnabledResult;
  assert.equal(disabled.changed, true);
  assert.deepEqual(await deactivated, { session: "default", removed: ["spare.echo"], reason: "server disabled" });
  await waitFor("spare to show disabled", () => api.store.row("spare")?.state === "disabled");
  assert.match(String(api.view.getTreeItem({ type: "server", server: "spare" }).contextValue), /state=disabled/);
  const enabled = (await vscode.commands.executeCommand("mcpSidecar.enable", "spare")) as P.ConfigSetEnabledResult;
  assert.equal(enabled.changed, true);
  await waitFor("spare to be idle again", () => api.store.row("spare")?.state === "idle");
});

test("add and remove through /mcp lines update the view", async () => {
  const python = process.env.MCP_TEST_PYTHON ?? "python3";
  await vscode.commands.executeCommand("mcpSidecar.runCommand", `add --scope global extra -- ${python} -c pass`);
  await waitFor("the added server", () => api.store.row("extra"));
  const removed = (await vscode.commands.executeCommand(
    "mcpSidecar.runCommand",
    "remove --scope global extra",
  )) as P.CommandResult;
  assert.equal(removed.command, "remove");
  await waitFor("the removed server to go", () => !api.store.row("extra"));
});

test("reconnect and refresh answer with the server's state", async () => {
  const row = (await vscode.commands.executeCommand("mcpSidecar.reconnect", "basic")) as P.StatusRow;
  assert.equal(row.state, "connected");
  const refreshed = (await vscode.commands.executeCommand("mcpSidecar.refresh", "basic")) as P.ServerRefreshResult;
  assert.equal(refreshed.toolsSource, "live");
  const logs = (await vscode.commands.executeCommand("mcpSidecar.serverLogs", "basic")) as P.ServerLogsResult;
  assert.equal(logs.server, "basic");
});

test("failures carry diagnostics; login is refused for a stdio server", async () => {
  const missing = await rejectsWithCode(api.client.request(P.serverGet, { server: "nope" }), "server_not_found");
  assert.ok(!/Traceback|at .*\.py/.test(missing.message));
  await rejectsWithCode(api.client.request(P.authLogin, { server: "basic" }), "not_supported");
  await rejectsWithCode(api.client.request(P.authLogin, { server: "basic", noBrowser: true }), "not_supported");
  await rejectsWithCode(api.client.request(P.authLogout, { server: "basic" }), "not_supported");
  await rejectsWithCode(
    api.client.request(P.authCompleteLogin, {
      loginId: "nope",
      callbackUrl: "http://127.0.0.1:1/callback?code=x&state=y",
    }),
    "login_not_found",
  );
});

// ------------------------------------------------------------------ OAuth (fixture authorization server)

async function followAuthorization(authorizationUrl: string, redirectUri: string): Promise<string> {
  // The fixture's /authorize approves at once and redirects to the callback address.
  const response = await fetch(authorizationUrl, { redirect: "manual" });
  const location = response.headers.get("location") ?? "";
  assert.ok(location.startsWith(redirectUri), `redirected to ${location}`);
  return location;
}

test("OAuth without a browser: the pasted callback address completes the login; logout revokes", async () => {
  await waitFor("the secure server's row", () => api.store.row("secure"));
  await rejectsWithCode(api.client.request(P.serverTools, { server: "secure" }), "authentication_required");
  await waitFor("secure to need a login", () => api.store.row("secure")?.state === "needs_login");
  const model = statusBarModel(api.client.state, api.store.rows);
  assert.ok(model.logins.includes("secure") && /, 1 needs login/.test(model.text), model.text);
  assert.ok(model.tooltipLines.includes("⚿ secure · needs login · global · http — log in to use it"));
  const login = (await vscode.commands.executeCommand(
    "mcpSidecar.loginNoBrowser",
    "secure",
    followAuthorization,
  )) as P.LoginResult;
  assert.equal(login?.status, "completed", JSON.stringify(login));
  const result = (await vscode.commands.executeCommand("mcpSidecar.callTool", "secure.whoami", {})) as P.CallToolResult;
  assert.deepEqual(result.content, [{ type: "text", text: "authenticated" }]);
  const logout = (await vscode.commands.executeCommand("mcpSidecar.logout", "secure")) as P.LogoutResult;
  assert.equal(logout.removed, true);
  assert.equal(logout.revocation, "accepted");
  await rejectsWithCode(api.client.request(P.serverTools, { server: "secure" }), "authentication_required");
});

test("OAuth in a remote window: Log In pastes the callback back, since the browser cannot reach the sidecar's loopback", async () => {
  assert.ok(vscode.env.remoteName, "this suite runs in a remote extension host");
  const login = (await vscode.commands.executeCommand(
    "mcpSidecar.login",
    "secure",
    followAuthorization,
  )) as P.LoginResult;
  assert.equal(login?.status, "completed", JSON.stringify(login));
  const tools = await api.client.request(P.serverTools, { server: "secure" });
  assert.ok(tools.tools.some((t) => t.id === "secure.whoami"));
  const logout = (await vscode.commands.executeCommand("mcpSidecar.logout", "secure")) as P.LogoutResult;
  assert.equal(logout.revocation, "accepted");
});

test("OAuth step-up: a call refused for want of a scope fails; the next login names the scope and asks before asking for it", async () => {
  // scripts/test.sh runs the fixture with --step-up: `admin_report` needs the scope `admin`,
  // which the first login does not ask for.
  const questions: ScopeQuestion[] = [];
  const answer =
    (decision: ScopeDecision): ScopeAnswer =>
    (question) => {
      questions.push(question);
      return decision;
    };
  const notAsked: ScopeAnswer = (question) => {
    throw new Error(`asked with nothing pending: ${question.message}`);
  };
  const login = async (scopes: ScopeAnswer) =>
    (await vscode.commands.executeCommand("mcpSidecar.login", "secure", followAuthorization, scopes)) as P.LoginResult;
  const adminReport = () =>
    api.client.request(P.callTool, { id: "secure.admin_report", arguments: {}, activate: true });
  /** The refusal's diagnostic; a call that went through fails the test with its result. */
  const refusedReport = async (): Promise<P.Diagnostic> => {
    const result = await adminReport().catch((error: { data?: P.Diagnostic }) => error);
    assert.ok(!("content" in result), `admin_report went through: ${JSON.stringify(result)}`);
    assert.ok(result.data, String(result));
    return result.data;
  };

  const first = await login(notAsked);
  assert.equal(first.status, "completed", JSON.stringify(first));
  assert.deepEqual(first.scopes, ["mcp"]);
  const refused = await refusedReport();
  assert.equal(refused.code, "permission_denied");
  assert.match(refused.message, /^The server asks for more OAuth scopes than it granted/);

  // Cancel: nothing is sent, and the request stays.
  const cancelled = await login(answer("cancel"));
  assert.equal(cancelled.status, "needs_approval", JSON.stringify(cancelled));
  assert.deepEqual(cancelled.extraScopes, ["admin"]);
  assert.deepEqual(cancelled.scopes, ["mcp", "admin"]);
  assert.equal(questions.length, 1);
  assert.equal(questions[0]?.message, "secure asks for more access: admin");
  assert.match(questions[0]?.detail ?? "", /^secure asks for a scope it was not granted: admin\.\n/);
  assert.match(questions[0]?.detail ?? "", /The login would ask for: mcp, admin\./);
  assert.match(questions[0]?.detail ?? "", /the request is kept for (9|10) more minutes\.$/);

  // A `/mcp login` line asks the same question; the test host refuses modals, so that is a
  // Cancel: nothing is sent, no output document shows the unanswered result, the request stays.
  await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  const line = (await vscode.commands.executeCommand(
    "mcpSidecar.runCommand",
    "login secure --no-browser",
  )) as P.CommandResult;
  assert.equal((line.data as unknown as P.LoginResult).status, "needs_approval");
  assert.equal(vscode.window.activeTextEditor, undefined, "asked, not shown as text");

  // Without them: logged in with what it had, and the request is dropped.
  const without = await login(answer("without"));
  assert.equal(without.status, "completed", JSON.stringify(without));
  assert.deepEqual(without.scopes, ["mcp"]);
  assert.equal(questions.length, 2);
  assert.equal((await login(notAsked)).status, "completed", "nothing pending: no question");
  assert.equal((await refusedReport()).code, "permission_denied");

  // Approved: the login asks for admin too, and the call goes through.
  const approved = await login(answer("approve"));
  assert.equal(questions.length, 3);
  assert.equal(approved.status, "completed", JSON.stringify(approved));
  assert.deepEqual([...(approved.scopes ?? [])].sort(), ["admin", "mcp"]);
  const report = await adminReport();
  assert.deepEqual(report.content, [{ type: "text", text: "admin report" }]);
  assert.equal((await login(notAsked)).status, "completed", "an approved and granted scope is not asked again");
  const logout = (await vscode.commands.executeCommand("mcpSidecar.logout", "secure")) as P.LogoutResult;
  assert.equal(logout.revocation, "accepted");
});

test("workspace trust is passed on: setTrusted answers a reload summary", async () => {
  const summary = await api.client.request(P.workspaceSetTrusted, { trusted: true });
  assert.equal(summary.applied, true);
  assert.ok(summary.unchanged.includes("proj"), JSON.stringify(summary));
  assert.deepEqual(api.store.pendingApprovals, []);
});

// ------------------------------------------------------------------ approvals of changed project servers

/** Answers the approval modal instead of a person (the test host refuses to show modals). */
function answerApprovals(answers: (string | undefined)[]): { asked: Asked[]; restore: () => void } {
  const asked: Asked[] = [];
  const original = api.approvals.ask;
  api.approvals.ask = async (message, options, ...items) => {
    asked.push({ message, options, items });
    return answers.length > 0 ? answers.shift() : undefined;
  };
  return { asked, restore: () => (api.approvals.ask = original) };
}

let originalProj: { command: string; args: string[] } | undefined;

/** The workspace's .mcp.json, and its `proj` definition as scripts/test.sh wrote it plus `extra` arguments. */
function projectFile(): {
  path: string;
  withArgs: (...extra: string[]) => string;
  argsLine: (...extra: string[]) => string;
} {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(folder, "a workspace folder");
  const file = path.join(folder, ".mcp.json");
  originalProj ??= (
    JSON.parse(readFileSync(file, "utf8")) as { mcpServers: { proj: { command: string; args: string[] } } }
  ).mcpServers.proj;
  const proj = originalProj;
  return {
    path: file,
    withArgs: (...extra) =>
      JSON.stringify({ mcpServers: { proj: { command: proj.command, args: [...proj.args, ...extra] } } }),
    argsLine: (...extra) => [proj.command, ...proj.args, ...extra].join(" "),
  };
}

/** The detail of the question about proj changed on disk to `extra` arguments. */
function changedDetail(file: ReturnType<typeof projectFile>, ...extra: string[]): string {
  return `It would run:\n${file.argsLine(...extra)} (changed: args)\n\nChanged since you approved it: args\n\n${REVIEW_HINT}`;
}

test("a project server changed on disk asks with a modal showing the new command line; approving starts it", async () => {
  const file = projectFile();
  const { asked, restore } = answerApprovals(["Approve and Start"]);
  try {
    writeFileSync(file.path, file.withArgs("--resources"));
    await waitFor("the approval modal", () => asked.length >= 1, 30_000);
    assert.deepEqual(asked[0], {
      message: "The project's .mcp.json changed the MCP server 'proj'. Start it with the new definition?",
      options: { modal: true, detail: changedDetail(file, "--resources") },
      items: ["Approve and Start"],
    });
    await waitFor(
      "proj to run the approved definition",
      () => api.store.row("proj")?.state === "connected" && !api.store.row("proj")?.approvalRequired,
      30_000,
    );
    assert.deepEqual(api.store.pendingApprovals, []);
    const tools = await api.client.request(P.serverTools, { server: "proj" });
    assert.ok(
      tools.tools.some((t) => t.name === "notify_changes"),
      "the new --resources definition runs",
    );
    assert.equal(asked.length, 1, "asked once");
  } finally {
    restore();
  }
});

test("declining keeps the changed server disabled and marked; it is asked once per change, and the review command asks again", async () => {
  const file = projectFile();
  const { asked, restore } = answerApprovals([undefined]);
  try {
    writeFileSync(file.path, file.withArgs("--resources", "--prompts"));
    await waitFor("the approval modal", () => asked.length >= 1, 30_000);
    assert.equal(asked[0]?.options.detail, changedDetail(file, "--resources", "--prompts"));
    await waitFor("proj to wait for approval", () => api.store.row("proj")?.approvalRequired === true);
    const row = api.store.row("proj");
    assert.equal(row?.state, "disabled");
    assert.equal(row?.lastDiagnostic?.code, "trust_required");
    const pending = api.store.pendingApprovals;
    assert.deepEqual(
      pending.map((p) => [p.server, p.change, p.transport, p.summary, p.changedFields]),
      [["proj", "changed", "stdio", `${file.argsLine("--resources", "--prompts")} (changed: args)`, ["args"]]],
    );
    const model = statusBarModel(api.client.state, api.store.rows);
    assert.match(model.text, /^\$\(shield\) MCP: \d+ connected(, \d+ failed)?(, 1 needs login)?, 1 needs approval$/);
    assert.ok(model.tooltipLines.includes("⚠ proj · needs approval · project · stdio"), model.tooltipLines.join(" | "));
    const item = api.view.getTreeItem({ type: "server", server: "proj" });
    assert.equal(item.contextValue, "server state=disabled transport=stdio scope=project approval=required");
    assert.equal(item.description, "needs approval · project");
    await rejectsWithCode(api.client.request(P.serverTools, { server: "proj" }), "trust_required");

    // Once per (server, hash) in this window: fetching the status again does not ask again.
    await api.store.refresh();
    assert.equal(asked.length, 1);

    // The palette command asks again; this time the person approves.
    api.approvals.ask = async (message, options, ...items) => {
      asked.push({ message, options, items });
      return "Approve and Start";
    };
    const outcomes = (await vscode.commands.executeCommand("mcpSidecar.reviewApprovals")) as ApprovalOutcome[];
    assert.deepEqual(
      outcomes.map((o) => [o.server, o.outcome]),
      [["proj", "approved"]],
    );
    assert.equal(asked.length, 2);
    assert.deepEqual(asked[1], asked[0]);
    assert.equal(api.store.row("proj")?.state, "connected");
    const prompts = await api.client.request(P.discover, { query: "", kind: "prompts", server: "proj", limit: 10 });
    assert.ok(
      prompts.candidates.some((c) => c.name === "summarize_notes"),
      "the --prompts definition runs",
    );
    assert.deepEqual(await vscode.commands.executeCommand("mcpSidecar.reviewApprovals"), [], "nothing left to review");
  } finally {
    restore();
  }
});

test("an approval of a definition that changed again is refused by the sidecar", async () => {
  const stale = await api.client.request(P.workspaceApprove, {
    approvals: [{ server: "proj", definitionHash: "0".repeat(64) }],
  });
  assert.deepEqual(stale.approved, []);
  assert.deepEqual(stale.notApproved, [
    { server: "proj", reason: "The definition changed again since it was shown; review it again." },
  ]);
});

test("restoring the project file is a change too: approved, proj runs its original definition again", async () => {
  const file = projectFile();
  const { asked, restore } = answerApprovals(["Approve and Start"]);
  try {
    writeFileSync(file.path, file.withArgs());
    await waitFor("the approval modal", () => asked.length >= 1, 30_000);
    assert.equal(asked[0]?.options.detail, changedDetail(file));
    await waitFor(
      "proj to run again",
      () => api.store.row("proj")?.state === "connected" && api.store.pendingApprovals.length === 0,
      30_000,
    );
  } finally {
    restore();
  }
});

// ------------------------------------------------------------------ chat tools

test("the declared mcp_tools matches the sidecar's own definition", async () => {
  const definition = await api.client.request(P.modelToolDefinition, {});
  const declared = (vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON.contributes.languageModelTools ?? [])[0];
  assert.equal(declared.name, definition.name);
  // The sidecar's description adds the server directory, which a package.json cannot carry.
  assert.equal(definition.description.split("\n\nServers (")[0], declared.modelDescription);
  assert.deepEqual(declared.inputSchema, definition.inputSchema);
});

test("chat tools: mcp_tools finds and activates, mcp_call calls", async () => {
  const registered = vscode.lm.tools.map((t) => t.name);
  assert.ok(registered.includes("mcp_tools") && registered.includes("mcp_call"), registered.join(", "));
  const invoke = async (name: string, input: object) => {
    const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
    return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : "")).join("");
  };
  // package.json's description is fixed: the first answer carries the server directory.
  const first = await invoke("mcp_tools", { query: "echo text back" });
  assert.match(first, /^Servers \(for `server`; query to find their tools\):\n- basic\b/);
  assert.match(first, /basic\.echo/);
  assert.doesNotMatch(await invoke("mcp_tools", { query: "echo text back" }), /^Servers \(/);
  // Activation's answer reaches the model with the signature it must call with.
  const activated = await invoke("mcp_tools", { activate: ["basic.echo"] });
  assert.match(activated, /\n {3}basic\.echo\(text: string\) — Echo the given text back\./);
  assert.match(activated, /Call each loaded tool by its exact id/);
  assert.equal(await invoke("mcp_call", { id: "basic.echo", arguments: { text: "hello chat" } }), "hello chat");
  // Within the exposure budget (the servers here cost far less than 4,000 tokens), a tool not yet
  // activated is callable as listed: mcp_call activates it and calls it (test_chat_tools_expose.py
  // covers the refusal over the budget).
  assert.match(await invoke("mcp_call", { id: "basic.cwd", arguments: {} }), /\/ws$/);
  const active = await api.client.request(P.activeTools, {});
  assert.ok(
    active.tools.some((t) => t.id === "basic.cwd"),
    active.tools.map((t) => t.id).join(", "),
  );
});

// The description of annotated_server.py's lookup, as the confirmation must show it: every
// Markdown character escaped, so the links, image, HTML and fake code block are plain text.
const LOOKUP_CONFIRMATION =
  "**annotated\\.lookup**: the tool lookup of the MCP server annotated.\n\n" +
  "Its description, as the server gives it:\n\n" +
  "Look up a note\\. \\[Open docs\\]\\(https\\:\\/\\/evil\\.example\\/docs\\) \\[Run\\]\\(command\\:workbench\\.action\\.terminal\\.new\\)  \n" +
  "\\!\\[pixel\\]\\(https\\:\\/\\/evil\\.example\\/pixel\\.png\\) \\<img src\\=x onerror\\=alert\\(1\\)\\>  \n" +
  '\\`\\`\\`json  \n\\{\\"query\\"\\: \\"harmless\\"\\}  \n\\`\\`\\`\n\n' +
  "The server marks this tool read-only; that is its own claim. To call the read-only tools of this server without being asked, add its name to the setting `mcpSidecar.autoApproveReadOnly`.\n\n" +
  'Arguments:\n\n```json\n{\n  "query": "x"\n}\n```';

test("mcp_call asks before a read-only tool unless the user listed its server; a workspace cannot list it; descriptions are plain text", async () => {
  const python = process.env.MCP_TEST_PYTHON ?? "python3";
  const fixture = path.resolve(__dirname, "../../src/test/e2e/annotated_server.py");
  const config = () => vscode.workspace.getConfiguration("mcpSidecar");
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  assert.ok(folder, "a workspace folder");
  const settingsDir = path.join(folder, ".vscode");
  await api.client.request(P.configAdd, {
    scope: "global",
    server: "annotated",
    definition: { command: python, args: [fixture] },
  });
  try {
    const activated = await api.client.request(P.activate, { ids: ["annotated.lookup", "annotated.erase"] });
    assert.deepEqual(
      activated.results.map((r) => r.status),
      ["loaded", "loaded"],
      JSON.stringify(activated.results),
    );
    assert.deepEqual(config().get("autoApproveReadOnly"), []);

    // Default: the read-only hint waives nothing.
    const asked = await api.prepareCall({ id: "annotated.lookup", arguments: { query: "x" } });
    assert.equal(asked.invocationMessage, "Calling annotated\\.lookup");
    assert.equal(asked.confirmationMessages?.title, "Call an MCP tool?");
    const message = asked.confirmationMessages?.message;
    assert.ok(message instanceof vscode.MarkdownString, "the message is a MarkdownString");
    assert.equal(message.value, LOOKUP_CONFIRMATION);
    assert.equal(message.isTrusted, false, "no command links");
    assert.equal(message.supportHtml, false, "no HTML");
    assert.equal(message.supportThemeIcons, false, "no theme icons");

    // A workspace's own settings cannot add the server (application scope: VS Code refuses
    // to write it there, and ignores it when the file says so anyway).
    await assert.rejects(
      Promise.resolve(config().update("autoApproveReadOnly", ["annotated"], vscode.ConfigurationTarget.Workspace)),
    );
    mkdirSync(settingsDir, { recursive: true });
    writeFileSync(
      path.join(settingsDir, "settings.json"),
      JSON.stringify({ "mcpSidecar.autoApproveReadOnly": ["annotated"], "mcpSidecar.search.limit": 7 }),
    );
    await waitFor("VS Code to read the workspace settings", () => config().get("search.limit") === 7);
    assert.equal(config().inspect("autoApproveReadOnly")?.workspaceValue, undefined);
    assert.ok((await api.prepareCall({ id: "annotated.lookup", arguments: {} })).confirmationMessages, "still asks");

    // The user lists the server: its read-only tool runs without asking, its other tool still asks.
    await config().update("autoApproveReadOnly", ["annotated"], vscode.ConfigurationTarget.Global);
    const waived = await api.prepareCall({ id: "annotated.lookup", arguments: { query: "x" } });
    assert.deepEqual(waived, { invocationMessage: "Calling annotated\\.lookup" });
    const erase = await api.prepareCall({ id: "annotated.erase", arguments: { query: "x" } });
    assert.ok(erase.confirmationMessages, "the other tool still asks");
    assert.equal(erase.confirmationMessages.title, "Call a destructive MCP tool?", "erase is destructiveHint");
    assert.match(
      (erase.confirmationMessages.message as vscode.MarkdownString).value,
      /^\*\*annotated\\\.erase\*\*: the tool erase of the MCP server annotated\.\n\n⚠ \*\*Destructive\*\*: /,
    );
    assert.ok(
      !(erase.confirmationMessages.message as vscode.MarkdownString).value.includes("marks this tool read-only"),
    );
    // A tool that is not active is asked about, never waived.
    assert.ok((await api.prepareCall({ id: "annotated.nope", arguments: {} })).confirmationMessages);
  } finally {
    await config().update("autoApproveReadOnly", undefined, vscode.ConfigurationTarget.Global);
    rmSync(settingsDir, { recursive: true, force: true });
    await api.client.request(P.configRemove, { scope: "global", server: "annotated" });
    await api.store.refresh();
  }
});

// ------------------------------------------------------------------ what tools cost the context; background calls

registerContextTests();

// ------------------------------------------------------------------ the gateway for VS Code's chat (mcpSidecar.chat.tools)

registerGatewayTests();

// ------------------------------------------------------------------ a server asks (elicitation, sampling), progress, logs

registerServerAskTests();

// ------------------------------------------------------------------ restarts

test("commands stay registered while the sidecar is stopped, and the next request starts it", async () => {
  await api.client.stop();
  assert.equal(api.client.state, "stopped");
  const all = await vscode.commands.getCommands(true);
  for (const id of ["mcpSidecar.search", "mcpSidecar.runCommand", "mcpSidecar.status", "mcpSidecar.restart"])
    assert.ok(all.includes(id), id);
  assert.equal(statusBarModel(api.client.state, api.store.rows).text, "$(debug-disconnect) MCP: stopped");
  const tools = (await vscode.commands.executeCommand("mcpSidecar.runCommand", "tools spare")) as P.CommandResult;
  assert.equal(tools.command, "tools");
  assert.equal(api.client.state, "running");
  await waitFor("rows after the start", () => api.store.rows.length >= 5);
});

test("a sidecar that dies is restarted with backoff and the state comes back", async () => {
  const pids = execFileSync("pgrep", ["-P", String(process.pid), "-f", "mcp-sidecar"], { encoding: "utf8" })
    .trim()
    .split(/\s+/)
    .map(Number);
  assert.equal(pids.length, 1, `one sidecar child: ${pids.join(",")}`);
  const states: string[] = [];
  const sub = api.client.onDidChangeState((s) => states.push(s));
  process.kill(pids[0] as number, "SIGKILL");
  await waitFor("the sidecar to fail", () => states.includes("failed"));
  await waitFor("the sidecar to run again", () => api.client.state === "running" && states.includes("running"));
  sub.dispose();
  await waitFor("rows after the restart", () => api.store.rows.length >= 5);
  const result = (await vscode.commands.executeCommand("mcpSidecar.callTool", "basic.add", {
    a: 20,
    b: 22,
  })) as P.CallToolResult;
  assert.deepEqual(result.content, [{ type: "text", text: "42" }]);
});

// ------------------------------------------------------------------ profiles

test("profiles: the workspace setting applies at once, MCP: Choose Profile picks None, the status bar names it", async () => {
  const config = () => vscode.workspace.getConfiguration("mcpSidecar");
  await config().update("profile", "review", vscode.ConfigurationTarget.Workspace);
  try {
    await waitFor("the window's profile", () => api.store.profile === "review");
    assert.deepEqual(api.store.profiles, ["review"]);
    assert.match(
      statusBarModel(api.client.state, api.store.rows, null, api.store.profile).text,
      /^\S+ MCP \[review\]: /,
    );
    const active = await api.client.request(P.activeTools, {});
    assert.ok(
      active.tools.some((t) => t.id === "basic.echo"),
      active.tools.map((t) => t.id).join(", "),
    );
    const definition = await api.client.request(P.modelToolDefinition, {});
    assert.deepEqual(
      definition.servers.map((s) => s.name),
      ["basic"],
    );
    await rejectsWithCode(api.client.request(P.discover, { query: "echo", server: "spare" }), "not_in_profile");
    const picking = vscode.commands.executeCommand("mcpSidecar.profile");
    const offered = await acceptQuickPick(/None/, "$(clear-all) None");
    assert.deepEqual(offered, ["review", "$(clear-all) None"]);
    await picking;
    await waitFor("no profile", () => api.store.profile === null);
    const cleared = await api.client.request(P.modelToolDefinition, {});
    assert.ok(cleared.servers.some((s) => s.name === "spare"));
  } finally {
    await config().update("profile", undefined, vscode.ConfigurationTarget.Workspace);
  }
});

test("restarts are serialized: a burst runs at most one more restart", async () => {
  let starts = 0;
  const sub = api.client.onDidStart(() => (starts += 1));
  await Promise.all([api.client.restart(), api.client.restart(), api.client.restart()]);
  sub.dispose();
  assert.equal(api.client.state, "running");
  assert.ok(starts >= 1 && starts <= 2, `${starts} starts`);
  const pids = execFileSync("pgrep", ["-P", String(process.pid), "-f", "mcp-sidecar"], { encoding: "utf8" })
    .trim()
    .split(/\s+/);
  assert.equal(pids.length, 1, "exactly one sidecar runs");
});

export async function run(): Promise<void> {
  let passed = 0;
  const failures: string[] = [];
  const started = Date.now();
  // MCP_E2E_ONLY=<regex> (scripts/test.sh passes it on): the activation case and the cases it matches.
  const only = process.env.MCP_E2E_ONLY ? new RegExp(process.env.MCP_E2E_ONLY) : undefined;
  for (const [index, { name, body }] of cases.entries()) {
    if (only && index > 0 && !only.test(name)) continue;
    const t0 = Date.now();
    try {
      await body();
      passed += 1;
      console.log(`[mcp]   ✔ ${name} (${Date.now() - t0} ms)`);
    } catch (error) {
      failures.push(name);
      console.log(`[mcp]   ✘ ${name}\n    ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!api) break;
      // A quick input the failed case left open would hold the next case's questions.
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
    }
  }
  console.log(`[mcp] ${passed} passed, ${failures.length} failed (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  if (failures.length > 0) throw new Error(`${failures.length} extension-host test(s) failed: ${failures.join("; ")}`);
}
