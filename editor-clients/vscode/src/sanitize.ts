// Server text on its way to a person or a model: the same rules as the sidecar's
// `output/sanitize.py` (terminal sequences, C0 but newline and tab, DEL, C1, bidirectional
// controls, zero-width and other invisible format characters, Unicode TAG characters that
// smuggle instructions to a model). Pure (no `vscode`), unit-tested.

// CSI (7- and 8-bit), string sequences (OSC, DCS, SOS, PM, APC) up to BEL, ST or the end,
// and any other ESC sequence.
const SEQUENCES =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c|$)|\u001b[ -/]*[0-~]/gu;
const REMOVED =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

/** `text` without terminal sequences or hidden characters; newlines and tabs stay (CRLF becomes LF). */
export function stripControls(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(SEQUENCES, "").replace(REMOVED, "");
}
