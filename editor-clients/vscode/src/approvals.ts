// Approvals of project server definitions that changed on disk (a pull, a branch switch): the
// sidecar keeps each new or changed definition of the workspace's .mcp.json disabled until the
// person approves exactly what they were shown (the definition's hash). This asks with a modal
// that shows the server, new or changed, and the command line or URL, once per server and hash
// in this window; "MCP: Review Project Server Changes" asks again.
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { approvalKey, approvalQuestion } from "./consent";
import { describeError } from "./format";
import * as P from "./protocol";
import type { ServerStore } from "./state";

export const REVIEW_COMMAND_TITLE = "MCP: Review Project Server Changes";
export const APPROVE_BUTTON = "Approve and Start";

/** Shows the question; the real one is a modal warning (tests replace it). */
export type Ask = (message: string, options: vscode.MessageOptions, ...items: string[]) => Thenable<string | undefined>;

export interface ApprovalOutcome {
  server: string;
  definitionHash: string;
  /** approved: the sidecar enabled it; declined: the person kept it disabled; refused: the sidecar did not take the approval; stale: no longer pending when its turn came. */
  outcome: "approved" | "declined" | "refused" | "stale";
  reason?: string;
}

export class Approvals implements vscode.Disposable {
  ask: Ask = (message, options, ...items) => vscode.window.showWarningMessage(message, options, ...items);
  /** Every question asked in this window, in order, with what became of it (for tests and logs). */
  readonly history: (ApprovalOutcome & { message: string; detail: string })[] = [];
  /** (server, hash) pairs asked about in this window that are still pending. */
  private readonly asked = new Set<string>();
  /** One question at a time: modals never stack, and each sees the latest pending set. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Questions queued and not asked yet: a second request for one joins it. */
  private readonly waiting = new Set<string>();
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly client: SidecarClient,
    private readonly store: ServerStore,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.subscription = store.onDidChangePending((pending) => void this.offer(pending));
  }

  /** Asks about each pending approval not asked about in this window yet. */
  offer(pending: P.PendingApproval[]): Promise<ApprovalOutcome[]> {
    // A definition no longer pending (approved, or the file moved on) is asked about again if
    // it comes back: approving A, pulling B, then going back to A must ask about A again.
    const live = new Set(pending.map(approvalKey));
    for (const key of this.asked) if (!live.has(key)) this.asked.delete(key);
    const fresh = pending.filter((p) => !this.asked.has(approvalKey(p)));
    if (fresh.length === 0) return Promise.resolve([]);
    for (const p of fresh) this.asked.add(approvalKey(p));
    return this.enqueue(fresh);
  }

  /** Asks again about every pending approval (of `server` only, when given). */
  async review(server?: string): Promise<ApprovalOutcome[]> {
    await this.store.refresh();
    const pending = this.store.pendingApprovals.filter((p) => server === undefined || p.server === server);
    if (pending.length === 0) {
      void vscode.window.showInformationMessage(
        server
          ? `MCP: '${server}' is not waiting for an approval.`
          : "MCP: no project server is waiting for an approval.",
      );
      return [];
    }
    for (const p of pending) this.asked.add(approvalKey(p));
    return this.enqueue(pending);
  }

  private enqueue(all: P.PendingApproval[]): Promise<ApprovalOutcome[]> {
    const pending = all.filter((p) => !this.waiting.has(approvalKey(p)));
    for (const p of pending) this.waiting.add(approvalKey(p));
    const run = this.queue.then(() => this.askEach(pending));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async askEach(pending: P.PendingApproval[]): Promise<ApprovalOutcome[]> {
    const outcomes: ApprovalOutcome[] = [];
    for (const p of pending) {
      this.waiting.delete(approvalKey(p));
      // Approved meanwhile, or changed again (a newer question is queued): nothing to ask.
      const current = this.store.pending(p.server);
      if (current?.definitionHash !== p.definitionHash) {
        outcomes.push({ server: p.server, definitionHash: p.definitionHash, outcome: "stale" });
        continue;
      }
      outcomes.push(await this.askOne(p));
    }
    return outcomes;
  }

  private async askOne(p: P.PendingApproval): Promise<ApprovalOutcome> {
    const { message, detail } = approvalQuestion(p, REVIEW_COMMAND_TITLE);
    const outcome = await this.decide(p, message, detail);
    this.history.push({ ...outcome, message, detail });
    return outcome;
  }

  private async decide(p: P.PendingApproval, message: string, detail: string): Promise<ApprovalOutcome> {
    let choice: string | undefined;
    try {
      choice = await this.ask(message, { modal: true, detail }, APPROVE_BUTTON);
    } catch (error) {
      this.log.warn(`Could not ask about '${p.server}': ${describeError(error).message}`);
    }
    const base = { server: p.server, definitionHash: p.definitionHash };
    if (choice !== APPROVE_BUTTON) {
      this.log.info(`Kept the project server '${p.server}' disabled (${p.change}: ${p.summary}).`);
      return { ...base, outcome: "declined" };
    }
    let result: P.ApproveResult;
    try {
      result = await this.client.request(P.workspaceApprove, { approvals: [base] });
    } catch (error) {
      const reason = describeError(error).message;
      void vscode.window.showErrorMessage(`MCP: approving '${p.server}' failed: ${reason}`);
      return { ...base, outcome: "refused", reason };
    }
    await this.store.refresh();
    if (!result.approved.includes(p.server)) {
      const reason = result.notApproved.find((n) => n.server === p.server)?.reason ?? "not approved";
      this.log.warn(`The sidecar did not approve '${p.server}': ${reason}`);
      void vscode.window.showWarningMessage(`MCP: '${p.server}' was not approved: ${reason.replace(/\.$/, "")}.`);
      return { ...base, outcome: "refused", reason };
    }
    this.log.info(`Approved the project server '${p.server}': ${p.summary}`);
    try {
      await this.client.request(P.serverReconnect, { server: p.server });
    } catch (error) {
      void vscode.window.showErrorMessage(
        `MCP: '${p.server}' was approved but did not start: ${describeError(error).message}`,
      );
    }
    await this.store.refresh();
    return { ...base, outcome: "approved" };
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
