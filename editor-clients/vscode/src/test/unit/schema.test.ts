import assert from "node:assert/strict";
import { test } from "node:test";
import type { JsonObject } from "../../protocol";
import { argumentsSkeleton, parseArguments, validate } from "../../schema";

const ADD: JsonObject = {
  type: "object",
  properties: { a: { type: "integer" }, b: { type: "integer" } },
  required: ["a", "b"],
};

test("arguments must be a JSON object; empty means {}", () => {
  assert.deepEqual(parseArguments("  "), { ok: true, value: {} });
  assert.deepEqual(parseArguments('{"a": 1}'), { ok: true, value: { a: 1 } });
  assert.equal(parseArguments("[1]").ok, false);
  const bad = parseArguments("{a: 1}");
  assert.ok(!bad.ok && bad.error.startsWith("Not valid JSON"));
});

test("required parameters and types are checked", () => {
  assert.deepEqual(validate({ a: 1, b: 2 }, ADD), []);
  assert.deepEqual(validate({ a: 1 }, ADD), ["'b' is required"]);
  assert.deepEqual(validate({ a: "1", b: 2.5 }, ADD), [
    "'a' must be integer, not string",
    "'b' must be integer, not number",
  ]);
});

test("unknown parameters are refused only when the schema says so", () => {
  assert.deepEqual(validate({ a: 1, b: 2, c: 3 }, ADD), []);
  assert.deepEqual(validate({ a: 1, b: 2, c: 3 }, { ...ADD, additionalProperties: false }), [
    "'c' is not a parameter of this tool",
  ]);
});

test("enums, bounds, arrays, nested objects and anyOf", () => {
  const schema: JsonObject = {
    type: "object",
    properties: {
      kind: { enum: ["all", "tools"] },
      limit: { type: "integer", minimum: 1, maximum: 50 },
      ids: { type: "array", items: { type: "string" }, minItems: 1 },
      read: { type: "object", properties: { server: { type: "string" } }, required: ["server"] },
      value: { anyOf: [{ type: "string" }, { type: "null" }] },
    },
  };
  assert.deepEqual(validate({ kind: "all", limit: 5, ids: ["x"], read: { server: "s" }, value: null }, schema), []);
  assert.deepEqual(validate({ kind: "none", limit: 0, ids: [1], read: {}, value: 3 }, schema), [
    '\'kind\' must be one of "all", "tools"',
    "'limit' must be ≥ 1",
    "'ids[0]' must be string, not integer",
    "'read.server' is required",
    "'value' does not match any of the allowed forms",
  ]);
  assert.deepEqual(validate({ ids: [] }, schema), ["'ids' must have at least 1 items"]);
});

test("a number accepts integers; a schema without type accepts anything", () => {
  assert.deepEqual(validate(3, { type: "number" }), []);
  assert.deepEqual(validate({ x: [1, "a"] }, {}), []);
  assert.deepEqual(validate("x", { type: ["string", "null"] }), []);
});

test("the skeleton lists required parameters with typed placeholders", () => {
  assert.equal(argumentsSkeleton(ADD), '{"a":0,"b":0}');
  assert.equal(
    argumentsSkeleton({
      type: "object",
      properties: { text: { type: "string" }, on: { type: "boolean" }, opt: { type: "string" } },
      required: ["text", "on"],
    }),
    '{"text":"","on":false}',
  );
});
