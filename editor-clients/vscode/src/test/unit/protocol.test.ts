// protocol.ts must mirror every method and notification of docs/protocol.md and
// sidecar/mcp_sidecar/protocol/methods.py: nothing missing, nothing extra.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { CLIENT_REQUESTS, NOTIFICATIONS, REQUESTS } from "../../protocol";

const ROOT = path.resolve(__dirname, "../../../..");

interface Methods {
  requests: string[];
  notifications: string[];
  clientRequests: string[];
}

function documented(): Methods {
  const doc = readFileSync(path.join(ROOT, "docs/protocol.md"), "utf8");
  const found: Methods = { requests: [], notifications: [], clientRequests: [] };
  let section = "";
  for (const line of doc.split("\n")) {
    if (line.startsWith("## ")) section = line;
    const match = /^### `(mcp\/[^`]+)`/.exec(line);
    if (!match?.[1]) continue;
    // "## Notifications, sidecar to client" and "## Requests, sidecar to client" before the plain "## Requests".
    const list = section.startsWith("## Notifications")
      ? found.notifications
      : section.startsWith("## Requests, sidecar to client")
        ? found.clientRequests
        : found.requests;
    list.push(match[1]);
  }
  return found;
}

function declared(): Methods {
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
  return {
    requests: tuple("REQUESTS"),
    notifications: tuple("NOTIFICATIONS"),
    clientRequests: tuple("CLIENT_REQUESTS"),
  };
}

const sorted = (xs: readonly string[]) => [...xs].sort();

test("protocol.ts mirrors every request documented in docs/protocol.md", () => {
  assert.deepEqual(sorted(REQUESTS), sorted(documented().requests));
});

test("protocol.ts mirrors every notification documented in docs/protocol.md", () => {
  assert.deepEqual(sorted(NOTIFICATIONS), sorted(documented().notifications));
});

test("protocol.ts mirrors every request the sidecar sends, as documented in docs/protocol.md", () => {
  const { clientRequests } = documented();
  assert.ok(clientRequests.includes("mcp/elicit"), "the 'Requests, sidecar to client' section was read");
  assert.deepEqual(sorted(CLIENT_REQUESTS), sorted(clientRequests));
});

test("protocol.ts mirrors sidecar/mcp_sidecar/protocol/methods.py", () => {
  const { requests, notifications, clientRequests } = declared();
  assert.ok(requests.length > 20, "methods.py parsed");
  assert.ok(clientRequests.length > 0, "methods.py's CLIENT_REQUESTS parsed");
  assert.deepEqual(sorted(REQUESTS), sorted(requests));
  assert.deepEqual(sorted(NOTIFICATIONS), sorted(notifications));
  assert.deepEqual(sorted(CLIENT_REQUESTS), sorted(clientRequests));
});

test("no method is mirrored twice, and no name is both a request to the sidecar and one from it", () => {
  assert.equal(new Set(REQUESTS).size, REQUESTS.length);
  assert.equal(new Set(NOTIFICATIONS).size, NOTIFICATIONS.length);
  assert.equal(new Set(CLIENT_REQUESTS).size, CLIENT_REQUESTS.length);
  assert.deepEqual(
    CLIENT_REQUESTS.filter((m) => REQUESTS.includes(m)),
    [],
  );
});
