// A server asks the person something, through the real sidecar and the unmodified
// @modelcontextprotocol/server-everything over stdio: its conditional tools are offered
// because the extension declares what it renders; a form elicitation answered field by field
// in the real quick inputs; URL consent (the modal answered in the test's place: the test host
// refuses modals); the -32042 error path with its Retry; sampling through the test language
// model extension (dist-test/fake-lm, installed by scripts/test.sh) with both approvals;
// `$/progress` of a long call; server log messages; icons; a palette call asked field by field.
import assert from "node:assert/strict";
import * as path from "node:path";
import * as vscode from "vscode";
import { DESTRUCTIVE_CALL_TITLE } from "../../consent";
import { CANCEL, DECLINE, SUBMIT } from "../../formInput";
import type { RenderedProgress } from "../../progress";
import * as P from "../../protocol";
import { COPY_URL } from "../../serverAsks";
import type { QuickInputState } from "../../ui";
import type { SeenRequest } from "../fake-lm/extension";
import { ext, test, waitFor } from "./harness";

const EVERYTHING = "everything";
const ASKS = `${EVERYTHING} asks`;
const FAKE_LM = "mcp-sidecar.mcp-sidecar-test-lm";

interface Asked {
  message: string;
  options: vscode.MessageOptions;
  items: string[];
}

/** Answers a modal `ask` in the person's place, recording what it was asked. */
function answering(
  target: {
    ask: (message: string, options: vscode.MessageOptions, ...items: string[]) => Thenable<string | undefined>;
  },
  answers: (string | undefined)[],
): { asked: Asked[]; restore: () => void } {
  const asked: Asked[] = [];
  const original = target.ask;
  target.ask = async (message, options, ...items) => {
    asked.push({ message, options, items });
    return answers.length > 0 ? answers.shift() : undefined;
  };
  return { asked, restore: () => (target.ask = original) };
}

function call(id: string, args: P.JsonObject = {}): Promise<P.CallToolResult> {
  return ext().client.request(P.callTool, { id, arguments: args, activate: true });
}

function text(result: P.CallToolResult): string {
  return result.content.map((block) => block.text ?? "").join("\n");
}

/** server-everything ends its answers with "Raw result: <JSON>". */
function rawResult(result: P.CallToolResult): unknown {
  const body = text(result);
  const at = body.indexOf("Raw result: ");
  assert.ok(at >= 0, body);
  return JSON.parse(body.slice(at + "Raw result: ".length));
}

// ------------------------------------------------------------------ driving the real quick inputs

/** Waits for our quick input at `step` of the form titled `title`, with its items (if a pick) shown. */
function atStep(title: string, step: number): Promise<QuickInputState> {
  return waitFor(`step ${step} of '${title}'`, () => {
    const input = ext().quickInput();
    // A single pick's items reach the workbench asynchronously: ready once one is highlighted.
    const ready = input?.kind === "box" || input?.many || (input !== undefined && input.active.length > 0);
    return input && input.title === title && input.step === step && ready && !input.busy ? input : undefined;
  });
}

/** Types `value` into the shown input box (the test host cannot type) and waits for its validation. */
async function type(value: string, validation?: string): Promise<QuickInputState> {
  assert.ok(ext().driveQuickInput({ value }), "an input of ours is shown");
  return waitFor(`'${value}' typed${validation ? ` and '${validation}' shown` : ""}`, () => {
    const input = ext().quickInput();
    return input?.value === value && input.validationMessage === validation ? input : undefined;
  });
}

async function accept(): Promise<void> {
  await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
}

/** Moves the highlight of the shown pick down to `label`, then accepts it. */
async function choose(label: string): Promise<void> {
  const input = ext().quickInput();
  assert.ok(input?.items.includes(label), `${label} in ${input?.items.join(", ")}`);
  for (let i = 0; i <= (input?.items.length ?? 0) && ext().quickInput()?.active[0] !== label; i++) {
    await vscode.commands.executeCommand("workbench.action.quickOpenSelectNext");
    await waitFor("the highlight to move", () => ext().quickInput()?.active.length === 1);
  }
  await waitFor(`${label} to be highlighted`, () => ext().quickInput()?.active[0] === label);
  await accept();
}

