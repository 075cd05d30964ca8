// Checks tool-call arguments typed by a person against the tool's JSON Schema before they are
// sent. It covers what MCP tool schemas use in practice (type, required, properties,
// additionalProperties, enum, const, items, numeric and length bounds, anyOf/oneOf); the
// server validates again, so an unknown keyword is simply not checked here.
import type { Json, JsonObject } from "./protocol";

export type ParsedArguments = { ok: true; value: JsonObject } | { ok: false; error: string };

/** Parses the input box text: empty means `{}`; anything but a JSON object is refused. */
export function parseArguments(text: string): ParsedArguments {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${(error as Error).message}` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, error: 'The arguments must be a JSON object, like {"name": "value"}.' };
  }
  return { ok: true, value: value as JsonObject };
}

function typeOf(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: Json, expected: string): boolean {
  const actual = typeOf(value);
  if (expected === "number") return actual === "number" || actual === "integer";
  return actual === expected;
}

function at(path: string): string {
  return path === "" ? "the arguments" : `'${path}'`;
}

/** Returns every problem found, each naming the argument path; empty when the value fits. */
export function validate(value: Json, schema: Json | undefined, path = ""): string[] {
  if (
    schema === undefined ||
    schema === true ||
    schema === null ||
    typeof schema !== "object" ||
    Array.isArray(schema)
  ) {
    return schema === false ? [`${at(path)} is not allowed`] : [];
  }
  const errors: string[] = [];
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length > 0 && !types.some((t) => typeof t === "string" && matchesType(value, t))) {
    errors.push(`${at(path)} must be ${types.join(" or ")}, not ${typeOf(value)}`);
    return errors;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    errors.push(`${at(path)} must be one of ${schema.enum.map((o) => JSON.stringify(o)).join(", ")}`);
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    errors.push(`${at(path)} must be ${JSON.stringify(schema.const)}`);
  }
  for (const key of ["anyOf", "oneOf"] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0) {
      const fitting = options.filter((option) => validate(value, option, path).length === 0).length;
      if (fitting === 0 || (key === "oneOf" && fitting > 1)) {
        errors.push(`${at(path)} does not match ${key === "oneOf" ? "exactly one" : "any"} of the allowed forms`);
      }
    }
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum)
      errors.push(`${at(path)} must be ≥ ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum)
      errors.push(`${at(path)} must be ≤ ${schema.maximum}`);
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) {
      errors.push(`${at(path)} must have at least ${schema.minLength} characters`);
    }
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
      errors.push(`${at(path)} must have at most ${schema.maxLength} characters`);
    }
  }
  if (Array.isArray(value)) {
    if (schema.items !== undefined && !Array.isArray(schema.items)) {
      value.forEach((item, index) => {
        errors.push(...validate(item, schema.items, `${path}[${index}]`));
      });
    }
    if (typeof schema.minItems === "number" && value.length < schema.minItems) {
      errors.push(`${at(path)} must have at least ${schema.minItems} items`);
    }
  }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const properties = (schema.properties ?? {}) as JsonObject;
    const join = (key: string) => (path === "" ? key : `${path}.${key}`);
    if (Array.isArray(schema.required)) {
      for (const name of schema.required) {
        if (typeof name === "string" && !(name in value)) errors.push(`'${join(name)}' is required`);
      }
    }
    for (const [key, item] of Object.entries(value)) {
      if (key in properties) {
        errors.push(...validate(item, properties[key], join(key)));
      } else if (schema.additionalProperties === false) {
        errors.push(`'${join(key)}' is not a parameter of this tool`);
      } else if (typeof schema.additionalProperties === "object") {
        errors.push(...validate(item, schema.additionalProperties, join(key)));
      }
    }
  }
  return errors;
}

/** A starting point for the arguments input box: every required parameter with a placeholder. */
export function argumentsSkeleton(schema: JsonObject): string {
  const properties = (schema.properties ?? {}) as JsonObject;
  const required = Array.isArray(schema.required)
    ? schema.required.filter((n): n is string => typeof n === "string")
    : [];
  const skeleton: JsonObject = {};
  for (const name of required) {
    const property = properties[name];
    const type = property && typeof property === "object" && !Array.isArray(property) ? property.type : undefined;
    skeleton[name] =
      type === "integer" || type === "number"
        ? 0
        : type === "boolean"
          ? false
          : type === "array"
            ? []
            : type === "object"
              ? {}
              : "";
  }
  return JSON.stringify(skeleton);
}
