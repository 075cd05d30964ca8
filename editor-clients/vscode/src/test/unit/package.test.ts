// package.json and the code agree: every contributed command is registered, every registered
// command is contributed, menus name real commands, and the engine is one code-server 4.139 runs.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

const DIR = path.resolve(__dirname, "../..");
const pkg = JSON.parse(readFileSync(path.join(DIR, "package.json"), "utf8"));
const commandsSource = readFileSync(path.join(DIR, "src/commands.ts"), "utf8");

const contributed: string[] = pkg.contributes.commands.map((c: { command: string }) => c.command);
const registered = [...commandsSource.matchAll(/^ {2}"(mcpSidecar\.[A-Za-z]+)": [a-z]+\.[A-Za-z]+,$/gm)].map(
  (m) => m[1] as string,
);

test("every contributed command is registered, and the other way round", () => {
  assert.ok(registered.length >= 30, `parsed ${registered.length} handlers`);
  assert.deepEqual([...contributed].sort(), [...registered].sort());
});

test("every command has the MCP category and a title", () => {
  for (const c of pkg.contributes.commands) {
    assert.equal(c.category, "MCP", c.command);
    assert.ok(c.title.length > 3, c.command);
  }
});

test("menus only name contributed commands", () => {
  for (const [menu, entries] of Object.entries(pkg.contributes.menus as Record<string, { command: string }[]>)) {
    for (const entry of entries) assert.ok(contributed.includes(entry.command), `${menu}: ${entry.command}`);
  }
});

test("the whole /mcp command set has a palette command", () => {
  const set = [
    "status",
    "add",
    "remove",
    "get",
    "tools",
    "reload",
    "enable",
    "disable",
    "import",
    "login",
    "logout",
    "reconnect",
    "refresh",
    "subscribe",
    "unsubscribe",
    "subscriptions",
    "spillFiles",
    "runCommand",
    "search",
  ];
  const hidden = new Set(
    pkg.contributes.menus.commandPalette
      .filter((m: { when: string }) => m.when === "false")
      .map((m: { command: string }) => m.command),
  );
  for (const name of set) {
    assert.ok(contributed.includes(`mcpSidecar.${name}`), name);
    assert.ok(!hidden.has(`mcpSidecar.${name}`), `${name} is hidden from the palette`);
  }
});

test("the engine is one VS Code 1.139 (code-server 4.139) runs, and @types/vscode does not exceed it", () => {
  const engine = /^\^1\.(\d+)\.\d+$/.exec(pkg.engines.vscode);
  assert.ok(engine, pkg.engines.vscode);
  assert.ok(Number(engine[1]) <= 139);
  const types = /1\.(\d+)\.\d+/.exec(pkg.devDependencies["@types/vscode"]);
  assert.ok(types && Number(types[1]) <= Number(engine[1]));
});

test("the extension declares limited untrusted-workspace support and restricts the path and auto-approval settings", () => {
  assert.equal(pkg.capabilities.untrustedWorkspaces.supported, "limited");
  assert.deepEqual(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations, [
    "mcpSidecar.path",
    "mcpSidecar.autoApproveReadOnly",
  ]);
});

test("auto-approval of read-only tools is off by default and only the user can turn it on", () => {
  const setting = pkg.contributes.configuration.properties["mcpSidecar.autoApproveReadOnly"];
  assert.equal(setting.type, "array");
  assert.equal(setting.items.type, "string");
  assert.deepEqual(setting.default, []);
  // "application": user settings only; a workspace's .vscode/settings.json cannot set it.
  assert.equal(setting.scope, "application");
  assert.match(setting.markdownDescription, /readOnlyHint/);
});

test("the chat tools are declared with schemas and step-by-step descriptions", () => {
  type ChatTool = { name: string; modelDescription: string; inputSchema: { type: string } };
  // Exactly two, as the first assertion checks.
  const tools = pkg.contributes.languageModelTools as [ChatTool, ChatTool];
  assert.deepEqual(
    tools.map((t) => t.name),
    ["mcp_tools", "mcp_call"],
  );
  for (const tool of tools) assert.equal(tool.inputSchema.type, "object");
  assert.match(tools[0].modelDescription, /query, then activate, then call/);
  assert.match(tools[1].modelDescription, /1\. mcp_tools with query.*2\. mcp_tools with activate.*3\. this tool/s);
});

test("only the user sets the sidecar's path: a workspace's settings cannot point it elsewhere", () => {
  const setting = pkg.contributes.configuration.properties["mcpSidecar.path"];
  // "machine": user (or remote) settings only; VS Code ignores it in .vscode/settings.json.
  assert.equal(setting.scope, "machine");
  assert.equal(setting.default, "");
  assert.match(setting.markdownDescription, /cannot set it/);
});

test("settings document path, log level and trace", () => {
  const props = pkg.contributes.configuration.properties;
  for (const key of ["mcpSidecar.path", "mcpSidecar.logLevel", "mcpSidecar.trace.server"]) {
    assert.ok(props[key]?.markdownDescription, key);
  }
});

test("sampling is on by default, only the user turns it off or on, and a model can be configured", () => {
  const props = pkg.contributes.configuration.properties;
  const enabled = props["mcpSidecar.sampling.enabled"];
  assert.equal(enabled.type, "boolean");
  assert.equal(enabled.default, true);
  assert.equal(enabled.scope, "application");
  assert.match(enabled.markdownDescription, /approval/);
  const model = props["mcpSidecar.sampling.model"];
  assert.deepEqual(Object.keys(model.properties).sort(), ["family", "id", "vendor"]);
  assert.deepEqual(model.default, {});
});
