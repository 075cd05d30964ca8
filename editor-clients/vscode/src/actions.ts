// What can be done with a tool, resource, template or prompt, from the search or the view:
// activate for chat, show the schema, call with arguments asked field by field (or as JSON),
// open a resource, fill a template with completions, preview a prompt.
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { destructiveHint, quickInputLiteral } from "./consent";
import type { OutputDocuments, ResourceDocuments } from "./documents";
import type { Elicitations } from "./elicitation";
import { askForm } from "./formInput";
import { callWithProgress } from "./progress";
import type { PromptPreviews } from "./prompts";
import * as P from "./protocol";
import { renderCallResult } from "./render";
import { argumentsSkeleton, parseArguments, validate } from "./schema";
import { buildForm, plainLine } from "./schemaForm";
import { inputWithCompletions } from "./ui";

/** The note a destructive tool's palette call shows before Submit. */
export const DESTRUCTIVE_FORM_NOTE =
  "Destructive: the server marks this tool destructive (destructiveHint): it may delete or overwrite data.";

export class Actions {
  constructor(
    private readonly client: SidecarClient,
    private readonly resources: ResourceDocuments,
    private readonly outputs: OutputDocuments,
    readonly prompts: PromptPreviews,
    private readonly elicitations?: Elicitations,
    /** Opens a called tool's MCP App beside its result. */
    private readonly onCalled?: (args: P.JsonObject, result: P.CallToolResult) => void,
  ) {}

  /** Activates one exact tool id in the default session (the one chat uses). */
  async activate(id: string): Promise<P.ActivateResult> {
    const result = await this.client.request(P.activate, { ids: [id] });
    const entry = result.results[0];
    if (entry?.status === "not loaded") {
      const nearby = entry.nearby?.length ? ` Did you mean ${entry.nearby.join(", ")}?` : "";
      void vscode.window.showWarningMessage(`MCP: ${id} was not loaded: ${entry.reason ?? "unknown reason"}${nearby}`);
    } else {
      void vscode.window.showInformationMessage(
        `MCP: ${id} · ${entry?.status ?? "loaded"} — chat can call it with mcp_call.`,
      );
    }
    return result;
  }

  /** The tool's definition, from the session when active, else from its server's catalog. */
  async definition(id: string): Promise<P.ToolDefinition | undefined> {
    const active = await this.client.request(P.activeTools, {});
    const found = active.tools.find((t) => t.id === id);
    if (found) return found;
    const server = id.slice(0, id.indexOf("."));
    const catalog = await this.client.request(P.serverTools, { server });
    return catalog.tools.find((t) => t.id === id);
  }

  async showSchema(id: string): Promise<vscode.TextEditor | undefined> {
    const tool = await this.definition(id);
    if (!tool) {
      void vscode.window.showWarningMessage(`MCP: ${id} is not in its server's catalog.`);
      return undefined;
    }
    const shown = {
      id: tool.id,
      description: tool.description,
      inputSchema: tool.inputSchema,
      outputSchema: tool.outputSchema,
      annotations: tool.annotations,
    };
    return this.outputs.show(`${tool.id}.schema.json`, JSON.stringify(shown, null, 2), "json");
  }

