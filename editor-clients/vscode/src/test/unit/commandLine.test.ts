import assert from "node:assert/strict";
import { test } from "node:test";
import { commandLine, quoteWord, toolsLine } from "../../commandLine";

// That the sidecar's /mcp parser reads these back unchanged is checked against the real
// sidecar in the extension-host suite (the dry run of mcp/config/add splits them).
test("words are single-quoted unless plain", () => {
  assert.equal(quoteWord("docs"), "docs");
  assert.equal(quoteWord("https://x.example/mcp"), "https://x.example/mcp");
  assert.equal(quoteWord("a?b"), "'a?b'");
  assert.equal(quoteWord("my server"), "'my server'");
  assert.equal(quoteWord("it's"), `'it'"'"'s'`);
  assert.equal(quoteWord(""), "''");
  assert.equal(quoteWord("$(x)"), "'$(x)'");
  assert.equal(commandLine("get", "my server"), "get 'my server'");
  assert.equal(commandLine("tools", "basic"), "tools basic");
});

test("one tool's line names server and tool; a name that reads as an option follows --", () => {
  assert.equal(toolsLine("basic", "add"), "tools basic add");
  assert.equal(toolsLine("my server", "it's"), `tools 'my server' 'it'"'"'s'`);
  assert.equal(toolsLine("basic", "--weird"), "tools basic -- --weird");
  assert.equal(toolsLine("basic", "-x"), "tools basic -x");
});
