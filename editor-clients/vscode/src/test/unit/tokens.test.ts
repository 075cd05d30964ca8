// The Context view's rows and the status tooltip's session lines, from the sidecar's figures.
import assert from "node:assert/strict";
import { test } from "node:test";
import { statusBarModel } from "../../format";
import type { ActiveToolsResult, ContextTokens, SessionBudget, StatusRow, ToolDefinition } from "../../protocol";
import { activeSummary, type ContextFigures, contextEntries, sessionLines } from "../../tokens";

function row(name: string, state: StatusRow["state"], tokens: number | null, tools: number | null = null): StatusRow {
  return {
    name,
    scope: "global",
    transport: "stdio",
    state,
    description: null,
    protocolVersion: null,
    catalog: tools === null ? null : { tools, resources: null, templates: null, prompts: null },
    catalogSource: null,
    loaded: 0,
    lastDiagnostic: null,
    approvalRequired: false,
    tokens,
  };
}

function tool(id: string, tokens?: number): ToolDefinition {
  const [server = "", name = ""] = id.split(".");
  return { id, modelName: `mcp__${server}__${name}`, server, name, description: `${name} it`, inputSchema: {}, tokens };
}

const TOKENS: ContextTokens = { tokenizer: "llama-2-bpe", allTools: 0, counted: 0, enabled: 0, modelTool: 742 };

function active(
  tools: ToolDefinition[],
  tokens: number | null,
  budget: SessionBudget | null = null,
): ActiveToolsResult {
  return { session: "default", tools, tokens, budget };
}

test("the session budget follows the session's figures when there is one", () => {
  const tools = [tool("basic.echo", 61), tool("basic.add", 70)];
  assert.equal(activeSummary(active(tools, 131)), "2 tools · 131 tokens");
  assert.equal(
    activeSummary(active(tools, 131, { maxTools: 12, maxTokens: 6000 })),
    "2 tools · 131 tokens (budget: at most 12 tools and 6,000 tokens)",
  );
  assert.equal(
    activeSummary(active([], 0, { maxTools: 1, maxTokens: null })),
    "no active tools (budget: at most 1 tool)",
  );
});

test("the view: the session's tools, mcp_tools, both together, every server's (largest first)", () => {
  const rows = [
    row("small", "connected", 61, 2),
    row("big", "idle", 4210, 12),
    row("new", "idle", null),
    row("off", "disabled", null),
  ];
  const figures: ContextFigures = {
    tokens: TOKENS,
    active: active([tool("big.query", 412), tool("small.echo", 61)], 473),
    modelTool: 742,
  };
  const entries = contextEntries(rows, figures);
  assert.deepEqual(
    entries.map((e) => [e.label, e.description]),
    [
      ["Active tools (session default)", "2 tools · 473 tokens"],
      ["mcp_tools", "742 tokens"],
      ["Through the sidecar", "1,215 tokens"],
      ["All servers, connected directly", "4,271 tokens · 2 of 3 servers counted"],
    ],
  );
  assert.deepEqual(
    entries[0]?.children?.map((e) => [e.label, e.description]),
    [
      ["big.query", "412 tokens"],
      ["small.echo", "61 tokens"],
    ],
  );
  assert.deepEqual(
    entries[3]?.children?.map((e) => [e.label, e.description]),
    [
      ["big", "4,210 tokens · 12 tools"],
      ["small", "61 tokens · 2 tools"],
      ["new", "not counted yet (its catalog was not fetched)"],
      ["off", "disabled"],
    ],
  );
});

test("the view before the figures, without a tokenizer, and with mcp_tools not counted yet", () => {
  assert.deepEqual(
    contextEntries([], { tokens: undefined, active: undefined, modelTool: null }).map((e) => e.label),
    ["Not known yet"],
  );
  const none = contextEntries([row("a", "idle", null)], { tokens: null, active: undefined, modelTool: null });
  assert.deepEqual(
    none.map((e) => [e.label, e.description]),
    [["No token estimates", "the sidecar has no tokenizer"]],
  );
  const early = contextEntries([], { tokens: { ...TOKENS, modelTool: null }, active: active([], 0), modelTool: null });
  assert.deepEqual(
    early.map((e) => [e.label, e.description]),
    [
      ["Active tools (session default)", "no active tools"],
      ["mcp_tools", "not counted yet"],
      ["All servers, connected directly", "0 tokens · 0 of 0 servers counted"],
    ],
    "no total while mcp_tools' figure is missing",
  );
});

test("the status tooltip ends with the session's and mcp_tools' lines once they are known", () => {
  assert.equal(activeSummary(active([tool("a.b", 5)], 5)), "1 tool · 5 tokens");
  assert.equal(activeSummary(active([tool("a.b")], null)), "1 tool · not counted");
  const figures: ContextFigures = { tokens: TOKENS, active: active([tool("a.b", 1234)], 1234), modelTool: 742 };
  assert.deepEqual(sessionLines(figures), [
    "Active tools (session default): 1 tool · 1,234 tokens",
    "mcp_tools: 742 tokens",
  ]);
  assert.deepEqual(sessionLines({ ...figures, tokens: null }), [], "no tokenizer: nothing to say");
  assert.deepEqual(sessionLines({ ...figures, active: undefined }), [], "not fetched yet");
  const model = statusBarModel("running", [row("a", "connected", 1234)], null, null, figures);
  assert.deepEqual(model.tooltipLines.slice(-3), [
    "Tool definitions: 1,234 tokens (1 of 1 servers counted, estimated)",
    "Active tools (session default): 1 tool · 1,234 tokens",
    "mcp_tools: 742 tokens",
  ]);
});
