// The private-venv installer's failure paths with a real Python (no network needed): each
// failure names its step and a next step, never a stack trace.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { InstallError, installSidecar } from "../../installer";

const base = mkdtempSync(path.join(tmpdir(), "mcp-install-"));
after(() => rmSync(base, { recursive: true, force: true }));

test("a missing interpreter is reported as a python step", async () => {
  const error = await installSidecar(
    path.join(base, "no-python"),
    "x.whl",
    path.join(base, "v1"),
    () => undefined,
  ).catch((e: unknown) => e);
  assert.ok(error instanceof InstallError);
  assert.equal(error.step, "python");
  assert.match(error.message, /Python was not found at .*no-python.*Install Python 3\.11 or newer/);
});

test("an interpreter older than 3.11 is refused before anything is created", async () => {
  const old = path.join(base, "old-python");
  writeFileSync(old, "#!/bin/sh\nexit 3\n");
  chmodSync(old, 0o755);
  const venv = path.join(base, "v2");
  const error = await installSidecar(old, "x.whl", venv, () => undefined).catch((e: unknown) => e);
  assert.ok(error instanceof InstallError && error.step === "python");
  assert.match(error.message, /older than Python 3\.11/);
  assert.equal(existsSync(venv), false);
});

test("a wheel pip cannot install leaves a pip step error after creating the venv", { timeout: 120_000 }, async () => {
  const venv = path.join(base, "v3");
  const lines: string[] = [];
  const error = await installSidecar("python3", path.join(base, "missing.whl"), venv, (l) => lines.push(l)).catch(
    (e: unknown) => e,
  );
  assert.ok(error instanceof InstallError, String(error));
  assert.equal(error.step, "pip");
  assert.match(error.message, /pip could not install mcp-sidecar/);
  assert.ok(existsSync(path.join(venv, "bin", "python")), "the venv was created");
  assert.ok(
    lines.some((l) => l.startsWith("Creating the virtual environment")),
    lines.join("\n"),
  );
});
