// Runs the extension's test suite inside a real VS Code extension host: loads the workbench
// of a VS Code server started with --enable-smoke-test-driver in headless Chromium, with the
// extension under development and the tests module in the URL payload, and exits with the
// suite's exit code. Usage: node run-exttests.mjs BASE_URL WORKSPACE EXTENSION_DIR TESTS_JS [TIMEOUT_S]
// Only the suite's own lines ("[mcp] ...") are printed; the whole workbench console goes to
// $EXTTESTS_LOG (printed when the suite fails).
import { appendFileSync, writeFileSync } from "node:fs";
import { launchChromium } from "./chromium.mjs";

const [base, folder, extDir, testsPath, timeoutArg] = process.argv.slice(2);
const timeoutMs = Number(timeoutArg ?? 240) * 1000;
const remote = (p) => `vscode-remote://${new URL(base).host}${p}`;
const payload = JSON.stringify([
  ["extensionDevelopmentPath", remote(extDir)],
  ["extensionTestsPath", remote(testsPath)],
  ["skipWelcome", "true"],
]);
const browser = await launchChromium();
const page = await browser.newPage();
const timer = setTimeout(async () => {
  console.error(`extension tests did not finish within ${timeoutMs / 1000} s (the workbench console is in ${logFile})`);
  await browser.close().catch(() => undefined);
  process.exit(2);
}, timeoutMs);
const logFile = process.env.EXTTESTS_LOG ?? "/dev/null";
writeFileSync(logFile, "");
await page.exposeFunction("codeAutomationLog", (type, args) => {
  const line = (args ?? []).map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
  appendFileSync(logFile, `[${type}] ${line}\n`);
  if (line.startsWith("[mcp] ")) console.log(line.slice(6));
  else if (type === "error" && /mcp-sidecar|mcpSidecar/.test(line)) console.log(`[workbench error] ${line}`);
});
await page.exposeFunction("codeAutomationExit", async (code) => {
  clearTimeout(timer);
  console.log(`extension tests exit code ${code}`);
  if (code !== 0 && process.env.EXTTESTS_SCREENSHOT) {
    await page.screenshot({ path: process.env.EXTTESTS_SCREENSHOT }).catch(() => undefined);
    console.log(`(screenshot of the workbench: ${process.env.EXTTESTS_SCREENSHOT})`);
  }
  if (code !== 0 && logFile !== "/dev/null") console.log(`(the workbench console is in ${logFile})`);
  await browser.close();
  process.exit(code);
});
page.context().on("page", (opened) => {
  appendFileSync(logFile, `[runner] the workbench opened a page: ${opened.url()}\n`);
  opened.on("framenavigated", (frame) => appendFileSync(logFile, `[runner]   navigated: ${frame.url()}\n`));
});
// A person answers VS Code's "open the external website?" dialog (the OAuth login opens the
// authorization page through window/showDocument): press Open whenever it appears.
(async () => {
  const open = page.locator(".monaco-dialog-box .monaco-button", { hasText: /^Open$/ });
  for (;;) {
    await open.first().waitFor({ state: "visible", timeout: 0 });
    appendFileSync(logFile, "[runner] pressing Open in the external-website dialog\n");
    await open
      .first()
      .click()
      .catch(() => undefined);
    await open
      .first()
      .waitFor({ state: "hidden", timeout: 0 })
      .catch(() => undefined);
  }
})().catch(() => undefined);
await page.goto(`${base}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(payload)}`);
