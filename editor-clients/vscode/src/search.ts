// "MCP: Search": a quick pick that asks `mcp/discover` as the user types (the sidecar matches
// the last word as a prefix), then offers what can be done with the chosen candidate.
import * as vscode from "vscode";
import type { Actions } from "./actions";
import type { SidecarClient } from "./client";
import { candidateItem, describeError } from "./format";
import { iconPath } from "./icons";
import * as P from "./protocol";
import { pickOne, trackQuickPick } from "./ui";

interface CandidateItem extends vscode.QuickPickItem {
  candidate?: P.Candidate;
}

interface ActionItem extends vscode.QuickPickItem {
  run: () => Promise<unknown>;
}

const DEBOUNCE_MS = 120;

export function actionsFor(candidate: P.Candidate, actions: Actions): ActionItem[] {
  switch (candidate.kind) {
    case "tool":
      return [
        {
          label: "$(play) Call with arguments…",
          description: "each argument asked in turn and checked as you type (or as JSON)",
          run: () => actions.call(candidate.id),
        },
        {
          label: "$(zap) Activate for chat",
          description: candidate.loaded ? "already active" : "chat calls it with mcp_call",
          run: () => actions.activate(candidate.id),
        },
        { label: "$(json) Show schema", run: () => actions.showSchema(candidate.id) },
      ];
    case "resource":
      return [
        {
          label: "$(go-to-file) Open",
          description: "read-only, read through the server",
          run: () => actions.openResource(candidate.server, candidate.uri),
        },
        {
          label: "$(eye) Watch for changes",
          run: async () =>
            vscode.commands.executeCommand("mcpSidecar.subscribe", { server: candidate.server, uri: candidate.uri }),
        },
      ];
    case "template":
      return [
        {
          label: "$(edit) Fill and open…",
          description: candidate.variables.map((v) => `{${v}}`).join(" "),
          run: () => actions.fillTemplate(candidate.server, candidate.uriTemplate, candidate.variables),
        },
      ];
    case "prompt":
      return [
        {
          label: "$(eye) Preview prompt…",
          description: "nothing is sent before Use prompt",
          run: () => actions.previewPrompt(candidate.server, candidate.name, candidate.arguments),
        },
      ];
  }
}

/** Opens the search; resolves once the user picked and ran an action (or dismissed it). */
export function openSearch(client: SidecarClient, actions: Actions, initial = ""): Promise<void> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<CandidateItem>();
    pick.title = "MCP: Search tools, resources and prompts";
    pick.placeholder = "Describe what you need, e.g. 'add numbers' or 'settings'";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.value = initial;
    let generation = 0;
    let timer: NodeJS.Timeout | undefined;
    const limit = vscode.workspace.getConfiguration("mcpSidecar").get<number>("search.limit", 20);

    let lastQuery: string | undefined;
    const query = async (value: string) => {
      lastQuery = value;
      const mine = ++generation;
      pick.busy = true;
      try {
        const result = await client.request(P.discover, { query: value, limit });
        if (mine !== generation) return;
        const items: CandidateItem[] = result.candidates.map((candidate) => ({
          ...candidateItem(candidate),
          iconPath: iconPath(candidate.icons),
          candidate,
          alwaysShow: true,
        }));
        for (const missing of result.unavailable) {
          items.push({
            // A configuration file whose servers are unknown has server "".
            label: `$(warning) ${missing.server || "configuration"}: ${missing.kind} unavailable`,
            detail: `${missing.diagnostic.message} ${missing.diagnostic.hint}`,
            alwaysShow: true,
          });
        }
        if (items.length === 0)
          items.push({ label: "No match", detail: "Try other words, or check MCP: Show Status.", alwaysShow: true });
        pick.items = items;
      } catch (error) {
        if (mine === generation)
          pick.items = [{ label: "$(error) Search failed", detail: describeError(error).message, alwaysShow: true }];
      } finally {
        if (mine === generation) pick.busy = false;
      }
    };

    pick.onDidChangeValue((value) => {
      clearTimeout(timer);
      // The initial value echoes back as a change after show(): it was queried already, and
      // querying again would re-render the list under a pending Enter.
      if (value === lastQuery) return;
      timer = setTimeout(() => void query(value), DEBOUNCE_MS);
    });
    pick.onDidAccept(async () => {
      // Enter can land while fresh results replace the items: fall back to the highlighted one.
      const candidate = (pick.selectedItems[0] ?? pick.activeItems[0])?.candidate;
      if (!candidate) return;
      pick.hide();
      const items = actionsFor(candidate, actions);
      const chosen =
        items.length === 1
          ? items[0]
          : await pickOne(items, { title: candidateItem(candidate).label, placeHolder: "What to do" });
      try {
        await chosen?.run();
      } catch (error) {
        void vscode.window.showErrorMessage(`MCP: ${describeError(error).message}`);
      }
      resolve();
    });
    pick.onDidHide(() => {
      clearTimeout(timer);
      // Resolved by onDidAccept when a candidate was chosen; otherwise dismissed.
      if (!(pick.selectedItems[0] ?? pick.activeItems[0])?.candidate) resolve();
      pick.dispose();
    });
    trackQuickPick(pick);
    pick.show();
    void query(initial);
  });
}
