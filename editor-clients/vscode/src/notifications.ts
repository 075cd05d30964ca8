// Sidecar notifications a person should see: watched resources that changed ("↻ server · uri
// changed" with "Read snapshot"), watches that ended, and tools deactivated under chat.
import * as vscode from "vscode";
import type { Actions } from "./actions";
import type { SidecarClient } from "./client";
import { watchMessage } from "./format";
import { reportError } from "./ui";

export function registerNotifications(
  client: SidecarClient,
  actions: Actions,
  log: vscode.LogOutputChannel,
): vscode.Disposable {
  return vscode.Disposable.from(
    client.onResourceUpdated(({ server, uri }) => {
      log.info(watchMessage(server, uri));
      void vscode.window.showInformationMessage(watchMessage(server, uri), "Read snapshot").then((choice) => {
        if (choice === "Read snapshot")
          void actions.openResource(server, uri).catch((e: unknown) => reportError(e, log));
      });
    }),
    client.onWatchesCleared(({ server, uris, reason }) => {
      log.info(`Watches of ${server} ended (${reason}): ${uris.join(", ")}`);
      void vscode.window.showInformationMessage(
        `MCP: ${uris.length === 1 ? `the watch of ${uris[0]}` : `${uris.length} watches`} on ${server} ended (${reason}). Watch again to follow changes.`,
      );
    }),
    client.onActiveToolsChanged(({ removed, reason }) => {
      log.info(`Deactivated (${reason}): ${removed.join(", ")}`);
      // The session budget making room is routine, and the activation's answer tells the model: no warning.
      if (reason === "session budget") return;
      void vscode.window.showWarningMessage(
        `MCP: ${removed.join(", ")} ${removed.length === 1 ? "is" : "are"} no longer active (${reason}).`,
      );
    }),
  );
}
