// Builds dist/mcp-sidecar.vsix: the production bundle plus the sidecar's wheel in bundled/
// (built from a copy of the repository's Python package, so the source tree stays untouched).
// Usage: node scripts/package.mjs [--python PATH]
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const root = path.resolve(here, "../..");
const pythonFlag = process.argv.indexOf("--python");
const python = pythonFlag > 0 ? process.argv[pythonFlag + 1] : path.join(root, ".venv/bin/python");
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { stdio: "inherit", ...opts });

const stage = mkdtempSync(path.join(tmpdir(), "mcp-sidecar-wheel-"));
try {
  cpSync(path.join(root, "pyproject.toml"), path.join(stage, "pyproject.toml"));
  cpSync(path.join(root, "README.md"), path.join(stage, "README.md"));
  cpSync(path.join(root, "sidecar"), path.join(stage, "sidecar"), {
    recursive: true,
    filter: (src) => !src.includes("__pycache__") && !src.endsWith(".egg-info"),
  });
  const bundled = path.join(here, "bundled");
  rmSync(bundled, { recursive: true, force: true });
  mkdirSync(bundled);
  run(python, ["-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", "-w", bundled, stage]);
  console.log(`wheel: ${readdirSync(bundled).join(", ")}`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
run(process.execPath, [path.join(here, "esbuild.mjs"), "--production"], { cwd: here });
mkdirSync(path.join(here, "dist"), { recursive: true });
run(
  process.execPath,
  [
    path.join(here, "node_modules/@vscode/vsce/vsce"),
    "package",
    "--no-dependencies",
    "--allow-missing-repository",
    "--skip-license",
    "--no-rewrite-relative-links",
    "-o",
    "dist/mcp-sidecar.vsix",
  ],
  { cwd: here },
);
