// Drives the basic-vanillajs app on its loopback page in headless Chromium (Debian's), with the
// playwright-core the VS Code extension's tests install: prints one JSON line of what the app showed.
// Usage: node app_page_browser.cjs PLAYWRIGHT_CORE_DIR CHROMIUM URL CANARY
"use strict";
const [, , playwrightDir, chromiumPath, url, canary] = process.argv;
const { chromium } = require(playwrightDir);

async function main() {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
  const seen = { console: [] };
  try {
    const page = await browser.newPage();
    page.on("console", (message) => seen.console.push(message.text()));
    const response = await page.goto(url);
    seen.status = response.status();
    const app = page.frameLocator("#app");
    const time = app.locator("#server-time");
    const shows = async (what, pattern) => {
      try {
        await app.locator("#server-time", { hasText: pattern }).waitFor({ timeout: 60000 });
      } catch {
        throw new Error(`the app never showed ${what}; it shows ${JSON.stringify(await time.textContent())}`);
      }
      return time.textContent();
    };
    const escaped = canary.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    seen.initial = await shows("the tool result it was opened with", new RegExp(`^${escaped}$`));
    await app.locator("#get-time-btn").click();
    seen.denied = await shows("[ERROR] for a refused call", /^\[ERROR\]$/);
    await app.locator("#get-time-btn").click();
    seen.allowed = await shows("the server's time", /^\d{4}-\d\d-\d\dT/);
  } finally {
    await browser.close();
  }
  process.stdout.write(`${JSON.stringify(seen)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n`);
  process.exit(1);
});
