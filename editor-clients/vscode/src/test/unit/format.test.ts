import assert from "node:assert/strict";
import { test } from "node:test";
import {
  callDescription,
  callsStatusText,
  candidateItem,
  catalogSummary,
  contextLine,
  describeError,
  duration,
  engineLines,
  languageFor,
  mergeRow,
  serverDescription,
  serverLine,
  sharedText,
  stateIcon,
  statusBarModel,
  tokensText,
  toolPickItems,
  watchMessage,
} from "../../format";
import type { EngineStatus, StatusRow } from "../../protocol";

function row(name: string, state: StatusRow["state"], extra: Partial<StatusRow> = {}): StatusRow {
  return {
    name,
    scope: "global",
    transport: "stdio",
    state,
    description: null,
    protocolVersion: null,
    catalog: null,
    catalogSource: null,
    loaded: 0,
    lastDiagnostic: null,
    approvalRequired: false,
    tokens: null,
    ...extra,
  };
}

test("status bar counts connected and failed servers", () => {
  const model = statusBarModel("running", [row("a", "connected"), row("b", "failed"), row("c", "idle")]);
  assert.equal(model.text, "$(warning) MCP: 1 connected, 1 failed");
  assert.equal(model.severity, "warning");
  assert.deepEqual(model.tooltipLines, [
    "● a · connected · global · stdio",
    "✘ b · failed · global · stdio",
    "○ c · idle · global · stdio",
  ]);
});

test("status bar spins while a server connects", () => {
  assert.equal(statusBarModel("running", [row("a", "connecting")]).text, "$(loading~spin) MCP: 0 connected");
  assert.equal(statusBarModel("running", [row("a", "connected")]).text, "$(plug) MCP: 1 connected");
});

test("status bar names the window's profile, and its tooltip says what it does", () => {
  const model = statusBarModel("running", [row("a", "connected")], null, "review");
  assert.equal(model.text, "$(plug) MCP [review]: 1 connected");
  assert.deepEqual(model.tooltipLines, [
    "Profile: review (only its servers are searched)",
    "● a · connected · global · stdio",
  ]);
  assert.equal(statusBarModel("running", [row("a", "connected")], null, null).text, "$(plug) MCP: 1 connected");
});

test("status bar shows the client's own states", () => {
  assert.equal(statusBarModel("stopped", []).text, "$(debug-disconnect) MCP: stopped");
  assert.equal(statusBarModel("starting", []).text, "$(loading~spin) MCP: starting");
  assert.equal(statusBarModel("failed", []).severity, "error");
  assert.equal(statusBarModel("running", []).text, "$(plug) MCP: no servers");
});

test("a failed server's line names its diagnostic", () => {
  const failed = row("b", "failed", {
    lastDiagnostic: {
      code: "connection_failed",
      operation: "connect",
      message: "Could not start 'b'.",
      hint: "Check it.",
    },
  });
  assert.equal(serverLine(failed), "✘ b · failed · global · stdio — Could not start 'b'.");
});

test("a project server waiting for approval shows as needing it in the status bar, its line and the view", () => {
  const waiting = row("proj", "disabled", {
    scope: "project",
    approvalRequired: true,
    lastDiagnostic: {
      code: "trust_required",
      operation: "reload",
      message: "The project's definition of 'proj' changed.",
      hint: "Approve it.",
    },
  });
  const model = statusBarModel("running", [row("a", "connected"), waiting]);
  assert.equal(model.text, "$(shield) MCP: 1 connected, 1 needs approval");
  assert.equal(model.severity, "warning");
  assert.equal(model.approvals, 1);
  assert.deepEqual(model.tooltipLines, [
    "● a · connected · global · stdio",
    "⚠ proj · needs approval · project · stdio",
  ]);
  assert.equal(
    statusBarModel("running", [waiting, { ...waiting, name: "web" }]).text,
    "$(shield) MCP: 0 connected, 2 need approval",
  );
  assert.equal(serverDescription(waiting), "needs approval · project");
  assert.deepEqual(stateIcon(waiting.state, true), { id: "shield", color: "list.warningForeground" });
  assert.equal(
    statusBarModel("running", [row("a", "disabled")]).approvals,
    0,
    "a server the person disabled needs nothing",
  );
  assert.equal(serverLine(row("a", "disabled")), "○ a · disabled · global · stdio");
});

test("mergeRow replaces in place and appends new servers", () => {
  const rows = [row("a", "idle"), row("b", "idle")];
  const merged = mergeRow(rows, row("a", "connected"));
  assert.deepEqual(
    merged.map((r) => `${r.name}:${r.state}`),
    ["a:connected", "b:idle"],
  );
  assert.equal(rows[0]?.state, "idle", "the input is not mutated");
  assert.deepEqual(
    mergeRow(rows, row("c", "idle")).map((r) => r.name),
    ["a", "b", "c"],
  );
});

