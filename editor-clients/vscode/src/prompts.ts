// Prompt previews: arguments asked with completions, the sanitised snapshot shown read-only,
// and nothing sent anywhere until "Use prompt", which puts the snapshot into the chat input.
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import type { PromptDocuments } from "./documents";
import * as P from "./protocol";
import { inputWithCompletions, reportError } from "./ui";

export type UseTarget = "chat" | "clipboard";

export class PromptPreviews implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly client: SidecarClient,
    private readonly documents: PromptDocuments,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      // Closing a preview without choosing discards it: a pending preview must not linger.
      vscode.workspace.onDidCloseTextDocument((doc) => {
        if (doc.uri.scheme === "mcp-sidecar-prompt" && this.documents.snapshots.has(doc.uri.query)) {
          void this.discard(doc.uri.query, false);
        }
      }),
      client.onDidStart(() => this.documents.snapshots.clear()),
    );
  }

  /** Asks for the prompt's arguments (with completions) unless given; undefined when dismissed. */
  async askArguments(
    server: string,
    name: string,
    args: P.PromptArgument[],
  ): Promise<Record<string, string> | undefined> {
    const values: Record<string, string> = {};
    for (const argument of args) {
      const value = await inputWithCompletions(this.client, {
        title: `${server} · ${name}: ${argument.name}`,
        prompt: argument.description ?? `Value of ${argument.name}`,
        request: { server, prompt: name, arguments: { ...values } },
        name: argument.name,
        optional: !argument.required,
      });
      if (value === undefined) return undefined;
      if (value !== "") values[argument.name] = value;
    }
    return values;
  }

  /** Fetches the preview and opens it read-only; returns its snapshot. */
  async preview(server: string, name: string, args: Record<string, string>): Promise<P.PromptSnapshot> {
    const snapshot = await this.client.request(P.promptPreview, { server, name, arguments: args });
    return this.show(snapshot);
  }

  async show(snapshot: P.PromptSnapshot): Promise<P.PromptSnapshot> {
    this.documents.snapshots.set(snapshot.previewId, snapshot);
    const doc = await vscode.workspace.openTextDocument(this.documents.uriFor(snapshot));
    await vscode.window.showTextDocument(doc, { preview: false });
    void vscode.window
      .showInformationMessage(
        `Prompt ${snapshot.server} · ${snapshot.name} (${snapshot.messageCount} message${snapshot.messageCount === 1 ? "" : "s"}) is ready. Nothing has been sent.`,
        "Use prompt",
        "Discard",
      )
      .then((choice) => {
        if (!this.documents.snapshots.has(snapshot.previewId)) return;
        if (choice === "Use prompt") void this.use(snapshot.previewId).catch((e: unknown) => reportError(e, this.log));
        if (choice === "Discard") void this.discard(snapshot.previewId).catch((e: unknown) => reportError(e, this.log));
      });
    return snapshot;
  }

  /** Accepts the preview and puts its snapshot into the chat input (or the clipboard). */
  async use(previewId: string): Promise<{ snapshot: P.PromptUseResult; target: UseTarget }> {
    const snapshot = await this.client.request(P.promptUse, { previewId });
    this.documents.snapshots.delete(previewId);
    await this.closeEditors(previewId);
    let target: UseTarget = "chat";
    try {
      await vscode.commands.executeCommand("workbench.action.chat.open", {
        query: snapshot.text,
        isPartialQuery: true,
      });
    } catch {
      target = "clipboard";
      await vscode.env.clipboard.writeText(snapshot.text);
      void vscode.window.showInformationMessage(
        `No chat view is available: the prompt ${snapshot.server} · ${snapshot.name} was copied to the clipboard.`,
      );
    }
    this.log.info(`Used prompt ${snapshot.server}.${snapshot.name} (${previewId}) → ${target}`);
    return { snapshot, target };
  }

  async discard(previewId: string, close = true): Promise<P.PromptDiscardResult | undefined> {
    this.documents.snapshots.delete(previewId);
    if (close) await this.closeEditors(previewId);
    try {
      return await this.client.request(P.promptDiscard, { previewId });
    } catch (error) {
      this.log.info(`Discarding ${previewId}: ${String(error)}`);
      return undefined;
    }
  }

  /** The preview id of the active editor's prompt document, if any. */
  activePreviewId(): string | undefined {
    const uri = vscode.window.activeTextEditor?.document.uri;
    return uri?.scheme === "mcp-sidecar-prompt" ? uri.query : undefined;
  }

  private async closeEditors(previewId: string): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => {
        const input = tab.input;
        return (
          input instanceof vscode.TabInputText &&
          input.uri.scheme === "mcp-sidecar-prompt" &&
          input.uri.query === previewId
        );
      });
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
