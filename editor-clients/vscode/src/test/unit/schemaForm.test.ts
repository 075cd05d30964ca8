// The schema form: a JSON schema becomes fields once (elicitation's flat schemas, and tool
// schemas with JSON fields for what is nested), typed text becomes values checked as the
// person types, and the content sent is exactly the answered fields.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "../../protocol";
import {
  assemble,
  buildForm,
  checkValue,
  displayValue,
  type Field,
  fieldHint,
  initialValues,
  inputText,
  parseText,
  problems,
  type Values,
} from "../../schemaForm";

// server-everything's trigger-elicitation-request schema, as the server sends it.
const EVERYTHING: JsonObject = {
  type: "object",
  properties: {
    name: { title: "String", type: "string", description: "Your full, legal name" },
    check: { title: "Boolean", type: "boolean", description: "Agree to the terms and conditions" },
    firstLine: { title: "String with default", type: "string", default: "It was a dark and stormy night." },
    email: { title: "String with email format", type: "string", format: "email" },
    homepage: { type: "string", format: "uri", title: "String with uri format" },
    birthdate: { title: "String with date format", type: "string", format: "date" },
    integer: { title: "Integer", type: "integer", minimum: 1, maximum: 100, default: 42 },
    number: { title: "Number in range 1-1000", type: "number", minimum: 0, maximum: 1000, default: 3.14 },
    untitledSingleSelectEnum: {
      type: "string",
      title: "Untitled Single Select Enum",
      enum: ["Monica", "Rachel", "Joey"],
      default: "Monica",
    },
    untitledMultipleSelectEnum: {
      type: "array",
      title: "Untitled Multiple Select Enum",
      minItems: 1,
      maxItems: 3,
      items: { type: "string", enum: ["Guitar", "Piano", "Violin", "Drums", "Bass"] },
      default: ["Guitar"],
    },
    titledSingleSelectEnum: {
      type: "string",
      title: "Titled Single Select Enum",
      oneOf: [
        { const: "hero-1", title: "Superman" },
        { const: "hero-2", title: "Green Lantern" },
      ],
      default: "hero-1",
    },
    titledMultipleSelectEnum: {
      type: "array",
      title: "Titled Multiple Select Enum",
      items: {
        anyOf: [
          { const: "fish-1", title: "Tuna" },
          { const: "fish-2", title: "Salmon" },
        ],
      },
      default: ["fish-1"],
    },
    legacyTitledEnum: {
      type: "string",
      title: "Legacy Titled Single Select Enum",
      enum: ["pet-1", "pet-2"],
      enumNames: ["Cats", "Dogs"],
      default: "pet-1",
    },
  },
  required: ["name"],
};

function field(form: ReturnType<typeof buildForm>, name: string): Field {
  const found = form.fields.find((f) => f.name === name);
  assert.ok(found, name);
  return found;
}

test("an elicitation schema becomes one field per property, in the schema's order, with its kind", () => {
  const form = buildForm(EVERYTHING);
  assert.deepEqual(
    form.fields.map((f) => [f.name, f.kind, f.required]),
    [
      ["name", "string", true],
      ["check", "boolean", false],
      ["firstLine", "string", false],
      ["email", "string", false],
      ["homepage", "string", false],
      ["birthdate", "string", false],
      ["integer", "integer", false],
      ["number", "number", false],
      ["untitledSingleSelectEnum", "choice", false],
      ["untitledMultipleSelectEnum", "choices", false],
      ["titledSingleSelectEnum", "choice", false],
      ["titledMultipleSelectEnum", "choices", false],
      ["legacyTitledEnum", "choice", false],
    ],
  );
  assert.equal(field(form, "name").label, "String");
  assert.equal(field(form, "name").description, "Your full, legal name");
  assert.equal(field(form, "email").format, "email");
  assert.deepEqual([field(form, "integer").minimum, field(form, "integer").maximum], [1, 100]);
});

test("an elicitation's order puts the fields in the server's order; unknown names are ignored, the rest follow", () => {
  const schema: JsonObject = {
    type: "object",
    properties: { b: { type: "string" }, a: { type: "string" }, c: { type: "string" } },
  };
  assert.deepEqual(
    buildForm(schema, ["c", "a", "nope", "a"]).fields.map((f) => f.name),
    ["c", "a", "b"],
  );
  assert.deepEqual(
    buildForm(schema).fields.map((f) => f.name),
    ["b", "a", "c"],
  );
});

