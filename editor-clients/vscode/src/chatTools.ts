// Language model tools for VS Code's chat (agent mode), with deferred loading: `mcp_tools`
// finds, activates and reads through `mcp/modelTool/invoke`; `mcp_call` calls an activated
// tool through `mcp/callTool`, which re-checks the live catalog. Their descriptions and schemas
// are declared in package.json (the e2e suite checks `mcp_tools` against the sidecar's own).
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { autoApprovedServers, callConfirmation, markdownLiteral, oneLine, skipsConfirmation } from "./consent";
import { describeError } from "./format";
import { callWithProgress } from "./progress";
import * as P from "./protocol";
import { stripControlsWithNote } from "./sanitize";

/** The setting that lets read-only tools of the listed servers run without asking. */
export const AUTO_APPROVE_SETTING = "autoApproveReadOnly";

export interface CallInput {
  id: string;
  arguments?: P.JsonObject;
}

function textResult(text: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}

/**
 * The text a model receives from a tool call: every block, marked when the tool failed,
 * sanitised, and a note when that removed what could hide words (so the model knows).
 */
export function callResultText(result: P.CallToolResult): string {
  const body = result.content
    .map((block) => (typeof block.text === "string" ? block.text : JSON.stringify(block)))
    .join("\n");
  const structured =
    result.content.length === 0 && result.structuredContent !== undefined
      ? JSON.stringify(result.structuredContent)
      : "";
  // The model reads this: no terminal sequence, hidden instruction or reordering survives.
  return stripControlsWithNote(`${result.isError ? `Tool ${result.id} reported an error:\n` : ""}${body}${structured}`);
}

/**
 * The servers whose read-only tools may skip the confirmation: the user's own value only. The
 * setting is application-scoped, so a workspace (a cloned repository) cannot set it; reading
 * the global value alone keeps that true whatever else VS Code merges in.
 */
export function autoApproveReadOnly(): Set<string> {
  return autoApprovedServers(
    vscode.workspace.getConfiguration("mcpSidecar").inspect<unknown>(AUTO_APPROVE_SETTING)?.globalValue,
  );
}

/** A Markdown message in which nothing runs: no command links, HTML or theme icons. */
function inertMarkdown(source: string): vscode.MarkdownString {
  const markdown = new vscode.MarkdownString(source, false);
  markdown.isTrusted = false;
  markdown.supportHtml = false;
  return markdown;
}

/**
 * What `mcp_call` shows before it runs: a confirmation unless the tool is read-only by the
 * server's annotation AND the person listed its server in `mcpSidecar.autoApproveReadOnly`.
 * VS Code renders the title, the message and the progress text as Markdown (a plain string
 * too), so the title names no server-provided string and the rest is escaped.
 */
export async function prepareCall(client: SidecarClient, input: CallInput): Promise<vscode.PreparedToolInvocation> {
  const id = typeof input.id === "string" ? input.id : "";
  const active = await client.request(P.activeTools, {}).catch(() => undefined);
  const tool = active?.tools.find((t) => t.id === id);
  const invocationMessage = `Calling ${markdownLiteral(oneLine(id))}`;
  if (skipsConfirmation(tool, autoApproveReadOnly())) return { invocationMessage };
  const confirmation = callConfirmation(id, tool, input.arguments ?? {});
  return {
    invocationMessage,
    confirmationMessages: { title: confirmation.title, message: inertMarkdown(confirmation.markdown) },
  };
}

export function registerChatTools(
  client: SidecarClient,
  onCalled?: (args: P.JsonObject, result: P.CallToolResult) => void,
): vscode.Disposable {
  if (!vscode.lm?.registerTool) return new vscode.Disposable(() => undefined);
  const discovery = vscode.lm.registerTool<P.JsonObject>("mcp_tools", {
    prepareInvocation(options) {
      const input = options.input ?? {};
      const what =
        typeof input.query === "string"
          ? `Searching MCP servers for "${markdownLiteral(oneLine(input.query))}"`
          : Array.isArray(input.activate)
            ? `Activating ${markdownLiteral(oneLine(input.activate.join(", ")))}`
            : input.read
              ? "Reading an MCP resource"
              : "Completing an MCP template value";
      return { invocationMessage: what };
    },
    async invoke(options, token) {
      try {
        // package.json fixes the description, so the server directory comes in the first answer.
        const result = await client.request(
          P.modelToolInvoke,
          { arguments: options.input ?? {}, includeDirectory: true },
          token,
        );
        return textResult(result.text);
      } catch (error) {
        return textResult(`mcp_tools failed: ${describeError(error).message}`);
      }
    },
  });
  const call = vscode.lm.registerTool<CallInput>("mcp_call", {
    prepareInvocation: (options) => prepareCall(client, options.input),
    async invoke(options, token) {
      try {
        // A long call's progress shows in a notification once the server reports some.
        const result = await callWithProgress(
          client,
          { id: options.input.id, arguments: options.input.arguments ?? {}, forModel: true },
          { title: `MCP: ${oneLine(String(options.input.id))}`, eager: false, token },
        );
        // A tool with an MCP App: the app opens beside the chat; the model reads the text as ever.
        onCalled?.(options.input.arguments ?? {}, result);
        return textResult(callResultText(result));
      } catch (error) {
        return textResult(`Calling ${options.input.id} failed: ${describeError(error).message}`);
      }
    },
  });
  return vscode.Disposable.from(discovery, call);
}
