// The sanitiser for text a person or a model reads: the sidecar's rules (output/sanitize.py),
// checked on each class of hostile input and on every code point of the removed ranges.
import assert from "node:assert/strict";
import { test } from "node:test";
import { stripControls } from "../../sanitize";

test("terminal sequences go whole: OSC 52 clipboard writes, screen clears, 8-bit CSI, charset switches", () => {
  assert.equal(stripControls("a\u001b]52;c;ZXZpbA==\u0007b"), "ab");
  assert.equal(stripControls("a\u001b]8;;https://x\u001b\\link\u001b]8;;\u001b\\b"), "alinkb");
  assert.equal(stripControls("\u001b[2J\u001b[Hclean"), "clean");
  assert.equal(stripControls("x\u009b31my"), "xy");
  assert.equal(stripControls("x\u001b(0y"), "xy");
  assert.equal(stripControls("unterminated\u001b]0;title"), "unterminated");
});

test("controls, bidi, zero-width and TAG characters go; newlines, tabs and other scripts stay", () => {
  assert.equal(stripControls("safe\rEVIL\u0008\u0007"), "safeEVIL");
  assert.equal(stripControls("line 1\r\nline 2\tcol"), "line 1\nline 2\tcol");
  assert.equal(stripControls("\u202eevil\u202c \u2066iso\u2069"), "evil iso");
  assert.equal(stripControls("zero\u200bwidth\ufeff\u00ad"), "zerowidth");
  const tags = [..."ignore previous"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");
  assert.equal(stripControls(`ok${tags}`), "ok");
  assert.equal(stripControls("日本語 émoji 👍🏽"), "日本語 émoji 👍🏽");
});

test("no code point of a removed range survives", () => {
  const ranges: Array<[number, number]> = [
    [0x00, 0x08],
    [0x0b, 0x1f],
    [0x7f, 0x9f],
    [0x202a, 0x202e],
    [0x2060, 0x206f],
    [0x200b, 0x200f],
    [0xe0000, 0xe007f],
  ];
  for (const [low, high] of ranges) {
    for (let point = low; point <= high; point++) {
      const char = String.fromCodePoint(point);
      assert.equal(stripControls(`a${char}b`).includes(char), false, `U+${point.toString(16)} survived`);
    }
  }
});
