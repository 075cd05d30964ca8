// Finding (or installing) the sidecar executable, with a clear next step when it is missing.
import * as path from "node:path";
import * as vscode from "vscode";
import type { Launch } from "./client";
import { installSidecar } from "./installer";
import {
  bundledWheel,
  type Located,
  locateSidecar,
  sidecarArgs,
  WorkspaceSidecarConsent,
  workspaceSidecarQuestion,
} from "./locate";

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}

/** The interpreter of the Python extension when it is installed, else `python3`. */
async function pythonInterpreter(log: vscode.LogOutputChannel): Promise<string> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>("ms-python.python");
  if (extension) {
    try {
      const api = extension.isActive ? extension.exports : await extension.activate();
      const active = api.environments?.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
      const resolved = active ? await api.environments?.resolveEnvironment(active) : undefined;
      const executable = resolved?.executable.uri?.fsPath;
      if (executable) return executable;
    } catch (error) {
      log.warn(`The Python extension did not name an interpreter: ${String(error)}`);
    }
  }
  return process.platform === "win32" ? "python" : "python3";
}

export const USE_WORKSPACE_SIDECAR = "Start This Sidecar";

/** The user's own `mcpSidecar.path` (user or remote settings); a workspace's value never counts. */
export function userSidecarPath(): string {
  const value = vscode.workspace.getConfiguration("mcpSidecar").inspect<string>("path")?.globalValue;
  return typeof value === "string" ? value : "";
}

export class Bootstrap {
  private askedToInstall = false;
  /** Shows the question; the real one is a modal warning (tests replace it). */
  ask: (message: string, options: vscode.MessageOptions, ...items: string[]) => Thenable<string | undefined> = (
    message,
    options,
    ...items
  ) => vscode.window.showWarningMessage(message, options, ...items);
  private readonly consent: WorkspaceSidecarConsent;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.consent = new WorkspaceSidecarConsent(context.globalState, async (candidate, id) => {
      const { message, detail } = workspaceSidecarQuestion(candidate, id.realPath);
      let choice: string | undefined;
      try {
        choice = await this.ask(message, { modal: true, detail }, USE_WORKSPACE_SIDECAR);
      } catch (error) {
        this.log.warn(`Could not ask about the workspace's sidecar ${candidate}: ${String(error)}`);
      }
      if (choice === USE_WORKSPACE_SIDECAR)
        this.log.info(`Confirmed the workspace's sidecar ${candidate} (${id.realPath}, ${id.size} bytes).`);
      else this.log.info(`Not using the workspace's sidecar ${candidate}: not confirmed.`);
      return choice === USE_WORKSPACE_SIDECAR;
    });
  }

  private get privateVenv(): string {
    return path.join(this.context.globalStorageUri.fsPath, "venv");
  }

  /** The command that starts the sidecar, or undefined after telling the user what to do. */
  /** Where the sidecar is (`settingPath` defaults to the user's setting); may ask about a workspace's own sidecar. */
  locate(settingPath: string = userSidecarPath()): Promise<Located> {
    return locateSidecar({
      settingPath,
      workspaceFolders: (vscode.workspace.workspaceFolders ?? [])
        .filter((f) => f.uri.scheme === "file")
        .map((f) => f.uri.fsPath),
      trusted: vscode.workspace.isTrusted,
      envPath: process.env.PATH,
      privateVenv: this.privateVenv,
      confirmWorkspace: (candidate) => this.consent.confirm(candidate),
    });
  }

  async resolveLaunch(): Promise<Launch | undefined> {
    const config = vscode.workspace.getConfiguration("mcpSidecar");
    const located = await this.locate();
    const args = sidecarArgs(config.get<string>("logLevel", "warning"), undefined);
    if (located.found) {
      this.log.info(`Using the sidecar from ${located.source}: ${located.command}`);
      return { command: located.command, args };
    }
    if (located.problem) {
      this.log.error(located.problem);
      void vscode.window.showErrorMessage(`MCP: ${located.problem}`, "Open Settings").then((choice) => {
        if (choice) void vscode.commands.executeCommand("workbench.action.openSettings", "mcpSidecar.path");
      });
      return undefined;
    }
    this.log.error(
      "mcp-sidecar was not found: the mcpSidecar.path setting is empty, the workspace has no confirmed .venv/bin/mcp-sidecar, and it is not in an absolute PATH directory.",
    );
    // Asked once per window (and again after a settings change or a restart command); the
    // answer is not awaited, so requests fail at once with a clear message instead of hanging.
    if (!this.askedToInstall) {
      this.askedToInstall = true;
      const wheel = bundledWheel(this.context.extensionPath);
      void vscode.window
        .showWarningMessage(
          "MCP: mcp-sidecar was not found (mcpSidecar.path, the workspace's .venv, PATH).",
          ...(wheel ? ["Install It"] : []),
          "Set Path",
        )
        .then((choice) => {
          if (choice === "Set Path")
            void vscode.commands.executeCommand("workbench.action.openSettings", "mcpSidecar.path");
          if (choice === "Install It") void vscode.commands.executeCommand("mcpSidecar.installSidecar");
        });
    }
    return undefined;
  }

  /** Lets the next failed lookup ask again (after a settings change or a manual restart). */
  resetPrompt(): void {
    this.askedToInstall = false;
    this.consent.forgetRefusals();
  }

  /** Installs the bundled wheel into the private virtual environment; shows progress and errors. */
  async install(): Promise<string | undefined> {
    const wheel = bundledWheel(this.context.extensionPath);
    if (!wheel) {
      void vscode.window.showErrorMessage(
        "MCP: this build of the extension ships no sidecar wheel. Install mcp-sidecar with pip and set mcpSidecar.path.",
      );
      return undefined;
    }
    const python = await pythonInterpreter(this.log);
    try {
      const sidecar = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Installing mcp-sidecar…" },
        (progress) =>
          installSidecar(python, wheel, this.privateVenv, (line) => {
            this.log.info(line);
            progress.report({ message: line.slice(0, 80) });
          }),
      );
      void vscode.window.showInformationMessage(`MCP: installed mcp-sidecar into ${this.privateVenv}.`);
      return sidecar;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error(`Installing the sidecar failed: ${message}`);
      void vscode.window.showErrorMessage(`MCP: ${message}`, "Show Log").then((c) => c && this.log.show());
      return undefined;
    }
  }
}
