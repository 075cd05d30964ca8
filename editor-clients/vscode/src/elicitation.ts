// A server asks the person something (MCP elicitation, `mcp/elicit`): a form through the
// schema form's quick inputs ("<server> asks", Submit / Decline / Escape to cancel), or a URL
// step through a modal that shows the message, the whole URL and its host and opens it only
// after consent. The browser steps a tool call waited for are followed to their completion
// (`mcp/elicitationComplete`), when the call may be retried: by the person, never by itself.
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { oneLine } from "./consent";
import { askForm } from "./formInput";
import * as P from "./protocol";
import { buildForm } from "./schemaForm";
import type { Turns } from "./serial";
import { BrowserSteps, urlConsent } from "./serverAsks";

type Ask = (message: string, options: vscode.MessageOptions, ...items: string[]) => Thenable<string | undefined>;

export class Elicitations implements vscode.Disposable {
  /** The URL consent modal; the extension-host tests replace it (that host refuses modals). */
  ask: Ask = (message, options, ...items) => vscode.window.showInformationMessage(message, options, ...items);
  /**
   * Opens a consented URL. The exact string is passed: VS Code's `openExternal` takes one as
   * well as a Uri, and a Uri would re-encode the address the person was shown.
   */
  openExternal: (url: string) => Thenable<boolean> = (url) => vscode.env.openExternal(url as unknown as vscode.Uri);
  /** The Retry notifications; tests replace it to press a button (they cannot click). */
  notify: (message: string, warning: boolean, ...items: string[]) => Thenable<string | undefined> = (
    message,
    warning,
    ...items
  ) =>
    warning
      ? vscode.window.showWarningMessage(message, ...items)
      : vscode.window.showInformationMessage(message, ...items);
  readonly steps = new BrowserSteps();
  private readonly disposables: vscode.Disposable[];

  constructor(
    client: SidecarClient,
    private readonly turns: Turns,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables = [
      client.onRequest(P.elicit, (params, token) => this.answer(params, token)),
      client.onElicitationComplete(({ server, elicitationId }) => this.completed(server, elicitationId)),
    ];
  }

  /** One question at a time, whichever server asks; a withdrawn question is never shown. */
  answer(params: P.ElicitParams, token: vscode.CancellationToken): Promise<P.ElicitResult> {
    return this.turns.run(async () => {
      if (token.isCancellationRequested) return { action: "cancel" };
      const result = params.mode === "url" ? await this.url(params, token) : await this.form(params, token);
      this.log.info(`${params.server} asked (${params.mode}): ${result.action}`);
      return token.isCancellationRequested ? { action: "cancel" } : result;
    });
  }

  private async form(params: P.ElicitFormParams, token: vscode.CancellationToken): Promise<P.ElicitResult> {
    const outcome = await askForm(buildForm(params.requestedSchema, params.order), {
      title: `${oneLine(params.server)} asks`,
      message: params.message,
      decline: true,
      submitDescription: `send these values to ${oneLine(params.server)}`,
      token,
    });
    if (outcome.action === "submit") return { action: "accept", content: outcome.content };
    return { action: outcome.action === "decline" ? "decline" : "cancel" };
  }

  /**
   * The consent modal. A modal cannot be closed from outside, so a question withdrawn while it
   * is open (`$/cancelRequest`) is answered `cancel` whatever the person then chooses, and
   * nothing is opened.
   */
  private async url(params: P.ElicitUrlParams, token: vscode.CancellationToken): Promise<P.ElicitResult> {
    const consent = urlConsent(params);
    const items = [...(consent.open ? [consent.open] : []), consent.copy, consent.decline];
    const choice = await this.ask(consent.message, { modal: true, detail: consent.detail }, ...items);
    if (token.isCancellationRequested) return { action: "cancel" };
    if (choice === consent.decline) return { action: "decline" };
    if (choice === consent.copy) {
      await vscode.env.clipboard.writeText(params.url);
      void vscode.window.showInformationMessage(
        `MCP: the address ${oneLine(params.server)} asked you to open is on the clipboard.`,
      );
    } else if (choice === undefined || choice !== consent.open || !(await this.openExternal(params.url))) {
      // Dismissed, or VS Code's own "open this website?" question was declined.
      return { action: "cancel" };
    }
    if (params.elicitationId) this.steps.expect(params.server, params.elicitationId);
    return { action: "accept" };
  }

  private completed(server: string, elicitationId: string): void {
    const { known, retry } = this.steps.complete(server, elicitationId);
    this.log.info(
      `${server}: the browser step ${elicitationId} is done${known ? "" : " (not one asked in this window)"}.`,
    );
    if (retry) void this.offer(`MCP: ${oneLine(server)}: the step in the browser is done.`, retry, ["Retry"], false);
  }

  /**
   * A palette call failed with `elicitation_required`: offers Retry and Cancel. When a step is
   * still pending, its completion offers Retry again. Nothing is retried without the person.
   */
  offerRetry(result: P.CallToolResult, retry: () => void): void {
    const steps = result.elicitations ?? [];
    const pending = steps.filter((s) => s.action === "accept" && !s.completed).map((s) => s.elicitationId);
    let used = false;
    const once = () => {
      if (used) return;
      used = true;
      retry();
    };
    const waiting = this.steps.afterSteps(result.server, pending, once);
    const declined = steps.some((s) => s.action !== "accept");
    const message = declined
      ? `MCP: ${oneLine(result.id)} needs a step in the browser that was not done. Call it again to be asked again.`
      : waiting
        ? `MCP: ${oneLine(result.id)} needs a step in the browser first. Retry once it is done.`
        : `MCP: ${oneLine(result.server)}: the step in the browser is done. Call ${oneLine(result.id)} again?`;
    void this.offer(message, once, ["Retry", "Cancel"], true);
  }

  private async offer(message: string, retry: () => void, items: string[], warning: boolean): Promise<void> {
    if ((await this.notify(message, warning, ...items)) === "Retry") retry();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
