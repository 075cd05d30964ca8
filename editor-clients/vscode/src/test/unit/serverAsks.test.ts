// What servers ask or tell the person, as the extension words it: the capabilities offered,
// the URL consent, the browser steps a failed call waits for, the sampling approvals, progress
// increments, log lines and the icons shown.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SampleParams } from "../../protocol";
import { Turns } from "../../serial";
import {
  BrowserSteps,
  COPY_URL,
  capped,
  chatTurns,
  mcpCapabilities,
  modelSelector,
  ProgressSteps,
  pickIcon,
  samplingAnswer,
  samplingRequest,
  serverLogLine,
  showableIcon,
  urlConsent,
} from "../../serverAsks";

test("the capabilities: form and URL elicitation always, sampling only with language models and the setting on", () => {
  assert.deepEqual(mcpCapabilities({ languageModels: true, samplingEnabled: true }), {
    elicitation: { form: {}, url: {} },
    sampling: {},
  });
  assert.deepEqual(mcpCapabilities({ languageModels: false, samplingEnabled: true }), {
    elicitation: { form: {}, url: {} },
  });
  assert.deepEqual(mcpCapabilities({ languageModels: true, samplingEnabled: false }), {
    elicitation: { form: {}, url: {} },
  });
});

test("MCP Apps are declared with their MIME type when mcpSidecar.apps.enabled is on, and not otherwise", () => {
  assert.deepEqual(mcpCapabilities({ languageModels: false, samplingEnabled: false, appsEnabled: true }), {
    elicitation: { form: {}, url: {} },
    extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
  });
  assert.equal(
    mcpCapabilities({ languageModels: true, samplingEnabled: true, appsEnabled: false }).extensions,
    undefined,
  );
});

test("the URL consent shows the message, the whole URL and its host, and names the host on the Open button", () => {
  const consent = urlConsent({
    server: "billing",
    message: "Authorize payment access\nfor the team",
    url: "https://billing.example.com/connect?session=1f2e&x=%2F",
    host: "billing.example.com",
  });
  assert.equal(consent.message, "billing asks you to continue in the browser");
  assert.equal(consent.open, "Open billing.example.com");
  assert.equal(consent.copy, COPY_URL);
  assert.equal(consent.copy, "Copy URL (I'll open it myself)");
  assert.equal(consent.decline, "Decline");
  assert.equal(
    consent.detail,
    "Authorize payment access\nfor the team\n\nIt asks you to open this address:\n" +
      "https://billing.example.com/connect?session=1f2e&x=%2F\n\nHost: billing.example.com\n\n" +
      "Open it only if you expected this step and trust that host. Decline tells the server no.",
  );
});

test("a URL that is not http(s) is offered for copying only; hidden characters never reach the modal", () => {
  const consent = urlConsent({
    server: "odd\u202e",
    message: "Run\u001b]52;c;Zm9v\u0007 this",
    url: "javascript:alert(1)",
    host: "",
  });
  assert.equal(consent.open, undefined);
  assert.equal(consent.message, "odd asks you to continue in the browser");
  assert.match(consent.detail, /^Run this\n/);
  assert.match(consent.detail, /not a web address: copy it to use it/);
});

test("browser steps: a failed call's retry is offered when its last pending step completes, once", () => {
  const steps = new BrowserSteps();
  let retried = 0;
  steps.expect("everything", "e-1");
  steps.expect("everything", "e-2");
  assert.equal(steps.waiting("everything", "e-1"), true);
  assert.equal(
    steps.afterSteps("everything", ["e-1", "e-2"], () => (retried += 1)),
    true,
  );
  assert.deepEqual(steps.complete("everything", "e-1"), { known: true });
  const last = steps.complete("everything", "e-2");
  assert.equal(last.known, true);
  assert.ok(last.retry, "the retry is offered");
  last.retry?.();
  assert.equal(retried, 1, "the caller runs it; the tracker never does");
  assert.equal(steps.waiting("everything", "e-2"), false);
  assert.deepEqual(steps.complete("everything", "e-2"), { known: false }, "a repeated notice means nothing");
  assert.deepEqual(steps.complete("other", "e-9"), { known: false });
  assert.equal(
    steps.afterSteps("everything", [], () => undefined),
    false,
    "nothing pending",
  );
});

