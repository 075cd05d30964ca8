// The headless Chromium both browser-driven suites use (run-exttests.mjs, ui-test.mjs): the
// system's browser (or $CHROMIUM), no sandbox, GPU, QUIC or background traffic.
import { chromium } from "playwright-core";

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
