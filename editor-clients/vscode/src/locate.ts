// Where the sidecar executable comes from, in order: the user's `mcpSidecar.path` setting
// (machine scope: a workspace's .vscode/settings.json cannot set it), the workspace's `.venv`
// (trusted workspaces only, and only after the person confirmed that exact binary: running a
// binary a folder ships is what trust guards against, and trust of a folder is not consent to
// whatever a `git pull` puts into its .venv), `mcp-sidecar` in an absolute PATH directory,
// then the private virtual environment this extension installs from its bundled wheel.
// Pure Node (no `vscode`), unit-tested.
import * as fs from "node:fs";
import * as path from "node:path";
import { oneLine } from "./consent";

export type SidecarSource = "setting" | "workspace" | "path" | "private";

export type Located = { found: true; command: string; source: SidecarSource } | { found: false; problem?: string };

/** What identifies one binary: a replaced or rewritten file has another size or mtime. */
export interface BinaryIdentity {
  realPath: string;
  size: number;
  mtimeMs: number;
}

/** Asks whether the workspace's own sidecar may run; false (or a rejection) skips it. */
export type ConfirmWorkspaceSidecar = (candidate: string) => Promise<boolean>;

export interface LocateInput {
  /** The user's (not a workspace's) `mcpSidecar.path`. */
  settingPath: string;
  workspaceFolders: string[];
  trusted: boolean;
  envPath: string | undefined;
  privateVenv: string;
  platform?: NodeJS.Platform;
  /** Consent for a workspace `.venv` sidecar; without it a workspace's sidecar never runs. */
  confirmWorkspace?: ConfirmWorkspaceSidecar;
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

/**
 * The directories of a PATH value that are absolute. A relative entry (`.`, `node_modules/.bin`,
 * an empty one) resolves against the extension host's working directory, which is the
 * workspace: a repository could put its own `mcp-sidecar` there.
 */
export function absolutePathDirs(envPath: string | undefined, platform: NodeJS.Platform = process.platform): string[] {
  const flavour = platform === "win32" ? path.win32 : path.posix;
  return (envPath ?? "")
    .split(flavour.delimiter)
    .map((dir) => (platform === "win32" ? dir.replace(/^"(.*)"$/, "$1") : dir))
    .filter(
      (dir) =>
        dir !== "" && flavour.isAbsolute(dir) && (platform !== "win32" || /^([A-Za-z]:[\\/]|[\\/]{2})/.test(dir)),
    );
}

export async function locateSidecar(input: LocateInput): Promise<Located> {
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
  if (input.trusted && input.confirmWorkspace) {
    for (const folder of input.workspaceFolders) {
      const candidate = venvSidecar(path.join(folder, ".venv"), platform);
      if (!isExecutable(candidate)) continue;
      const allowed = await input.confirmWorkspace(candidate).catch(() => false);
      if (allowed) return { found: true, command: candidate, source: "workspace" };
    }
  }
  for (const dir of absolutePathDirs(input.envPath, platform)) {
    const candidate = path.join(dir, EXE(platform));
    if (isExecutable(candidate)) return { found: true, command: candidate, source: "path" };
  }
  const privateSidecar = venvSidecar(input.privateVenv, platform);
  if (isExecutable(privateSidecar)) return { found: true, command: privateSidecar, source: "private" };
  return { found: false };
}

// ---------------------------------------------------------------- consent to a workspace sidecar

/** The binary a path runs (symbolic links followed), or undefined when it is not a file. */
export function binaryIdentity(file: string): BinaryIdentity | undefined {
  try {
    const realPath = fs.realpathSync(file);
    const stat = fs.statSync(realPath);
    return stat.isFile() ? { realPath, size: stat.size, mtimeMs: stat.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

/** The remembered form of one confirmed binary. */
export function identityKey(id: BinaryIdentity): string {
  return JSON.stringify([id.realPath, id.size, id.mtimeMs]);
}

/** The part of VS Code's `Memento` (globalState) the consent needs. */
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void>;
}

/** Asks the person; resolves true only when they said yes. */
export type AskWorkspaceSidecar = (candidate: string, id: BinaryIdentity) => Promise<boolean>;

export const WORKSPACE_SIDECARS_KEY = "mcpSidecar.confirmedWorkspaceSidecars";
const REMEMBERED = 50;

/**
 * One-time consent to a workspace's own `.venv` sidecar: asked once per binary (its real path,
 * size and mtime), remembered in the user's global state, so a replaced or rewritten binary
 * asks again. A refusal is remembered for this window only (`forgetRefusals` asks again).
 */
export class WorkspaceSidecarConsent {
  private readonly refused = new Set<string>();

  constructor(
    private readonly store: KeyValueStore,
    private readonly ask: AskWorkspaceSidecar,
  ) {}

  private remembered(): string[] {
    const value = this.store.get<unknown>(WORKSPACE_SIDECARS_KEY);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  }

  /** Whether `candidate` may run: already confirmed as it is now, or confirmed just now. */
  async confirm(candidate: string): Promise<boolean> {
    const id = binaryIdentity(candidate);
    if (!id) return false;
    const key = identityKey(id);
    const known = this.remembered();
    if (known.includes(key)) return true;
    if (this.refused.has(key)) return false;
    let yes = false;
    try {
      yes = await this.ask(candidate, id);
    } catch {
      yes = false;
    }
    // The file may have changed while the question was open: what was shown is what counts.
    const now = binaryIdentity(candidate);
    if (!yes || !now || identityKey(now) !== key) {
      this.refused.add(key);
      return false;
    }
    // One entry per real path: a confirmation of an older version of the file is dropped.
    const others = known.filter((k) => {
      try {
        return (JSON.parse(k) as unknown[])[0] !== id.realPath;
      } catch {
        return false;
      }
    });
    await this.store.update(WORKSPACE_SIDECARS_KEY, [...others, key].slice(-REMEMBERED));
    return true;
  }

  /** Asks again about binaries refused in this window (after "MCP: Restart Sidecar"). */
  forgetRefusals(): void {
    this.refused.clear();
  }
}

/** The modal that asks before a workspace's own `.venv` sidecar runs for the first time. */
export function workspaceSidecarQuestion(candidate: string, realPath: string): { message: string; detail: string } {
  // A folder name may hold anything: shown on one line, without invisible characters.
  const target = realPath !== candidate ? `\n(a link to ${oneLine(realPath)})` : "";
  return {
    message: "Start the mcp-sidecar that this workspace's .venv contains?",
    detail:
      `${oneLine(candidate)}${target}\n\n` +
      "It would run with your permissions, and so would the MCP servers it starts. A repository can ship its own .venv: " +
      "start it only if you created this virtual environment yourself. You are asked again when the file changes. " +
      "Cancel uses mcp-sidecar from PATH or the extension's own copy instead.",
  };
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

/** The sidecar's option for a log level: warning is the default, info `-v`, debug `-vv`. */
export function logLevelArgs(logLevel: string): string[] {
  if (logLevel === "info") return ["-v"];
  if (logLevel === "debug") return ["-vv"];
  return [];
}

/** Sidecar arguments for the log level (and a log file). */
export function sidecarArgs(logLevel: string, logFile: string | undefined): string[] {
  const args = logLevelArgs(logLevel);
  if (logFile) args.push("--log-file", logFile);
  args.push("serve");
  return args;
}
