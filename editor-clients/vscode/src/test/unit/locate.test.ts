import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { bundledWheel, locateSidecar, sidecarArgs, venvSidecar } from "../../locate";

function executable(file: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, "#!/bin/sh\n");
  chmodSync(file, 0o755);
  return file;
}

const base = mkdtempSync(path.join(tmpdir(), "mcp-locate-"));
after(() => rmSync(base, { recursive: true, force: true }));
const workspace = path.join(base, "ws");
const pathDir = path.join(base, "pathbin");
const privateVenv = path.join(base, "storage", "venv");
const settingBinary = executable(path.join(base, "custom", "mcp-sidecar"));
const workspaceBinary = executable(venvSidecar(path.join(workspace, ".venv"), "linux"));
const pathBinary = executable(path.join(pathDir, "mcp-sidecar"));
const privateBinary = executable(venvSidecar(privateVenv, "linux"));
const input = { settingPath: "", workspaceFolders: [workspace], trusted: true, envPath: `/nonexistent${path.delimiter}${pathDir}`, privateVenv, platform: "linux" as const };

test("the setting wins, then the workspace .venv, then PATH, then the private venv", () => {
  assert.deepEqual(locateSidecar({ ...input, settingPath: settingBinary }), { found: true, command: settingBinary, source: "setting" });
  assert.deepEqual(locateSidecar(input), { found: true, command: workspaceBinary, source: "workspace" });
  assert.deepEqual(locateSidecar({ ...input, workspaceFolders: [] }), { found: true, command: pathBinary, source: "path" });
  assert.deepEqual(locateSidecar({ ...input, workspaceFolders: [], envPath: "" }), { found: true, command: privateBinary, source: "private" });
});

test("an untrusted workspace's .venv is never run", () => {
  assert.deepEqual(locateSidecar({ ...input, trusted: false }), { found: true, command: pathBinary, source: "path" });
});

test("a setting that names no executable is reported, not skipped", () => {
  const located = locateSidecar({ ...input, settingPath: path.join(base, "missing") });
  assert.equal(located.found, false);
  assert.match(!located.found ? (located.problem ?? "") : "", /mcpSidecar\.path setting names .*missing, which is not an executable file/);
});

test("nothing found anywhere", () => {
  assert.deepEqual(locateSidecar({ ...input, workspaceFolders: [], envPath: "", privateVenv: path.join(base, "none") }), { found: false });
});

test("the newest bundled wheel is chosen", () => {
  const ext = path.join(base, "ext");
  mkdirSync(path.join(ext, "bundled"), { recursive: true });
  assert.equal(bundledWheel(path.join(base, "none")), undefined);
  for (const name of ["mcp_sidecar-0.1.0-py3-none-any.whl", "mcp_sidecar-0.2.0-py3-none-any.whl", "other-1.0.whl"]) writeFileSync(path.join(ext, "bundled", name), "");
  assert.equal(bundledWheel(ext), path.join(ext, "bundled", "mcp_sidecar-0.2.0-py3-none-any.whl"));
});

test("the log level maps onto -v flags", () => {
  assert.deepEqual(sidecarArgs("warning", undefined), ["serve"]);
  assert.deepEqual(sidecarArgs("info", undefined), ["-v", "serve"]);
  assert.deepEqual(sidecarArgs("debug", "/tmp/x.log"), ["-vv", "--log-file", "/tmp/x.log", "serve"]);
});