test("catalog summary tells never-fetched from empty", () => {
  assert.equal(catalogSummary(null), "catalog not fetched yet");
  assert.equal(
    catalogSummary({ tools: 8, resources: 3, templates: 1, prompts: 2 }, "live"),
    "8 tools · 3 resources + 1 templates · 2 prompts",
  );
  assert.equal(
    catalogSummary({ tools: 0, resources: null, templates: null, prompts: null }, "cache"),
    "0 tools (cached)",
  );
  assert.equal(serverDescription(row("a", "idle")), "idle · global");
});

test("candidates render kind, server and description", () => {
  assert.deepEqual(
    candidateItem({
      kind: "tool",
      id: "basic.add",
      server: "basic",
      name: "add",
      description: "Add two integers.",
      required: ["a", "b"],
      loaded: true,
      next: { method: "mcp/callTool", params: {} },
      score: 1,
    }),
    { label: "$(tools) basic.add(a, b)", description: "tool · basic · active", detail: "Add two integers." },
  );
  assert.equal(
    candidateItem({
      kind: "prompt",
      server: "basic",
      name: "review_code",
      description: "",
      arguments: [
        { name: "code", required: true },
        { name: "language", required: false },
      ],
      next: { method: "", params: {} },
      score: 1,
    }).label,
    "$(comment-discussion) basic · review_code(code, language?)",
  );
  assert.equal(
    candidateItem({
      kind: "template",
      label: "template",
      server: "basic",
      name: "note",
      uriTemplate: "notes://{folder}/{name}",
      variables: ["folder", "name"],
      description: "",
      next: { method: "", params: {} },
      score: 1,
    }).description,
    "template · basic",
  );
  const weak = candidateItem({
    kind: "tool",
    id: "shop.create_order",
    server: "shop",
    name: "create_order",
    description: "Create an order.",
    required: [],
    loaded: false,
    next: { method: "mcp/activate", params: {} },
    score: 0.2,
    match: { signals: ["semantic"], semanticRank: 1, similarity: 0.21 },
    weak: true,
  });
  assert.equal(weak.description, "tool · shop · weak match");
});

test("errors become the diagnostic's message and hint, never a stack", () => {
  const error = Object.assign(new Error("x\n  at foo"), {
    data: { code: "server_not_found", operation: "get", message: "No server 'x'.", hint: "Run list." },
  });
  assert.deepEqual(describeError(error), {
    message: "No server 'x'. Run list.",
    code: "server_not_found",
    usage: undefined,
  });
  assert.deepEqual(describeError(new Error("first line\nat stack")), { message: "first line" });
});

test("resource documents open as JSON when the MIME type or the text says so", () => {
  assert.equal(languageFor("application/json", "{}"), "json");
  assert.equal(languageFor("application/vnd.api+json", "{}"), "json");
  assert.equal(languageFor(undefined, '{"a": 1}'), "json");
  assert.equal(languageFor(undefined, "{not json}"), "plaintext");
  assert.equal(languageFor("text/plain", '{"a": 1}'), "plaintext");
  assert.equal(languageFor("text/markdown", "# hi"), "markdown");
});

test("watch notifications read ↻ server · uri changed", () => {
  assert.equal(watchMessage("basic", "notes://readme"), "↻ basic · notes://readme changed");
});

test("a server's tool picker lists every tool by name after the whole list, server text on one clean line", () => {
  const tool = (name: string, description?: string | null, title?: string) => ({
    id: `basic.${name}`,
    modelName: `mcp__basic__${name}`,
    server: "basic",
    name,
    title,
    description,
    inputSchema: { type: "object" },
  });
  const items = toolPickItems({
    server: "basic",
    source: "live",
    tokens: null,
    tools: [
      tool("add", "Add two integers.\n\nMore here."),
      tool("evil", "\u001b[31mred\u001b[0m  and\u202e hidden"),
      tool("titled", null, "A title"),
      tool("long", "x".repeat(200)),
    ],
    hiddenByFilters: 0,
    refused: [],
  });
  assert.deepEqual(items, [
    { label: "$(list-flat) All tools", description: "4 · the list as text" },
    { label: "$(tools) add", description: "Add two integers.", tool: "add" },
    { label: "$(tools) evil", description: "red and hidden", tool: "evil" },
    { label: "$(tools) titled", description: "A title", tool: "titled" },
    { label: "$(tools) long", description: `${"x".repeat(119)}…`, tool: "long" },
  ]);
});

test("a server that needs a login shows as such in the status bar, offers the login and is not failed", () => {
  const secure = row("secure", "needs_login", {
    transport: "http",
    lastDiagnostic: {
      code: "authentication_required",
      operation: "tools",
      server: "secure",
      message: "The server requires authentication.",
      hint: "Run mcp-sidecar login secure (in an editor: /mcp login secure), or check its Authorization header.",
    },
  });
  const model = statusBarModel("running", [row("a", "connected"), secure]);
  assert.equal(model.text, "$(key) MCP: 1 connected, 1 needs login");
  assert.equal(model.severity, "warning");
  assert.deepEqual(model.logins, ["secure"]);
  assert.deepEqual(model.tooltipLines, [
    "● a · connected · global · stdio",
    "⚿ secure · needs login · global · http — log in to use it",
  ]);
  assert.equal(serverDescription(secure), "needs login · global");
  assert.deepEqual(stateIcon("needs_login"), { id: "key", color: "list.warningForeground" });
  // A failure elsewhere keeps the warning icon, and both counts show.
  const mixed = statusBarModel("running", [row("b", "failed"), secure, { ...secure, name: "other" }]);
  assert.equal(mixed.text, "$(warning) MCP: 0 connected, 1 failed, 2 need login");
  assert.deepEqual(mixed.logins, ["secure", "other"]);
  assert.deepEqual(statusBarModel("running", [row("a", "connected")]).logins, []);
});

