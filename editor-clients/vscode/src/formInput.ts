// Asks a `schemaForm` form with a multi-step quick input: one step per field (text and numbers
// in an input box checked as you type, booleans and single choices as picks, multiple choices
// as a multi-select pick, defaults pre-filled, Back to the previous step), then a summary with
// Submit, Edit, (Decline,) (Edit as JSON…,) Cancel. Nothing is returned as submitted before
// Submit; Escape cancels. Server text reaches the quick input only as plain text.
import * as vscode from "vscode";
import { iconLiteral, quickInputLiteral } from "./consent";
import type { Json, JsonObject } from "./protocol";
import * as F from "./schemaForm";
import { onValueChange, trackQuickInput } from "./ui";

export type FormOutcome =
  | { action: "submit"; content: JsonObject }
  | { action: "decline" }
  | { action: "cancel" }
  /** "Edit as JSON…": the values so far, for a raw JSON input. */
  | { action: "json"; content: JsonObject };

export interface FormOptions {
  /** The quick input's title on every step: "<server> asks", "Call <tool>". */
  title: string;
  /** Plain text shown on every step (the server's question). */
  message?: string;
  /** Offer Decline (an elicitation: the person says no to the server). */
  decline?: boolean;
  /** Offer "Edit as JSON…" (tool arguments, whose schemas can be nested). */
  json?: boolean;
  /** Lines the summary shows before Submit (a destructive tool, say). */
  notes?: string[];
  submitDescription?: string;
  /** Start from these answers instead of the defaults. */
  values?: F.Values;
  /** Cancelled from outside (the sidecar withdrew the question): the shown step closes. */
  token?: vscode.CancellationToken;
}

type StepResult = { kind: "value"; value: Json | undefined } | { kind: "back" } | { kind: "json" } | { kind: "cancel" };
type SummaryChoice =
  | { kind: "submit" }
  | { kind: "field"; index: number }
  | { kind: "edit" }
  | { kind: "decline" }
  | { kind: "json" }
  | { kind: "cancel" };

interface Step {
  index: number;
  total: number;
}

const LEAVE_OUT = "$(dash) Leave out";

/** Shows `input` until `settle` is called; Escape, a hide or the token's cancellation settle `cancel`. */
function run<T extends vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox, R>(
  input: T,
  token: vscode.CancellationToken | undefined,
  cancelled: R,
  wire: (settle: (result: R) => void) => void,
): Promise<R> {
  return new Promise<R>((resolve) => {
    let done = false;
    const subscriptions: vscode.Disposable[] = [];
    const settle = (result: R) => {
      if (done) return;
      done = true;
      resolve(result);
      for (const s of subscriptions) s.dispose();
      input.dispose();
    };
    wire(settle);
    subscriptions.push(input.onDidHide(() => settle(cancelled)));
    // Withdrawn: settle at once and close the quick input (dispose, unlike hide, takes effect
    // here at once rather than after the workbench's answer).
    if (token) subscriptions.push(token.onCancellationRequested(() => settle(cancelled)));
    input.ignoreFocusOut = true;
    trackQuickInput(input as vscode.QuickPick<vscode.QuickPickItem> | vscode.InputBox);
    input.show();
    if (token?.isCancellationRequested) settle(cancelled);
  });
}

function prompt(options: FormOptions, hint: string): string {
  return quickInputLiteral(options.message ? `${options.message} — ${hint}` : hint);
}

function decorate(input: vscode.QuickInput, options: FormOptions, step: Step): void {
  input.title = options.title;
  input.step = step.index + 1;
  input.totalSteps = step.total;
}

const JSON_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("json"), tooltip: "Edit as JSON…" };

/** Back from the second step on, and "Edit as JSON…" where the form offers it. */
function stepButtons(options: FormOptions, step: Step): vscode.QuickInputButton[] {
  return [...(step.index > 0 ? [vscode.QuickInputButtons.Back] : []), ...(options.json ? [JSON_BUTTON] : [])];
}

function buttonResult(button: vscode.QuickInputButton): StepResult {
  return button === JSON_BUTTON ? { kind: "json" } : { kind: "back" };
}

