// protocol.ts must mirror every method and notification of docs/protocol.md and
// sidecar/mcp_sidecar/protocol/methods.py: nothing missing, nothing extra.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { NOTIFICATIONS, REQUESTS } from "../../protocol";

const ROOT = path.resolve(__dirname, "../../../..");

function documented(): { requests: string[]; notifications: string[] } {
  const doc = readFileSync(path.join(ROOT, "docs/protocol.md"), "utf8");
  const requests: string[] = [];
  const notifications: string[] = [];
  let section = "";
  for (const line of doc.split("\n")) {
    if (line.startsWith("## ")) section = line;
    const match = /^### `(mcp\/[^`]+)`/.exec(line);
    if (match?.[1]) (section.startsWith("## Notifications") ? notifications : requests).push(match[1]);
  }
  return { requests, notifications };
}

function declared(): { requests: string[]; notifications: string[] } {
  const source = readFileSync(path.join(ROOT, "sidecar/mcp_sidecar/protocol/methods.py"), "utf8");
  const names = new Map<string, string>();
  for (const m of source.matchAll(/^([A-Z_]+) = "(mcp\/[^"]+)"/gm)) names.set(m[1] as string, m[2] as string);
  const tuple = (name: string) => {
    const body = new RegExp(`^${name}: tuple\\[str, \\.\\.\\.\\] = \\(([^)]*)\\)`, "m").exec(source)?.[1] ?? "";
    return body
      .split(/[\s,]+/)
      .filter(Boolean)
      .map((n) => names.get(n) ?? `?${n}`);
  };
  return { requests: tuple("REQUESTS"), notifications: tuple("NOTIFICATIONS") };
}

const sorted = (xs: readonly string[]) => [...xs].sort();

test("protocol.ts mirrors every request documented in docs/protocol.md", () => {
  assert.deepEqual(sorted(REQUESTS), sorted(documented().requests));
});

test("protocol.ts mirrors every notification documented in docs/protocol.md", () => {
  assert.deepEqual(sorted(NOTIFICATIONS), sorted(documented().notifications));
});

test("protocol.ts mirrors sidecar/mcp_sidecar/protocol/methods.py", () => {
  const { requests, notifications } = declared();
  assert.ok(requests.length > 20, "methods.py parsed");
  assert.deepEqual(sorted(REQUESTS), sorted(requests));
  assert.deepEqual(sorted(NOTIFICATIONS), sorted(notifications));
});

test("no method is mirrored twice", () => {
  assert.equal(new Set(REQUESTS).size, REQUESTS.length);
  assert.equal(new Set(NOTIFICATIONS).size, NOTIFICATIONS.length);
});