  /**
   * Asks the tool's arguments field by field from its input schema (or as JSON), unless `args`
   * are given, then calls it with `activate: true`, so the sidecar activates it into the
   * session first exactly as `mcp/activate` would, and shows the result. The call reports its
   * progress in a cancellable notification.
   */
  async call(id: string, args?: P.JsonObject): Promise<P.CallToolResult | undefined> {
    let argumentsValue = args;
    if (argumentsValue === undefined) {
      const tool = await this.definition(id).catch(() => undefined);
      if (!tool) {
        void vscode.window.showWarningMessage(`MCP: ${id} is not in its server's catalog.`);
        return undefined;
      }
      argumentsValue = await this.askArguments(tool);
      if (argumentsValue === undefined) return undefined;
    }
    let result: P.CallToolResult;
    try {
      result = await callWithProgress(
        this.client,
        { id, arguments: argumentsValue, activate: true },
        { title: `Calling ${id}…`, eager: true },
      );
    } catch (error) {
      const data = (error as { data?: P.Diagnostic } | null)?.data;
      if (data?.operation !== "activate") throw error;
      const nearby = data.nearby?.length ? ` Did you mean ${data.nearby.join(", ")}?` : "";
      void vscode.window.showWarningMessage(`MCP: ${id} could not be activated: ${data.message}${nearby}`);
      return undefined;
    }
    const rendered = renderCallResult(result);
    await this.outputs.show(`${id} result`, rendered.text, rendered.language);
    this.onCalled?.(argumentsValue, result);
    const called = argumentsValue;
    if (result.diagnostic?.code === "elicitation_required" && this.elicitations) {
      this.elicitations.offerRetry(result, () => void this.call(id, called));
    } else if (result.isError) {
      void vscode.window.showWarningMessage(`MCP: ${id} reported an error; see the result.`);
    }
    return result;
  }

  /** The arguments of a palette call: the schema form, or JSON typed whole ("Edit as JSON…"). */
  async askArguments(tool: P.ToolDefinition): Promise<P.JsonObject | undefined> {
    const outcome = await askForm(buildForm(tool.inputSchema), {
      title: `Call ${plainLine(tool.id)}${destructiveHint(tool) ? " (destructive)" : ""}`,
      json: true,
      notes: destructiveHint(tool) ? [DESTRUCTIVE_FORM_NOTE] : [],
      submitDescription: "call the tool with these arguments",
    });
    if (outcome.action === "submit") return outcome.content;
    if (outcome.action !== "json") return undefined;
    return this.askJson(tool, outcome.content);
  }

  /** JSON arguments validated against the tool's input schema as you type; required parameters start as placeholders. */
  async askJson(tool: P.ToolDefinition, values: P.JsonObject): Promise<P.JsonObject | undefined> {
    const start = { ...(JSON.parse(argumentsSkeleton(tool.inputSchema)) as P.JsonObject), ...values };
    const text = await vscode.window.showInputBox({
      title: `Call ${plainLine(tool.id)}`,
      prompt: quickInputLiteral(
        `JSON arguments.${destructiveHint(tool) ? " Destructive tool." : ""} ${tool.description ?? ""}`.trim(),
      ),
      value: JSON.stringify(start),
      ignoreFocusOut: true,
      validateInput: (value) => {
        const parsed = parseArguments(value);
        if (!parsed.ok) return parsed.error;
        const problems = validate(parsed.value, tool.inputSchema);
        return problems.length ? quickInputLiteral(problems.join("; ")) : undefined;
      },
    });
    if (text === undefined) return undefined;
    const parsed = parseArguments(text);
    return parsed.ok ? parsed.value : undefined;
  }

  openResource(server: string, uri: string): Promise<vscode.TextEditor> {
    return this.resources.open(server, uri);
  }

  /** Asks each template variable with completions, reads the filled URI and opens it. */
  async fillTemplate(server: string, template: string, variables: string[]): Promise<P.ReadResult | undefined> {
    const values: Record<string, string> = {};
    for (const name of variables) {
      const value = await inputWithCompletions(this.client, {
        title: `${server} · ${template}`,
        prompt: `Value of {${name}}`,
        request: { server, template, arguments: { ...values } },
        name,
        optional: false,
      });
      if (value === undefined) return undefined;
      values[name] = value;
    }
    const result = await this.client.request(P.read, { server, template, arguments: values });
    await this.resources.open(server, result.uri, result);
    return result;
  }

  async previewPrompt(server: string, name: string, args?: P.PromptArgument[]): Promise<P.PromptSnapshot | undefined> {
    let declared = args;
    if (!declared) {
      const found = await this.client.request(P.discover, { query: name, kind: "prompts", server, limit: 50 });
      declared =
        found.candidates.find((c): c is P.PromptCandidate => c.kind === "prompt" && c.name === name)?.arguments ?? [];
    }
    const values = await this.prompts.askArguments(server, name, declared);
    if (!values) return undefined;
    return this.prompts.preview(server, name, values);
  }
}
