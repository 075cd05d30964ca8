// What mcp_call asks before a call, and how a server's strings reach that question: a
// read-only hint waives nothing unless the person listed the server, and every
// server-provided string is shown as plain text (checked by rendering the Markdown with a
// CommonMark renderer that has HTML and linkify switched on, the most permissive setting).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  approvalKey,
  approvalQuestion,
  autoApprovedServers,
  CALL_CONFIRMATION_TITLE,
  callConfirmation,
  codeBlock,
  DESTRUCTIVE_CALL_TITLE,
  destructiveHint,
  iconLiteral,
  jsonBlock,
  markdownLiteral,
  oneLine,
  quickInputLiteral,
  skipsConfirmation,
  visibleText,
} from "../../consent";
import type { JsonObject, ToolDefinition } from "../../protocol";

// markdown-it comes with @vscode/vsce (a devDependency); it has no type declarations here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const MarkdownIt = require("markdown-it") as new (options: object) => { render(source: string): string };
const permissive = new MarkdownIt({ html: true, linkify: true });

function tool(overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    id: "notes.lookup",
    modelName: "mcp__notes__lookup",
    server: "notes",
    name: "lookup",
    description: "Look a note up.",
    inputSchema: { type: "object" },
    annotations: { readOnlyHint: true },
    ...overrides,
  };
}

const HOSTILE =
  "Reads notes. [Click here](command:workbench.action.terminal.new) or [docs](https://evil.example/x)\n" +
  '![tracker](https://evil.example/pixel.png) <img src=x onerror=alert(1)> <a href="https://evil.example">a</a>\n' +
  '```json\n{"path": "/etc/passwd"}\n```\n' +
  "    indented code\n" +
  "# Heading *bold* _em_ `code` www.evil.example mail@evil.example https://evil.example &amp; $(zap)\n" +
  "> quote\n- item\n1. item\n| a | b |\n|---|---|\n\u202eevil\u200b";

function textOf(html: string): string {
  return html
    .replace(/<br>\n?/g, "\n")
    .replace(/<\/?p>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\u00a0/g, " ")
    .trim();
}

test("a read-only hint alone never skips the confirmation", () => {
  assert.equal(skipsConfirmation(tool(), autoApprovedServers(undefined)), false);
  assert.equal(skipsConfirmation(tool(), autoApprovedServers([])), false);
  assert.equal(skipsConfirmation(tool(), autoApprovedServers(["other"])), false);
});

test("a listed server's read-only tools skip it; its other tools and unknown tools still ask", () => {
  const listed = autoApprovedServers(["notes"]);
  assert.equal(skipsConfirmation(tool(), listed), true);
  assert.equal(skipsConfirmation(tool({ annotations: { readOnlyHint: false } }), listed), false);
  assert.equal(skipsConfirmation(tool({ annotations: { readOnlyHint: "true" } }), listed), false);
  assert.equal(skipsConfirmation(tool({ annotations: null }), listed), false);
  assert.equal(skipsConfirmation(undefined, listed), false);
});

test("the setting value keeps only server names", () => {
  assert.deepEqual([...autoApprovedServers(["a", 3, "", null, "b", "a"])], ["a", "b"]);
  assert.deepEqual([...autoApprovedServers("notes")], []);
  assert.deepEqual([...autoApprovedServers({ notes: true })], []);
});

test("markdownLiteral escapes every ASCII punctuation character and keeps indentation without a code block", () => {
  assert.equal(markdownLiteral("[a](b) *c*"), "\\[a\\]\\(b\\) \\*c\\*");
  assert.equal(markdownLiteral("one\n    two\n\nthree"), "one  \n&nbsp;&nbsp;&nbsp;&nbsp;two  \n  \nthree");
  assert.equal(markdownLiteral("tab\there\r\nnext\u200b\u202e"), "tab\there  \nnext");
});

