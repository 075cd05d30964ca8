// Where the sidecar executable comes from, in order: the `mcpSidecar.path` setting, the
// workspace's `.venv` (trusted workspaces only: running a binary an untrusted folder ships is
// exactly what trust guards against), `mcp-sidecar` on PATH, then the private virtual
// environment this extension installs from its bundled wheel. Pure Node, unit-tested.
import * as fs from "node:fs";
import * as path from "node:path";

export type SidecarSource = "setting" | "workspace" | "path" | "private";

export type Located =
  | { found: true; command: string; source: SidecarSource }
  | { found: false; problem?: string };

export interface LocateInput {
  settingPath: string;
  workspaceFolders: string[];
  trusted: boolean;
  envPath: string | undefined;
  privateVenv: string;
  platform?: NodeJS.Platform;
}

const EXE = (platform: NodeJS.Platform) => (platform === "win32" ? "mcp-sidecar.exe" : "mcp-sidecar");
const BIN = (platform: NodeJS.Platform) => (platform === "win32" ? "Scripts" : "bin");

export function isExecutable(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The sidecar inside a virtual environment directory. */
export function venvSidecar(venv: string, platform: NodeJS.Platform = process.platform): string {
  return path.join(venv, BIN(platform), EXE(platform));
}

export function locateSidecar(input: LocateInput): Located {
  const platform = input.platform ?? process.platform;
  const setting = input.settingPath.trim();
  if (setting !== "") {
    const resolved = setting.startsWith("~") ? path.join(process.env.HOME ?? "", setting.slice(1)) : setting;
    if (isExecutable(resolved)) return { found: true, command: resolved, source: "setting" };
    return {
      found: false,
      problem: `The mcpSidecar.path setting names ${setting}, which is not an executable file. Fix the setting or clear it to search the workspace and PATH.`,
    };
  }
  if (input.trusted) {
    for (const folder of input.workspaceFolders) {
      const candidate = venvSidecar(path.join(folder, ".venv"), platform);
      if (isExecutable(candidate)) return { found: true, command: candidate, source: "workspace" };
    }
  }
  for (const dir of (input.envPath ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, EXE(platform));
    if (isExecutable(candidate)) return { found: true, command: candidate, source: "path" };
  }
  const privateSidecar = venvSidecar(input.privateVenv, platform);
  if (isExecutable(privateSidecar)) return { found: true, command: privateSidecar, source: "private" };
  return { found: false };
}

/** The newest `mcp_sidecar-*.whl` shipped in the extension's `bundled/` folder. */
export function bundledWheel(extensionPath: string): string | undefined {
  const dir = path.join(extensionPath, "bundled");
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return undefined;
  }
  const wheels = names.filter((n) => /^mcp_sidecar-.+\.whl$/.test(n)).sort();
  const newest = wheels[wheels.length - 1];
  return newest ? path.join(dir, newest) : undefined;
}

/** Sidecar arguments for the log level: warning is the default, info `-v`, debug `-vv`. */
export function sidecarArgs(logLevel: string, logFile: string | undefined): string[] {
  const args: string[] = [];
  if (logLevel === "info") args.push("-v");
  if (logLevel === "debug") args.push("-vv");
  if (logFile) args.push("--log-file", logFile);
  args.push("serve");
  return args;
}
