// Drives the real workbench (VS Code server from code-server, the .vsix installed) in headless
// Chromium like a person would: the status bar, the command palette, "MCP: Search" → pick a
// tool → call it with arguments asked field by field, the status bar changing, a prompt preview
// → Use prompt, the MCP servers view, the approval modal of a project server changed on disk,
// and server-everything asking: a form elicitation, a URL consent modal, the sampling
// approvals (the test language model answers) and a progress notification; then
// mcpSidecar.chat.tools switched to "gateway" in the Settings editor: "MCP: List Servers" has
// MCP Sidecar, started from there its mcp_tools is one of chat's tools (Configure Tools), and
// switched back the server leaves the list. Saves a screenshot of every step into ARTIFACTS_DIR.
// Usage: node ui-test.mjs BASE_URL WORKSPACE ARTIFACTS_DIR
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { launchChromium } from "./chromium.mjs";

const [base, folder, artifacts] = process.argv.slice(2);
const STEP_TIMEOUT = 30_000;
const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
page.setDefaultTimeout(STEP_TIMEOUT);
let passed = 0;
let shot = 0;

async function snap(name) {
  shot += 1;
  const file = path.join(artifacts, `${String(shot).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

async function step(name, body) {
  const t0 = Date.now();
  try {
    await body();
    passed += 1;
    console.log(`  ✔ ${name} (${Date.now() - t0} ms)`);
  } catch (error) {
    console.log(
      `  ✘ ${name}\n    ${String(error?.message ?? error)
        .split("\n")
        .slice(0, 6)
        .join("\n    ")}`,
    );
    console.log(`    screenshot: ${await snap("FAILED").catch(() => "none")}`);
    console.log(`${passed} passed, 1 failed`);
    await browser.close();
    process.exit(1);
  }
}

const quickInput = page.locator(".quick-input-widget");
const quickRows = quickInput.locator(".quick-input-list .monaco-list-row");
const statusItem = page.locator(".statusbar-item", { hasText: /MCP:/ });

async function runPaletteCommand(title) {
  await page
    .locator(".monaco-workbench")
    .click({ position: { x: 700, y: 400 } })
    .catch(() => undefined);
  await page.keyboard.press("F1");
  await quickInput.waitFor({ state: "visible" });
  await page.keyboard.type(title);
  // Click the exact entry: Enter would run whichever fuzzy match is ranked first.
  const row = quickRows.filter({ hasText: title }).first();
  await row.waitFor();
  await row.click();
}

/** Types into our own quick pick and waits for a row with `text`. */
async function searchFor(query, text) {
  await quickInput.locator(".quick-input-title", { hasText: "MCP: Search" }).waitFor();
  await page.keyboard.type(query);
  await quickRows.filter({ hasText: text }).first().waitFor();
  await settled();
}

/**
 * Waits until the list stops changing: rows of an earlier query (the empty one lists
 * everything) can match `text` and be replaced under the click by the typed query's answer.
 */
async function settled() {
  const deadline = Date.now() + STEP_TIMEOUT / 2;
  let last = "";
  let same = 0;
  while (same < 3) {
    if (Date.now() > deadline) throw new Error("the quick pick kept changing");
    await page.waitForTimeout(200);
    const now = (await quickRows.allInnerTexts()).join("\n");
    same = now === last ? same + 1 : 0;
    last = now;
  }
}

/** Waits for step `n` of `total` of our multi-step quick input titled `title`. */
async function atStep(title, n, total) {
  await quickInput.locator(".quick-input-title", { hasText: title }).waitFor();
  await quickInput.locator(".quick-input-title", { hasText: `${n}/${total}` }).waitFor();
}

/** Clicks the quick pick row with `text` (re-found if fresh results re-render the list). */
async function pickRow(text) {
  await quickRows.filter({ hasText: text }).first().click();
}

await step("the workbench loads and the MCP status bar item appears", async () => {
  await page.goto(`${base}/?folder=${encodeURIComponent(folder)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  await statusItem.filter({ hasText: /MCP: \d+ connected/ }).waitFor({ timeout: 60_000 });
  await snap("workbench-status-bar");
});

let before = "";
await step("MCP: Search lists tools as you type", async () => {
  before = (await statusItem.innerText()).trim();
  await runPaletteCommand("MCP: Search");
  await searchFor("add two", "basic.add(a, b)");
  const first = (await quickRows.first().innerText()).replace(/\s+/g, " ");
  if (!first.includes("basic.add(a, b)")) throw new Error(`first row is '${first}'`);
  await snap("search-add-two");
});

await step("picking the tool offers its actions, and the call asks each argument, checked as typed", async () => {
  await pickRow("basic.add(a, b)");
  await quickRows.filter({ hasText: "Call with arguments" }).waitFor();
  await snap("tool-actions");
  await pickRow("Call with arguments");
  await atStep("Call basic.add", 1, 3);
  await page.keyboard.type("two");
  await quickInput.locator(".quick-input-message", { hasText: "A number, please." }).waitFor();
  await snap("arguments-validated-as-typed");
  await quickInput.locator("input.input").fill("2");
  await page.keyboard.press("Enter");
  await atStep("Call basic.add", 2, 3);
  await page.keyboard.type("40");
  await page.keyboard.press("Enter");
  await atStep("Call basic.add", 3, 3);
  await quickRows.filter({ hasText: "a: 2" }).waitFor();
  await snap("arguments-summary");
  await pickRow("Submit");
  await page.locator(".tab", { hasText: "basic.add-result" }).waitFor();
  await page.locator(".editor-instance .view-lines", { hasText: "42" }).first().waitFor();
  await snap("tool-result");
});

await step("the status bar counts the connected server", async () => {
  await statusItem.filter({ hasText: /MCP: [1-9] connected/ }).waitFor();
  const after = (await statusItem.innerText()).trim();
  if (after === before) throw new Error(`status bar unchanged: '${after}'`);
  console.log(`    status bar: '${before}' → '${after}'`);
  await statusItem.hover();
  await page.locator(".monaco-hover", { hasText: "basic · connected" }).first().waitFor();
  await snap("status-bar-tooltip");
  await page.mouse.move(700, 400);
});

await step("a prompt preview opens read-only with Use prompt and Discard", async () => {
  await runPaletteCommand("MCP: Search");
  await searchFor("summarize notes", "summarize_notes");
  await pickRow("summarize_notes");
  await quickInput.locator(".quick-input-title", { hasText: "summarize_notes: folder" }).waitFor();
  await page.keyboard.type("inbox");
  await quickRows.filter({ hasText: "as typed" }).first().waitFor();
  await page.keyboard.press("Enter");
  await page.locator(".tab", { hasText: "summarize_notes.prompt" }).waitFor();
  await page.locator(".editor-instance .view-lines", { hasText: "Summarize the notes in inbox." }).first().waitFor();
  await page.locator(".editor-actions .action-label[aria-label*='Use Prompt']").waitFor();
  await page.locator(".editor-actions .action-label[aria-label*='Discard Prompt']").waitFor();
  await snap("prompt-preview");
});

await step("Use prompt puts the snapshot into the chat input and closes the preview", async () => {
  await page.locator(".editor-actions .action-label[aria-label*='Use Prompt']").click();
  await page.locator(".tab", { hasText: "summarize_notes.prompt" }).waitFor({ state: "detached" });
  await page
    .locator(".interactive-input-part .view-lines", { hasText: "Summarize the notes in inbox." })
    .first()
    .waitFor();
  await snap("prompt-used-in-chat");
});

await step("a watched resource's change shows ↻ server · uri changed with Read snapshot", async () => {
  await runPaletteCommand("MCP: Watch Resource...");
  await quickRows.filter({ hasText: "basic" }).first().waitFor();
  await page.keyboard.type("basic");
  await page.keyboard.press("Enter");
  await quickRows.filter({ hasText: "notes://readme" }).first().waitFor();
  await page.keyboard.type("notes://readme");
  await page.keyboard.press("Enter");
  // Change it: call the fixture's touch tool through the search.
  await runPaletteCommand("MCP: Search");
  await searchFor("touch", "basic.touch(uri)");
  await pickRow("basic.touch(uri)");
  await pickRow("Call with arguments");
  await atStep("Call basic.touch", 1, 3);
  await quickInput.locator("input.input").fill("notes://readme");
  await page.keyboard.press("Enter");
  await atStep("Call basic.touch", 2, 3); // times: the default 1
  await page.keyboard.press("Enter");
  await atStep("Call basic.touch", 3, 3);
  await pickRow("Submit");
  await page.locator(".tab", { hasText: "basic.touch-result" }).waitFor();
  // Toasts from the VS Code server are not always shown; the notification center has them all.
  await runPaletteCommand("Notifications: Show Notifications");
  const notice = page.locator(".notifications-center .notification-list-item", {
    hasText: "↻ basic · notes://readme changed",
  });
  await notice.first().waitFor();
  await snap("watch-notification");
  await notice.first().locator(".monaco-button", { hasText: "Read snapshot" }).click();
  await page.locator(".tab", { hasText: "readme" }).first().waitFor();
  await page.locator(".editor-instance .view-lines", { hasText: "contents of notes://readme" }).first().waitFor();
  await page.keyboard.press("Escape");
});

await step("MCP: Add Server to mcp-sidecar asks a name, a scope and a command line (validated as typed)", async () => {
  await runPaletteCommand("MCP: Add Server to mcp-sidecar...");
  await quickInput.locator(".quick-input-title", { hasText: "Add MCP server (1/3)" }).waitFor();
  await page.keyboard.type("my notes");
  await quickInput.locator(".quick-input-message", { hasText: "the name must be 1 to 64 letters" }).waitFor();
  await quickInput.locator("input.input").fill("added");
  await page.keyboard.press("Enter");
  await quickRows.filter({ hasText: "mcp.json in your user configuration" }).first().waitFor();
  await page.keyboard.press("Enter");
  await quickInput.locator(".quick-input-title", { hasText: "Add MCP server (3/3)" }).waitFor();
  const python = process.env.MCP_TEST_PYTHON ?? "python3";
  await quickInput.locator("input.input").fill(`${python} "${process.env.MCP_TEST_SERVERS}/basic.py" stdio`);
  await snap("add-server-command-line");
  await page.keyboard.press("Enter");
  await quickInput.waitFor({ state: "hidden" });
});

await step("the MCP view lists servers and a server's tools on expand", async () => {
  await page.locator(".activitybar .action-item .action-label[aria-label^='MCP']").first().click();
  const tree = page.locator(".pane-body .monaco-list-row");
  await tree.filter({ hasText: "basic" }).first().waitFor();
  await tree.filter({ hasText: "broken" }).first().waitFor();
  await tree
    .filter({ hasText: /^added/ })
    .first()
    .waitFor();
  const expand = async (row) => {
    await row.locator(".monaco-tl-twistie").click();
    await page
      .locator(".pane-body .monaco-list-row[aria-expanded='true']", { hasText: await row.innerText() })
      .first()
      .waitFor();
  };
  await expand(tree.filter({ hasText: /^basic/ }).first());
  await expand(tree.filter({ hasText: /^Tools/ }).first());
  await tree.filter({ hasText: /^echo/ }).first().waitFor();
  await tree.filter({ hasText: /^add/ }).first().waitFor();
  await snap("servers-view");
});

await step(
  "a project server changed on disk asks with a modal showing the new command line; Cancel keeps it disabled, the review approves it",
  async () => {
    const file = path.join(folder, ".mcp.json");
    const proj = JSON.parse(readFileSync(file, "utf8")).mcpServers.proj;
    writeFileSync(file, JSON.stringify({ mcpServers: { proj: { ...proj, args: [...proj.args, "--prompts"] } } }));
    const commandLine = [proj.command, ...proj.args, "--prompts"].join(" ");
    const dialog = page.locator(".monaco-dialog-box", { hasText: "changed the MCP server 'proj'" });
    await dialog.waitFor({ timeout: 30_000 });
    await dialog.locator(".dialog-message-detail", { hasText: commandLine }).waitFor();
    await snap("approval-modal");
    await dialog.locator(".monaco-button", { hasText: /^Cancel$/ }).click();
    await dialog.waitFor({ state: "hidden" });
    await statusItem.filter({ hasText: /1 needs approval/ }).waitFor();
    const tree = page.locator(".pane-body .monaco-list-row");
    await tree
      .filter({ hasText: /^proj.*needs approval · project/ })
      .first()
      .waitFor();
    await snap("approval-declined");
    await runPaletteCommand("MCP: Review Project Server Changes");
    await dialog.locator(".dialog-message-detail", { hasText: commandLine }).waitFor();
    await dialog.locator(".monaco-button", { hasText: /^Approve and Start$/ }).click();
    await dialog.waitFor({ state: "hidden" });
    await tree
      .filter({ hasText: /^proj.*connected · project/ })
      .first()
      .waitFor();
    await page.waitForFunction(
      () => ![...document.querySelectorAll(".statusbar-item")].some((e) => /needs approval/.test(e.textContent ?? "")),
    );
    await snap("approval-approved");
  },
);

// ------------------------------------------------------------------ a server asks (server-everything)

/** A tool of server-everything through the search: its "Call with arguments…" action. */
async function callFromSearch(query, label) {
  await runPaletteCommand("MCP: Search");
  await searchFor(query, label);
  await pickRow(label);
  await pickRow("Call with arguments");
}

/** A modal dialog with `text`, its detail showing `detail`. */
async function dialogWith(text, detail) {
  const dialog = page.locator(".monaco-dialog-box", { hasText: text });
  await dialog.waitFor();
  await dialog.locator(".dialog-message-detail", { hasText: detail }).waitFor();
  return dialog;
}

await step(
  "server-everything's form elicitation: asked field by field, checked as typed, summarised before Submit",
  async () => {
    const config = path.join(process.env.MCP_SIDECAR_HOME, "mcp.json");
    const servers = JSON.parse(readFileSync(config, "utf8"));
    servers.mcpServers.everything = {
      command: process.env.MCP_TEST_NODE,
      args: [process.env.MCP_TEST_EVERYTHING, "stdio"],
    };
    writeFileSync(config, JSON.stringify(servers));
    await runPaletteCommand("MCP: Reload Configuration");
    await callFromSearch("trigger elicitation request", "everything.trigger-elicitation-request()");
    await atStep("Call everything.trigger-elicitation-request", 1, 1); // no arguments: the summary only
    await pickRow("Submit");
    await atStep("everything asks", 1, 14);
    await quickInput.locator(".quick-input-message", { hasText: "Please provide inputs" }).waitFor();
    await snap("elicitation-form");
    await page.keyboard.type("Ada Lovelace");
    await page.keyboard.press("Enter");
    await atStep("everything asks", 2, 14);
    await snap("elicitation-boolean-pick");
    await pickRow("Yes");
    await atStep("everything asks", 3, 14);
    await page.keyboard.press("Enter"); // the default first line
    await atStep("everything asks", 4, 14);
    await page.keyboard.type("ada@example");
    await quickInput.locator(".quick-input-message", { hasText: "Not an email address" }).waitFor();
    await snap("elicitation-checked-as-typed");
    await quickInput.locator("input.input").fill("ada@example.com");
    await page.keyboard.press("Enter");
    for (let n = 5; n <= 13; n++) {
      await atStep("everything asks", n, 14);
      await settled();
      await page.keyboard.press("Enter"); // left out, or the default
    }
    await atStep("everything asks", 14, 14);
    await quickRows.filter({ hasText: 'String: "Ada Lovelace"' }).waitFor();
    await snap("elicitation-summary");
    await pickRow("Submit");
    await page.locator(".tab", { hasText: "everything.trigger-elicitation-request-result" }).waitFor();
    await page
      .locator(".editor-instance .view-lines", { hasText: "User provided the requested information" })
      .first()
      .waitFor();
  },
);

await step(
  "a URL elicitation asks with a modal showing the URL and naming its host; Decline opens nothing",
  async () => {
    await callFromSearch("trigger url elicitation", "everything.trigger-url-elicitation(url)");
    await atStep("Call everything.trigger-url-elicitation", 1, 5);
    await page.keyboard.type("https://example.com/connect?session=1f2e");
    await page.keyboard.press("Enter");
    for (let n = 2; n <= 4; n++) {
      await atStep("Call everything.trigger-url-elicitation", n, 5);
      await settled();
      await page.keyboard.press("Enter");
    }
    await atStep("Call everything.trigger-url-elicitation", 5, 5);
    await pickRow("Submit");
    const dialog = await dialogWith(
      "everything asks you to continue in the browser",
      "https://example.com/connect?session=1f2e",
    );
    await dialog.locator(".dialog-message-detail", { hasText: "Host: example.com" }).waitFor();
    await dialog.locator(".monaco-button", { hasText: /^Open example\.com$/ }).waitFor();
    await dialog.locator(".monaco-button", { hasText: "Copy URL (I'll open it myself)" }).waitFor();
    await snap("url-consent-modal");
    await dialog.locator(".monaco-button", { hasText: /^Decline$/ }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.locator(".editor-instance .view-lines", { hasText: "User declined to open the URL" }).first().waitFor();
  },
);

await step(
  "a sampling request is approved before the model sees it, and its answer before the server does",
  async () => {
    await callFromSearch("trigger sampling request", "everything.trigger-sampling-request(prompt)");
    await atStep("Call everything.trigger-sampling-request", 1, 3);
    await page.keyboard.type("Say hi");
    await page.keyboard.press("Enter");
    await atStep("Call everything.trigger-sampling-request", 2, 3);
    await page.keyboard.press("Enter"); // maxTokens: the default 100
    await atStep("Call everything.trigger-sampling-request", 3, 3);
    await pickRow("Submit");
    const context = "Resource trigger-sampling-request context: Say hi";
    const request = page.locator(".monaco-dialog-box", { hasText: "everything asks to use a language model" });
    // More than one model: VS Code's models are offered first.
    const model = quickRows.filter({ hasText: "Test Echo" }).first();
    await Promise.race([request.waitFor(), model.waitFor().then(() => model.click())]);
    await dialogWith("everything asks to use a language model", context);
    await snap("sampling-request-approval");
    await request.locator(".monaco-button", { hasText: /^Send to Test Echo$/ }).click();
    const answer = await dialogWith("Return this answer to everything?", `Echo: ${context}`);
    await snap("sampling-answer-approval");
    await answer.locator(".monaco-button", { hasText: /^Send to everything$/ }).click();
    await page.locator(".tab", { hasText: "everything.trigger-sampling-request-result" }).waitFor();
    await page
      .locator(".editor-instance .view-lines", { hasText: `Echo: ${context}` })
      .first()
      .waitFor();
  },
);

await step("a long call shows the server's progress in a cancellable notification", async () => {
  await callFromSearch("long running operation progress", "everything.trigger-long-running-operation()");
  await atStep("Call everything.trigger-long-running-operation", 1, 3);
  await quickInput.locator("input.input").fill("12");
  await page.keyboard.press("Enter");
  await atStep("Call everything.trigger-long-running-operation", 2, 3);
  await quickInput.locator("input.input").fill("4");
  await page.keyboard.press("Enter");
  await atStep("Call everything.trigger-long-running-operation", 3, 3);
  await pickRow("Submit");
  // Toasts from the VS Code server are not always shown, and a progress notification leaves the
  // list when the call ends: watch it in the notification center while it runs.
  await runPaletteCommand("Notifications: Show Notifications");
  const notice = page.locator(".notifications-center .notification-list-item, .notification-toast", {
    hasText: "Calling everything.trigger-long-running-operation",
  });
  await notice.filter({ hasText: /\d+%/ }).first().waitFor();
  await snap("progress-notification");
  await page
    .locator(".tab", { hasText: "everything.trigger-long-running-operation-result" })
    .waitFor({ timeout: 30_000 });
});

// ------------------------------------------------------------------ the gateway for VS Code's chat

/** Sets mcpSidecar.chat.tools in the Settings editor, as a person would. */
async function chooseChatTools(value) {
  await runPaletteCommand("Preferences: Open Settings (UI)");
  // The search box has the focus; a second search replaces the first.
  await page.locator(".settings-editor .search-container .suggest-input-container").click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.type("mcpSidecar.chat.tools");
  const select = page.locator(".settings-editor select[aria-label='mcpSidecar.chat.tools']");
  await select.waitFor();
  await select.selectOption(value);
  await page.waitForFunction(
    (v) => document.querySelector(".settings-editor select[aria-label='mcpSidecar.chat.tools']")?.value === v,
    value,
  );
}

const gatewayRow = quickRows.filter({ hasText: /^MCP Sidecar/ });

/**
 * Opens "MCP: List Servers" and waits for a row with `text`. VS Code closes a quick input when a
 * server's state changes under it or the server's output takes the focus: then it is opened again.
 */
async function serverList(text) {
  for (let attempt = 1; ; attempt++) {
    const open = async () => {
      await runPaletteCommand("MCP: List Servers");
      await quickRows
        .filter({ hasText: text })
        .first()
        .waitFor({ timeout: STEP_TIMEOUT / 3 });
      await settled();
      return quickInput.isVisible();
    };
    if (await open().catch(() => false)) return;
    if (attempt === 3) throw new Error(`the MCP server list did not stay open with ${text}`);
    await page.keyboard.press("Escape");
  }
}

await step(
  "mcpSidecar.chat.tools = gateway in the Settings editor: VS Code's MCP server list has MCP Sidecar",
  async () => {
    await chooseChatTools("gateway");
    await snap("chat-tools-setting-gateway");
    await serverList(/^MCP Sidecar\s*Stopped/);
    await snap("mcp-server-list");
  },
);

await step("started from the list, the gateway's mcp_tools is a tool of chat (Configure Tools)", async () => {
  await gatewayRow.first().click();
  await pickRow("Start Server");
  await serverList(/^MCP Sidecar\s*Running/);
  await gatewayRow.first().click();
  await pickRow("Show Output");
  // VS Code's log of the server: the gateway lists two tools (mcp_tools, mcp_call) before anything is activated.
  await page
    .locator(".view-lines", { hasText: /Discovered\s+2\s+tools/ })
    .first()
    .waitFor({ timeout: 60_000 });
  // The notification center (opened by earlier steps) covers the chat input's toolbar.
  if (await page.locator(".notifications-center").isVisible())
    await runPaletteCommand("Notifications: Hide Notifications");
  await page.locator(".notifications-center").waitFor({ state: "hidden" });
  await page.locator(".interactive-input-part .action-label[aria-label='Configure Tools...']").click();
  const tree = quickInput.locator(".monaco-list-row");
  const group = tree.filter({ hasText: /^mcp-sidecar\s*MCP Sidecar/ }).first();
  await group.waitFor();
  if ((await group.getAttribute("aria-expanded")) !== "true") await group.locator(".monaco-tl-twistie").click();
  await tree
    .filter({ hasText: /^mcp_tools\s*Find and load tools from the user's MCP servers/ })
    .first()
    .waitFor();
  await snap("gateway-tools-in-chat");
  await page.keyboard.press("Escape");
});

await step("mcpSidecar.chat.tools back to tools: MCP Sidecar leaves the server list at once", async () => {
  await chooseChatTools("tools");
  await serverList("Add Server");
  if ((await gatewayRow.count()) !== 0) throw new Error("MCP Sidecar is still listed");
  await snap("mcp-server-list-tools-mode");
  await page.keyboard.press("Escape");
});

console.log(`${passed} passed, 0 failed`);
await browser.close();
