// The host side of the MCP Apps bridge, driven with the JSON-RPC an app's frame sends: the
// handshake, the call's input and result only after `initialized`, an app's tool calls and
// links through the host (refusals become JSON-RPC errors), and the approvals asked once per
// app and tool.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AppBridge,
  type AppHost,
  type AppLaunch,
  AppRefusal,
  CallApprovals,
  callQuestion,
  contentText,
  type JsonObject,
  linkQuestion,
  MAX_MESSAGES_PER_SECOND,
  MAX_PENDING_REQUESTS,
  openableLink,
  pageContext,
} from "../../appBridge";

interface Recorder extends AppHost {
  sent: JsonObject[];
  calls: { name: string; args: JsonObject }[];
  links: string[];
  messages: string[];
  logs: string[];
  sizes: { width?: number; height?: number }[];
  closed: number;
}

function recorder(overrides: Partial<AppHost> = {}): Recorder {
  const r: Recorder = {
    sent: [],
    calls: [],
    links: [],
    messages: [],
    logs: [],
    sizes: [],
    closed: 0,
    send: (message) => void r.sent.push(message),
    callTool: async (name, args) => {
      r.calls.push({ name, args });
      return { content: [{ type: "text", text: `called ${name}` }], structuredContent: { ok: true }, isError: false };
    },
    openLink: async (url) => {
      r.links.push(url);
      return true;
    },
    showMessage: (text) => void r.messages.push(text),
    log: (level, text) => void r.logs.push(`${level}: ${text}`),
    resize: (size) => void r.sizes.push(size),
    close: () => {
      r.closed += 1;
    },
    ...overrides,
  };
  return r;
}

const launch: AppLaunch = {
  arguments: { city: "Oslo" },
  result: {
    content: [{ type: "text", text: "2026-12-04T21:00:00Z" }],
    structuredContent: { time: "t" },
    isError: false,
  },
};

function bridge(host: AppHost): AppBridge {
  return new AppBridge(
    host,
    launch,
    { theme: "dark", toolInfo: { tool: { name: "get-time", inputSchema: { type: "object" } } } },
    { name: "mcp-sidecar-vscode", version: "0.1.0" },
    { connectDomains: ["https://api.example"] },
  );
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "ui/initialize",
  params: { appInfo: { name: "app", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" },
};

test("ui/initialize answers the host's context and capabilities, and nothing else is sent before initialized", async () => {
  const host = recorder();
  const b = bridge(host);
  b.updateContext({ containerDimensions: { width: 640 } });
  await b.receive(initialize);
  assert.equal(host.sent.length, 1);
  const answer = host.sent[0] as { id: number; result: Record<string, unknown> };
  assert.equal(answer.id, 1);
  assert.equal(answer.result.protocolVersion, "2026-01-26");
  assert.deepEqual(answer.result.hostInfo, { name: "mcp-sidecar-vscode", version: "0.1.0" });
  assert.deepEqual(answer.result.hostCapabilities, {
    openLinks: {},
    serverTools: {},
    logging: {},
    sandbox: { permissions: {}, csp: { connectDomains: ["https://api.example"] } },
  });
  const context = answer.result.hostContext as Record<string, unknown>;
  assert.equal(context.theme, "dark");
  assert.deepEqual(context.containerDimensions, { width: 640 });
  assert.deepEqual(context.toolInfo, { tool: { name: "get-time", inputSchema: { type: "object" } } });
  assert.equal(b.ready, false);
});

test("initialized brings the tool input, then the tool result, once", async () => {
  const host = recorder();
  const b = bridge(host);
  await b.receive(initialize);
  await b.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
  await b.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  assert.deepEqual(host.sent.slice(1), [
    { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { city: "Oslo" } } },
    { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: launch.result },
  ]);
  assert.equal(b.ready, true);
});

test("a context change reaches an initialized app as host-context-changed with only what changed", async () => {
  const host = recorder();
  const b = bridge(host);
  b.updateContext({ theme: "light" });
  assert.equal(host.sent.length, 0, "not before initialized");
  await b.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
  host.sent.length = 0;
  b.updateContext({ theme: "dark" });
  assert.deepEqual(host.sent, [
    { jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: "dark" } },
  ]);
});