function askText(field: F.Field, value: Json | undefined, options: FormOptions, step: Step): Promise<StepResult> {
  const box = vscode.window.createInputBox();
  decorate(box, options, step);
  box.value = F.inputText(field, value);
  box.prompt = prompt(options, F.fieldHint(field));
  box.placeholder = field.required ? "" : "Leave empty to leave it out";
  box.buttons = stepButtons(options, step);
  const check = (text: string) => {
    const parsed = F.parseText(field, text);
    box.validationMessage = parsed.ok ? undefined : quickInputLiteral(parsed.error);
    return parsed;
  };
  return run<vscode.InputBox, StepResult>(box, options.token, { kind: "cancel" }, (settle) => {
    onValueChange(box, check);
    box.onDidTriggerButton((button) => settle(buttonResult(button)));
    box.onDidAccept(() => {
      const parsed = check(box.value);
      if (parsed.ok) settle({ kind: "value", value: parsed.value });
    });
    // A pre-filled value that does not fit (a default the person must change) says so at once.
    if (box.value !== "") check(box.value);
  });
}

interface ValueItem extends vscode.QuickPickItem {
  value?: Json;
  leaveOut?: true;
}

function choiceItems(field: F.Field): ValueItem[] {
  if (field.kind === "boolean") {
    return [
      { label: "Yes", value: true, description: field.default === true ? "default" : undefined },
      { label: "No", value: false, description: field.default === false ? "default" : undefined },
    ];
  }
  return (field.choices ?? []).map((choice) => {
    const shown = typeof choice.value === "string" ? choice.value : JSON.stringify(choice.value);
    const notes = [
      shown !== choice.label ? F.plainLine(shown) : "",
      same(field.default, choice.value) ? "default" : "",
    ];
    return {
      label: iconLiteral(choice.label),
      value: choice.value,
      description: iconLiteral(notes.filter(Boolean).join(" · ")) || undefined,
    };
  });
}

