// A language model provider for the tests only (VS Code 1.104+'s stable
// `vscode.lm.registerLanguageModelChatProvider`; @types/vscode 1.95 predates it, so its shapes
// are declared here). Its one model, "Test Echo" (vendor mcp-sidecar-test, family echo),
// answers "Echo: <the last user message>" and records every request it got, for the suite to
// check what the extension sent. Installed into the test VS Code only, never shipped.
import * as vscode from "vscode";

interface ChatInformation {
  id: string;
  name: string;
  family: string;
  version: string;
  maxInputTokens: number;
  maxOutputTokens: number;
  capabilities: Record<string, never>;
}

interface RequestMessage {
  role: number;
  content: unknown[];
}

interface ChatProvider {
  provideLanguageModelChatInformation(options: unknown, token: vscode.CancellationToken): ChatInformation[];
  provideLanguageModelChatResponse(
    model: ChatInformation,
    messages: readonly RequestMessage[],
    options: { modelOptions?: Record<string, unknown> },
    progress: vscode.Progress<vscode.LanguageModelTextPart>,
    token: vscode.CancellationToken,
  ): Promise<void>;
  provideTokenCount(model: ChatInformation, text: unknown, token: vscode.CancellationToken): Promise<number>;
}

export interface SeenRequest {
  messages: { role: "user" | "assistant"; text: string }[];
  modelOptions: Record<string, unknown>;
}

const MODEL: ChatInformation = {
  id: "mcp-sidecar-test-echo",
  name: "Test Echo",
  family: "echo",
  version: "1",
  maxInputTokens: 100_000,
  maxOutputTokens: 4_000,
  capabilities: {},
};

function textOf(message: RequestMessage): string {
  return message.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : "")).join("");
}

export function activate(context: vscode.ExtensionContext): { requests: SeenRequest[] } {
  const requests: SeenRequest[] = [];
  const provider: ChatProvider = {
    provideLanguageModelChatInformation: () => [MODEL],
    async provideLanguageModelChatResponse(_model, messages, options, progress) {
      const seen = messages.map((m) => ({
        role: m.role === vscode.LanguageModelChatMessageRole.Assistant ? ("assistant" as const) : ("user" as const),
        text: textOf(m),
      }));
      requests.push({ messages: seen, modelOptions: options.modelOptions ?? {} });
      const last = [...seen].reverse().find((m) => m.role === "user")?.text ?? "";
      progress.report(new vscode.LanguageModelTextPart(`Echo: ${last}`));
    },
    provideTokenCount: async (_model, text) => (typeof text === "string" ? text.length : 1),
  };
  const lm = vscode.lm as unknown as {
    registerLanguageModelChatProvider?: (vendor: string, provider: ChatProvider) => vscode.Disposable;
  };
  if (lm.registerLanguageModelChatProvider) {
    context.subscriptions.push(lm.registerLanguageModelChatProvider("mcp-sidecar-test", provider));
  }
  return { requests };
}
