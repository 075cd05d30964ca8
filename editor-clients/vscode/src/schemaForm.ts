// A form built once from a JSON schema, used for a server's `mcp/elicit` questions and for the
// palette's tool arguments: the fields in the schema's order, what each accepts, how typed
// text becomes a value, and the content assembled from the answers. Pure (no `vscode`),
// unit-tested; `formInput.ts` asks the fields with quick inputs.
//
// Elicitation schemas are flat (MCP's primitive, enum and multi-select properties; the sidecar
// checks them). Tool schemas can be anything: what has no field of its own here (a nested
// object, an array of objects, a union of several types) is a JSON field, checked against its
// own schema by `schema.ts`.
import type { Json, JsonObject } from "./protocol";
import { stripControls } from "./sanitize";
import { validate } from "./schema";

export type FieldKind = "string" | "number" | "integer" | "boolean" | "choice" | "choices" | "json";
export type StringFormat = "email" | "uri" | "date" | "date-time";

export interface Choice {
  value: Json;
  /** The choice's title, else its value, on one line. */
  label: string;
}

export interface Field {
  name: string;
  /** The property's title, else its name, on one line. */
  label: string;
  description?: string;
  required: boolean;
  kind: FieldKind;
  /** The property's `default`, only when it fits the field. */
  default?: Json;
  choices?: Choice[];
  format?: StringFormat;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  /** The property's own schema (what a JSON field is checked against). */
  schema: JsonObject;
}

export interface Form {
  fields: Field[];
}

/** The answers so far, by property name; a name without a value is left out. */
export type Values = Record<string, Json>;

export type Parsed = { ok: true; value: Json | undefined } | { ok: false; error: string };

const FORMATS: readonly string[] = ["email", "uri", "date", "date-time"];

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** One line of plain text: no hidden characters, no line breaks. */
export function plainLine(text: string): string {
  return stripControls(text).replace(/\s+/g, " ").trim();
}

function numberOf(value: Json | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** `oneOf`/`anyOf` of `{const, title?}`: the choices, else undefined. */
function constChoices(options: Json | undefined): Choice[] | undefined {
  if (!Array.isArray(options) || options.length === 0) return undefined;
  const choices: Choice[] = [];
  for (const option of options) {
    if (!isObject(option) || !("const" in option)) return undefined;
    const value = option.const as Json;
    const title = typeof option.title === "string" && option.title !== "" ? option.title : undefined;
    choices.push({ value, label: plainLine(title ?? labelOf(value)) });
  }
  return choices;
}

function labelOf(value: Json): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** `enum` (with the legacy `enumNames` as titles), or `oneOf`/`anyOf` of consts. */
function choicesOf(schema: JsonObject): Choice[] | undefined {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const names = Array.isArray(schema.enumNames) ? schema.enumNames : [];
    return schema.enum.map((value, index) => {
      const name = names[index];
      return { value, label: plainLine(typeof name === "string" && name !== "" ? name : labelOf(value)) };
    });
  }
  return constChoices(schema.oneOf) ?? constChoices(schema.anyOf);
}

/**
 * The one type of a property: `type` (a list with "null" counts as its other member), or the
 * one non-null member of an `anyOf`/`oneOf` (how Optional[X] is often written). Undefined when
 * there is none or several.
 */
function singleType(schema: JsonObject): { type: string; schema: JsonObject } | undefined {
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
  const named = types.filter((t): t is string => typeof t === "string" && t !== "null");
  if (named.length === 1) return { type: named[0] as string, schema };
  if (named.length > 1) return undefined;
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (!Array.isArray(options)) continue;
    const real = options.filter((o) => isObject(o) && o.type !== "null");
    if (real.length === 1 && isObject(real[0]) && typeof real[0].type === "string") {
      return { type: real[0].type, schema: { ...real[0], ...without(schema, key) } };
    }
  }
  return undefined;
}

function without(schema: JsonObject, key: string): JsonObject {
  const copy: JsonObject = { ...schema };
  delete copy[key];
  return copy;
}

function kindOf(schema: JsonObject): { kind: FieldKind; schema: JsonObject; choices?: Choice[] } {
  const choices = choicesOf(schema);
  if (choices) return { kind: "choice", schema, choices };
  const single = singleType(schema);
  if (!single) return { kind: "json", schema };
  const { type } = single;
  if (type === "string" || type === "number" || type === "integer" || type === "boolean") {
    const nested = choicesOf(single.schema);
    return nested ? { kind: "choice", schema: single.schema, choices: nested } : { kind: type, schema: single.schema };
  }
  if (type === "array" && isObject(single.schema.items)) {
    const itemChoices = choicesOf(single.schema.items);
    if (itemChoices) return { kind: "choices", schema: single.schema, choices: itemChoices };
  }
  return { kind: "json", schema: single.schema };
}

