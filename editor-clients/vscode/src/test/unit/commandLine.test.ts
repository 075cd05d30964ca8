import assert from "node:assert/strict";
import { test } from "node:test";
import { commandLine, parseServerTarget, quoteWord, splitWords, validServerName } from "../../commandLine";

test("words split like the sidecar's /mcp parser, nothing evaluated", () => {
  assert.deepEqual(splitWords(`node "/path with spaces/server.js" --verbose`), ["node", "/path with spaces/server.js", "--verbose"]);
  assert.deepEqual(splitWords(`'C:\\Program Files\\node.exe' a\\ b "say \\"hi\\"" "C:\\tools" $(x) 'a'"b"`), [
    "C:\\Program Files\\node.exe", "a b", 'say "hi"', "C:\\tools", "$(x)", "ab",
  ]);
  assert.deepEqual(splitWords(`''`), [""]);
  assert.equal(splitWords(`"open`), undefined);
  assert.equal(splitWords(`'open`), undefined);
});

test("quoted words read back unchanged", () => {
  for (const word of ["docs", "my server", "it's", "", "a\"b", "$(x)", "C:\\x y"]) {
    assert.deepEqual(splitWords(quoteWord(word)), [word]);
  }
  assert.equal(commandLine("get", "my server"), "get 'my server'");
  assert.equal(commandLine("tools", "basic"), "tools basic");
});

test("an add target is an http(s) URL or a command line", () => {
  assert.deepEqual(parseServerTarget(" https://mcp.example.com/mcp "), { ok: true, transport: "http", definition: { url: "https://mcp.example.com/mcp" } });
  assert.deepEqual(parseServerTarget(`uvx "my tool" --flag`), { ok: true, transport: "stdio", definition: { command: "uvx", args: ["my tool", "--flag"] } });
  assert.deepEqual(parseServerTarget("ftp://x"), { ok: false, error: "Only http:// and https:// URLs name HTTP servers." });
  assert.equal(parseServerTarget("").ok, false);
  assert.equal(parseServerTarget(`node "x`).ok, false);
});

test("server names follow the configuration's rule", () => {
  assert.equal(validServerName("docs-2_x"), undefined);
  assert.equal(validServerName("my docs"), "Use letters, digits, '_' and '-' only.");
  assert.equal(validServerName(""), "Enter a name.");
  assert.equal(validServerName("x".repeat(65)), "Use at most 64 characters.");
});
