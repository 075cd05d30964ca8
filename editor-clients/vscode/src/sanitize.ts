// Server text on its way to a person or a model: the same rules as the sidecar's
// `output/sanitize.py` (terminal sequences, C0 but newline and tab, DEL, C1, bidirectional
// controls, zero-width and other invisible format characters, Unicode TAG characters that
// smuggle instructions to a model). Pure (no `vscode`), unit-tested.

// OSC, DCS, SOS, PM, APC with their terminator (BEL, ESC \ or U+009C). An unterminated one is
// no match, so only its introducer goes (as "any other ESC sequence") and the rest stays.
const STRING_SEQUENCE = "\\u001b[\\]PX^_][^\\u0007\\u001b\\u009c]*(?:\\u0007|\\u001b\\\\|\\u009c)";
// CSI, string sequences, and any other ESC sequence. The 8-bit introducers (U+009B, U+0090,
// U+0098, U+009D-U+009F) start none: in real text they are cp1252 read as Latin-1 (› ž Ÿ), so
// each goes alone with the other C1 controls and what follows stays as inert text.
const SEQUENCES = new RegExp(`\\u001b\\[[0-?]*[ -/]*[@-~]|${STRING_SEQUENCE}|\\u001b[ -/]*[0-~]`, "gu");
const BIDI = "\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069";
const TAGS = "\\u{e0000}-\\u{e007f}";
const INVISIBLE = `\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb\\u{1bca0}-\\u{1bca3}\\u{1d173}-\\u{1d17a}${TAGS}`;
// Variation selectors past the first presentation one after a character carry data ("emoji
// smuggling"), and the Hangul fillers and the grapheme joiner render as nothing: they go.
const SELECTORS = "\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}";
const LOOKALIKES = `${SELECTORS}\\u034f\\u115f\\u1160\\u3164\\uffa0`;
const SELECTOR_RUNS = new RegExp(`[${SELECTORS}]+`, "gu");
const FILLERS = /[\u034f\u115f\u1160\u3164\uffa0]/gu;
const REMOVED = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f${INVISIBLE}]`, "gu");
// The controls that separate text (lines, pages, records) become a newline, the unit
// separator a space, so the words they separated stay apart.
const SPACING: Record<string, string> = {
  "\r": "\n",
  "\u000b": "\n",
  "\u000c": "\n",
  "\u001c": "\n",
  "\u001d": "\n",
  "\u001e": "\n",
  "\u0085": "\n",
  "\u001f": " ",
};
// What `removedHidden` counts: the removals that can hide or reorder words.
const HIDDEN = new RegExp(`${STRING_SEQUENCE}|[${BIDI}${TAGS}]+`, "gu");
// What JSON.stringify leaves raw and a reader must see as an escape.
const JSON_UNSAFE = new RegExp(`[\\u007f-\\u009f${INVISIBLE}\\u2028\\u2029${LOOKALIKES}]`, "gu");

/** The selectors a run keeps: one presentation selector right after a character, nothing else. */
function keptSelector(run: string, offset: number): string {
  const first = run[0];
  return offset > 0 && (first === "\ufe0e" || first === "\ufe0f") ? first : "";
}

/**
 * `text` without terminal sequences or hidden characters; newlines and tabs stay. A carriage
 * return (CRLF is one newline), vertical tab, form feed, NEL and FS/GS/RS become a newline,
 * US a space.
 */
export function stripControls(text: string): string {
  return text
    .replace(SEQUENCES, "")
    .replace(/\r\n/g, "\n")
    .replace(REMOVED, (c) => SPACING[c] ?? "")
    .replace(SELECTOR_RUNS, (run, offset: number) => keptSelector(run, offset))
    .replace(FILLERS, "");
}

/**
 * How many characters of `text` `stripControls` removes that could hide or reorder words:
 * bidirectional controls, TAG characters, whole terminal string sequences (an OSC 8 link
 * target, a clipboard write). Colours, zero-width characters and lone controls do not count.
 */
export function removedHidden(text: string): number {
  let count = 0;
  for (const match of text.matchAll(HIDDEN)) count += [...match[0]].length;
  for (const match of text.matchAll(SELECTOR_RUNS)) {
    count += [...match[0]].length - keptSelector(match[0], match.index ?? 0).length;
  }
  return count;
}

/** The line telling a reader that `count` hidden characters were removed ("" for none). */
export function removalNote(count: number): string {
  if (count <= 0) return "";
  return `(the sidecar removed ${count} hidden character${count === 1 ? "" : "s"} from this server's text)`;
}

/** `stripControls(text)`, followed by `removalNote` on its own line when something hid words. */
export function stripControlsWithNote(text: string): string {
  const note = removalNote(removedHidden(text));
  return note ? `${stripControls(text)}\n${note}` : stripControls(text);
}

function unicodeEscape(char: string): string {
  return [...Array(char.length).keys()].map((i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");
}

/**
 * JSON text (from JSON.stringify) with every character `stripControls` would remove, and the
 * line separators, written as a `\uXXXX` escape (a TAG character as its surrogate pair): it
 * decodes to the same value and hides nothing. Valid because JSON allows those characters
 * only inside strings, where an escape means the same.
 */
export function jsonEscape(json: string): string {
  return json.replace(JSON_UNSAFE, unicodeEscape);
}
