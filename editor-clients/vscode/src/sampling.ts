// A server asks for a language model's answer (MCP sampling, `mcp/sample`), answered through
// VS Code's language model API with the person in the loop: the model is the configured one
// (`mcpSidecar.sampling.model`) or picked, the request is shown for approval before any model
// sees it, and the answer before the server does. Declining either, or a failure, answers the
// sidecar a JSON-RPC error (the sidecar tells the server "the user declined").
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageserver-protocol";
import type { SidecarClient } from "./client";
import type { OutputDocuments } from "./documents";
import * as P from "./protocol";
import type { Turns } from "./serial";
import { chatTurns, modelSelector, type SamplingQuestion, samplingAnswer, samplingRequest } from "./serverAsks";
import { pickOne } from "./ui";

export const SAMPLING_ENABLED_SETTING = "sampling.enabled";
export const SAMPLING_MODEL_SETTING = "sampling.model";

/** JSON-RPC error codes of a sampling answer: the person said no, or the editor could not answer. */
export const DECLINED = -1;
export const NOT_ANSWERED = -32603;

type Ask = (message: string, options: vscode.MessageOptions, ...items: string[]) => Thenable<string | undefined>;

/** Whether this VS Code has the language model API sampling needs. */
export function languageModelsAvailable(): boolean {
  return typeof vscode.lm?.selectChatModels === "function";
}

export function samplingEnabled(): boolean {
  return vscode.workspace.getConfiguration("mcpSidecar").get<boolean>(SAMPLING_ENABLED_SETTING, true);
}

function declined(): ResponseError<void> {
  return new ResponseError(DECLINED, "The user declined the request");
}

function notAnswered(why: string): ResponseError<void> {
  return new ResponseError(NOT_ANSWERED, `The editor could not answer: ${why}`);
}

function modelLabel(model: vscode.LanguageModelChat): string {
  return `${model.name} (${model.vendor} · ${model.family})`;
}

export class Sampling implements vscode.Disposable {
  /** The approval modals; the extension-host tests replace it (that host refuses modals). */
  ask: Ask = (message, options, ...items) => vscode.window.showInformationMessage(message, options, ...items);
  /** The model picked last in this window, offered first next time. */
  private lastModel: string | undefined;
  private readonly registration: vscode.Disposable;

  constructor(
    client: SidecarClient,
    private readonly turns: Turns,
    private readonly outputs: OutputDocuments,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.registration = client.onRequest(P.sample, (params, token) => this.answer(params, token));
  }

  answer(params: P.SampleParams, token: vscode.CancellationToken): Promise<P.SampleResult> {
    return this.turns.run(async () => {
      try {
        return await this.run(params, token);
      } catch (error) {
        if (error instanceof ResponseError) {
          this.log.info(`${params.server} asked for a model's answer: ${error.message}`);
          throw error;
        }
        const why = error instanceof Error ? error.message : String(error);
        this.log.warn(`${params.server} asked for a model's answer; it failed: ${why}`);
        throw notAnswered(why);
      }
    });
  }

  private async run(params: P.SampleParams, token: vscode.CancellationToken): Promise<P.SampleResult> {
    if (!languageModelsAvailable() || !samplingEnabled()) throw notAnswered("sampling is turned off");
    if (token.isCancellationRequested) throw declined();
    const model = await this.pickModel();
    const label = modelLabel(model);
    if (!(await this.approve(samplingRequest(params, label), `Send to ${model.name}`, "request", token))) {
      throw declined();
    }
    const text = await this.send(model, params, token);
    if (
      !(await this.approve(samplingAnswer(params.server, label, text), `Send to ${params.server}`, "answer", token))
    ) {
      throw declined();
    }
    return { role: "assistant", content: { type: "text", text }, model: model.id, stopReason: "endTurn" };
  }

  /** The configured model (`mcpSidecar.sampling.model`), the only one, or the person's pick. */
  async pickModel(): Promise<vscode.LanguageModelChat> {
    const configured = modelSelector(
      vscode.workspace.getConfiguration("mcpSidecar").get<unknown>(SAMPLING_MODEL_SETTING),
    );
    const models = await vscode.lm.selectChatModels(configured ?? {});
    const first = models[0];
    if (!first) {
      throw notAnswered(
        configured ? "no language model matches mcpSidecar.sampling.model" : "VS Code offers no language model",
      );
    }
    if (models.length === 1 || configured) return first;
    const items = models.map((model) => ({
      label: model.name,
      description: `${model.vendor} · ${model.family}${model.id === this.lastModel ? " · last used" : ""}`,
      model,
    }));
    const last = items.findIndex((i) => i.model.id === this.lastModel);
    if (last > 0) items.unshift(...items.splice(last, 1));
    const picked = await pickOne(items, {
      title: "A server asks for a language model's answer",
      placeHolder: "The model to ask (the request is shown before anything is sent)",
    });
    if (!picked) throw declined();
    this.lastModel = picked.model.id;
    return picked.model;
  }

  /**
   * The modal. A text longer than the dialog offers only "Show Full …" (which opens it whole,
   * read-only) until it was opened: nothing is approved unread.
   */
  private async approve(
    question: SamplingQuestion,
    send: string,
    what: "request" | "answer",
    token: vscode.CancellationToken,
  ): Promise<boolean> {
    const full = what === "request" ? "Show Full Request" : "Show Full Answer";
    let read = !question.truncated;
    for (;;) {
      const detail =
        read && question.truncated
          ? `${question.detail.split("\n\n").slice(0, -1).join("\n\n")}\n\nYou opened it whole; choose Send to go on.`
          : question.detail;
      const items = read ? (question.truncated ? [send, full] : [send]) : [full];
      const choice = await this.ask(question.message, { modal: true, detail }, ...items);
      if (token.isCancellationRequested) return false;
      if (choice !== full) return read && choice === send;
      await this.outputs.show(`sampling ${what}`, question.full, "plaintext");
      read = true;
    }
  }

  private async send(
    model: vscode.LanguageModelChat,
    params: P.SampleParams,
    token: vscode.CancellationToken,
  ): Promise<string> {
    const messages = chatTurns(params).map((turn) =>
      turn.role === "assistant"
        ? vscode.LanguageModelChatMessage.Assistant(turn.text)
        : vscode.LanguageModelChatMessage.User(turn.text),
    );
    const modelOptions: Record<string, unknown> = { maxTokens: params.maxTokens };
    if (typeof params.temperature === "number") modelOptions.temperature = params.temperature;
    if (Array.isArray(params.stopSequences)) modelOptions.stopSequences = params.stopSequences;
    return vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Asking ${model.name} for ${params.server}…`,
        cancellable: true,
      },
      async (_progress, cancel) => {
        const both = new vscode.CancellationTokenSource();
        const subscriptions = [token, cancel].map((t) => t.onCancellationRequested(() => both.cancel()));
        try {
          const response = await model.sendRequest(
            messages,
            { justification: `The MCP server ${params.server} asks for an answer (sampling).`, modelOptions },
            both.token,
          );
          let text = "";
          for await (const chunk of response.text) text += chunk;
          if (both.token.isCancellationRequested) throw declined();
          return text;
        } finally {
          for (const s of subscriptions) s.dispose();
          both.dispose();
        }
      },
    );
  }

  dispose(): void {
    this.registration.dispose();
  }
}