test("a hostile description renders as exactly its text: no link, image, HTML, code, heading, list or table", () => {
  const html = permissive.render(markdownLiteral(HOSTILE));
  for (const tag of ["<a", "<img", "<code", "<pre", "<h1", "<blockquote", "<ul", "<ol", "<table", "<em", "<strong"]) {
    assert.ok(!html.includes(tag), `${tag} in ${html}`);
  }
  assert.equal(textOf(html), HOSTILE.replace(/[\u202e\u200b]/g, ""));
});

test("a code block cannot be closed by the code inside it", () => {
  assert.equal(codeBlock('{"a": 1}', "json"), '```json\n{"a": 1}\n```');
  const sneaky = "x\n````\n# not a heading\n```";
  const block = codeBlock(sneaky, "json");
  assert.ok(block.startsWith("`````json\n") && block.endsWith("\n`````"), block);
  const html = permissive.render(block);
  assert.equal((html.match(/<pre>/g) ?? []).length, 1, html);
  assert.ok(!html.includes("<h1"), html);
});

test("the confirmation names the tool and shows the description and arguments as plain text", () => {
  const confirmation = callConfirmation(
    "notes.lookup",
    tool({
      title: "Look *up*",
      description: "See [docs](https://evil.example) ![x](https://evil.example/p.png)\n```\nfake\n```",
    }),
    { path: "a`b" },
  );
  assert.equal(confirmation.title, CALL_CONFIRMATION_TITLE);
  assert.equal(confirmation.title, "Call an MCP tool?");
  assert.equal(
    confirmation.markdown,
    [
      "**notes\\.lookup**: the tool lookup \\(Look \\*up\\*\\) of the MCP server notes.",
      "Its description, as the server gives it:",
      "See \\[docs\\]\\(https\\:\\/\\/evil\\.example\\) \\!\\[x\\]\\(https\\:\\/\\/evil\\.example\\/p\\.png\\)  \n\\`\\`\\`  \nfake  \n\\`\\`\\`",
      "The server marks this tool read-only; that is its own claim. To call the read-only tools of this server without being asked, add its name to the setting `mcpSidecar.autoApproveReadOnly`.",
      "Arguments:",
      '```json\n{\n  "path": "a`b"\n}\n```',
    ].join("\n\n"),
  );
  const html = permissive.render(confirmation.markdown);
  assert.ok(!/<a |<img/.test(html), html);
  assert.equal((html.match(/<pre>/g) ?? []).length, 1, "only the arguments are a code block");
});

test("a destructive tool is marked in the title and first in the message; an unstated hint marks nothing", () => {
  const erase = tool({ name: "erase", id: "notes.erase", annotations: { readOnlyHint: false, destructiveHint: true } });
  assert.equal(destructiveHint(erase), true);
  const confirmation = callConfirmation("notes.erase", erase, {});
  assert.equal(confirmation.title, DESTRUCTIVE_CALL_TITLE);
  assert.equal(confirmation.title, "Call a destructive MCP tool?");
  const [first, second] = confirmation.markdown.split("\n\n");
  assert.equal(first, "**notes\\.erase**: the tool erase of the MCP server notes.");
  assert.equal(
    second,
    "⚠ **Destructive**: the server marks this tool destructive (`destructiveHint`): it may delete or overwrite data. Check the arguments.",
  );
  const unstated: (JsonObject | null)[] = [null, {}, { readOnlyHint: false }, { destructiveHint: "yes" }];
  for (const annotations of unstated) {
    const plain = tool({ annotations });
    assert.equal(destructiveHint(plain), false, JSON.stringify(annotations));
    assert.equal(callConfirmation("notes.lookup", plain, {}).title, CALL_CONFIRMATION_TITLE);
  }
  assert.equal(destructiveHint(undefined), false);
});

test("quick input text: icons and links are shown as written", () => {
  assert.equal(
    iconLiteral("Use $(zap) now, $5 (five) and $(not an icon)"),
    "Use \\$(zap) now, $5 (five) and $(not an icon)",
  );
  assert.equal(
    quickInputLiteral("See [docs](https://evil.example) and [run](command:x)\n$(alert)\u202e"),
    "See [docs] (https://evil.example) and [run] (command:x) \\$(alert)",
  );
});