test("tools/call goes to the host and its result back to the app", async () => {
  const host = recorder();
  await bridge(host).receive({
    jsonrpc: "2.0",
    id: "c1",
    method: "tools/call",
    params: { name: "get-time", arguments: { tz: "UTC" } },
  });
  assert.deepEqual(host.calls, [{ name: "get-time", args: { tz: "UTC" } }]);
  assert.deepEqual(host.sent, [
    {
      jsonrpc: "2.0",
      id: "c1",
      result: { content: [{ type: "text", text: "called get-time" }], structuredContent: { ok: true }, isError: false },
    },
  ]);
});

test("a refused call and malformed params answer JSON-RPC errors", async () => {
  const host = recorder({
    callTool: async () => {
      throw new AppRefusal("The person declined the tool call.");
    },
  });
  const b = bridge(host);
  await b.receive({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "get-time" } });
  await b.receive({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { arguments: {} } });
  await b.receive({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "x", arguments: [1] } });
  assert.deepEqual(host.sent, [
    { jsonrpc: "2.0", id: 2, error: { code: -32000, message: "The person declined the tool call." } },
    {
      jsonrpc: "2.0",
      id: 3,
      error: { code: -32602, message: "tools/call needs a tool name and an arguments object." },
    },
    {
      jsonrpc: "2.0",
      id: 4,
      error: { code: -32602, message: "tools/call needs a tool name and an arguments object." },
    },
  ]);
});

test("ui/open-link opens through the host; a declined link is an error", async () => {
  const host = recorder();
  await bridge(host).receive({ jsonrpc: "2.0", id: 5, method: "ui/open-link", params: { url: "https://example.org" } });
  assert.deepEqual(host.links, ["https://example.org"]);
  assert.deepEqual(host.sent, [{ jsonrpc: "2.0", id: 5, result: {} }]);
  const declining = recorder({ openLink: async () => false });
  await bridge(declining).receive({ jsonrpc: "2.0", id: 6, method: "ui/open-link", params: { url: "https://x" } });
  assert.deepEqual(declining.sent, [
    { jsonrpc: "2.0", id: 6, error: { code: -32000, message: "Link opening denied by user" } },
  ]);
});

test("ui/message is shown, never sent anywhere, and the app is told so", async () => {
  const host = recorder();
  await bridge(host).receive({
    jsonrpc: "2.0",
    id: 7,
    method: "ui/message",
    params: {
      role: "user",
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "…" },
      ],
    },
  });
  assert.deepEqual(host.messages, ["hello\n[image]"]);
  const answer = host.sent[0] as { error: { code: number; message: string } };
  assert.equal(answer.error.code, -32000);
  assert.match(answer.error.message, /no chat/);
});

test("ping, display mode, unknown methods, size changes, logs and teardown", async () => {
  const host = recorder();
  const b = bridge(host);
  await b.receive({ jsonrpc: "2.0", id: 8, method: "ping" });
  await b.receive({ jsonrpc: "2.0", id: 9, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
  await b.receive({ jsonrpc: "2.0", id: 10, method: "resources/read", params: { uri: "file:///etc/passwd" } });
  await b.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 300, height: 1e9 } });
  await b.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: -1, height: "x" } });
  await b.receive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "warning", data: { a: 1 } } });
  await b.receive({ jsonrpc: "2.0", method: "ui/notifications/request-teardown" });
  assert.deepEqual(host.sent, [
    { jsonrpc: "2.0", id: 8, result: {} },
    { jsonrpc: "2.0", id: 9, result: { mode: "inline" } },
    { jsonrpc: "2.0", id: 10, error: { code: -32601, message: "Method not supported by this host: resources/read" } },
  ]);
  assert.deepEqual(host.sizes, [{ width: 300, height: 20_000 }]);
  assert.deepEqual(host.logs, ['warning: {"a":1}']);
  assert.equal(host.closed, 1);
});

test("what is not JSON-RPC 2.0, responses, and anything after dispose are ignored", async () => {
  const host = recorder();
  const b = bridge(host);
  for (const junk of [null, "ui/initialize", [], { id: 1, method: "ping" }, { jsonrpc: "2.0", id: 1, result: {} }]) {
    await b.receive(junk);
  }
  await b.receive({ jsonrpc: "2.0", id: { x: 1 }, method: "ping" });
  b.dispose();
  await b.receive(initialize);
  b.updateContext({ theme: "light" });
  assert.deepEqual(host.sent, []);
});