function fieldOf(name: string, property: Json, required: boolean): Field {
  const raw = isObject(property) ? property : {};
  const { kind, schema, choices } = kindOf(raw);
  const title = typeof raw.title === "string" && raw.title.trim() !== "" ? raw.title : name;
  const field: Field = { name, label: plainLine(title) || name, required, kind, schema: raw };
  if (typeof raw.description === "string" && raw.description.trim() !== "") {
    field.description = plainLine(raw.description);
  }
  if (choices) field.choices = choices;
  if (typeof schema.format === "string" && FORMATS.includes(schema.format)) {
    field.format = schema.format as StringFormat;
  }
  for (const key of ["minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"] as const) {
    const value = numberOf(schema[key]);
    if (value !== undefined) field[key] = value;
  }
  if ("default" in raw && raw.default !== undefined && checkValue(field, raw.default) === undefined) {
    field.default = raw.default;
  }
  return field;
}

/**
 * The form of an object schema: one field per property, in the schema's order, or in `order`
 * (an elicitation's property names as the server listed them) with any others after.
 */
export function buildForm(schema: JsonObject | undefined, order?: readonly string[]): Form {
  const properties = isObject(schema?.properties) ? schema.properties : {};
  const required = new Set(
    Array.isArray(schema?.required) ? schema.required.filter((n): n is string => typeof n === "string") : [],
  );
  const names = Object.keys(properties);
  const ordered = Array.isArray(order)
    ? [...order.filter((n) => typeof n === "string" && names.includes(n)), ...names.filter((n) => !order.includes(n))]
    : names;
  const unique = [...new Set(ordered)];
  return { fields: unique.map((name) => fieldOf(name, properties[name] as Json, required.has(name))) };
}

/** The answers a form starts with: every fitting `default`. */
export function initialValues(form: Form): Values {
  const values: Values = {};
  for (const field of form.fields) if (field.default !== undefined) values[field.name] = field.default;
  return values;
}