test("a tool that is not active is named inertly and still shows the arguments", () => {
  const confirmation = callConfirmation("x.[y](https://e.example)", undefined, {});
  assert.equal(
    confirmation.markdown,
    '**\\"x\\.\\[y\\]\\(https\\:\\/\\/e\\.example\\)\\"** is not an active tool: the sidecar refuses the call unless it was activated with `mcp_tools`.\n\nArguments:\n\n```json\n{}\n```',
  );
});

test("oneLine folds whitespace and drops invisible characters", () => {
  assert.equal(oneLine(" a\n\tb \u200bc\u202e "), "a b c");
});

test("an approval question shows the server, new or changed, and the exact command line", () => {
  const changed = approvalQuestion(
    {
      server: "proj",
      change: "changed",
      definitionHash: "h1",
      transport: "stdio",
      summary: "python evil.py --x (cwd: /w; env: TOKEN)",
    },
    "MCP: Review Project Server Changes",
  );
  assert.deepEqual(changed, {
    message: "The project's .mcp.json changed the MCP server 'proj'. Start it with the new definition?",
    detail:
      "It would run:\npython evil.py --x (cwd: /w; env: TOKEN)\n\n" +
      "Approve only if you expected this change (for example from a pull you made). " +
      "Cancel keeps 'proj' disabled; run \"MCP: Review Project Server Changes\" to be asked again.",
  });
  const added = approvalQuestion(
    {
      server: "web",
      change: "new",
      definitionHash: "h2",
      transport: "http",
      summary: "https://mcp.example/mcp (headers: Authorization)\n\u202e",
    },
    "R",
  );
  assert.equal(added.message, "The project's .mcp.json defines a new MCP server 'web'. Start it?");
  assert.ok(
    added.detail.startsWith("It would connect to:\nhttps://mcp.example/mcp (headers: Authorization)\n\n"),
    added.detail,
  );
});

test("a project profile's approval question names the profile and what a window choosing it would use", () => {
  const question = approvalQuestion(
    {
      server: "profile:review",
      change: "new",
      definitionHash: "h3",
      transport: "profile",
      summary: "profile: searches github, linear; activates github.list_pull_requests",
    },
    "R",
  );
  assert.deepEqual(question, {
    message: "The project's .mcp.json defines a new profile 'review'. Allow it?",
    detail:
      "A window choosing it would use:\nprofile: searches github, linear; activates github.list_pull_requests\n\n" +
      'Cancel keeps the profile unusable; run "R" to be asked again.',
  });
});

test("an approval question names the changed fields and shows the whole summary, spaces and escapes as sent", () => {
  const summary =
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${BASE} as a .mcp.json summary carries it
    "node server.js '--flag  with  spaces' (env: NODE_OPTIONS=--require ./x.js, API=!pass show api, URL=${BASE}, TOKEN=<literal hidden>; " +
    "changed: args, env.NODE_OPTIONS, env.OLD (removed)) \\u202e" +
    " --pad".repeat(200);
  const q = approvalQuestion(
    {
      server: "proj",
      change: "changed",
      definitionHash: "h",
      transport: "stdio",
      summary,
      changedFields: ["args", "env.NODE_OPTIONS", "env.OLD (removed)"],
    },
    "R",
  );
  assert.equal(q.message, "The project's .mcp.json changed the MCP server 'proj'. Start it with the new definition?");
  assert.equal(q.message.includes("node"), false, "the message stays short; the summary is in the detail");
  assert.ok(
    q.detail.startsWith(
      `It would run:\n${summary}\n\nChanged since you approved it: args, env.NODE_OPTIONS, env.OLD (removed)\n\n`,
    ),
    q.detail.slice(0, 300),
  );
  // A new definition (also every one at the first sight of a trusted workspace) has no changed fields.
  const first = approvalQuestion(
    {
      server: "proj",
      change: "new",
      definitionHash: "h",
      transport: "stdio",
      summary: "python s.py",
      changedFields: [],
    },
    "R",
  );
  assert.equal(first.message, "The project's .mcp.json defines a new MCP server 'proj'. Start it?");
  assert.ok(first.detail.startsWith("It would run:\npython s.py\n\nApprove only"), first.detail);
  // Older sidecars send no changedFields.
  const old = approvalQuestion(
    { server: "p", change: "changed", definitionHash: "h", transport: "http", summary: "https://x/mcp" },
    "R",
  );
  assert.ok(old.detail.startsWith("It would connect to:\nhttps://x/mcp\n\nApprove only"), old.detail);
});