// ------------------------------------------------------------------ the cases

export function registerServerAskTests(): void {
  test("server-everything offers its elicitation, URL and sampling tools because the extension declares them", async () => {
    const node = process.env.MCP_TEST_NODE ?? "node";
    const script = process.env.MCP_TEST_EVERYTHING;
    assert.ok(script, "scripts/test.sh names server-everything's dist/index.js");
    await ext().client.request(P.configAdd, {
      scope: "global",
      server: EVERYTHING,
      definition: { command: node, args: [script, "stdio"] },
    });
    const tools = await waitFor("server-everything's tools", async () => {
      const listed = await ext().client.request(P.serverTools, { server: EVERYTHING });
      return listed.tools.length > 0 ? listed.tools.map((t) => t.name) : undefined;
    });
    for (const name of [
      "trigger-elicitation-request",
      "trigger-url-elicitation",
      "trigger-sampling-request",
      "get-roots-list",
      "trigger-long-running-operation",
    ]) {
      assert.ok(tools.includes(name), `${name} in ${tools.join(", ")}`);
    }
  });

  test("the roots server-everything sees are the workspace folders", async () => {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
    assert.equal(folders.length, 1);
    const result = await call(`${EVERYTHING}.get-roots-list`);
    assert.equal(result.isError, false, text(result));
    for (const folder of folders) assert.ok(text(result).includes(folder), `${folder} in ${text(result)}`);
  });

  test("a form elicitation is asked field by field in the real quick inputs: defaults, enums, checks as typed, then Submit", async () => {
    const answer = call(`${EVERYTHING}.trigger-elicitation-request`);
    const first = await atStep(ASKS, 1);
    assert.equal(first.kind, "box");
    assert.equal(first.totalSteps, 14, "13 fields and the summary");
    assert.equal(
      first.prompt,
      "Please provide inputs for the following fields: — String (required): Your full, legal name",
    );
    await accept();
    await waitFor("required", () => ext().quickInput()?.validationMessage === "Required.");
    await type("Ada Lovelace");
    await accept();
    const check = await atStep(ASKS, 2);
    assert.deepEqual(check.items, ["Yes", "No", "$(dash) Leave out"]);
    await choose("Yes");
    const firstLine = await atStep(ASKS, 3);
    assert.equal(firstLine.value, "It was a dark and stormy night.", "the default is pre-filled");
    await accept();
    await atStep(ASKS, 4);
    await type("ada@example", "Not an email address (name@example.com).");
    await type("ada@example.com");
    await accept();
    await atStep(ASKS, 5);
    await accept(); // the homepage is optional: left out
    await atStep(ASKS, 6);
    await type("1815-02-30", "Not a date (YYYY-MM-DD).");
    await type("1815-12-10");
    await accept();
    const integer = await atStep(ASKS, 7);
    assert.equal(integer.value, "42");
    await type("101", "At most 100.");
    await type("7");
    await accept();
    assert.equal((await atStep(ASKS, 8)).value, "3.14");
    await accept();
    const friend = await atStep(ASKS, 9);
    assert.deepEqual(friend.active, ["Monica"], "the default is highlighted");
    await choose("Joey");
    const instruments = await atStep(ASKS, 10);
    assert.deepEqual(instruments.selected, ["Guitar"], "the default is checked");
    assert.ok(ext().driveQuickInput({ select: ["Piano", "Drums"] }));
    await waitFor("two instruments checked", () => ext().quickInput()?.selected.length === 2);
    await accept();
    const hero = await atStep(ASKS, 11);
    assert.deepEqual(hero.items.slice(0, 2), ["Superman", "Green Lantern"], "titles, not values");
    await accept();
    assert.deepEqual((await atStep(ASKS, 12)).selected, ["Tuna"]);
    await accept();
    await atStep(ASKS, 13);
    await choose("Dogs");
    const summary = await atStep(ASKS, 14);
    assert.deepEqual(summary.items.slice(0, 13), [
      'String: "Ada Lovelace"',
      "Boolean: Yes",
      'String with default: "It was a dark and stormy night."',
      'String with email format: "ada@example.com"',
      "String with uri format: (left out)",
      'String with date format: "1815-12-10"',
      "Integer: 7",
      "Number in range 1-1000: 3.14",
      "Untitled Single Select Enum: Joey",
      "Untitled Multiple Select Enum: Piano, Drums",
      "Titled Single Select Enum: Superman",
      "Titled Multiple Select Enum: Tuna",
      "Legacy Titled Single Select Enum: Dogs",
    ]);
    assert.deepEqual(summary.active, [SUBMIT], "nothing was sent yet; Submit is what Enter does");
    assert.ok(summary.items.includes(DECLINE) && summary.items.includes(CANCEL));
    await accept();
    const result = await answer;
    assert.deepEqual(rawResult(result), {
      action: "accept",
      content: {
        name: "Ada Lovelace",
        check: true,
        firstLine: "It was a dark and stormy night.",
        email: "ada@example.com",
        birthdate: "1815-12-10",
        integer: 7,
        number: 3.14,
        untitledSingleSelectEnum: "Joey",
        untitledMultipleSelectEnum: ["Piano", "Drums"],
        titledSingleSelectEnum: "hero-1",
        titledMultipleSelectEnum: ["fish-1"],
        legacyTitledEnum: "pet-2",
      },
    });
    assert.match(text(result), /- Name: Ada Lovelace\n- Agreed to terms: true\n- Email: ada@example.com/);
  });

  test("Decline on the summary answers decline; Escape on any step answers cancel", async () => {
    const declined = call(`${EVERYTHING}.trigger-elicitation-request`);
    await atStep(ASKS, 1);
    await type("Ada");
    await accept();
    for (let step = 2; step <= 13; step++) {
      await atStep(ASKS, step);
      await accept();
    }
    await atStep(ASKS, 14);
    await choose(DECLINE);
    assert.deepEqual(rawResult(await declined), { action: "decline" });

    const cancelled = call(`${EVERYTHING}.trigger-elicitation-request`);
    await atStep(ASKS, 1);
    await type("Ada");
    await accept();
    await atStep(ASKS, 2);
    await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
    assert.deepEqual(rawResult(await cancelled), { action: "cancel" });
  });

  test("a question withdrawn while it is shown ($/cancelRequest cancels its token) closes its quick input and answers cancel", async () => {
    // The token is the one vscode-jsonrpc cancels when the sidecar sends $/cancelRequest.
    const withdrawn = new vscode.CancellationTokenSource();
    const answer = ext().elicitations.answer(
      {
        server: EVERYTHING,
        mode: "form",
        message: "Still there?",
        requestedSchema: { type: "object", properties: { name: { type: "string" } } },
      },
      withdrawn.token,
    );
    const shown = await atStep(ASKS, 1);
    assert.equal(shown.prompt, "Still there? — name (optional)");
    withdrawn.cancel();
    await waitFor("the question to close", () => ext().quickInput() === undefined);
    assert.deepEqual(await answer, { action: "cancel" });
    withdrawn.dispose();
  });

  test("a question the sidecar withdraws (its server reconnects) closes its quick input", async () => {
    const pending = call(`${EVERYTHING}.trigger-elicitation-request`).then(
      (result) => ({ result }),
      (error: unknown) => ({ error: (error as { data?: P.Diagnostic }).data?.code ?? String(error) }),
    );
    await atStep(ASKS, 1);
    await vscode.commands.executeCommand("mcpSidecar.reconnect", EVERYTHING);
    await waitFor("the question to close", () => ext().quickInput() === undefined);
    assert.deepEqual(await pending, { error: "connection_failed" }, "the call ended with its connection");
  });

  test("a URL elicitation asks with a modal showing the message, the whole URL and its host, and opens it only after consent", async () => {
    const url = "https://example.com/connect?session=1f2e&next=%2Fhome";
    const opened: string[] = [];
    const elicitations = ext().elicitations;
    const originalOpen = elicitations.openExternal;
    elicitations.openExternal = async (target) => {
      opened.push(target);
      return true;
    };
    const { asked, restore } = answering(elicitations, ["Open example.com", COPY_URL, "Decline", undefined]);
    try {
      const accepted = await call(`${EVERYTHING}.trigger-url-elicitation`, { url, message: "Connect your account." });
      assert.match(text(accepted), /✅ User completed the URL elicitation flow\./);
      assert.deepEqual(opened, [url], "opened exactly the URL shown, once, after consent");
      const [first] = asked;
      assert.equal(first?.message, "everything asks you to continue in the browser");
      assert.equal(first?.options.modal, true);
      assert.equal(
        first?.options.detail,
        `Connect your account.\n\nIt asks you to open this address:\n${url}\n\nHost: example.com\n\n` +
          "Open it only if you expected this step and trust that host. Decline tells the server no.",
      );
      assert.deepEqual(first?.items, ["Open example.com", COPY_URL, "Decline"]);

      const copied = await call(`${EVERYTHING}.trigger-url-elicitation`, { url, message: "Again." });
      assert.match(text(copied), /✅ User completed/);
      assert.equal(await vscode.env.clipboard.readText(), url);
      const declined = await call(`${EVERYTHING}.trigger-url-elicitation`, { url, message: "Again." });
      assert.match(text(declined), /❌ User declined to open the URL/);
      const dismissed = await call(`${EVERYTHING}.trigger-url-elicitation`, { url, message: "Again." });
      assert.match(text(dismissed), /⚠️ User cancelled the URL elicitation/);
      assert.deepEqual(opened, [url], "copying, declining and dismissing open nothing");
    } finally {
      restore();
      elicitations.openExternal = originalOpen;
    }
  });

  test("a call that needs a browser step first (-32042) fails with elicitation_required; declined, it offers Retry, and Retry calls again", async () => {
    const url = "https://example.com/after-prerequisite";
    const opened: string[] = [];
    const elicitations = ext().elicitations;
    const originals = { open: elicitations.openExternal, notify: elicitations.notify };
    const notified: { message: string; items: string[] }[] = [];
    elicitations.openExternal = async (target) => {
      opened.push(target);
      return true;
    };
    elicitations.notify = async (message, _warning, ...items) => {
      notified.push({ message, items });
      return "Retry";
    };
    // Declining the prerequisite answers at once (an accepted one waits up to 2 minutes for the
    // server's completion notice, which server-everything never sends).
    const { asked, restore } = answering(elicitations, ["Decline", "Open example.com"]);
    try {
      const id = `${EVERYTHING}.trigger-url-elicitation`;
      const first = (await vscode.commands.executeCommand("mcpSidecar.callTool", id, {
        url,
        errorPath: true,
      })) as P.CallToolResult;
      assert.equal(first.isError, true);
      assert.equal(first.diagnostic?.code, "elicitation_required");
      assert.deepEqual(
        first.elicitations?.map((s) => [s.url, s.action, s.completed]),
        [["https://modelcontextprotocol.io", "decline", false]],
      );
      assert.equal(asked[0]?.message, "everything asks you to continue in the browser");
      assert.deepEqual(asked[0]?.items, ["Open modelcontextprotocol.io", COPY_URL, "Decline"]);
      await waitFor("the Retry offer", () => notified.length >= 1);
      assert.deepEqual(notified[0], {
        message: `MCP: ${id} needs a step in the browser that was not done. Call it again to be asked again.`,
        items: ["Retry", "Cancel"],
      });
      // Retry (pressed by the stand-in above) calls once more; the server now takes the request path.
      await waitFor("the retried call's URL question", () => asked.length >= 2, 30_000);
      assert.equal(asked[1]?.items[0], "Open example.com");
      await waitFor("the retried call's result", () => {
        const doc = vscode.window.activeTextEditor?.document;
        return (
          doc?.uri.scheme === "mcp-sidecar-output" && /User completed the URL elicitation flow/.test(doc.getText())
        );
      });
      assert.deepEqual(opened, [url], "only the consented page was opened");
      assert.equal(notified.length, 1, "a call that succeeded offers nothing");
    } finally {
      restore();
      elicitations.openExternal = originals.open;
      elicitations.notify = originals.notify;
    }
  });

  test("a failed call's browser step that the server reports done later (mcp/elicitationComplete) offers Retry then", async () => {
    const python = process.env.MCP_TEST_PYTHON ?? "python3";
    const fixture = path.resolve(__dirname, "../../src/test/e2e/url_steps_server.py");
    await ext().client.request(P.configAdd, {
      scope: "global",
      server: "steps",
      // Handshake era: a 2026-07-28 session does not pass on a completion notice the server
      // sends while answering another request (reported to the sidecar's maintainers).
      definition: { command: python, args: [fixture], protocol: "legacy" },
    });
    const elicitations = ext().elicitations;
    const originals = { open: elicitations.openExternal, notify: elicitations.notify };
    const opened: string[] = [];
    const notified: { message: string; warning: boolean; items: string[] }[] = [];
    const completions: P.ElicitationCompleteParams[] = [];
    const listening = ext().client.onElicitationComplete((params) => completions.push(params));
    elicitations.openExternal = async (target) => {
      opened.push(target);
      return true;
    };
    // The person leaves the first offer alone (the step is not done yet) and takes the second.
    elicitations.notify = async (message, warning, ...items) => {
      notified.push({ message, warning, items });
      return notified.length === 1 ? undefined : "Retry";
    };
    const { asked, restore } = answering(elicitations, ["Open pay.example"]);
    try {
      const first = (await vscode.commands.executeCommand("mcpSidecar.callTool", "steps.pay", {})) as P.CallToolResult;
      assert.equal(first.diagnostic?.code, "elicitation_required");
      assert.deepEqual(
        first.elicitations?.map((s) => [s.elicitationId, s.action, s.completed]),
        [["pay-1", "accept", false]],
      );
      assert.deepEqual(opened, ["https://pay.example/approve?id=pay-1"]);
      assert.match(asked[0]?.options.detail ?? "", /^Approve the payment in your bank's page\.\n/);
      await waitFor("the first offer", () => notified.length >= 1);
      assert.deepEqual(notified[0], {
        message: "MCP: steps.pay needs a step in the browser first. Retry once it is done.",
        warning: true,
        items: ["Retry", "Cancel"],
      });
      assert.equal(elicitations.steps.waiting("steps", "pay-1"), true);
      // The person finishes in the browser; the server says so.
      const finished = await call("steps.finish", { elicitation_id: "pay-1" });
      assert.equal(text(finished), "finished");
      await waitFor("the completion notice", () => completions.length >= 1);
      assert.deepEqual(completions, [{ server: "steps", elicitationId: "pay-1" }]);
      await waitFor("the second offer", () => notified.length >= 2);
      assert.deepEqual(notified[1], {
        message: "MCP: steps: the step in the browser is done.",
        warning: false,
        items: ["Retry"],
      });
      assert.equal(elicitations.steps.waiting("steps", "pay-1"), false);
      await waitFor("the retried call's result", () => {
        const doc = vscode.window.activeTextEditor?.document;
        return doc?.uri.scheme === "mcp-sidecar-output" && /^paid$/m.test(doc.getText());
      });
      assert.equal(notified.length, 2, "the retried call succeeded: nothing more is offered");
    } finally {
      restore();
      listening.dispose();
      elicitations.openExternal = originals.open;
      elicitations.notify = originals.notify;
      await ext().client.request(P.configRemove, { scope: "global", server: "steps" });
    }
  });

  test("sampling goes through a VS Code language model; the request and the answer are approved first", async () => {
    const fake = vscode.extensions.getExtension<{ requests: SeenRequest[] }>(FAKE_LM);
    assert.ok(fake, "scripts/test.sh installs the test language model extension");
    const seen = (await fake.activate()).requests;
    const config = vscode.workspace.getConfiguration("mcpSidecar");
    await config.update("sampling.model", { vendor: "mcp-sidecar-test" }, vscode.ConfigurationTarget.Global);
    const { asked, restore } = answering(ext().sampling, ["Send to Test Echo", "Send to everything", undefined]);
    try {
      const result = await call(`${EVERYTHING}.trigger-sampling-request`, { prompt: "hello", maxTokens: 50 });
      assert.equal(result.isError, false, text(result));
      const body = text(result);
      const sampled = JSON.parse(body.slice(body.indexOf("{"))) as P.SampleResult;
      assert.deepEqual(sampled, {
        role: "assistant",
        content: { type: "text", text: "Echo: Resource trigger-sampling-request context: hello" },
        model: "mcp-sidecar-test-echo",
        stopReason: "endTurn",
      });
      assert.equal(asked[0]?.message, "everything asks to use a language model");
      assert.equal(asked[0]?.options.modal, true);
      assert.equal(
        asked[0]?.options.detail,
        "Model: Test Echo (mcp-sidecar-test · echo)\nAt most 50 tokens in the answer.\nTemperature: 0.7\n\n" +
          "System prompt (sent as the first message):\nYou are a helpful test server.\n\n" +
          "Messages:\n[user]\nResource trigger-sampling-request context: hello\n\n" +
          "Nothing is sent to the model unless you choose Send.",
      );
      assert.deepEqual(asked[0]?.items, ["Send to Test Echo"]);
      assert.equal(asked[1]?.message, "Return this answer to everything?");
      assert.match(
        asked[1]?.options.detail ?? "",
        /answered:\n\nEcho: Resource trigger-sampling-request context: hello\n/,
      );
      assert.deepEqual(seen.at(-1), {
        messages: [
          { role: "user", text: "System instructions:\nYou are a helpful test server." },
          { role: "user", text: "Resource trigger-sampling-request context: hello" },
        ],
        modelOptions: { maxTokens: 50, temperature: 0.7 },
      });

      // Declining the request: the model is never asked and the server hears the refusal.
      const before = seen.length;
      const refused = await call(`${EVERYTHING}.trigger-sampling-request`, { prompt: "again" });
      assert.equal(refused.isError, true, text(refused));
      assert.match(text(refused), /declined/i);
      assert.equal(seen.length, before, "the model saw nothing");
      restore();

      // Longer than the dialog: Send is offered only once the whole request (and answer) was opened.
      const long = answering(ext().sampling, [
        "Show Full Request",
        "Send to Test Echo",
        "Show Full Answer",
        "Send to everything",
      ]);
      const prompt = "z".repeat(4000);
      const answered = await call(`${EVERYTHING}.trigger-sampling-request`, { prompt });
      long.restore();
      assert.equal(answered.isError, false, text(answered));
      assert.deepEqual(
        long.asked.map((a) => a.items),
        [
          ["Show Full Request"],
          ["Send to Test Echo", "Show Full Request"],
          ["Show Full Answer"],
          ["Send to everything", "Show Full Answer"],
        ],
      );
      assert.ok(text(answered).includes(`Echo: Resource trigger-sampling-request context: ${prompt}`));
    } finally {
      restore();
      await config.update("sampling.model", undefined, vscode.ConfigurationTarget.Global);
    }
  });

  test("a long call reports $/progress: begin, a report per server step with its percentage, end", async () => {
    const id = `${EVERYTHING}.trigger-long-running-operation`;
    const events: RenderedProgress[] = [];
    const listening = ext().onDidRenderProgress((event) => event.id === id && events.push(event));
    try {
      const result = (await vscode.commands.executeCommand("mcpSidecar.callTool", id, {
        duration: 1,
        steps: 4,
      })) as P.CallToolResult;
      assert.match(text(result), /Long running operation completed\. Duration: 1 seconds, Steps: 4\./);
      await waitFor("the end of the progress", () => events.some((e) => e.value.kind === "end"));
      assert.equal(events[0]?.value.kind, "begin");
      const reports = events.filter((e) => e.value.kind === "report");
      assert.deepEqual(
        reports.map((e) => (e.value.kind === "report" ? e.value.percentage : undefined)),
        [25, 50, 75, 100],
      );
      assert.deepEqual(
        reports.map((e) => e.shown?.increment),
        [25, 25, 25, 25],
      );
      assert.equal(events.at(-1)?.value.kind, "end");
    } finally {
      listening.dispose();
    }
  });

  test("a chat call (mcp_call) passes a workDoneToken too, and its progress is shown", async () => {
    const id = `${EVERYTHING}.trigger-long-running-operation`;
    await ext().client.request(P.activate, { ids: [id] });
    const events: RenderedProgress[] = [];
    const listening = ext().onDidRenderProgress((event) => event.id === id && events.push(event));
    try {
      const result = await vscode.lm.invokeTool("mcp_call", {
        input: { id, arguments: { duration: 1, steps: 2 } },
        toolInvocationToken: undefined,
      });
      const answer = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : "")).join("");
      assert.match(answer, /Long running operation completed/);
      await waitFor("the end of the progress", () => events.some((e) => e.value.kind === "end"));
      assert.deepEqual(
        events.map((e) => e.value.kind),
        ["begin", "report", "report", "end"],
      );
    } finally {
      listening.dispose();
    }
  });

  test("a server's log messages at warning or above are written to its output channel as [level] logger: text", async () => {
    const toggle = `${EVERYTHING}.toggle-simulated-logging`;
    const started = await call(toggle);
    assert.match(text(started), /Started simulated/);
    try {
      const lines = await waitFor(
        "a log message of server-everything",
        () => ext().serverChannels.written.get(EVERYTHING),
        60_000,
      );
      assert.match(lines[0] ?? "", /^\[(warning|error|critical|alert|emergency)\] /);
    } finally {
      await call(toggle);
    }
  });

  test("the palette's call asks a tool's arguments field by field, then Submit calls it", async () => {
    const id = `${EVERYTHING}.trigger-long-running-operation`;
    const title = `Call ${id}`;
    const done = vscode.commands.executeCommand("mcpSidecar.callTool", id) as Thenable<P.CallToolResult>;
    const duration = await atStep(title, 1);
    assert.equal(duration.value, "10", "the default is pre-filled");
    assert.equal(duration.prompt, "duration (optional, a number): Duration of the operation in seconds");
    await type("ten", "A number, please.");
    await type("1");
    await accept();
    const steps = await atStep(title, 2);
    assert.equal(steps.value, "5");
    await type("2");
    await accept();
    const summary = await atStep(title, 3);
    assert.ok(summary.items.includes(SUBMIT));
    await accept();
    const result = await done;
    assert.match(text(result), /Duration: 1 seconds, Steps: 2\./);
  });

  test("server and tool icons show in the servers view; a destructive tool is marked in the chat confirmation", async () => {
    const python = process.env.MCP_TEST_PYTHON ?? "python3";
    const fixture = path.resolve(__dirname, "../../src/test/e2e/annotated_server.py");
    await ext().client.request(P.configAdd, {
      scope: "global",
      server: "annotated",
      definition: { command: python, args: [fixture] },
    });
    try {
      await ext().client.request(P.activate, { ids: ["annotated.erase"] });
      const confirmation = await ext().prepareCall({ id: "annotated.erase", arguments: { query: "x" } });
      assert.equal(confirmation.confirmationMessages?.title, DESTRUCTIVE_CALL_TITLE);
      const groups = await ext().view.getChildren({ type: "server", server: "annotated" });
      const toolsGroup = groups.find((g) => g.type === "group" && g.group === "tools");
      assert.ok(toolsGroup);
      const tools = await ext().view.getChildren(toolsGroup);
      const lookup = tools.find((n) => n.type === "tool" && n.tool.name === "lookup");
      assert.ok(lookup);
      const toolIcon = ext().view.getTreeItem(lookup).iconPath as { light: vscode.Uri; dark: vscode.Uri };
      assert.equal(toolIcon.light.scheme, "data");
      assert.equal(toolIcon.light.toString(true), ANNOTATED_TOOL_ICON);
      await waitFor("annotated to be connected", () => ext().store.row("annotated")?.state === "connected");
      const serverIcon = ext().view.getTreeItem({ type: "server", server: "annotated" }).iconPath as {
        light: vscode.Uri;
        dark: vscode.Uri;
      };
      assert.equal(serverIcon.dark.toString(true), "https://example.com/annotated-dark.png");
      assert.equal(serverIcon.light.toString(true), ANNOTATED_TOOL_ICON);
    } finally {
      await ext().client.request(P.configRemove, { scope: "global", server: "annotated" });
    }
  });

  test("server-everything is removed again", async () => {
    await ext().client.request(P.configRemove, { scope: "global", server: EVERYTHING });
    await ext().store.refresh();
    assert.equal(ext().store.row(EVERYTHING), undefined);
  });
}

/** The data: icon annotated_server.py gives its lookup tool and (for light themes) itself. */
const ANNOTATED_TOOL_ICON =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";