const ENGINE: EngineStatus = {
  pid: 4242,
  version: "0.1.0",
  since: "2026-01-01T00:00:00Z",
  uptimeSeconds: 185,
  clients: [
    { kind: "lsp", workspace: "/work/app", since: "2026-01-01T00:00:01Z", thisClient: true },
    { kind: "mcp", workspace: "/work/app\u202e\n", since: "2026-01-01T00:00:02Z", thisClient: false },
    { kind: "cli", workspace: null, since: "2026-01-01T00:00:03Z", thisClient: false },
  ],
};

test("a server other clients of the engine use too says by how many; one of its own says nothing", () => {
  assert.equal(serverLine(row("a", "connected", { sharedBy: 3 })), "● a · connected · global · stdio · shared by 3");
  assert.equal(serverLine(row("a", "connected", { sharedBy: 1 })), "● a · connected · global · stdio");
  assert.equal(serverLine(row("a", "connected")), "● a · connected · global · stdio", "an older sidecar sends none");
  assert.equal(serverDescription(row("a", "idle", { sharedBy: 2 })), "idle · global · shared by 2");
  assert.equal(sharedText(row("a", "idle", { sharedBy: 1 })), "");
});

test("the engine's line and its clients, this window marked; nothing without an engine", () => {
  assert.deepEqual(engineLines(ENGINE), [
    "Engine pid 4242 · mcp-sidecar 0.1.0 · up 3m 5s · 3 clients",
    "editor · /work/app (this window)",
    "host · /work/app", // a workspace's invisible and control characters are not shown
    "CLI run · no workspace",
  ]);
  assert.deepEqual(engineLines(null), []);
  assert.deepEqual(engineLines(undefined), []);
  const model = statusBarModel("running", [row("a", "connected", { sharedBy: 3 })], ENGINE);
  assert.deepEqual(model.tooltipLines, ["● a · connected · global · stdio · shared by 3"]);
  assert.deepEqual(model.engineLines, engineLines(ENGINE));
  assert.deepEqual(statusBarModel("running", [row("a", "connected")]).engineLines, []);
  assert.deepEqual(statusBarModel("stopped", [], ENGINE).engineLines, [], "a stopped sidecar has no engine to show");
});

test("durations read in their two largest units, as the sidecar's", () => {
  assert.deepEqual([0, 42, 185, 3600, 7440, 3 * 86400 + 7300].map(duration), [
    "0s",
    "42s",
    "3m 5s",
    "1h 0m",
    "2h 4m",
    "3d 2h",
  ]);
});

test("a background call reads as its status, then its progress, on one line", () => {
  const call = { callId: "call-1", tool: "basic.slow", session: "chat", startedAt: "t" } as const;
  assert.equal(callDescription({ ...call, status: "running" }), "running");
  assert.equal(
    callDescription({ ...call, status: "running", progress: { progress: 3, total: 10, message: "step\n3\u001b[31m" } }),
    "running · 3/10 · step 3",
  );
  assert.equal(callDescription({ ...call, status: "cancelled", progress: { progress: 2 } }), "cancelled · 2");
});

test("the background calls' status-bar entry counts the running ones, and hides without calls", () => {
  const call = { callId: "c", tool: "basic.slow", session: "chat", startedAt: "t" } as const;
  assert.equal(callsStatusText([]), undefined);
  assert.equal(callsStatusText([{ ...call, status: "running" }]), "$(sync~spin) 1 MCP call");
  assert.equal(
    callsStatusText([
      { ...call, status: "running" },
      { ...call, status: "running" },
      { ...call, status: "completed" },
    ]),
    "$(sync~spin) 2 MCP calls · 1 done",
  );
  assert.equal(callsStatusText([{ ...call, status: "failed" }]), "$(check) 1 MCP result");
});

test("a counted server shows what its tool definitions cost; the tooltip adds every counted server's", () => {
  const counted = row("a", "connected", {
    tokens: 1234,
    loaded: 2,
    catalog: { tools: 3, resources: null, templates: null, prompts: null },
  });
  assert.equal(serverLine(counted), "● a · connected · global · stdio · 1,234 tokens · 2 loaded");
  assert.equal(serverDescription(counted), "connected · global · 3 tools · 1,234 tokens");
  assert.equal(tokensText(row("b", "idle")), "", "not counted yet");
  const model = statusBarModel("running", [counted, row("b", "idle"), row("c", "disabled", { tokens: 50 })]);
  assert.equal(model.tooltipLines.at(-1), "Tool definitions: 1,234 tokens (1 of 2 servers counted, estimated)");
  assert.equal(contextLine([row("b", "idle")]), "");
});