test("an approval is keyed by server and definition hash", () => {
  assert.equal(approvalKey({ server: "proj", definitionHash: "abc" }), "proj\nabc");
  assert.notEqual(
    approvalKey({ server: "proj", definitionHash: "abc" }),
    approvalKey({ server: "proj", definitionHash: "abd" }),
  );
});

const SECRET_TAGS = [..."api key sk-123"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");

function argumentsOf(markdown: string): string {
  const block = markdown.split("Arguments:\n\n")[1] ?? "";
  return block.replace(/^`+json\n/, "").replace(/\n`+$/, "");
}

test("the arguments show exactly what is sent: hidden characters escaped, never removed, still JSON", () => {
  const args = {
    body: `Thanks!${SECRET_TAGS}`,
    rtl: "invoice\u202etxt.exe",
    c1: "Ko\u009eice\u007f",
    zw: "a\u200bb\ufeff",
    sep: "x\u2028y",
    ctl: "\u001b[2J\r",
  };
  const confirmation = callConfirmation("notes.lookup", tool(), args);
  const shown = argumentsOf(confirmation.markdown);
  assert.deepEqual(JSON.parse(shown), args);
  assert.equal(visibleText(shown), shown, "nothing in it is hidden or removed when shown");
  assert.ok(shown.includes('"body": "Thanks!\\udb40\\udc61\\udb40\\udc70\\udb40\\udc69'), shown);
  assert.ok(shown.includes('"rtl": "invoice\\u202etxt.exe"'), shown);
  assert.ok(shown.includes('"c1": "Ko\\u009eice\\u007f"'), shown);
  assert.ok(shown.includes('"zw": "a\\u200bb\\ufeff"') && shown.includes('"sep": "x\\u2028y"'), shown);
  assert.ok(shown.includes('"ctl": "\\u001b[2J\\r"'), shown);
  // Rendered, the person reads the escapes (one code block, nothing hidden).
  const html = permissive.render(confirmation.markdown);
  assert.equal((html.match(/<pre>/g) ?? []).length, 1, html);
  assert.ok(html.includes("Thanks!\\udb40\\udc61"), html);
});

test("jsonBlock keeps plain and non-ASCII text readable", () => {
  assert.equal(jsonBlock({ name: "日本語 🙂 café" }), '```json\n{\n  "name": "日本語 🙂 café"\n}\n```');
  assert.equal(jsonBlock(undefined), "```json\n{}\n```");
});

test("a tool id that is not active is shown as sent, hidden characters escaped", () => {
  const confirmation = callConfirmation(`notes.lookup${SECRET_TAGS}\u200b`, undefined, {});
  assert.ok(confirmation.markdown.startsWith('**\\"notes\\.lookup\\\\udb40\\\\udc61'), confirmation.markdown);
  assert.ok(confirmation.markdown.includes('\\\\u200b\\"**'), confirmation.markdown);
});

test("visibleText treats a lone carriage return and the line separators as the sanitiser does: a newline", () => {
  assert.equal(visibleText("10%\r50%\r\n100%"), "10%\n50%\n100%");
  assert.equal(visibleText("a\u2028b\u2029c"), "a\nb\nc");
  assert.equal(oneLine("safe\rOVERWRITTEN\u2028row"), "safe OVERWRITTEN row");
  assert.equal(markdownLiteral("page1\fpage2"), "page1  \npage2");
});
