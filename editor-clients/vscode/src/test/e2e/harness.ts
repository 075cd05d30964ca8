// What the extension-host suites share: the list of cases, the extension's API once the first
// case activated it, and waits that poll a condition with a deadline (nothing sleeps a fixed time).
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { McpSidecarApi } from "../../extension";
import type * as P from "../../protocol";

export const EXTENSION_ID = "mcp-sidecar.mcp-sidecar";
export type Case = { name: string; body: () => Promise<void> };
export const cases: Case[] = [];
export const test = (name: string, body: () => Promise<void>) => cases.push({ name, body });

let activated: McpSidecarApi | undefined;

export function setApi(api: McpSidecarApi): void {
  activated = api;
}

/** The extension's API (the first case activates the extension). */
export function ext(): McpSidecarApi {
  assert.ok(activated, "the extension was activated by the first case");
  return activated;
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function rejectsWithCode(promise: Promise<unknown>, code: string): Promise<P.Diagnostic> {
  try {
    await promise;
  } catch (error) {
    const data = (error as { data?: P.Diagnostic }).data;
    assert.equal(data?.code, code, `expected ${code}, got ${JSON.stringify(data ?? String(error))}`);
    return data;
  }
  throw new Error(`expected the request to fail with ${code}`);
}

export function activeText(scheme: string): string {
  const editor = vscode.window.activeTextEditor;
  assert.equal(editor?.document.uri.scheme, scheme, `active editor: ${editor?.document.uri.toString()}`);
  return editor.document.getText();
}
