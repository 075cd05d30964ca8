import assert from "node:assert/strict";
import { test } from "node:test";
import { renderCallResult, renderReadResult } from "../../render";

test("a single JSON block renders as the sidecar's pretty JSON", () => {
  const rendered = renderCallResult({
    id: "basic.get",
    server: "basic",
    tool: "get",
    isError: false,
    content: [{ type: "text", text: '{"a":1}' }],
    display: [{ index: 0, format: "json", text: '{\n  "a": 1\n}' }],
  });
  assert.deepEqual(rendered, { text: '{\n  "a": 1\n}\n', language: "json" });
});

test("errors, truncation and binary blocks are labelled", () => {
  const rendered = renderCallResult({
    id: "basic.fail",
    server: "basic",
    tool: "fail",
    isError: true,
    truncated: true,
    spill: { path: "/tmp/s.json", bytes: 9 },
    content: [
      { type: "text", text: "boom" },
      { type: "image", mimeType: "image/png", data: "AAAA" },
    ],
  });
  assert.equal(rendered.language, "plaintext");
  assert.equal(
    rendered.text,
    "// basic.fail · the tool reported an error\n// truncated: the whole result is in /tmp/s.json\n\nboom\n\n[image image/png, 4 characters of base64]\n",
  );
});

test("resource contents keep their text and pick JSON from the MIME type", () => {
  const json = renderReadResult({
    server: "basic",
    uri: "config://settings",
    untrusted: true,
    truncated: false,
    text: "",
    contents: [{ uri: "config://settings", mimeType: "application/json", text: '{"x":1}' }],
    display: [{ index: 0, format: "json", text: '{\n  "x": 1\n}' }],
  });
  assert.deepEqual(json, { text: '{\n  "x": 1\n}\n', language: "json" });
  const markdown = renderReadResult({
    server: "basic",
    uri: "notes://readme",
    untrusted: true,
    truncated: false,
    text: "",
    contents: [{ uri: "notes://readme", mimeType: "text/markdown", text: "# hi\n" }],
  });
  assert.deepEqual(markdown, { text: "# hi\n", language: "markdown" });
});