function same(a: Json | undefined, b: Json | undefined): boolean {
  return a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

function askChoice(field: F.Field, value: Json | undefined, options: FormOptions, step: Step): Promise<StepResult> {
  const pick = vscode.window.createQuickPick<ValueItem>();
  decorate(pick, options, step);
  const items = choiceItems(field);
  if (!field.required) items.push({ label: LEAVE_OUT, leaveOut: true, description: "send no value" });
  pick.items = items;
  pick.placeholder = prompt(options, F.fieldHint(field));
  pick.matchOnDescription = true;
  pick.buttons = stepButtons(options, step);
  const current =
    items.find((i) => same(i.value, value)) ?? (value === undefined && !field.required ? items.at(-1) : undefined);
  if (current) pick.activeItems = [current];
  const untyped = pick as unknown as vscode.QuickPick<vscode.QuickPickItem>;
  return run(untyped, options.token, { kind: "cancel" } as StepResult, (settle) => {
    pick.onDidTriggerButton((button) => settle(buttonResult(button)));
    pick.onDidAccept(() => {
      const chosen = pick.selectedItems[0] ?? pick.activeItems[0];
      if (!chosen) return;
      settle({ kind: "value", value: chosen.leaveOut ? undefined : chosen.value });
    });
  });
}

function askMany(field: F.Field, value: Json | undefined, options: FormOptions, step: Step): Promise<StepResult> {
  const pick = vscode.window.createQuickPick<ValueItem>();
  decorate(pick, options, step);
  pick.canSelectMany = true;
  const items = choiceItems(field);
  pick.items = items;
  const hint = prompt(options, F.fieldHint(field));
  pick.placeholder = hint;
  pick.buttons = stepButtons(options, step);
  const chosen = Array.isArray(value) ? value : [];
  pick.selectedItems = items.filter((i) => chosen.some((v) => same(v, i.value)));
  const untyped = pick as unknown as vscode.QuickPick<vscode.QuickPickItem>;
  return run(untyped, options.token, { kind: "cancel" } as StepResult, (settle) => {
    pick.onDidTriggerButton((button) => settle(buttonResult(button)));
    pick.onDidAccept(() => {
      const values = pick.selectedItems.map((i) => i.value as Json);
      if (values.length === 0 && !field.required) return settle({ kind: "value", value: undefined });
      const problem = F.checkValue(field, values);
      if (problem) {
        // A pick has no validation message: the placeholder says what is missing.
        pick.placeholder = quickInputLiteral(`${problem} ${F.fieldHint(field)}`);
        return;
      }
      settle({ kind: "value", value: values });
    });
  });
}

function askField(field: F.Field, value: Json | undefined, options: FormOptions, step: Step): Promise<StepResult> {
  switch (field.kind) {
    case "boolean":
    case "choice":
      return askChoice(field, value, options, step);
    case "choices":
      return askMany(field, value, options, step);
    default:
      return askText(field, value, options, step);
  }
}

interface SummaryItem extends vscode.QuickPickItem {
  choice?: SummaryChoice;
}

export const SUBMIT = "$(check) Submit";
export const EDIT = "$(edit) Edit";
export const EDIT_JSON = "$(json) Edit as JSON…";
export const DECLINE = "$(circle-slash) Decline";
export const CANCEL = "$(close) Cancel";

function summaryItems(form: F.Form, values: F.Values, options: FormOptions): SummaryItem[] {
  const items: SummaryItem[] = (options.notes ?? []).map((note) => ({
    label: `$(warning) ${iconLiteral(F.plainLine(note))}`,
  }));
  form.fields.forEach((field, index) => {
    const value = values[field.name];
    const problem = value === undefined ? (field.required ? "required" : undefined) : F.checkValue(field, value);
    items.push({
      label: `${iconLiteral(field.label)}: ${iconLiteral(F.displayValue(field, value))}`,
      description: field.required ? "required" : undefined,
      detail: problem ? `$(error) ${iconLiteral(problem)}` : undefined,
      choice: { kind: "field", index },
    });
  });
  if (form.fields.length === 0) items.push({ label: "No values to give" });
  items.push({ label: "", kind: vscode.QuickPickItemKind.Separator });
  items.push({ label: SUBMIT, description: options.submitDescription, choice: { kind: "submit" } });
  if (form.fields.length > 0)
    items.push({ label: EDIT, description: "go through the fields again", choice: { kind: "edit" } });
  if (options.json) items.push({ label: EDIT_JSON, description: "type the whole object", choice: { kind: "json" } });
  if (options.decline) items.push({ label: DECLINE, description: "tell the server no", choice: { kind: "decline" } });
  items.push({ label: CANCEL, description: "send nothing (Escape does the same)", choice: { kind: "cancel" } });
  return items;
}

function askSummary(form: F.Form, values: F.Values, options: FormOptions, step: Step): Promise<SummaryChoice> {
  const pick = vscode.window.createQuickPick<SummaryItem>();
  decorate(pick, options, step);
  const items = summaryItems(form, values, options);
  pick.items = items;
  const found = F.problems(form, values);
  pick.placeholder = quickInputLiteral(
    found.length > 0
      ? `Fix before submitting: ${found.join(" ")}`
      : (options.message ?? "Check the values, then Submit."),
  );
  const submit = items.find((i) => i.choice?.kind === "submit");
  if (submit) pick.activeItems = [submit];
  if (form.fields.length > 0) pick.buttons = [vscode.QuickInputButtons.Back];
  const untyped = pick as unknown as vscode.QuickPick<vscode.QuickPickItem>;
  return run(untyped, options.token, { kind: "cancel" } as SummaryChoice, (settle) => {
    pick.onDidTriggerButton(() => settle({ kind: "field", index: form.fields.length - 1 }));
    pick.onDidAccept(() => {
      const chosen = (pick.selectedItems[0] ?? pick.activeItems[0])?.choice;
      if (chosen) settle(chosen);
    });
  });
}

/**
 * Asks every field of `form` in turn, then the summary. Resolves with what the person chose:
 * Submit (the content, checked), Decline, "Edit as JSON…" or Cancel (Escape, or the token).
 */
export async function askForm(form: F.Form, options: FormOptions): Promise<FormOutcome> {
  const values: F.Values = { ...(options.values ?? F.initialValues(form)) };
  const count = form.fields.length;
  const total = count + 1;
  let index = 0;
  // Editing one field from the summary returns to the summary.
  let single = false;
  for (;;) {
    if (options.token?.isCancellationRequested) return { action: "cancel" };
    const field = form.fields[index];
    if (field) {
      const result = await askField(field, values[field.name], options, { index, total });
      if (result.kind === "cancel") return { action: "cancel" };
      if (result.kind === "json") return { action: "json", content: { ...values } };
      if (result.kind === "back") {
        index = single ? count : Math.max(0, index - 1);
      } else {
        if (result.value === undefined) delete values[field.name];
        else values[field.name] = result.value;
        index = single ? count : index + 1;
      }
      single = false;
      continue;
    }
    const choice = await askSummary(form, values, options, { index: count, total });
    switch (choice.kind) {
      case "submit": {
        const firstProblem = form.fields.findIndex((f) => F.problems({ fields: [f] }, values).length > 0);
        if (firstProblem >= 0) {
          index = firstProblem;
          single = true;
          continue;
        }
        return { action: "submit", content: F.assemble(form, values) };
      }
      case "field":
        index = choice.index;
        single = true;
        continue;
      case "edit":
        index = 0;
        continue;
      case "json":
        return { action: "json", content: { ...values } };
      case "decline":
        return { action: "decline" };
      case "cancel":
        return { action: "cancel" };
    }
  }
}
