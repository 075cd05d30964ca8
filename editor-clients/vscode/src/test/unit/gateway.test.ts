// mcpSidecar.chat.tools and the gateway's MCP server definition: the setting, the feature
// detection that falls back to the chat tools, the command line (project, trust) and what
// package.json declares for it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import {
  CHAT_EXPOSE_BUDGET,
  CHAT_TOOLS_CONTEXT,
  CHAT_TOOLS_SETTING,
  chatToolsSetting,
  DEFAULT_CHAT_TOOLS,
  effectiveChatTools,
  GATEWAY_PROVIDER_ID,
  gatewayLaunch,
  mcpServerApi,
} from "../../gateway";

const pkg = JSON.parse(readFileSync(path.resolve(__dirname, "../../package.json"), "utf8"));
const SIDECAR = "/opt/venv/bin/mcp-sidecar";

test("the setting is gateway or tools; anything else is the default, tools", () => {
  assert.equal(DEFAULT_CHAT_TOOLS, "tools");
  assert.equal(chatToolsSetting("gateway"), "gateway");
  assert.equal(chatToolsSetting("tools"), "tools");
  for (const other of [undefined, null, "", "Gateway", "proxy", 1, true, ["gateway"]])
    assert.equal(chatToolsSetting(other), "tools", JSON.stringify(other));
});

test("chat gets the gateway only when the setting asks for it and VS Code has the API; never both", () => {
  assert.equal(effectiveChatTools("gateway", true), "gateway");
  assert.equal(effectiveChatTools("gateway", false), "tools", "no MCP server definition API: the chat tools stay");
  assert.equal(effectiveChatTools("tools", true), "tools");
  assert.equal(effectiveChatTools("tools", false), "tools");
});

test("feature detection: the API needs lm.registerMcpServerDefinitionProvider and McpStdioServerDefinition", () => {
  class Definition {
    constructor(
      readonly label: string,
      readonly command: string,
      readonly args: string[] = [],
    ) {}
  }
  const registered: [unknown, string, unknown][] = [];
  const lm = {
    registerTool: () => undefined,
    registerMcpServerDefinitionProvider(this: unknown, id: string, provider: unknown) {
      registered.push([this, id, provider]);
      return "disposable";
    },
  };
  // VS Code 1.95 (the engine's floor): no lm at all, or lm with tools but no MCP servers.
  assert.equal(mcpServerApi({}), undefined);
  assert.equal(mcpServerApi({ lm: undefined, McpStdioServerDefinition: Definition }), undefined);
  assert.equal(mcpServerApi({ lm: { registerTool: () => undefined } }), undefined);
  assert.equal(
    mcpServerApi({ lm: { registerTool: () => undefined }, McpStdioServerDefinition: Definition }),
    undefined,
  );
  assert.equal(mcpServerApi({ lm }), undefined, "a provider API without the definition class");
  assert.equal(mcpServerApi({ lm, McpStdioServerDefinition: {} }), undefined, "not a class");
  assert.equal(
    mcpServerApi({ lm: { registerMcpServerDefinitionProvider: true }, McpStdioServerDefinition: Definition }),
    undefined,
  );

  const api = mcpServerApi<Definition, object, string>({ lm, McpStdioServerDefinition: Definition });
  assert.ok(api);
  const provider = {};
  assert.equal(api.registerMcpServerDefinitionProvider("mcpSidecar.gateway", provider), "disposable");
  assert.deepEqual(registered, [[lm, "mcpSidecar.gateway", provider]], "called on vscode.lm itself");
  const built = new api.McpStdioServerDefinition("MCP Sidecar", SIDECAR, ["mcp"]);
  assert.ok(built instanceof Definition);
  assert.deepEqual([built.label, built.command, built.args], ["MCP Sidecar", SIDECAR, ["mcp"]]);
});

test("the gateway runs the extension's sidecar with mcp and the workspace's --project; untrusted: no trust", () => {
  const launch = gatewayLaunch({ command: SIDECAR, logLevel: "warning", folder: "/work/ws", trusted: false }, "0.1.0");
  assert.equal(launch.command, SIDECAR);
  assert.deepEqual(launch.args, ["mcp", "--project", "/work/ws"]);
  assert.equal(launch.cwd, "/work/ws");
});

test("the window's profile is the gateway's --profile, and a new profile is a new version", () => {
  const base = { command: SIDECAR, logLevel: "warning", folder: "/work/ws", trusted: false };
  const launch = gatewayLaunch({ ...base, profile: "review" }, "0.1.0");
  assert.deepEqual(launch.args.slice(-2), ["--profile", "review"]);
  assert.notEqual(launch.version, gatewayLaunch(base, "0.1.0").version);
  assert.ok(!gatewayLaunch({ ...base, profile: "" }, "0.1.0").args.includes("--profile"));
});

test("mcpSidecar.backgroundAfterSeconds is the gateway's --background-after unless it is the default", () => {
  const base = { command: SIDECAR, logLevel: "warning", folder: "/work/ws", trusted: false };
  assert.deepEqual(gatewayLaunch({ ...base, backgroundAfterSeconds: 5 }, "0.1.0").args.slice(-2), [
    "--background-after",
    "5",
  ]);
  assert.deepEqual(gatewayLaunch({ ...base, backgroundAfterSeconds: 0 }, "0.1.0").args.slice(-2), [
    "--background-after",
    "0",
  ]);
  assert.ok(!gatewayLaunch({ ...base, backgroundAfterSeconds: 120 }, "0.1.0").args.includes("--background-after"));
});

