// The "Install It" path for real: the wheel that scripts/package.mjs put in bundled/ (and the
// .vsix ships) is installed with python3 into a fresh private venv by the extension's
// installer, and the installed sidecar runs. Needs the package index (or pip's cache) for the
// sidecar's dependencies; run after packaging.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { installSidecar } from "../../installer";
import { bundledWheel } from "../../locate";

test("the bundled wheel installs into a private venv and the sidecar runs", { timeout: 600_000 }, async () => {
  const extensionDir = path.resolve(__dirname, "../..");
  const wheel = bundledWheel(extensionDir);
  assert.ok(wheel, `no wheel in ${extensionDir}/bundled (run scripts/package.mjs first)`);
  const storage = mkdtempSync(path.join(tmpdir(), "mcp-private-venv-"));
  try {
    const lines: string[] = [];
    const sidecar = await installSidecar("python3", wheel, path.join(storage, "venv"), (l) => lines.push(l));
    assert.equal(sidecar, path.join(storage, "venv", "bin", "mcp-sidecar"));
    const version = execFileSync(sidecar, ["--version"], { encoding: "utf8" }).trim();
    assert.match(version, /^mcp-sidecar \d+\.\d+\.\d+/);
    assert.ok(
      lines.some((l) => l.includes(path.basename(wheel))),
      lines.join("\n"),
    );
  } finally {
    rmSync(storage, { recursive: true, force: true });
  }
});
