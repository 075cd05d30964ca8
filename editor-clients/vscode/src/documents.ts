// Read-only virtual documents: `mcp-resource:` (a resource read through its server, re-read
// on demand), `mcp-sidecar-prompt:` (a pending prompt preview) and `mcp-output:` (command and tool
// results). Nothing here touches the local file system.
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { describeError } from "./format";
import * as P from "./protocol";
import { type Rendered, renderReadResult } from "./render";

export const RESOURCE_SCHEME = "mcp-sidecar-resource";
export const PROMPT_SCHEME = "mcp-sidecar-prompt";
export const OUTPUT_SCHEME = "mcp-sidecar-output";

function safeName(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "");
  return cleaned === "" ? "resource" : cleaned.slice(0, 80);
}

/** The document address of a resource: the server and URI travel in the query. */
export function resourceDocumentUri(server: string, uri: string): vscode.Uri {
  const tail =
    uri
      .replace(/[?#].*$/, "")
      .split(/[/:]+/)
      .filter(Boolean)
      .pop() ?? uri;
  return vscode.Uri.from({
    scheme: RESOURCE_SCHEME,
    path: `/${safeName(server)}/${safeName(tail)}`,
    query: new URLSearchParams({ server, uri }).toString(),
  });
}

export function parseResourceDocumentUri(docUri: vscode.Uri): { server: string; uri: string } | undefined {
  const query = new URLSearchParams(docUri.query);
  const server = query.get("server");
  const uri = query.get("uri");
  return server && uri ? { server, uri } : undefined;
}

class ChangingProvider implements vscode.Disposable {
  protected readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  dispose(): void {
    this.emitter.dispose();
  }
}

export class ResourceDocuments extends ChangingProvider implements vscode.TextDocumentContentProvider {
  private readonly primed = new Map<string, Rendered>();
  private readonly languages = new Map<string, string>();

  constructor(private readonly client: SidecarClient) {
    super();
  }

  async provideTextDocumentContent(docUri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const key = docUri.toString();
    const primed = this.primed.get(key);
    if (primed) {
      this.primed.delete(key);
      this.languages.set(key, primed.language);
      return primed.text;
    }
    const target = parseResourceDocumentUri(docUri);
    if (!target) return "This address names no MCP resource.\n";
    try {
      const rendered = renderReadResult(await this.client.request(P.read, target, token));
      this.languages.set(key, rendered.language);
      return rendered.text;
    } catch (error) {
      return `Could not read ${target.uri} from ${target.server}: ${describeError(error).message}\n`;
    }
  }

  /** Opens (or re-reads, when open) a resource; `prefetched` skips the read (template fills). */
  async open(server: string, uri: string, prefetched?: P.ReadResult): Promise<vscode.TextEditor> {
    const docUri = resourceDocumentUri(server, uri);
    const key = docUri.toString();
    if (prefetched) this.primed.set(key, renderReadResult(prefetched));
    const existing = vscode.workspace.textDocuments.find((d) => d.uri.toString() === key);
    if (existing) {
      const changed = new Promise<void>((resolve) => {
        const sub = vscode.workspace.onDidChangeTextDocument((e) => {
          if (e.document === existing) {
            sub.dispose();
            resolve();
          }
        });
        setTimeout(() => {
          sub.dispose();
          resolve();
        }, 10_000);
      });
      this.emitter.fire(docUri);
      await changed;
    }
    let doc = existing ?? (await vscode.workspace.openTextDocument(docUri));
    const language = this.languages.get(key);
    if (language && doc.languageId !== language) doc = await vscode.languages.setTextDocumentLanguage(doc, language);
    return vscode.window.showTextDocument(doc, { preview: false });
  }
}

export class PromptDocuments extends ChangingProvider implements vscode.TextDocumentContentProvider {
  readonly snapshots = new Map<string, P.PromptSnapshot>();

  provideTextDocumentContent(docUri: vscode.Uri): string {
    const snapshot = this.snapshots.get(docUri.query);
    if (!snapshot) return "This prompt preview has ended (used, discarded, or the sidecar restarted).\n";
    return [
      `Preview of ${snapshot.server} · ${snapshot.name} — nothing has been sent yet.`,
      "Use prompt (✓ in the editor toolbar) adds it to the chat input; Discard (✕) drops it.",
      "",
      snapshot.text,
      "",
    ].join("\n");
  }

  uriFor(snapshot: P.PromptSnapshot): vscode.Uri {
    return vscode.Uri.from({
      scheme: PROMPT_SCHEME,
      path: `/${safeName(snapshot.server)}/${safeName(snapshot.name)}.prompt`,
      query: snapshot.previewId,
    });
  }
}

export class OutputDocuments extends ChangingProvider implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private counter = 0;

  provideTextDocumentContent(docUri: vscode.Uri): string {
    return this.texts.get(docUri.toString()) ?? "";
  }

  /** Shows `text` in a new read-only tab titled `title`. */
  async show(title: string, text: string, language = "plaintext"): Promise<vscode.TextEditor> {
    this.counter += 1;
    const docUri = vscode.Uri.from({ scheme: OUTPUT_SCHEME, path: `/${safeName(title)}`, query: String(this.counter) });
    this.texts.set(docUri.toString(), text.endsWith("\n") ? text : `${text}\n`);
    let doc = await vscode.workspace.openTextDocument(docUri);
    if (doc.languageId !== language) doc = await vscode.languages.setTextDocumentLanguage(doc, language);
    return vscode.window.showTextDocument(doc, { preview: false });
  }

  forget(docUri: vscode.Uri): void {
    this.texts.delete(docUri.toString());
  }
}
