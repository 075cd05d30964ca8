// What tools cost the context (the Context view, the status bar tooltip) and background calls
// (mcpSidecar.backgroundAfterSeconds, the Background Calls view), against the real sidecar and
// the fixture server "basic" (its `slow` tool sleeps the seconds it is given).
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { statusBarModel } from "../../format";
import * as P from "../../protocol";
import { tokenCount } from "../../tokens";
import { activeText, ext, rejectsWithCode, test, waitFor } from "./harness";

const config = () => vscode.workspace.getConfiguration("mcpSidecar");

/** Changes a setting that restarts the sidecar, and waits for the new one to run with its rows. */
async function updateAndRestart(setting: string, value: unknown): Promise<void> {
  const api = ext();
  let started = false;
  const sub = api.client.onDidStart(() => {
    started = true;
  });
  try {
    await config().update(setting, value, vscode.ConfigurationTarget.Global);
    await waitFor(`the sidecar restarted for ${setting}`, () => started && api.client.state === "running", 30_000);
    await waitFor("rows after the restart", () => api.store.rows.length >= 5);
  } finally {
    sub.dispose();
  }
}

export function registerContextTests(): void {
  test("the Context view: the session's active tools with their figures, mcp_tools, both together, every server's", async () => {
    const api = ext();
    await vscode.commands.executeCommand("mcpSidecar.callTool", "basic.echo", { text: "context" });
    const active = await api.client.request(P.activeTools, { session: P.DEFAULT_SESSION });
    assert.ok(
      active.tools.some((t) => t.id === "basic.echo"),
      active.tools.map((t) => t.id).join(", "),
    );
    assert.equal(typeof active.tokens, "number", "the sidecar counted the session's tools");
    const ids = active.tools.map((t) => t.id);
    const session = await waitFor("the session's tools in the Context view", () => {
      const entry = api.context.getChildren().find((e) => e.id === "context:session");
      const shown = entry?.children?.map((c) => c.label);
      return shown && JSON.stringify(shown) === JSON.stringify(ids) ? entry : undefined;
    });
    const count = `${ids.length} tool${ids.length === 1 ? "" : "s"}`;
    assert.equal(session.label, "Active tools (session default)");
    assert.equal(session.description, `${count} · ${tokenCount(active.tokens as number)}`);
    const echo = session.children?.find((c) => c.label === "basic.echo");
    const echoTokens = active.tools.find((t) => t.id === "basic.echo")?.tokens;
    assert.equal(echo?.description, tokenCount(echoTokens as number));

    // mcp_tools' figure is known once a catalog was counted (basic's was, for the call).
    const definition = await api.client.request(P.modelToolDefinition, {});
    assert.equal(typeof definition.tokens, "number");
    const together = await waitFor("mcp_tools and the total in the view", () =>
      api.context.getChildren().find((e) => e.id === "context:together"),
    );
    const own = api.context.getChildren().find((e) => e.id === "context:modelTool");
    assert.equal(own?.description, tokenCount(definition.tokens as number));
    assert.equal(together.description, tokenCount((active.tokens as number) + (definition.tokens as number)));

    const basic = api.store.row("basic");
    assert.equal(typeof basic?.tokens, "number", "basic's row has its figure");
    const servers = api.context.getChildren().find((e) => e.id === "context:servers");
    const row = servers?.children?.find((c) => c.label === "basic");
    assert.match(row?.description ?? "", new RegExp(`^${tokenCount(basic?.tokens as number)}`));
    const item = api.context.getTreeItem(session);
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);

    const tooltip = statusBarModel(api.client.state, api.store.rows, null, null, api.store.context).tooltipLines;
    assert.ok(
      tooltip.includes(`Active tools (session default): ${count} · ${tokenCount(active.tokens as number)}`),
      tooltip.join("\n"),
    );
    assert.ok(tooltip.includes(`mcp_tools: ${tokenCount(definition.tokens as number)}`), tooltip.join("\n"));

    // The chat starts over: the session's tools leave the view.
    await vscode.commands.executeCommand("mcpSidecar.endChatSession");
    await waitFor(
      "no active tools in the Context view",
      () => api.context.getChildren().find((e) => e.id === "context:session")?.description === "no active tools",
    );
  });

  test("a call past mcpSidecar.backgroundAfterSeconds shows up in Background Calls, and its result opens once", async () => {
    const api = ext();
    await updateAndRestart("backgroundAfterSeconds", 1);
    try {
      // basic.slow sleeps 4 s: far past the 1 s threshold, so its answer comes while it runs.
      const answer = (await vscode.commands.executeCommand("mcpSidecar.callTool", "basic.slow", {
        seconds: 4,
      })) as P.CallToolResult;
      const background = answer.background;
      assert.ok(background, `the call went to the background: ${JSON.stringify(answer.content)}`);
      assert.equal(background.tool, "basic.slow");
      assert.match(activeText("mcp-sidecar-output"), /goes on in the background as call call-/);
      const listed = await waitFor("the call in the Background Calls view", () =>
        api.calls.getChildren().find((c) => c.callId === background.callId),
      );
      assert.equal(listed.tool, "basic.slow");
      const ended = await waitFor(
        "the call to end",
        () => api.calls.getChildren().find((c) => c.callId === background.callId && c.status === "completed"),
        30_000,
      );
      const item = api.calls.getTreeItem(ended);
      assert.equal(item.label, "basic.slow");
      assert.equal(item.contextValue, "callEnded");
      assert.ok(item.command, "a click shows the result");
      const fetched = (await vscode.commands.executeCommand(
        item.command.command,
        ...(item.command.arguments ?? []),
      )) as P.CallsResultResult;
      assert.deepEqual(fetched.result?.content, [{ type: "text", text: "done" }]);
      await waitFor("the result's document", () => /^done$/m.test(activeText("mcp-sidecar-output")));
      assert.equal(
        api.calls.getChildren().some((c) => c.callId === background.callId),
        false,
        "a result is delivered once: the call leaves the view",
      );
      await rejectsWithCode(api.client.request(P.callsResult, { callId: background.callId }), "call_not_found");
    } finally {
      await updateAndRestart("backgroundAfterSeconds", undefined);
    }
    // The default threshold (120 s) holds a short slow call to its end.
    const held = (await vscode.commands.executeCommand("mcpSidecar.callTool", "basic.slow", {
      seconds: 2,
    })) as P.CallToolResult;
    assert.equal(held.background, undefined);
    assert.deepEqual(held.content, [{ type: "text", text: "done" }]);
  });
}
