// Text renderings of results for read-only documents. Pure (no `vscode`), unit-tested.

import { languageFor } from "./format";
import type { CallToolResult, ContentBlock, ReadResult } from "./protocol";

export interface Rendered {
  text: string;
  language: string;
}

function blockText(block: ContentBlock): string {
  if (typeof block.text === "string") return block.text;
  if (block.type === "image" || block.type === "audio") {
    return `[${block.type} ${block.mimeType ?? ""}, ${block.data?.length ?? 0} characters of base64]`;
  }
  if (block.type === "resource" && block.resource) {
    return block.resource.text ?? `[resource ${block.resource.uri}]`;
  }
  if (block.type === "resource_link" && block.uri) return `[resource link ${block.uri}]`;
  return JSON.stringify(block, null, 2);
}

/** A tool result: every content block (pretty JSON where the sidecar offers it), then structured content. */
export function renderCallResult(result: CallToolResult): Rendered {
  const display = new Map<number, string>();
  let structured: string | undefined;
  for (const item of result.display ?? []) {
    if (item.index !== undefined) display.set(item.index, item.text);
    if (item.field === "structuredContent") structured = item.text;
  }
  const blocks = result.content.map((block, index) => display.get(index) ?? blockText(block));
  if (blocks.length === 1 && display.has(0) && !result.isError && !result.truncated) {
    return { text: `${blocks[0]}\n`, language: "json" };
  }
  const lines = [`// ${result.id}${result.isError ? " · the tool reported an error" : ""}`];
  if (result.truncated && result.spill) lines.push(`// truncated: the whole result is in ${result.spill.path}`);
  lines.push("", blocks.join("\n\n"));
  if (structured !== undefined && blocks.length === 0) lines.push("", structured);
  return { text: `${lines.join("\n")}\n`, language: "plaintext" };
}

/** A resource's contents: the text (pretty JSON when it is JSON), binary parts as placeholders. */
export function renderReadResult(result: ReadResult): Rendered {
  const display = new Map<number, string>();
  for (const item of result.display ?? []) if (item.index !== undefined) display.set(item.index, item.text);
  const parts = result.contents.map((content, index) => {
    const pretty = display.get(index);
    if (pretty !== undefined) return pretty;
    if (typeof content.text === "string") return content.text;
    return `[binary ${content.mimeType ?? "data"}, ${content.blob?.length ?? 0} characters of base64]`;
  });
  const text = parts.join("\n\n");
  const first = result.contents[0];
  const language =
    result.contents.length === 1 && first ? (display.has(0) ? "json" : languageFor(first.mimeType, text)) : "plaintext";
  const suffix =
    result.truncated && result.spill ? `\n\n[truncated: the whole response is in ${result.spill.path}]` : "";
  return { text: text + suffix + (text.endsWith("\n") ? "" : "\n"), language };
}
