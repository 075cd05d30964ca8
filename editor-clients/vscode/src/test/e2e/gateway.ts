// mcpSidecar.chat.tools in the real VS Code (1.139, which has the MCP server definition API):
// by default chat gets the mcp_tools/mcp_call tools and the provider offers nothing; switched
// to "gateway" the provider offers `mcp-sidecar mcp` at once, the chat tools are gone, and VS
// Code's own MCP client starts the gateway: basic's tools cost far less than the gateway's budget
// (`--expose auto`), so VS Code lists basic__echo with the server's schema from the start and calls
// it natively, no activation needed. Switched back,
// the gateway goes and the chat tools work again.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as vscode from "vscode";
import type { McpStdioServerDefinition } from "../../chatSurface";
import { GATEWAY_LABEL } from "../../gateway";
import { EXTENSION_ID, ext, test, waitFor } from "./harness";

/** VS Code's id of the definition: the extension's id, then the label. */
const SERVER_ID = `${EXTENSION_ID}/${GATEWAY_LABEL}`;
const config = () => vscode.workspace.getConfiguration("mcpSidecar");
const none = new vscode.CancellationTokenSource().token;

async function offered(): Promise<McpStdioServerDefinition[]> {
  return (await ext().chat.provider.provideMcpServerDefinitions(none)) ?? [];
}

async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : "")).join("");
}

/** The tools VS Code's MCP client has from a server (not the extension's own chat tools). */
function mcpTool(pattern: RegExp): vscode.LanguageModelToolInformation | undefined {
  return vscode.lm.tools.find((t) => pattern.test(t.name) && t.name !== "mcp_tools" && t.name !== "mcp_call");
}

/** The gateway processes the extension host runs (VS Code's MCP client spawns them). */
function gatewayPids(): string[] {
  try {
    return execFileSync("pgrep", ["-P", String(process.pid), "-f", "mcp-sidecar.* mcp"], { encoding: "utf8" })
      .trim()
      .split(/\s+/)
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

export function registerGatewayTests(): void {
  test("chat tools by default: this VS Code could offer the gateway, but the provider offers nothing", async () => {
    const api = ext();
    assert.equal(api.chat.gatewayAvailable, true, "VS Code 1.139 has lm.registerMcpServerDefinitionProvider");
    assert.equal(config().inspect("chat.tools")?.globalValue, undefined);
    assert.equal(api.chat.mode, "tools");
    assert.deepEqual(await offered(), []);
    assert.match(await invoke("mcp_tools", { query: "echo text back" }), /basic\.echo/);
  });

  test("chat.tools = gateway applies at once: the provider offers mcp-sidecar mcp for the trusted workspace, the chat tools go", async () => {
    const api = ext();
    let changes = 0;
    const listening = api.chat.provider.onDidChangeMcpServerDefinitions?.(() => (changes += 1));
    try {
      await config().update("chat.tools", "gateway", vscode.ConfigurationTarget.Global);
      await waitFor("the gateway mode", () => api.chat.mode === "gateway");
      assert.ok(changes >= 1, "VS Code was told the definitions changed");
      const [definition, ...more] = await offered();
      assert.ok(definition, "one definition");
      assert.equal(more.length, 0);
      const Definition = (vscode as unknown as { McpStdioServerDefinition: new (...a: unknown[]) => object })
        .McpStdioServerDefinition;
      assert.ok(definition instanceof Definition, "a vscode.McpStdioServerDefinition");
      const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      assert.ok(folder);
      assert.equal(vscode.workspace.isTrusted, true, "scripts/test.sh disables workspace trust: trusted");
      assert.equal(definition.label, "MCP Sidecar");
      assert.equal(definition.command, api.client.launch?.command, "the executable the extension's sidecar runs");
      assert.deepEqual(definition.args, ["mcp", "--project", folder, "--trust-project", "--approved-only"]);
      assert.equal(definition.cwd?.fsPath, folder);
      assert.match(definition.version ?? "", /^0\.1\.0\+[0-9a-f]{12}$/);
      const resolved = await api.chat.provider.resolveMcpServerDefinition?.(definition, none);
      assert.equal(resolved, definition);
      assert.deepEqual(resolved?.args, definition.args);
      // Never both: the chat tools are unregistered (and hidden from chat by their when clause).
      await assert.rejects(invoke("mcp_tools", { query: "echo" }), /does not have an implementation registered/);
      await assert.rejects(invoke("mcp_call", { id: "basic.echo" }), /does not have an implementation registered/);
    } finally {
      listening?.dispose();
    }
  });

  test("VS Code's MCP client runs the gateway: basic's tools are listed from the start (within the budget) and called natively", async () => {
    try {
      // VS Code asks the provider again after the change event: until it has, the id names no
      // server and the command does nothing, so it is repeated (a started server stays started).
      const discovery = await waitFor(
        "VS Code's tool mcp_tools from the gateway",
        async () => {
          await vscode.commands.executeCommand("workbench.mcp.startServer", SERVER_ID, { waitForLiveTools: true });
          return mcpTool(/mcp_tools$/);
        },
        60_000,
      );
      assert.match(discovery.description, /^Find and load tools from the user's MCP servers on demand/);
      assert.ok(discovery.tags.includes("mcp"), discovery.tags.join(","));
      // Every tool of the servers is listed beside mcp_tools while they cost little: nothing to activate.
      const echo = await waitFor("basic__echo in VS Code's tools", () => mcpTool(/basic__echo$/), 30_000);
      assert.match(discovery.description, /Every tool of the servers below is already among your own tools/);
      const schema = echo.inputSchema as { properties?: Record<string, { type?: string }>; required?: string[] };
      assert.equal(schema.properties?.text?.type, "string");
      assert.deepEqual(schema.required, ["text"]);
      // basic.echo declares an output schema: VS Code gives the model its structured content.
      assert.deepEqual(JSON.parse(await invoke(echo.name, { text: "hello native" })), { result: "hello native" });
    } finally {
      await vscode.commands.executeCommand("workbench.mcp.stopServer", SERVER_ID);
      await waitFor("the gateway to stop", () => gatewayPids().length === 0, 30_000);
    }
  });

  test("chat.tools back to tools: the provider offers nothing again, and the chat tools work at once", async () => {
    const api = ext();
    await config().update("chat.tools", undefined, vscode.ConfigurationTarget.Global);
    await waitFor("the tools mode", () => api.chat.mode === "tools");
    assert.deepEqual(await offered(), []);
    assert.equal(await api.chat.provider.resolveMcpServerDefinition?.({} as McpStdioServerDefinition, none), undefined);
    assert.match(await invoke("mcp_tools", { query: "echo text back" }), /basic\.echo/);
    assert.equal(gatewayPids().length, 0);
  });
}
