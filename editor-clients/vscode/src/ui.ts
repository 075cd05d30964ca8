// Small wrappers over vscode.window used by every command: error reporting, server pickers,
// and an input that offers the sidecar's completions as you type.
import * as vscode from "vscode";
import type { SidecarClient } from "./client";
import { describeError, serverLine } from "./format";
import * as P from "./protocol";
import type { ServerStore } from "./state";

/**
 * What the extension's own quick inputs currently offer (title, item labels, the typed value
 * and its validation message). The extension-host tests follow it to drive the real pickers
 * and input boxes; it carries no user data beyond what the quick input shows.
 */
export interface QuickInputState {
  kind: "pick" | "box";
  title: string;
  step?: number;
  totalSteps?: number;
  items: string[];
  /** The highlighted items as the workbench reports them back: what Enter would accept. */
  active: string[];
  /** The checked items of a multi-select pick. */
  selected: string[];
  /** A multi-select pick (Enter accepts the checked items, whatever is highlighted). */
  many: boolean;
  value: string;
  /** An input box's prompt, a pick's placeholder. */
  prompt: string;
  validationMessage?: string;
  busy: boolean;
}
const quickInputEmitter = new vscode.EventEmitter<QuickInputState | undefined>();
export const onDidChangeQuickInput = quickInputEmitter.event;
export let currentQuickInput: QuickInputState | undefined;
let shownInput: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox | undefined;
const drivenListeners = new WeakMap<object, (value: string) => void>();

/**
 * `input.onDidChangeValue`, and also for a value `driveQuickInput` puts in: an input box does
 * not report a value set by the extension itself.
 */
export function onValueChange(
  input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox,
  listener: (value: string) => void,
): vscode.Disposable {
  drivenListeners.set(input, listener);
  return input.onDidChangeValue(listener);
}

function isPick(
  input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox,
): input is vscode.QuickPick<vscode.QuickPickItem> {
  return "items" in input;
}

function stateOf(input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox): QuickInputState {
  const common = {
    title: input.title ?? "",
    step: input.step,
    totalSteps: input.totalSteps,
    value: input.value,
    busy: input.busy,
  };
  if (isPick(input)) {
    return {
      ...common,
      kind: "pick",
      many: input.canSelectMany,
      items: input.items.map((i) => i.label),
      active: input.activeItems.map((i) => i.label),
      selected: input.selectedItems.map((i) => i.label),
      prompt: input.placeholder ?? "",
    };
  }
  const message = input.validationMessage;
  return {
    ...common,
    kind: "box",
    many: false,
    items: [],
    active: [],
    selected: [],
    prompt: input.prompt ?? "",
    validationMessage: typeof message === "string" ? message : message?.message,
  };
}

/** Reports a quick pick's or input box's state to `onDidChangeQuickInput` whenever it changes. */
export function trackQuickInput(input: vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox): void {
  let visible = false;
  const publish = () => {
    if (!visible) return;
    currentQuickInput = stateOf(input);
    quickInputEmitter.fire(currentQuickInput);
  };
  // Quick inputs have no change event for items, busy or a validation message: wrap their setters on this instance.
  for (const key of ["items", "busy", "validationMessage", "placeholder", "prompt", "title", "step"] as const) {
    let owner: object | null = input;
    let descriptor: PropertyDescriptor | undefined;
    while (owner && !descriptor) {
      descriptor = Object.getOwnPropertyDescriptor(owner, key);
      owner = Object.getPrototypeOf(owner) as object | null;
    }
    const { get, set } = descriptor ?? {};
    if (!get || !set) continue;
    Object.defineProperty(input, key, {
      configurable: true,
      get: () => get.call(input),
      set: (value: unknown) => {
        set.call(input, value);
        publish();
      },
    });
  }
  const show = input.show.bind(input);
  input.show = () => {
    visible = true;
    shownInput = input;
    show();
    publish();
  };
  input.onDidChangeValue(publish);
  // Items reach the workbench asynchronously; the active item comes back once they are shown.
  if (isPick(input)) {
    input.onDidChangeActive(publish);
    input.onDidChangeSelection(publish);
  }
  input.onDidHide(() => {
    visible = false;
    if (shownInput === input) shownInput = undefined;
    currentQuickInput = undefined;
    quickInputEmitter.fire(undefined);
  });
}

/** Reports a quick pick's items to `onDidChangeQuickInput` whenever they change. */
export function trackQuickPick<T extends vscode.QuickPickItem>(pick: vscode.QuickPick<T>): void {
  trackQuickInput(pick as unknown as vscode.QuickPick<vscode.QuickPickItem>);
}

/**
 * For the extension-host tests, which cannot type: puts `value` into the shown quick input as
 * if typed (the workbench echoes it back as a change), or checks the items labelled `select`
 * of a multi-select pick. False when none of ours is shown.
 */
