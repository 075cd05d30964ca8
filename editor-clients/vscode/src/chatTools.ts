// Language model tools for VS Code's chat (agent mode), with deferred loading: `mcp_tools`
// finds, activates and reads through `mcp/modelTool/invoke`; `mcp_call` calls an activated
// tool through `mcp/callTool`, which re-checks the live catalog. Their descriptions and schemas
// are declared in package.json (the e2e suite checks `mcp_tools` against the sidecar's own).
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { describeError } from "./format";
import * as P from "./protocol";

interface CallInput {
  id: string;
  arguments?: P.JsonObject;
}

function textResult(text: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}

/** The text a model receives from a tool call: every block, marked when the tool failed. */
export function callResultText(result: P.CallToolResult): string {
  const body = result.content
    .map((block) => (typeof block.text === "string" ? block.text : JSON.stringify(block)))
    .join("\n");
  const structured = result.content.length === 0 && result.structuredContent !== undefined ? JSON.stringify(result.structuredContent) : "";
  return `${result.isError ? `Tool ${result.id} reported an error:\n` : ""}${body}${structured}`;
}

export function registerChatTools(client: SidecarClient): vscode.Disposable {
  if (!vscode.lm?.registerTool) return new vscode.Disposable(() => undefined);
  const discovery = vscode.lm.registerTool<P.JsonObject>("mcp_tools", {
    prepareInvocation(options) {
      const input = options.input ?? {};
      const what =
        typeof input.query === "string"
          ? `Searching MCP servers for "${input.query}"`
          : Array.isArray(input.activate)
            ? `Activating ${input.activate.join(", ")}`
            : input.read
              ? "Reading an MCP resource"
              : "Completing an MCP template value";
      return { invocationMessage: what };
    },
    async invoke(options, token) {
      try {
        const result = await client.request(P.modelToolInvoke, { arguments: options.input ?? {} }, token);
        return textResult(result.text);
      } catch (error) {
        return textResult(`mcp_tools failed: ${describeError(error).message}`);
      }
    },
  });
  const call = vscode.lm.registerTool<CallInput>("mcp_call", {
    async prepareInvocation(options) {
      const { id } = options.input;
      const active = await client.request(P.activeTools, {}).catch(() => undefined);
      const tool = active?.tools.find((t) => t.id === id);
      const readOnly = tool?.annotations && (tool.annotations as { readOnlyHint?: boolean }).readOnlyHint === true;
      const args = JSON.stringify(options.input.arguments ?? {}, null, 2);
      return {
        invocationMessage: `Calling ${id}`,
        confirmationMessages: readOnly
          ? undefined
          : {
              title: `Call the MCP tool ${id}?`,
              message: new vscode.MarkdownString(`${tool?.description ?? ""}\n\n\`\`\`json\n${args}\n\`\`\``),
            },
      };
    },
    async invoke(options, token) {
      try {
        const result = await client.request(P.callTool, { id: options.input.id, arguments: options.input.arguments ?? {} }, token);
        return textResult(callResultText(result));
      } catch (error) {
        return textResult(`Calling ${options.input.id} failed: ${describeError(error).message}`);
      }
    },
  });
  return vscode.Disposable.from(discovery, call);
}

