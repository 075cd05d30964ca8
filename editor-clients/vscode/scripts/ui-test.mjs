// Drives the real workbench (VS Code server from code-server, the .vsix installed) in headless
// Chromium like a person would: the status bar, the command palette, "MCP: Search" → pick a
// tool → call it with JSON arguments, the status bar changing, a prompt preview → Use prompt,
// the MCP servers view, and the approval modal of a project server changed on disk. Saves a
// screenshot of every step into ARTIFACTS_DIR.
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

await step("picking the tool offers its actions, and the call takes JSON arguments", async () => {
  await pickRow("basic.add(a, b)");
  await quickRows.filter({ hasText: "Call with arguments" }).waitFor();
  await snap("tool-actions");
  await pickRow("Call with arguments");
  const input = quickInput.locator("input.input");
  await quickInput.locator(".quick-input-title", { hasText: "Call basic.add" }).waitFor();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.type('{"a": 2}');
  await quickInput.locator(".quick-input-message", { hasText: "'b' is required" }).waitFor();
  await snap("arguments-validated-against-schema");
  await input.fill('{"a": 2, "b": 40}');
  await page.keyboard.press("Enter");
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
  await quickInput.locator(".quick-input-title", { hasText: "Call basic.touch" }).waitFor();
  await quickInput.locator("input.input").fill('{"uri": "notes://readme"}');
  await page.keyboard.press("Enter");
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

console.log(`${passed} passed, 0 failed`);
await browser.close();
