// MCP Apps in the real workbench (VS Code server from code-server, the .vsix installed),
// driven in headless Chromium: the official example server @modelcontextprotocol/server-basic-
// vanillajs (tests/package.json) is added to the global mcp.json, its tool get-time is called
// from MCP: Search, and its app (a clock) opens in a webview panel: the sandboxed frame shows
// the time the call returned (the bridge's tool-result), its "Get Server Time" button asks the
// person through a modal before the app's own tools/call runs (then shows a new time), and its
// "Open Link" asks before anything opens; inside the frame, a fetch of a reachable server is
// refused by the policy (connect-src) and the page above is out of reach. Then a second official
// server, @modelcontextprotocol/server-system-monitor: its get-system-info opens a chart app that
// shows the call's result, then polls its app-only tool poll-system-stats, asked first. Saves a screenshot of every step into ARTIFACTS_DIR.
// Usage: node apps-ui-test.mjs BASE_URL WORKSPACE ARTIFACTS_DIR
// Environment: MCP_SIDECAR_HOME (its mcp.json gets the server), MCP_TEST_NODE, MCP_TEST_APP_SERVER
// (server-basic-vanillajs's dist/index.js).
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { launchChromium } from "./chromium.mjs";

const [base, folder, artifacts] = process.argv.slice(2);
const STEP_TIMEOUT = 30_000;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const config = path.join(process.env.MCP_SIDECAR_HOME, "mcp.json");
const servers = JSON.parse(readFileSync(config, "utf8"));
servers.mcpServers.apps = { command: process.env.MCP_TEST_NODE, args: [process.env.MCP_TEST_APP_SERVER, "--stdio"] };
// server-system-monitor sits beside server-basic-vanillajs in tests/node_modules/@modelcontextprotocol.
const MONITOR = path.resolve(process.env.MCP_TEST_APP_SERVER, "../../../server-system-monitor/dist/index.js");
servers.mcpServers.monitor = { command: process.env.MCP_TEST_NODE, args: [MONITOR, "--stdio"] };
writeFileSync(config, JSON.stringify(servers, null, 2));

const browser = await launchChromium();
const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
page.setDefaultTimeout(STEP_TIMEOUT);
let passed = 0;
let shot = 0;

