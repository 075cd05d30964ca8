// Input parsing for the guided flows. Pure (no `vscode`), unit-tested.

/**
 * Splits a command line the way the sidecar's `/mcp` parser does (POSIX-like: single quotes
 * literal, double quotes with \" \\ \$ \` escapes, backslash outside quotes); nothing is
 * evaluated. Returns undefined for an unclosed quote.
 */
export function splitWords(line: string): string[] | undefined {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] as string;
    if (ch === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (ch === '"') {
      inWord = true;
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        const next = line[j + 1];
        if (line[j] === "\\" && next !== undefined && '"\\$`'.includes(next)) {
          word += next;
          j++;
        } else {
          word += line[j];
        }
      }
      if (j >= line.length) return undefined;
      i = j;
    } else if (ch === "\\") {
      if (i + 1 < line.length) word += line[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Quotes one word for a `/mcp` line so the sidecar reads it back unchanged. */
export function quoteWord(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_\-.,:/=@%+]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'"'"'`)}'`;
}

/** A `/mcp` line from words: `line("get", "my server")` is `get 'my server'`. */
export function commandLine(...words: string[]): string {
  return words.map(quoteWord).join(" ");
}

export type ServerDefinitionInput =
  | { ok: true; transport: "http" | "stdio"; definition: { url: string } | { command: string; args: string[] } }
  | { ok: false; error: string };

/** An "Add server" answer: an http(s) URL, or a stdio command line with its arguments. */
export function parseServerTarget(text: string): ServerDefinitionInput {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: false, error: "Enter an http(s) URL or a command line." };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
    if (!/^https?:\/\//i.test(trimmed)) return { ok: false, error: "Only http:// and https:// URLs name HTTP servers." };
    if (/\s/.test(trimmed)) return { ok: false, error: "A URL cannot contain spaces." };
    return { ok: true, transport: "http", definition: { url: trimmed } };
  }
  const words = splitWords(trimmed);
  if (!words) return { ok: false, error: "A quote is not closed." };
  const [command, ...args] = words;
  if (command === undefined || command === "") return { ok: false, error: "Enter the command that starts the server." };
  return { ok: true, transport: "stdio", definition: { command, args } };
}

/** Server names the configuration accepts: letters, digits, `_` and `-`. */
export function validServerName(name: string): string | undefined {
  if (name === "") return "Enter a name.";
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return "Use letters, digits, '_' and '-' only.";
  if (name.length > 64) return "Use at most 64 characters.";
  return undefined;
}