test("the window's session budget is the gateway's --max-active-tools and --max-active-tokens", () => {
  const base = { command: SIDECAR, logLevel: "warning", folder: undefined, trusted: false };
  assert.deepEqual(gatewayLaunch({ ...base, budget: { maxTools: 8 } }, "0.1.0").args, [
    "mcp",
    "--max-active-tools",
    "8",
  ]);
  assert.deepEqual(gatewayLaunch({ ...base, budget: { maxTools: 0, maxTokens: 6000 } }, "0.1.0").args, [
    "mcp",
    "--max-active-tools",
    "0",
    "--max-active-tokens",
    "6000",
  ]);
  assert.deepEqual(gatewayLaunch({ ...base, budget: {} }, "0.1.0").args, ["mcp"]);
  assert.notEqual(
    gatewayLaunch({ ...base, budget: { maxTools: 8 } }, "0.1.0").version,
    gatewayLaunch(base, "0.1.0").version,
  );
});

test("a trusted workspace: --trust-project with --approved-only, so starting the gateway approves nothing", () => {
  const launch = gatewayLaunch({ command: SIDECAR, logLevel: "warning", folder: "/work/ws", trusted: true }, "0.1.0");
  assert.deepEqual(launch.args, ["mcp", "--project", "/work/ws", "--trust-project", "--approved-only"]);
  assert.ok(!launch.args.includes("--trust-project") || launch.args.includes("--approved-only"));
});

test("no folder on disk: no project and nothing to trust, whatever the trust", () => {
  for (const trusted of [true, false]) {
    const launch = gatewayLaunch({ command: SIDECAR, logLevel: "warning", folder: undefined, trusted }, "0.1.0");
    assert.deepEqual(launch.args, ["mcp"]);
    assert.equal(launch.cwd, undefined);
  }
});

test("the log level is the extension's: -v for info, -vv for debug, before the command", () => {
  const args = (logLevel: string) =>
    gatewayLaunch({ command: SIDECAR, logLevel, folder: undefined, trusted: false }, "0.1.0").args;
  assert.deepEqual(args("info"), ["-v", "mcp"]);
  assert.deepEqual(args("debug"), ["-vv", "mcp"]);
  assert.deepEqual(args("nonsense"), ["mcp"]);
});

test("the definition's version is stable and changes with the command line", () => {
  const base = { command: SIDECAR, logLevel: "warning", folder: "/work/ws", trusted: false };
  const version = gatewayLaunch(base, "0.1.0").version;
  assert.match(version, /^0\.1\.0\+[0-9a-f]{12}$/);
  assert.equal(gatewayLaunch({ ...base }, "0.1.0").version, version);
  const others = [
    gatewayLaunch({ ...base, trusted: true }, "0.1.0"),
    gatewayLaunch({ ...base, command: "/usr/bin/mcp-sidecar" }, "0.1.0"),
    gatewayLaunch({ ...base, folder: "/work/other" }, "0.1.0"),
    gatewayLaunch({ ...base, logLevel: "debug" }, "0.1.0"),
    gatewayLaunch(base, "0.2.0"),
  ].map((l) => l.version);
  assert.equal(new Set([version, ...others]).size, 6);
});

test("package.json: the setting (tools by default, user settings only) and the provider's contribution", () => {
  const setting = pkg.contributes.configuration.properties[`mcpSidecar.${CHAT_TOOLS_SETTING}`];
  assert.equal(setting.type, "string");
  assert.deepEqual(setting.enum, ["tools", "gateway"]);
  assert.equal(setting.default, DEFAULT_CHAT_TOOLS);
  assert.equal(setting.enumDescriptions.length, 2);
  // A workspace cannot switch chat to the gateway (whose calls VS Code confirms by its own rules).
  assert.equal(setting.scope, "application");
  assert.match(setting.markdownDescription, /Never both/);
  assert.deepEqual(pkg.contributes.mcpServerDefinitionProviders, [{ id: GATEWAY_PROVIDER_ID, label: "MCP Sidecar" }]);
});

test("package.json: the chat tools are hidden while the gateway is offered (their when clause)", () => {
  const tools = pkg.contributes.languageModelTools as { name: string; when?: string }[];
  assert.deepEqual(
    tools.map((t) => [t.name, t.when]),
    [
      ["mcp_tools", `${CHAT_TOOLS_CONTEXT} != gateway`],
      ["mcp_call", `${CHAT_TOOLS_CONTEXT} != gateway`],
    ],
  );
});

test("the chat tools' budget is the gateway's default --expose-budget, and mcp_call tells the model what it means", () => {
  // The sidecar's default: sidecar/mcp_sidecar/catalog/context_budget.py, 2 % of its context window.
  const source = readFileSync(
    path.resolve(__dirname, "../../../../sidecar/mcp_sidecar/catalog/context_budget.py"),
    "utf8",
  );
  const window = Number((/^CONTEXT_WINDOW = ([\d_]+)$/m.exec(source)?.[1] ?? "").replaceAll("_", ""));
  assert.match(source, /^DEFAULT_BUDGET = CONTEXT_WINDOW \* 2 \/\/ 100$/m);
  assert.equal(CHAT_EXPOSE_BUDGET, (window * 2) / 100);
  const call = pkg.contributes.languageModelTools.find((t: { name: string }) => t.name === "mcp_call");
  assert.match(
    call.modelDescription,
    /When mcp_tools says every tool is callable without activating it, call any tool by its id directly\./,
  );
});