test("browser steps of different servers with the same id are kept apart", () => {
  const steps = new BrowserSteps();
  let done = "";
  steps.afterSteps("a", ["same"], () => (done += "a"));
  steps.afterSteps("b", ["same"], () => (done += "b"));
  steps.complete("b", "same").retry?.();
  assert.equal(done, "b");
});

const SAMPLE: SampleParams = {
  server: "everything",
  messages: [
    { role: "user", content: { type: "text", text: "Resource trigger-sampling-request context: hi" } },
    { role: "assistant", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] },
  ],
  maxTokens: 100,
  systemPrompt: "You are a helpful test server.",
};

test("the sampling request's approval shows the server, model, limits, system prompt and every message as plain text", () => {
  const question = samplingRequest(SAMPLE, "Echo (mcp-test · echo)");
  assert.equal(question.message, "everything asks to use a language model");
  assert.equal(question.truncated, false);
  assert.equal(
    question.full,
    [
      "Model: Echo (mcp-test · echo)",
      "At most 100 tokens in the answer.",
      "Not sent (the editor sends text only): image image/png.",
      "",
      "System prompt (sent as the first message):",
      "You are a helpful test server.",
      "",
      "Messages:",
      "[user]\nResource trigger-sampling-request context: hi",
      "[assistant]\n[image image/png left out: the editor sends text only]",
    ].join("\n"),
  );
  assert.ok(question.detail.endsWith("Nothing is sent to the model unless you choose Send."));
});

test("the review shows everything the model would receive: resources, tool uses and results in full, the parameters, the tools offered", () => {
  const params: SampleParams = {
    server: "docs",
    maxTokens: 20,
    temperature: 0.2,
    stopSequences: ["END"],
    modelPreferences: { hints: [{ name: "claude" }] },
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "Summarise:" },
          { type: "resource", resource: { uri: "notes://a", mimeType: "text/plain", text: "line 1\nline 2" } },
        ],
      },
      { role: "assistant", content: { type: "tool_use", id: "t1", name: "lookup", input: { q: "x" } } },
      {
        role: "user",
        content: { type: "tool_result", toolUseId: "t1", content: [{ type: "text", text: "found x" }] },
      },
    ],
    tools: [{ name: "lookup", description: "Look up a note.", inputSchema: { type: "object" } }],
    toolChoice: { mode: "auto" },
  };
  const question = samplingRequest(params, "Echo");
  assert.equal(
    question.full,
    [
      "Model: Echo",
      "At most 20 tokens in the answer.",
      "Temperature: 0.2",
      'Stop sequences: "END"',
      'Model preferences (not used to pick the model): {"hints":[{"name":"claude"}]}',
      "",
      "Messages:",
      "[user]\nSummarise:\n[resource notes://a]\nline 1\nline 2",
      '[assistant]\n[tool use lookup t1: {"q":"x"}]',
      "[user]\n[tool result t1]\nfound x",
      "",
      "Tools the server offers the model (1; not passed on, so the model cannot call them):",
      "- lookup: Look up a note.",
      '  input schema: {"type":"object"}',
      'Tool choice: {"mode":"auto"}',
    ].join("\n"),
  );
  assert.deepEqual(chatTurns(params)[0], { role: "user", text: "Summarise:\n[resource notes://a]\nline 1\nline 2" });
});

test("a request longer than the dialog says it must be read whole first", () => {
  const long: SampleParams = {
    ...SAMPLE,
    messages: [{ role: "user", content: { type: "text", text: "y".repeat(4000) } }],
  };
  const question = samplingRequest(long, "Echo");
  assert.equal(question.truncated, true);
  assert.match(question.detail, /read it whole \(Show Full Request\) before you can send it\.$/);
  assert.ok(question.full.endsWith("y".repeat(4000)));
});

test("the conversation sent to the model: the system prompt first as a user message, non-text parts as placeholders", () => {
  assert.deepEqual(chatTurns(SAMPLE), [
    { role: "user", text: "System instructions:\nYou are a helpful test server." },
    { role: "user", text: "Resource trigger-sampling-request context: hi" },
    { role: "assistant", text: "[image image/png left out: the editor sends text only]" },
  ]);
});

