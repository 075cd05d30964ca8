// What tool definitions cost a model's context (docs/context.md), as the Context view and the
// status bar tooltip show it: this window's session's active tools, `mcp_tools` itself, both
// together, and every server's tools as a host connected to each directly would list them.
// Pure functions (no `vscode` import), unit-tested; the figures are the sidecar's estimates.
import type { ActiveToolsResult, ContextTokens, SessionBudget, StatusRow } from "./protocol";

/** What the extension knows of the figures; each is refreshed by the store (state.ts). */
export interface ContextFigures {
  /** `mcp/status`'s `tokens`: null when the sidecar has no tokenizer, undefined before the first status. */
  tokens: ContextTokens | null | undefined;
  /** The chat session's active tools (`mcp/activeTools`), undefined before they were fetched. */
  active: ActiveToolsResult | undefined;
  /** What `mcp_tools` costs; null until the sidecar counted it. */
  modelTool: number | null;
}

/** One row of the Context view; `children` make it expandable. */
export interface ContextEntry {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  icon: string;
  children?: ContextEntry[];
}

/** "1,234 tokens". */
export function tokenCount(value: number): string {
  return `${value.toLocaleString("en-US")} tokens`;
}

const ESTIMATE =
  "Estimated with Llama 2's tokenizer: a little more than Claude's or GPT-4o's count (see docs/context.md).";

/** "at most 12 tools and 6,000 tokens": the session budget (docs/configuration.md#session-budget). */
export function budgetWords(budget: SessionBudget): string {
  const parts: string[] = [];
  if (budget.maxTools !== null) parts.push(`${budget.maxTools} tool${budget.maxTools === 1 ? "" : "s"}`);
  if (budget.maxTokens !== null) parts.push(tokenCount(budget.maxTokens));
  return `at most ${parts.join(" and ")}`;
}

/** "3 tools · 1,030 tokens", or "no active tools"; "not counted" when a figure is missing; the session
 * budget after it when there is one. */
export function activeSummary(active: ActiveToolsResult): string {
  const count = active.tools.length;
  const budget = active.budget ? ` (budget: ${budgetWords(active.budget)})` : "";
  if (count === 0) return `no active tools${budget}`;
  const tools = `${count} tool${count === 1 ? "" : "s"}`;
  return (active.tokens === null ? `${tools} · not counted` : `${tools} · ${tokenCount(active.tokens)}`) + budget;
}

/** The status bar tooltip's lines for the session and `mcp_tools`; none before they are known or without a tokenizer. */
export function sessionLines(figures: ContextFigures): string[] {
  if (!figures.tokens || !figures.active) return [];
  const lines = [`Active tools (session ${figures.active.session}): ${activeSummary(figures.active)}`];
  if (figures.modelTool !== null) lines.push(`mcp_tools: ${tokenCount(figures.modelTool)}`);
  return lines;
}

/** Every counted enabled server's tools together, from the current rows (they update one by one). */
function allServers(rows: StatusRow[]): { total: number; counted: number; enabled: number } {
  const enabled = rows.filter((r) => r.state !== "disabled");
  const counted = enabled.filter((r) => typeof r.tokens === "number");
  return {
    total: counted.reduce((sum, r) => sum + (r.tokens ?? 0), 0),
    counted: counted.length,
    enabled: enabled.length,
  };
}

function serverEntry(row: StatusRow): ContextEntry {
  const figure =
    row.state === "disabled"
      ? "disabled"
      : typeof row.tokens === "number"
        ? tokenCount(row.tokens)
        : "not counted yet (its catalog was not fetched)";
  const tools = row.catalog?.tools;
  return {
    id: `context:server:${row.name}`,
    label: row.name,
    description: typeof tools === "number" ? `${figure} · ${tools} tools` : figure,
    tooltip: `What ${row.name}'s tools cost a model whose host connects to it directly, on every turn. ${ESTIMATE}`,
    icon: "server",
  };
}

/** The Context view's rows. */
export function contextEntries(rows: StatusRow[], figures: ContextFigures): ContextEntry[] {
  if (figures.tokens === undefined) {
    return [{ id: "context:loading", label: "Not known yet", description: "", tooltip: "", icon: "loading~spin" }];
  }
  if (figures.tokens === null) {
    return [
      {
        id: "context:none",
        label: "No token estimates",
        description: "the sidecar has no tokenizer",
        tooltip:
          "The sidecar counts tokens with the wordllama package it depends on; this installation lacks it. Reinstall mcp-sidecar (see docs/context.md).",
        icon: "warning",
      },
    ];
  }
  const entries: ContextEntry[] = [];
  const active = figures.active;
  if (active) {
    entries.push({
      id: "context:session",
      label: `Active tools (session ${active.session})`,
      description: activeSummary(active),
      tooltip: `The tools activated in this window's chat session; a model that lists them pays this on every turn. ${ESTIMATE}`,
      icon: "tools",
      children: active.tools.map((tool) => ({
        id: `context:tool:${tool.id}`,
        label: tool.id,
        description: typeof tool.tokens === "number" ? tokenCount(tool.tokens) : "not counted",
        tooltip: tool.description ?? "",
        icon: "symbol-method",
      })),
    });
  }
  entries.push({
    id: "context:modelTool",
    label: "mcp_tools",
    description: figures.modelTool === null ? "not counted yet" : tokenCount(figures.modelTool),
    tooltip: `The one tool a chat registers to find, activate and call the rest (its description lists your servers). ${ESTIMATE}`,
    icon: "search",
  });
  if (active && active.tokens !== null && figures.modelTool !== null) {
    entries.push({
      id: "context:together",
      label: "Through the sidecar",
      description: tokenCount(active.tokens + figures.modelTool),
      tooltip: `mcp_tools and the session's active tools together: what a model sees of your servers through the sidecar. ${ESTIMATE}`,
      icon: "symbol-operator",
    });
  }
  const all = allServers(rows);
  entries.push({
    id: "context:servers",
    label: "All servers, connected directly",
    description: `${tokenCount(all.total)} · ${all.counted} of ${all.enabled} servers counted`,
    tooltip: `Every enabled server's tools together: what a host connected to each of them directly lists on every turn. ${ESTIMATE}`,
    icon: "server-environment",
    children: [...rows]
      .sort((a, b) => (b.tokens ?? -1) - (a.tokens ?? -1) || a.name.localeCompare(b.name))
      .map(serverEntry),
  });
  return entries;
}