// ---------------------------------------------------------------- checking values

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\s]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function validDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function formatProblem(format: StringFormat, text: string): string | undefined {
  switch (format) {
    case "email":
      return EMAIL.test(text) ? undefined : "Not an email address (name@example.com).";
    case "uri":
      return URI.test(text) ? undefined : "Not a URI (https://example.com/page).";
    case "date":
      return validDate(text) ? undefined : "Not a date (YYYY-MM-DD).";
    case "date-time": {
      const match = DATE_TIME.exec(text);
      const ok =
        match !== null &&
        validDate(match[1] as string) &&
        Number(match[2]) < 24 &&
        Number(match[3]) < 60 &&
        Number(match[4]) < 61;
      return ok ? undefined : "Not a date and time (YYYY-MM-DDTHH:MM:SSZ, or with an offset like +02:00).";
    }
  }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

function stringProblem(field: Field, text: string): string | undefined {
  const length = [...text].length;
  if (field.minLength !== undefined && length < field.minLength) {
    return `At least ${plural(field.minLength, "character")} (${length} now).`;
  }
  if (field.maxLength !== undefined && length > field.maxLength) {
    return `At most ${plural(field.maxLength, "character")} (${length} now).`;
  }
  return field.format ? formatProblem(field.format, text) : undefined;
}

function numberProblem(field: Field, value: number): string | undefined {
  if (field.kind === "integer" && !Number.isInteger(value)) return "A whole number, please.";
  if (field.minimum !== undefined && value < field.minimum) return `At least ${field.minimum}.`;
  if (field.maximum !== undefined && value > field.maximum) return `At most ${field.maximum}.`;
  return undefined;
}

function sameJson(a: Json, b: Json): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function choicesProblem(field: Field, value: Json): string | undefined {
  if (!Array.isArray(value)) return "A list of choices.";
  if (value.some((item) => !field.choices?.some((c) => sameJson(c.value, item)))) return "Only the listed choices.";
  if (field.minItems !== undefined && value.length < field.minItems) {
    return `Choose at least ${field.minItems}${field.maxItems !== undefined ? ` (at most ${field.maxItems})` : ""}.`;
  }
  if (field.maxItems !== undefined && value.length > field.maxItems) return `Choose at most ${field.maxItems}.`;
  return undefined;
}

/** What is wrong with `value` for `field` (a message for the person), or undefined when it fits. */
export function checkValue(field: Field, value: Json): string | undefined {
  switch (field.kind) {
    case "string":
      return typeof value === "string" ? stringProblem(field, value) : "Text, please.";
    case "number":
    case "integer":
      return typeof value === "number" && Number.isFinite(value) ? numberProblem(field, value) : "A number, please.";
    case "boolean":
      return typeof value === "boolean" ? undefined : "Yes or no.";
    case "choice":
      return field.choices?.some((c) => sameJson(c.value, value)) ? undefined : "One of the listed choices.";
    case "choices":
      return choicesProblem(field, value);
    case "json": {
      const problems = validate(value, field.schema, field.name);
      return problems.length > 0 ? problems.join("; ") : undefined;
    }
  }
}

const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function parseJsonField(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) as Json };
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${(error as Error).message}` };
  }
}

/**
 * What the person typed for a text field (string, number, integer or JSON) as a value.
 * Nothing typed leaves an optional field out (value undefined) and is refused for a required
 * one; a value that does not fit says why, as the person types.
 */
export function parseText(field: Field, text: string): Parsed {
  const blank = field.kind === "string" ? text === "" : text.trim() === "";
  if (blank) return field.required ? { ok: false, error: "Required." } : { ok: true, value: undefined };
  let parsed: Parsed;
  if (field.kind === "number" || field.kind === "integer") {
    const trimmed = text.trim();
    parsed = NUMBER.test(trimmed) ? { ok: true, value: Number(trimmed) } : { ok: false, error: "A number, please." };
  } else if (field.kind === "json") {
    parsed = parseJsonField(text);
  } else {
    parsed = { ok: true, value: text };
  }
  if (!parsed.ok || parsed.value === undefined) return parsed;
  const problem = checkValue(field, parsed.value);
  return problem ? { ok: false, error: problem } : parsed;
}

/** The text an input box starts with for a field's current value. */
export function inputText(field: Field, value: Json | undefined): string {
  if (value === undefined) return "";
  if (field.kind === "string" && typeof value === "string") return value;
  if ((field.kind === "number" || field.kind === "integer") && typeof value === "number") return String(value);
  return JSON.stringify(value);
}

// ---------------------------------------------------------------- the answers as a whole

/** Every problem of the answers, as "label: problem": a required field without a value, a value that does not fit. */
export function problems(form: Form, values: Values): string[] {
  const found: string[] = [];
  for (const field of form.fields) {
    const value = values[field.name];
    if (value === undefined) {
      if (field.required) found.push(`${field.label}: required.`);
      continue;
    }
    const problem = checkValue(field, value);
    if (problem) found.push(`${field.label}: ${problem}`);
  }
  return found;
}

/** The content to send: the answered fields, in the form's order (left-out fields are absent). */
export function assemble(form: Form, values: Values): JsonObject {
  const content: JsonObject = {};
  for (const field of form.fields) {
    const value = values[field.name];
    if (value !== undefined) content[field.name] = value;
  }
  return content;
}

/** The answers from a JSON object typed as a whole ("Edit as JSON"): the form's fields, and any other keys kept as they are. */
export function valuesFrom(content: JsonObject): Values {
  return { ...content };
}

function choiceLabel(field: Field, value: Json): string {
  return field.choices?.find((c) => sameJson(c.value, value))?.label ?? labelOf(value);
}

/** A value as the summary shows it, on one line. */
export function displayValue(field: Field, value: Json | undefined): string {
  if (value === undefined) return field.required ? "(missing)" : "(left out)";
  switch (field.kind) {
    case "boolean":
      return value === true ? "Yes" : value === false ? "No" : JSON.stringify(value);
    case "choice":
      return choiceLabel(field, value);
    case "choices":
      return Array.isArray(value) ? value.map((v) => choiceLabel(field, v)).join(", ") || "(none)" : labelOf(value);
    case "string":
      return typeof value === "string" ? plainLine(JSON.stringify(value)) : labelOf(value);
    default:
      return plainLine(labelOf(value));
  }
}

/** What a field asks for, on one line: its label, whether it is required, its constraints. */
export function fieldHint(field: Field): string {
  const parts: string[] = [];
  if (field.kind === "integer") parts.push("a whole number");
  if (field.kind === "number") parts.push("a number");
  if (field.minimum !== undefined && field.maximum !== undefined) parts.push(`${field.minimum} to ${field.maximum}`);
  else if (field.minimum !== undefined) parts.push(`at least ${field.minimum}`);
  else if (field.maximum !== undefined) parts.push(`at most ${field.maximum}`);
  if (field.format) parts.push(field.format === "date" ? "a date, YYYY-MM-DD" : `format ${field.format}`);
  if (field.minLength !== undefined) parts.push(`at least ${plural(field.minLength, "character")}`);
  if (field.maxLength !== undefined) parts.push(`at most ${plural(field.maxLength, "character")}`);
  if (field.kind === "json") parts.push("JSON");
  if (field.kind === "choices") {
    if (field.minItems !== undefined) parts.push(`at least ${field.minItems}`);
    if (field.maxItems !== undefined) parts.push(`at most ${field.maxItems}`);
  }
  const status = field.required ? "required" : "optional";
  const constraints = parts.length > 0 ? `, ${parts.join(", ")}` : "";
  return `${field.label} (${status}${constraints})${field.description ? `: ${field.description}` : ""}`;
}
