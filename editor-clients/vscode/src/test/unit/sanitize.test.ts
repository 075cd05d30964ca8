// The sanitiser for text a person or a model reads: the sidecar's rules (output/sanitize.py),
// checked on each class of hostile input and on every code point of the removed ranges.
import assert from "node:assert/strict";
import { test } from "node:test";
import { jsonEscape, removalNote, removedHidden, stripControls, stripControlsWithNote } from "../../sanitize";

const TAGS = [..."api key sk-123"].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join("");

test("terminal sequences go whole: OSC 52 clipboard writes, OSC 8 links, screen clears, charset switches", () => {
  assert.equal(stripControls("a\u001b]52;c;ZXZpbA==\u0007b"), "ab");
  assert.equal(stripControls("a\u001b]8;;https://x\u001b\\link\u001b]8;;\u001b\\b"), "alinkb");
  assert.equal(stripControls("\u001b[2J\u001b[Hclean"), "clean");
  assert.equal(stripControls("x\u001b[31my"), "xy");
  assert.equal(stripControls("x\u001b(0y"), "xy");
  assert.equal(stripControls("\u001b]0;title\u009cafter"), "after");
});

test("a string sequence goes whole only when terminated; an 8-bit introducer goes alone", () => {
  assert.equal(
    stripControls("Ko\u009eice report\nIMPORTANT: 3 payments failed"),
    "Koice report\nIMPORTANT: 3 payments failed",
  );
  assert.equal(stripControls("Ko\u009eice and c\u009cur"), "Koice and cur");
  assert.equal(stripControls("unterminated \u001b]8;;https://x"), "unterminated 8;;https://x");
  assert.equal(stripControls("title \u001b]0;no end\nnext line"), "title 0;no end\nnext line");
  assert.equal(stripControls("\u001bPdcs\u001b[31m red"), "dcs red");
  assert.equal(stripControls("\u001b_apc \u001bX sos \u001b^ pm"), "apc  sos  pm");
  assert.equal(stripControls("8-bit \u009d52;c;ZXZpbA==\u0007 osc"), "8-bit 52;c;ZXZpbA== osc");
  assert.equal(stripControls("x\u009b31my"), "x31my");
  assert.equal(stripControls("lone \u0090\u0098\u009d\u009e\u009f c1"), "lone  c1");
});

test("controls that separate text become a newline (US a space), so words stay apart", () => {
  assert.equal(stripControls("10%\r50%\r100%"), "10%\n50%\n100%");
  assert.equal(stripControls("safe\rOVERWRITTEN"), "safe\nOVERWRITTEN");
  assert.equal(stripControls("crlf\r\nline\r\r\n"), "crlf\nline\n\n");
  assert.equal(stripControls("page1\fpage2\vpage3"), "page1\npage2\npage3");
  assert.equal(stripControls("line1\u0085line2"), "line1\nline2");
  assert.equal(stripControls("fs\u001cgs\u001drs\u001eus\u001fend"), "fs\ngs\nrs\nus end");
});

// Printable, yet invisible: variation selectors (data past a presentation one) and fillers go.
const LOOKALIKE = /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}\u034f\u115f\u1160\u3164\uffa0]/u;

test("no printable character is ever removed (but the invisible look-alikes)", () => {
  const printable: string[] = ["\n", "\t"];
  for (let point = 0; point <= 0x10ffff; point++) {
    if (point >= 0xd800 && point <= 0xdfff) continue;
    if (LOOKALIKE.test(String.fromCodePoint(point))) continue;
    const char = String.fromCodePoint(point);
    if (/[\p{L}\p{M}\p{N}\p{P}\p{S}\p{Zs}]/u.test(char)) printable.push(char);
  }
  const text = printable.join("");
  assert.ok(printable.length > 100_000, `${printable.length}`);
  assert.equal(stripControls(text), text);
  assert.equal(removedHidden(text), 0);
});

test("removedHidden counts what could hide words: bidi, TAG characters, whole string sequences", () => {
  assert.equal(removedHidden("plain words"), 0);
  assert.equal(removedHidden(`Thanks!${TAGS}`), 14);
  assert.equal(removedHidden("rtl\u202etxt.exe\u202c \u2066iso\u2069 \u061cmark\u200e\u200f"), 7);
  assert.equal(removedHidden("\u001b]52;c;ZXZpbA==\u0007copied"), 16);
  assert.equal(removedHidden("\u001b]0;t\u202e\u{e0041}\u0007x"), 8);
  assert.equal(removedHidden("\u001b[31mred\u001b[0m zero\u200bwidth\ufeff soft\u00ad \r\u0007\u0085"), 0);
  assert.equal(removedHidden("unterminated \u001b]8;;https://x\u001b[0m \u009d8;;y\u0007"), 0);
  assert.equal(removalNote(0), "");
  assert.equal(removalNote(1), "(the sidecar removed 1 hidden character from this server's text)");
  assert.equal(
    stripControlsWithNote(`Thanks!${TAGS}`),
    "Thanks!\n(the sidecar removed 14 hidden characters from this server's text)",
  );
  assert.equal(stripControlsWithNote("\u001b[1m10%\r50%"), "10%\n50%");
});

test("jsonEscape writes hidden characters as escapes and keeps the value", () => {
  const value = {
    body: `Thanks!${TAGS}`,
    rtl: "a\u202eb",
    c1: "\u009b31m\u007f",
    sep: "x\u2028y",
    text: "日本語 🙂\n\r\u001b[2J",
  };
  const shown = jsonEscape(JSON.stringify(value));
  assert.equal(stripControls(shown), shown);
  assert.deepEqual(JSON.parse(shown), value);
  assert.ok(shown.includes("Thanks!\\udb40\\udc61\\udb40\\udc70"), shown);
  assert.ok(
    shown.includes('"a\\u202eb"') && shown.includes('"\\u009b31m\\u007f"') && shown.includes("x\\u2028y"),
    shown,
  );
  assert.ok(shown.includes("日本語 🙂"), shown);
});

test("controls, bidi, zero-width and TAG characters go; newlines, tabs and other scripts stay", () => {
  assert.equal(stripControls("safe\rEVIL\u0008\u0007"), "safe\nEVIL");
  assert.equal(stripControls("line 1\r\nline 2\tcol"), "line 1\nline 2\tcol");
  assert.equal(stripControls("\u202eevil\u202c \u2066iso\u2069"), "evil iso");
  assert.equal(stripControls("zero\u200bwidth\ufeff\u00ad"), "zerowidth");
  assert.equal(stripControls(`ok${TAGS}`), "ok");
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

test("variation selectors carry no smuggled data; emoji keep one presentation selector; fillers go", () => {
  const payload = [..."ignore all previous"].map((c) => String.fromCodePoint(0xe0100 + c.charCodeAt(0))).join("");
  const smuggled = `\u{1f44d}${payload}\ufe0f\ufe0f`;
  assert.equal(stripControls(smuggled), "\u{1f44d}");
  assert.equal(removedHidden(smuggled), [...payload].length + 2);
  assert.equal(stripControls("\u2764\ufe0f ok"), "\u2764\ufe0f ok");
  assert.equal(removedHidden("\u2764\ufe0f ok"), 0);
  assert.equal(stripControls("\u2764\ufe0f\ufe0e\ufe0f"), "\u2764\ufe0f");
  assert.equal(stripControls("name\u3164\u115f\u1160\uffa0\u034f!"), "name!");
  assert.equal(stripControls("x\u{1d173}\u{1bca0}y"), "xy");
});
