// A tool call with progress: `mcp/callTool` with a `workDoneToken`, whose `$/progress`
// (begin, report, end: the server's progress notifications and a task's status) is shown in a
// cancellable notification; cancelling it cancels the call. The palette shows the notification
// at once; a chat call only once the server reports progress (most calls are quick).
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import * as P from "./protocol";
import { ProgressSteps, type WorkDone } from "./serverAsks";

/** A progress value as the extension rendered it, for tests. */
export interface RenderedProgress {
  id: string;
  value: WorkDone;
  /** What the notification was given (undefined: nothing to show for this value). */
  shown?: { message?: string; increment?: number };
}

const renderedEmitter = new vscode.EventEmitter<RenderedProgress>();
export const onDidRenderProgress = renderedEmitter.event;

type Report = { message?: string; increment?: number };

export function callWithProgress(
  client: SidecarClient,
  params: P.CallToolParams,
  options: { title: string; eager: boolean; token?: vscode.CancellationToken },
): Promise<P.CallToolResult> {
  const cancel = new vscode.CancellationTokenSource();
  const outer = options.token?.onCancellationRequested(() => cancel.cancel());
  const steps = new ProgressSteps();
  let progress: vscode.Progress<Report> | undefined;
  const queued: Report[] = [];
  let opened = false;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const open = () => {
    if (opened) return;
    opened = true;
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: options.title, cancellable: true },
      (shown, token) => {
        token.onCancellationRequested(() => cancel.cancel());
        progress = shown;
        for (const report of queued.splice(0)) shown.report(report);
        return finished;
      },
    );
  };
  if (options.eager) open();
  const onProgress = (value: WorkDone) => {
    const shown = steps.step(value);
    renderedEmitter.fire({ id: params.id, value, shown });
    if (!shown) return;
    if (value.kind === "report") open();
    if (progress) progress.report(shown);
    else if (opened || value.kind === "begin") queued.push(shown);
  };
  return client.requestWithProgress(P.callTool, params, cancel.token, onProgress).finally(() => {
    finish();
    outer?.dispose();
    cancel.dispose();
  });
}
