// Installs the sidecar from the wheel shipped inside the .vsix into a private virtual
// environment (the extension's global storage). Pure Node so it can run outside VS Code too.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { isExecutable, venvSidecar } from "./locate";

export class InstallError extends Error {
  constructor(
    message: string,
    readonly step: "python" | "venv" | "pip",
  ) {
    super(message);
  }
}

function run(command: string, args: string[], log: (line: string) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const forward = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split(/\r?\n/)) if (line.trim() !== "") log(line);
    };
    child.stdout.on("data", forward);
    child.stderr.on("data", forward);
    child.on("error", reject);
    child.on("close", (code) => resolve(code ?? 1));
  });
}

/**
 * Creates `venv` with `python` (3.11+) and installs `wheel` into it; returns the sidecar path.
 * A half-made environment from an earlier failure is removed first.
 */
export async function installSidecar(
  python: string,
  wheel: string,
  venv: string,
  log: (line: string) => void,
): Promise<string> {
  log(`Using Python: ${python}`);
  let code: number;
  try {
    code = await run(python, ["-c", "import sys; sys.exit(0 if sys.version_info >= (3, 11) else 3)"], log);
  } catch {
    throw new InstallError(
      `Python was not found at '${python}'. Install Python 3.11 or newer, or select an interpreter.`,
      "python",
    );
  }
  if (code === 3) throw new InstallError(`'${python}' is older than Python 3.11, which mcp-sidecar needs.`, "python");
  if (code !== 0) throw new InstallError(`'${python}' could not be run (exit ${code}).`, "python");
  fs.rmSync(venv, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(venv), { recursive: true });
  log(`Creating the virtual environment ${venv}`);
  if ((await run(python, ["-m", "venv", venv], log)) !== 0) {
    throw new InstallError(
      "Could not create a virtual environment. On Debian or Ubuntu install the python3-venv package.",
      "venv",
    );
  }
  const pip = path.join(path.dirname(venvSidecar(venv)), process.platform === "win32" ? "python.exe" : "python");
  log(`Installing ${path.basename(wheel)} and its dependencies`);
  if ((await run(pip, ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", wheel], log)) !== 0) {
    throw new InstallError("pip could not install mcp-sidecar; the log shows why (often no network access).", "pip");
  }
  const sidecar = venvSidecar(venv);
  if (!isExecutable(sidecar)) throw new InstallError(`The installation finished but ${sidecar} is missing.`, "pip");
  return sidecar;
}