test("approvals: asked once per app and tool, one question at a time, a refusal asks again", async () => {
  const approvals = new CallApprovals();
  const app = { server: "basic", uri: "ui://get-time/app.html" };
  const asked: string[] = [];
  let answer = true;
  const ask = (what: string) => async () => {
    asked.push(what);
    return answer;
  };
  const [first, second] = await Promise.all([
    approvals.decide(app, "get-time", ask("get-time 1")),
    approvals.decide(app, "get-time", ask("get-time 2")),
  ]);
  assert.deepEqual([first, second], [true, true]);
  assert.deepEqual(asked, ["get-time 1"], "the second waited for the first answer and did not ask");
  answer = false;
  assert.equal(await approvals.decide(app, "other", ask("other 1")), false);
  assert.equal(await approvals.decide(app, "other", ask("other 2")), false);
  assert.equal(await approvals.decide({ ...app, uri: "ui://another" }, "get-time", ask("another app")), false);
  assert.deepEqual(asked, ["get-time 1", "other 1", "other 2", "another app"]);
});

test("the questions name the server, the tool and the URL without hidden characters", () => {
  const app = { server: "basic\u202e", uri: "ui://get-time/app.html" };
  const call = callQuestion(app, "get\u200btime", { text: "a\u202eb" });
  assert.equal(call.message, 'An app of basic asks to call its tool "gettime".');
  assert.match(call.detail, /App: ui:\/\/get-time\/app\.html\nArguments:\n\{\n {2}"text": "a\\u202eb"\n\}/);
  const url = openableLink("https://modelcontextprotocol.io/docs");
  assert.ok(url);
  const link = linkQuestion(app, url);
  assert.equal(link.message, "An app of basic asks to open modelcontextprotocol.io in the browser.");
  assert.match(link.detail, /URL: https:\/\/modelcontextprotocol\.io\/docs$/);
  assert.equal(openableLink("javascript:alert(1)"), undefined);
  assert.equal(openableLink("file:///etc/passwd"), undefined);
  assert.equal(openableLink("not a url"), undefined);
  assert.ok(openableLink("mailto:a@example.org"));
});

test("the page's report becomes host context: theme, style variables, width", () => {
  assert.deepEqual(
    pageContext({
      theme: "light",
      variables: { "--color-text-primary": "#333", bad: "x", "--font-sans": 3 },
      width: 812,
      height: 400,
    }),
    { theme: "light", styles: { variables: { "--color-text-primary": "#333" } }, containerDimensions: { width: 812 } },
  );
  assert.deepEqual(pageContext({ theme: "sepia", width: -4 }), {});
  assert.deepEqual(pageContext("junk"), {});
  assert.equal(contentText({ type: "text", text: "one" }), "one");
});

test("a flood: past the limit in a second, requests are refused and notifications dropped, logged once", async () => {
  const host = recorder();
  const b = bridge(host);
  let clock = 1_000_000;
  b.now = () => clock;
  for (let i = 0; i < MAX_MESSAGES_PER_SECOND; i += 1) {
    await b.receive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: i } });
  }
  await b.receive({ jsonrpc: "2.0", id: 1, method: "ping" });
  await b.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 10, height: 10 } });
  await b.receive({ jsonrpc: "2.0", id: 2, method: "ping" });
  assert.deepEqual(host.sent, [
    { jsonrpc: "2.0", id: 1, error: { code: -32000, message: "More than 200 messages in a second: refused." } },
    { jsonrpc: "2.0", id: 2, error: { code: -32000, message: "More than 200 messages in a second: refused." } },
  ]);
  assert.deepEqual(host.sizes, []);
  assert.equal(host.logs.filter((line) => line.includes("more than 200 messages")).length, 1);
  clock += 1000; // the next second: answered again
  await b.receive({ jsonrpc: "2.0", id: 3, method: "ping" });
  assert.deepEqual(host.sent.at(-1), { jsonrpc: "2.0", id: 3, result: {} });
});

test("requests waiting on the person are bounded: past the limit, the next is refused at once", async () => {
  const waiting: (() => void)[] = [];
  const host = recorder({
    callTool: () =>
      new Promise((resolve) => {
        waiting.push(() => resolve({ content: [], isError: false }));
      }),
  });
  const b = bridge(host);
  const calls = [];
  for (let i = 0; i < MAX_PENDING_REQUESTS; i += 1) {
    calls.push(b.receive({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "t", arguments: {} } }));
  }
  await b.receive({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "t", arguments: {} } });
  assert.deepEqual(host.sent, [
    {
      jsonrpc: "2.0",
      id: 99,
      error: { code: -32000, message: `More than ${MAX_PENDING_REQUESTS} requests waiting for an answer: refused.` },
    },
  ]);
  for (const release of waiting) release();
  await Promise.all(calls);
  assert.equal(host.sent.length, MAX_PENDING_REQUESTS + 1);
});