async function snap(name) {
  shot += 1;
  const file = path.join(artifacts, `apps-${String(shot).padStart(2, "0")}-${name}.png`);
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
const dialog = page.locator(".monaco-dialog-box");
// VS Code's webview (iframe.webview), its content frame, and in it the app's sandboxed frame.
const webview = page.frameLocator("iframe.webview").last().frameLocator("#active-frame");
const app = webview.frameLocator("#app");
const clock = app.locator("#server-time");

async function runPaletteCommand(title) {
  await page
    .locator(".monaco-workbench")
    .click({ position: { x: 700, y: 400 } })
    .catch(() => undefined);
  await page.keyboard.press("F1");
  await quickInput.waitFor({ state: "visible" });
  await page.keyboard.type(title);
  const row = quickRows.filter({ hasText: title }).first();
  await row.waitFor();
  await row.click();
}

/** The clock's text once it is a time (the app writes "Loading..." first). */
async function clockTime() {
  await clock.filter({ hasText: /^\d{4}-/ }).waitFor();
  const text = (await clock.textContent())?.trim() ?? "";
  if (!ISO_TIME.test(text)) throw new Error(`the app's clock shows '${text}'`);
  return text;
}

await step("the workbench loads with the app server configured", async () => {
  await page.goto(`${base}/?folder=${encodeURIComponent(folder)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
  await page.locator(".statusbar-item", { hasText: /MCP:/ }).waitFor({ timeout: 60_000 });
  await runPaletteCommand("MCP: Reload Configuration");
  // Toasts from the VS Code server are not always shown; the notification center has them all.
  await runPaletteCommand("Notifications: Show Notifications");
  await page.locator(".notifications-center .notification-list-item", { hasText: "Configuration reloaded" }).waitFor();
  await runPaletteCommand("Notifications: Hide Notifications");
  await page.locator(".notifications-center").waitFor({ state: "hidden" });
});

let first = "";
await step("calling get-time from MCP: Search opens its app, which shows the call's result", async () => {
  await runPaletteCommand("MCP: Search");
  await quickInput.locator(".quick-input-title", { hasText: "MCP: Search" }).waitFor();
  await page.keyboard.type("current server time");
  await quickRows.filter({ hasText: "apps.get-time" }).first().click();
  await quickRows.filter({ hasText: "Call with arguments" }).first().click();
  await quickRows.filter({ hasText: "Submit" }).first().click();
  await page.locator(".tab", { hasText: "apps.get-time-result" }).waitFor();
  await page.locator(".tab", { hasText: "Get Time · apps" }).waitFor();
  await webview.locator("#status", { hasText: "Sandboxed MCP app · no network" }).waitFor();
  first = await clockTime();
  await app.locator("#get-time-btn").waitFor();
  console.log(`    the app shows the call's time ${first}`);
  await snap("app-rendered");
});

await step("the app runs sandboxed: no network, no way into the page or the VS Code API", async () => {
  const frame = page.frames().find((f) => f.url() === "about:srcdoc");
  if (!frame)
    throw new Error(
      `no app frame among ${page
        .frames()
        .map((f) => f.url())
        .join(", ")}`,
    );
  // A server this browser can reach (the VS Code server itself): the policy must block it.
  const probe = await frame.evaluate(async (url) => {
    const violation = new Promise((resolve) => {
      document.addEventListener("securitypolicyviolation", (e) => resolve(e.effectiveDirective), { once: true });
      setTimeout(() => resolve("no violation reported within 10 s"), 10_000);
    });
    const fetched = await fetch(url).then(
      () => "fetched",
      (error) => `refused: ${error}`,
    );
    let parent = "";
    try {
      parent = typeof window.parent.document;
    } catch (error) {
      parent = `blocked: ${error.name}`;
    }
    return { fetched, violation: await violation, parent, api: typeof acquireVsCodeApi, origin: window.origin };
  }, `${base}/version`);
  console.log(`    ${JSON.stringify(probe)}`);
  if (!probe.fetched.startsWith("refused")) throw new Error(`the app reached ${base}/version`);
  if (probe.violation !== "connect-src") throw new Error(`violation: ${probe.violation}`);
  if (!probe.parent.startsWith("blocked")) throw new Error(`the app reads its parent's document: ${probe.parent}`);
  if (probe.api !== "undefined" || probe.origin !== "null") throw new Error(`api ${probe.api}, origin ${probe.origin}`);
});

await step("the app's own tools/call asks first; allowed, the app shows the new time", async () => {
  await app.locator("#get-time-btn").click();
  await dialog.filter({ hasText: 'asks to call its tool "get-time"' }).waitFor();
  await snap("app-call-asked");
  await dialog.locator(".monaco-button", { hasText: "Allow" }).click();
  await dialog.waitFor({ state: "hidden" });
  await clock
    .filter({ hasNotText: first })
    .filter({ hasText: /^\d{4}-/ })
    .waitFor();
  const second = await clockTime();
  if (second <= first) throw new Error(`the new time ${second} is not after ${first}`);
  console.log(`    the app called get-time itself: ${second}`);
  await snap("app-called-tool");
});

await step("asked once per app and tool: the next click calls without a question", async () => {
  const before = await clockTime();
  await app.locator("#get-time-btn").click();
  await clock
    .filter({ hasNotText: before })
    .filter({ hasText: /^\d{4}-/ })
    .waitFor();
  if (await dialog.isVisible()) throw new Error("the allowed tool asked again");
});

await step("the app's Open Link asks before anything opens; Cancel opens nothing", async () => {
  const pages = browser.contexts()[0].pages().length;
  await app.locator("#open-link-btn").click();
  await dialog.filter({ hasText: "asks to open modelcontextprotocol.io in the browser" }).waitFor();
  await snap("app-link-asked");
  await dialog.locator(".monaco-button", { hasText: "Cancel" }).click();
  await dialog.waitFor({ state: "hidden" });
  if (browser.contexts()[0].pages().length !== pages) throw new Error("a page opened");
});

await step("a second app server: get-system-info opens its chart app with the call's result", async () => {
  await runPaletteCommand("MCP: Search");
  await quickInput.locator(".quick-input-title", { hasText: "MCP: Search" }).waitFor();
  await page.keyboard.type("system information hostname platform memory");
  await quickRows.filter({ hasText: "monitor.get-system-info" }).first().click();
  await quickRows.filter({ hasText: "Call with arguments" }).first().click();
  await quickRows.filter({ hasText: "Submit" }).first().click();
  await page.locator(".tab", { hasText: "Get System Info · monitor" }).waitFor();
  const monitor = page.frameLocator("iframe.webview").last().frameLocator("#active-frame").frameLocator("#app");
  const hostname = monitor.locator("#info-hostname");
  await hostname.filter({ hasText: /\S/ }).filter({ hasNotText: /^-+$/ }).waitFor();
  console.log(`    the app shows the host ${(await hostname.textContent())?.trim()}`);
  // The app starts polling its app-only tool on the result by itself: asked first, then the
  // memory figure fills in.
  await dialog.filter({ hasText: 'asks to call its tool "poll-system-stats"' }).waitFor();
  await dialog.locator(".monaco-button", { hasText: "Allow" }).click();
  await dialog.waitFor({ state: "hidden" });
  await monitor
    .locator("#memory-percent")
    .filter({ hasText: /\d+(\.\d+)?%/ })
    .waitFor();
  console.log(
    `    the app polled poll-system-stats: memory ${(await monitor.locator("#memory-percent").textContent())?.trim()}`,
  );
  await snap("second-app-polling");
});

console.log(`${passed} passed, 0 failed`);
await browser.close();