test("long requests and answers are cut in the modal with a note, and kept whole for Show Full", () => {
  const long = "x".repeat(5000);
  const question = samplingAnswer("everything", "Echo", long);
  assert.equal(question.truncated, true);
  assert.equal(question.full, long);
  assert.match(question.detail, /… \(2000 more characters\)/);
  assert.equal(question.message, "Return this answer to everything?");
  assert.deepEqual(capped("abc", 5), { text: "abc", truncated: false });
});

test("the configured model selector keeps vendor, family and id strings only", () => {
  assert.deepEqual(modelSelector({ vendor: "copilot", family: " gpt-4o ", extra: 1 }), {
    vendor: "copilot",
    family: "gpt-4o",
  });
  assert.equal(modelSelector({}), undefined);
  assert.equal(modelSelector({ vendor: "" }), undefined);
  assert.equal(modelSelector("copilot"), undefined);
  assert.equal(modelSelector(null), undefined);
});

test("work-done percentages become increments; messages stay on one line; end reports nothing", () => {
  const steps = new ProgressSteps();
  assert.equal(steps.step({ kind: "begin", title: "everything.trigger-long-running-operation" }), undefined);
  assert.deepEqual(steps.step({ kind: "report", percentage: 25 }), { increment: 25, message: "25%" });
  assert.deepEqual(steps.step({ kind: "report", percentage: 50, message: "step\n2\u001b[31m" }), {
    message: "step 2",
    increment: 25,
  });
  assert.deepEqual(steps.step({ kind: "report", percentage: 40 }), { message: "50%" }, "backwards: no increment");
  assert.deepEqual(steps.step({ kind: "report", percentage: 150 }), { increment: 50, message: "100%" });
  assert.deepEqual(steps.step({ kind: "report", message: "polling" }), { message: "polling" });
  assert.equal(steps.step({ kind: "end" }), undefined);
});

test("a server log line reads [level] logger: text, on one line", () => {
  assert.equal(
    serverLogLine({ server: "everything", level: "error", logger: "db", text: "locked\nagain" }),
    "[error] db: locked again",
  );
  assert.equal(serverLogLine({ server: "everything", level: "warning", text: "slow" }), "[warning] slow");
});

test("icons: data: images and https: only, the theme's own first", () => {
  const png = "data:image/png;base64,iVBORw0KGgo=";
  const dark = "https://example.com/dark.svg";
  assert.equal(showableIcon(png), true);
  assert.equal(showableIcon("data:text/html;base64,PHNjcmlwdD4="), false);
  assert.equal(showableIcon("http://example.com/a.png"), false);
  assert.equal(showableIcon("file:///etc/passwd"), false);
  const icons = [
    { src: "javascript:alert(1)" },
    { src: dark, theme: "dark" as const },
    { src: png, mimeType: "image/png" },
  ];
  assert.equal(pickIcon(icons, "dark"), dark);
  assert.equal(pickIcon(icons, "light"), png);
  assert.equal(pickIcon([{ src: dark, theme: "dark" }], "light"), dark, "another theme's icon beats none");
  assert.equal(pickIcon(undefined, "light"), undefined);
  assert.equal(pickIcon([{ src: "ftp://x" }], "light"), undefined);
});

test("questions take turns in order, and one that fails does not stop the next", async () => {
  const turns = new Turns();
  const order: string[] = [];
  let release: () => void = () => undefined;
  const first = turns.run(
    () =>
      new Promise<string>((resolve) => {
        order.push("first asked");
        release = () => resolve("first");
      }),
  );
  const second = turns.run(async () => {
    order.push("second asked");
    throw new Error("no");
  });
  const third = turns.run(async () => {
    order.push("third asked");
    return "third";
  });
  // Every queued microtask runs before setImmediate's callback: the first job has started.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, ["first asked"], "the second waits for the first answer");
  release();
  assert.equal(await first, "first");
  await assert.rejects(second, /no/);
  assert.equal(await third, "third");
  assert.deepEqual(order, ["first asked", "second asked", "third asked"]);
});