test("every titled and untitled enum form gives its choices with labels", () => {
  const form = buildForm(EVERYTHING);
  assert.deepEqual(field(form, "untitledSingleSelectEnum").choices, [
    { value: "Monica", label: "Monica" },
    { value: "Rachel", label: "Rachel" },
    { value: "Joey", label: "Joey" },
  ]);
  assert.deepEqual(field(form, "titledSingleSelectEnum").choices, [
    { value: "hero-1", label: "Superman" },
    { value: "hero-2", label: "Green Lantern" },
  ]);
  assert.deepEqual(field(form, "legacyTitledEnum").choices, [
    { value: "pet-1", label: "Cats" },
    { value: "pet-2", label: "Dogs" },
  ]);
  assert.deepEqual(
    field(form, "titledMultipleSelectEnum").choices?.map((c) => c.label),
    ["Tuna", "Salmon"],
  );
  const many = field(form, "untitledMultipleSelectEnum");
  assert.deepEqual([many.minItems, many.maxItems], [1, 3]);
});

test("defaults pre-fill the answers; a default that does not fit its field is dropped", () => {
  assert.deepEqual(initialValues(buildForm(EVERYTHING)), {
    firstLine: "It was a dark and stormy night.",
    integer: 42,
    number: 3.14,
    untitledSingleSelectEnum: "Monica",
    untitledMultipleSelectEnum: ["Guitar"],
    titledSingleSelectEnum: "hero-1",
    titledMultipleSelectEnum: ["fish-1"],
    legacyTitledEnum: "pet-1",
  });
  const bad = buildForm({
    type: "object",
    properties: {
      n: { type: "integer", maximum: 10, default: 11 },
      c: { type: "string", enum: ["a"], default: "b" },
      e: { type: "string", format: "email", default: "nope" },
    },
  });
  assert.deepEqual(initialValues(bad), {});
});

test("text is checked as typed: required, numbers, bounds, lengths and formats", () => {
  const form = buildForm({
    type: "object",
    required: ["name", "count"],
    properties: {
      name: { type: "string", minLength: 2, maxLength: 4 },
      count: { type: "integer", minimum: 1, maximum: 100 },
      ratio: { type: "number" },
      email: { type: "string", format: "email" },
      home: { type: "string", format: "uri" },
      day: { type: "string", format: "date" },
      at: { type: "string", format: "date-time" },
    },
  });
  const f = (name: string) => field(form, name);
  assert.deepEqual(parseText(f("name"), ""), { ok: false, error: "Required." });
  assert.deepEqual(parseText(f("name"), "a"), { ok: false, error: "At least 2 characters (1 now)." });
  assert.deepEqual(parseText(f("name"), "abcde"), { ok: false, error: "At most 4 characters (5 now)." });
  assert.deepEqual(parseText(f("name"), "🎉🎉"), { ok: true, value: "🎉🎉" }, "lengths count characters");
  assert.deepEqual(parseText(f("count"), "7"), { ok: true, value: 7 });
  assert.deepEqual(parseText(f("count"), "7.5"), { ok: false, error: "A whole number, please." });
  assert.deepEqual(parseText(f("count"), "101"), { ok: false, error: "At most 100." });
  assert.deepEqual(parseText(f("count"), "0"), { ok: false, error: "At least 1." });
  assert.deepEqual(parseText(f("count"), "seven"), { ok: false, error: "A number, please." });
  assert.deepEqual(parseText(f("count"), "0x10"), { ok: false, error: "A number, please." });
  assert.deepEqual(parseText(f("ratio"), " -1.5e3 "), { ok: true, value: -1500 });
  assert.deepEqual(parseText(f("ratio"), ""), { ok: true, value: undefined }, "optional: left out");
  assert.deepEqual(parseText(f("email"), "ada@example.com"), { ok: true, value: "ada@example.com" });
  assert.equal(parseText(f("email"), "ada@example").ok, false);
  assert.equal(parseText(f("home"), "https://example.com/x").ok, true);
  assert.equal(parseText(f("home"), "example.com").ok, false);
  assert.equal(parseText(f("day"), "1815-12-10").ok, true);
  assert.deepEqual(parseText(f("day"), "2023-02-29"), { ok: false, error: "Not a date (YYYY-MM-DD)." });
  assert.equal(parseText(f("at"), "2024-05-01T10:20:30Z").ok, true);
  assert.equal(parseText(f("at"), "2024-05-01T10:20:30.5+02:00").ok, true);
  assert.equal(parseText(f("at"), "2024-05-01T25:00:00Z").ok, false);
  assert.equal(parseText(f("at"), "2024-05-01 10:20").ok, false);
});

