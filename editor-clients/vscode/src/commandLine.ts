// Building `/mcp` lines for the sidecar: quoting only. The sidecar splits them (and the add
// wizard's command lines, through the dry run of mcp/config/add), so no parser is copied here.
// Pure (no `vscode`), unit-tested.

/** Quotes one word for a `/mcp` line so the sidecar reads it back unchanged. */
export function quoteWord(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_\-.,:/=@%+]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'"'"'`)}'`;
}

/** A `/mcp` line from words: `line("get", "my server")` is `get 'my server'`. */
export function commandLine(...words: string[]): string {
  return words.map(quoteWord).join(" ");
}

/** `tools SERVER TOOL`: one tool's signature; a tool name that reads as an option goes after `--`. */
export function toolsLine(server: string, tool: string): string {
  return tool.startsWith("--") ? commandLine("tools", server, "--", tool) : commandLine("tools", server, tool);
}