export function driveQuickInput(change: { value?: string; select?: string[] }): boolean {
  const input = shownInput;
  if (!input) return false;
  if (change.value !== undefined) {
    input.value = change.value;
    drivenListeners.get(input)?.(change.value);
    if (currentQuickInput) {
      currentQuickInput = stateOf(input);
      quickInputEmitter.fire(currentQuickInput);
    }
  }
  if (change.select !== undefined && isPick(input)) {
    const wanted = new Set(change.select);
    input.selectedItems = input.items.filter((i) => wanted.has(i.label));
  }
  return true;
}

/** A single-choice quick pick (tracked like the others); undefined when dismissed. */
export function pickOne<T extends vscode.QuickPickItem>(
  items: T[],
  options: { title?: string; placeHolder?: string },
): Promise<T | undefined> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick<T>();
    pick.title = options.title;
    pick.placeholder = options.placeHolder;
    pick.items = items;
    trackQuickPick(pick);
    let chosen: T | undefined;
    pick.onDidAccept(() => {
      chosen = pick.selectedItems[0];
      pick.hide();
    });
    pick.onDidHide(() => {
      resolve(chosen);
      pick.dispose();
    });
    pick.show();
  });
}

/** Shows a failure as the diagnostic's message and hint (never a stack); returns undefined. */
export async function reportError(error: unknown, log?: vscode.LogOutputChannel): Promise<undefined> {
  const { message, code, usage } = describeError(error);
  log?.warn(`${code ?? "error"}: ${message}`);
  const detail = usage ? `\n\nUsage:\n${usage}` : "";
  void vscode.window.showErrorMessage(`MCP: ${message}${detail}`);
  return undefined;
}

/** Runs a command body, reporting failures instead of throwing them at VS Code. */
export function guarded<A extends unknown[], R>(
  log: vscode.LogOutputChannel,
  body: (...args: A) => Promise<R>,
): (...args: A) => Promise<R | undefined> {
  return async (...args: A) => {
    try {
      return await body(...args);
    } catch (error) {
      return reportError(error, log);
    }
  };
}

export class Cancelled extends Error {
  constructor() {
    super("cancelled");
  }
}

/** A server name from a command argument (string or view node), else a quick pick. */
export async function pickServer(
  store: ServerStore,
  arg: unknown,
  placeHolder: string,
  filter: (row: P.StatusRow) => boolean = () => true,
): Promise<string | undefined> {
  if (typeof arg === "string" && arg !== "") return arg;
  const fromNode = (arg as { server?: unknown } | undefined)?.server;
  if (typeof fromNode === "string") return fromNode;
  await store.refresh();
  const rows = store.rows.filter(filter);
  if (rows.length === 0) {
    void vscode.window.showInformationMessage("MCP: no matching server is configured.");
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    rows.map((row) => ({ label: row.name, description: serverLine(row).slice(row.name.length + 3), row })),
    { placeHolder, matchOnDescription: true },
  );
  return picked?.row.name;
}

/**
 * Asks for one value, offering the sidecar's `mcp/complete` suggestions for what has been
 * typed so far. Returns the typed or picked value; undefined when dismissed.
 */
export function inputWithCompletions(
  client: SidecarClient,
  options: {
    title: string;
    prompt: string;
    request: Omit<P.CompleteParams, "argument">;
    name: string;
    optional: boolean;
  },
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const pick = vscode.window.createQuickPick();
    pick.title = options.title;
    pick.placeholder = options.prompt + (options.optional ? " (optional: Enter with nothing to leave it out)" : "");
    pick.ignoreFocusOut = true;
    let generation = 0;
    let unsupported = false;
    const typedItem = (value: string): vscode.QuickPickItem => ({ label: value, description: "as typed" });
    const update = async (value: string) => {
      const mine = ++generation;
      const typed = value === "" ? [] : [typedItem(value)];
      pick.items = typed;
      if (unsupported) return;
      pick.busy = true;
      try {
        const result = await client.request(P.complete, {
          ...options.request,
          argument: { name: options.name, value },
        });
        if (mine !== generation) return;
        const values = result.values
          .filter((v) => v !== value)
          .map((v) => ({ label: v, description: "suggested by the server" }));
        pick.items = [...typed, ...values];
      } catch (error) {
        const code = describeError(error).code;
        if (code === "completions_unsupported" || code === "completion_invalid") unsupported = true;
      } finally {
        if (mine === generation) pick.busy = false;
      }
    };
    let done = false;
    const finish = (value: string | undefined) => {
      if (done) return;
      done = true;
      resolve(value);
      pick.dispose();
    };
    pick.onDidChangeValue((value) => void update(value));
    pick.onDidAccept(() => {
      const chosen = pick.selectedItems[0]?.label ?? pick.value;
      if (chosen === "" && !options.optional) return;
      finish(chosen);
    });
    pick.onDidHide(() => finish(undefined));
    trackQuickPick(pick);
    pick.show();
    void update("");
  });
}