test("multi-select answers keep within their bounds and choices", () => {
  const many = field(buildForm(EVERYTHING), "untitledMultipleSelectEnum");
  assert.equal(checkValue(many, ["Piano", "Drums"]), undefined);
  assert.equal(checkValue(many, []), "Choose at least 1 (at most 3).");
  assert.equal(checkValue(many, ["Guitar", "Piano", "Violin", "Drums"]), "Choose at most 3.");
  assert.equal(checkValue(many, ["Kazoo"]), "Only the listed choices.");
});

test("a tool schema: Optional[X] is X, nested objects and arrays of objects are JSON fields checked against their schema", () => {
  const form = buildForm({
    type: "object",
    required: ["filter"],
    properties: {
      limit: { anyOf: [{ type: "integer" }, { type: "null" }], default: null, title: "Limit" },
      mode: { type: ["string", "null"], enum: ["fast", "slow"] },
      filter: { type: "object", properties: { owner: { type: "string" } }, required: ["owner"] },
      rows: { type: "array", items: { type: "object" } },
      tags: { type: "array", items: { type: "string" } },
      either: { anyOf: [{ type: "string" }, { type: "integer" }] },
    },
  });
  assert.deepEqual(
    form.fields.map((f) => [f.name, f.kind]),
    [
      ["limit", "integer"],
      ["mode", "choice"],
      ["filter", "json"],
      ["rows", "json"],
      ["tags", "json"],
      ["either", "json"],
    ],
  );
  const filter = field(form, "filter");
  assert.deepEqual(parseText(filter, '{"owner": "ada"}'), { ok: true, value: { owner: "ada" } });
  assert.deepEqual(parseText(filter, "{}"), { ok: false, error: "'filter.owner' is required" });
  assert.equal((parseText(filter, "{owner}") as { error: string }).error.startsWith("Not valid JSON"), true);
  assert.equal(field(form, "limit").default, undefined, "a null default is no default of an integer field");
});

test("the content is the answered fields in the form's order; problems name each field", () => {
  const form = buildForm(EVERYTHING);
  const values: Values = { ...initialValues(form), name: "Ada", check: true };
  delete values.number;
  const content = assemble(form, values);
  assert.deepEqual(Object.keys(content), [
    "name",
    "check",
    "firstLine",
    "integer",
    "untitledSingleSelectEnum",
    "untitledMultipleSelectEnum",
    "titledSingleSelectEnum",
    "titledMultipleSelectEnum",
    "legacyTitledEnum",
  ]);
  assert.deepEqual(problems(form, values), []);
  assert.deepEqual(problems(form, { integer: 500 }), ["String: required.", "Integer: At most 100."]);
});

test("the summary shows labels of choices, Yes/No, quoted text and what was left out", () => {
  const form = buildForm(EVERYTHING);
  assert.equal(displayValue(field(form, "titledSingleSelectEnum"), "hero-2"), "Green Lantern");
  assert.equal(displayValue(field(form, "titledMultipleSelectEnum"), ["fish-2", "fish-1"]), "Salmon, Tuna");
  assert.equal(displayValue(field(form, "check"), true), "Yes");
  assert.equal(displayValue(field(form, "name"), "Ada\nLovelace"), '"Ada\\nLovelace"');
  assert.equal(displayValue(field(form, "name"), undefined), "(missing)");
  assert.equal(displayValue(field(form, "email"), undefined), "(left out)");
  assert.equal(inputText(field(form, "number"), 3.14), "3.14");
  assert.equal(inputText(field(form, "name"), "x"), "x");
});

test("a field's hint says whether it is required and what it accepts, as plain text", () => {
  const form = buildForm(EVERYTHING);
  assert.equal(fieldHint(field(form, "name")), "String (required): Your full, legal name");
  assert.equal(fieldHint(field(form, "integer")), "Integer (optional, a whole number, 1 to 100)");
  assert.equal(fieldHint(field(form, "birthdate")), "String with date format (optional, a date, YYYY-MM-DD)");
  const hostile = buildForm({
    type: "object",
    properties: { x: { type: "string", title: "Na\u202eme\u0007", description: "line one\nline two\u200b" } },
  });
  assert.equal(fieldHint(field(hostile, "x")), "Name (optional): line one line two");
});
