"""Parse one `/mcp` command line: the same parser for every editor and the CLI.

Words are split like a POSIX shell splits them, without ever evaluating anything:

- whitespace separates words; adjacent quoted and unquoted pieces join into one word;
- single quotes keep everything literally, backslashes included (Windows paths);
- double quotes keep everything but `\\"`, `\\\\`, `\\$` and `` \\` ``, which lose their backslash;
- outside quotes a backslash makes the next character literal (`my\\ server`);
- `$(...)`, `${VAR}`, pipes, redirections, `;`, `&` and globs are ordinary characters.

An unclosed quote, an unknown command or a bad option raises CommandLineError with the
usage text to show.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

OptionKind = Literal["flag", "value", "multi"]

SCOPES = ("global", "project")
TRANSPORTS = ("http", "stdio")

_BLANKS = " \t\r\n"
_DOUBLE_QUOTE_ESCAPES = '"\\$`'


@dataclass(frozen=True, slots=True)
class CommandSpec:
    usage: str
    summary: str


COMMANDS: dict[str, CommandSpec] = {
    "list": CommandSpec("list", "Show the server status matrix (also `status`, or an empty line)."),
    "status": CommandSpec("status", "Show the server status matrix."),
    "add": CommandSpec(
        "add --scope global|project [--transport http|stdio] [--replace] [--header 'Name: value']... "
        "[--env KEY=value]... [--oauth-client-id ID] [--oauth-client-secret REF] [--oauth-client-metadata-url URL] "
        "[--oauth-issuer URL] [--oauth-dpop] [--oauth-scope SCOPE]... [--oauth-callback-port PORT] "
        "NAME (URL | -- COMMAND [ARGS...])",
        "Save an HTTP server (URL) or a stdio server (after --) without connecting.",
    ),
    "remove": CommandSpec(
        "remove --scope global|project NAME", "Delete a definition from one scope (credentials are kept)."
    ),
    "get": CommandSpec("get NAME", "Inspect a server's status and settings, connection values hidden."),
    "tools": CommandSpec(
        "tools NAME [TOOL]", "List a server's tools without activating any, or show one tool's full signature."
    ),
    "reload": CommandSpec("reload", "Apply configuration file changes now."),
    "enable": CommandSpec("enable NAME", "Enable a server in the file that defines it (connects nothing)."),
    "disable": CommandSpec("disable NAME", "Disable a server, close its connection and deactivate its tools."),
    "login": CommandSpec("login NAME [--no-browser]", "Authenticate an HTTP server with OAuth."),
    "logout": CommandSpec("logout NAME", "Remove a server's stored OAuth credentials."),
    "reconnect": CommandSpec("reconnect NAME", "Replace a server's connection and refresh its tool catalog."),
    "refresh": CommandSpec("refresh NAME", "Fetch tool, resource and prompt metadata again."),
    "subscribe": CommandSpec("subscribe NAME URI", "Watch one resource for changes."),
    "unsubscribe": CommandSpec("unsubscribe NAME URI", "Stop watching one resource."),
    "subscriptions": CommandSpec("subscriptions", "List the active resource watches."),
    "prompt": CommandSpec("prompt NAME PROMPT [ARG=VALUE]...", "Preview a server's prompt."),
    "import": CommandSpec(
        "import --scope global|project FILE [--select NAME[,NAME...]] [--confirm] [--replace]",
        "Preview another client's servers (values hidden); write the selection with --confirm.",
    ),
    "profile": CommandSpec(
        "profile [PROFILE] [--clear]",
        "Show this window's profile and the profiles defined; choose one (its servers only are searched, its "
        "tools start active), or clear it.",
    ),
    "help": CommandSpec("help [COMMAND]", "Show this help, or one command's usage."),
}

# Options each command accepts: "flag", "value" (once) or "multi" (repeatable).
OPTIONS: dict[str, dict[str, OptionKind]] = {
    "add": {
        "--scope": "value",
        "--transport": "value",
        "--replace": "flag",
        "--header": "multi",
        "--env": "multi",
        "--oauth-client-id": "value",
        "--oauth-client-secret": "value",
        "--oauth-client-metadata-url": "value",
        "--oauth-issuer": "value",
        "--oauth-dpop": "flag",
        "--oauth-scope": "multi",
        "--oauth-callback-port": "value",
    },
    "remove": {"--scope": "value"},
    "login": {"--no-browser": "flag"},
    "import": {"--scope": "value", "--select": "multi", "--confirm": "flag", "--replace": "flag"},
    "profile": {"--clear": "flag"},
}
# Positional arguments: (names, variadic last).
POSITIONALS: dict[str, tuple[tuple[str, ...], bool]] = {
    "list": ((), False),
    "status": ((), False),
    "remove": (("NAME",), False),
    "get": (("NAME",), False),
    "tools": (("NAME", "TOOL"), False),
    "reload": ((), False),
    "enable": (("NAME",), False),
    "disable": (("NAME",), False),
    "login": (("NAME",), False),
    "logout": (("NAME",), False),
    "reconnect": (("NAME",), False),
    "refresh": (("NAME",), False),
    "subscribe": (("NAME", "URI"), False),
    "unsubscribe": (("NAME", "URI"), False),
    "subscriptions": ((), False),
    "prompt": (("NAME", "PROMPT"), True),
    "import": (("FILE",), False),
    "profile": (("PROFILE",), False),
}
# How many of a command's last positionals may be left out (`tools NAME` lists, `tools NAME TOOL` shows one;
# `help` is parsed by hand, listed for `mcp/commandSpec`).
OPTIONAL_POSITIONALS: dict[str, int] = {"tools": 1, "help": 1, "profile": 1}


class CommandLineError(Exception):
    """`message` says what is wrong; `usage` is the text to show with it."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.message = message
        self.usage = usage


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    name: str
    """The canonical command (`list` for `status` and an empty line)."""
    server: str | None = None
    scope: str | None = None
    replace: bool = False
    definition: dict[str, Any] = field(default_factory=dict)
    """`add`: the definition to save, in the `mcpServers` format."""
    file: str | None = None
    select: tuple[str, ...] | None = None
    confirm: bool = False
    uri: str | None = None
    rest: tuple[str, ...] = ()
    """`prompt`: PROMPT and its ARG=VALUE words; `tools`: the TOOL, when one was named."""
    no_browser: bool = False
    topic: str | None = None
    """`help`: the command asked about."""
    clear: bool = False
    """`profile --clear`."""


def usage_of(command: str | None = None) -> str:
    if command is not None and command in COMMANDS:
        spec = COMMANDS[command]
        return f"Usage: {spec.usage}\n  {spec.summary}"
    lines = ["Usage: COMMAND [OPTIONS] [ARGUMENTS]", "Commands:"]
    for spec in COMMANDS.values():
        lines.append(f"  {spec.usage}")
        lines.append(f"      {spec.summary}")
    lines.append('Quote values with spaces (\'...\' keeps backslashes, "..." allows \\" escapes); nothing is run.')
    return "\n".join(lines)


def split_words(line: str) -> list[str]:
    """Split a line into words (see the module docstring); CommandLineError on an unclosed quote."""
    words: list[str] = []
    current: list[str] = []
    in_word = False
    i, n = 0, len(line)
    while i < n:
        if line[i] in _BLANKS:
            if in_word:
                words.append("".join(current))
                current, in_word = [], False
            i += 1
            continue
        # Any piece starts a word, even one that adds no characters: `''` alone is an empty word.
        in_word = True
        piece, i = _read_piece(line, i)
        current.append(piece)
    if in_word:
        words.append("".join(current))
    return words


def _read_piece(line: str, i: int) -> tuple[str, int]:
    """The characters the piece at `line[i]` adds to its word, and the index after the piece."""
    ch = line[i]
    if ch == "'":
        return _single_quoted(line, i)
    if ch == '"':
        return _double_quoted(line, i)
    if ch == "\\":
        return _escaped(line, i)
    return ch, i + 1


def _single_quoted(line: str, start: int) -> tuple[str, int]:
    end = line.find("'", start + 1)
    if end < 0:
        raise CommandLineError("The line has an unclosed single quote (').", usage_of())
    return line[start + 1 : end], end + 1


def _double_quoted(line: str, start: int) -> tuple[str, int]:
    out: list[str] = []
    i, n = start + 1, len(line)
    while i < n:
        ch = line[i]
        if ch == '"':
            return "".join(out), i + 1
        # As in a POSIX shell, a backslash escapes only these here; before anything else it stays.
        if ch == "\\" and i + 1 < n and line[i + 1] in _DOUBLE_QUOTE_ESCAPES:
            out.append(line[i + 1])
            i += 2
        else:
            out.append(ch)
            i += 1
    raise CommandLineError('The line has an unclosed double quote (").', usage_of())


def _escaped(line: str, start: int) -> tuple[str, int]:
    """A backslash outside quotes: the next character, literally."""
    if start + 1 >= len(line):
        raise CommandLineError("The line ends with a backslash that escapes nothing.", usage_of())
    if line[start + 1] == "\n":
        return "", start + 2  # a line continuation
    return line[start + 1], start + 2


def parse_line(line: str) -> ParsedCommand:
    words = split_words(line)
    if words and words[0] == "/mcp":
        words = words[1:]
    if not words:
        return ParsedCommand("list")
    command, args = words[0], words[1:]
    if command not in COMMANDS:
        near = difflib.get_close_matches(command, list(COMMANDS), n=1, cutoff=0.6)
        hint = f" Did you mean {near[0]!r}?" if near else ""
        raise CommandLineError(f"Unknown command {command!r}.{hint}", usage_of())
    if command == "help":
        if len(args) > 1 or (args and args[0] not in COMMANDS):
            raise CommandLineError("help takes one command name.", usage_of())
        return ParsedCommand("help", topic=args[0] if args else None)
    if command == "add":
        return _parse_add(args)
    options, positionals = _split_options(command, args, stop_at_positional=False)
    names = _check_positionals(command, positionals)
    name = "list" if command == "status" else command
    scope = _scope(command, options) if command in ("remove", "import") else None
    if command == "import":
        select = _selection(options.get("--select"))
        return ParsedCommand(
            "import",
            scope=scope,
            file=positionals[0],
            select=select,
            confirm=bool(options.get("--confirm")),
            replace=bool(options.get("--replace")),
        )
    server = positionals[0] if names and names[0] == "NAME" else None
    if command == "profile":
        if positionals and options.get("--clear"):
            raise CommandLineError("profile takes a PROFILE or --clear, not both.", usage_of(command))
        return ParsedCommand("profile", rest=tuple(positionals), clear=bool(options.get("--clear")))
    return ParsedCommand(
        name,
        server=server,
        scope=scope,
        uri=positionals[1] if command in ("subscribe", "unsubscribe") else None,
        rest=tuple(positionals[1:]) if command in ("prompt", "tools") else (),
        no_browser=bool(options.get("--no-browser")),
    )


def _check_positionals(command: str, positionals: list[str]) -> tuple[str, ...]:
    """The command's positional names, once `positionals` fit them (else CommandLineError)."""
    names, variadic = POSITIONALS[command]
    if len(positionals) < len(names) - OPTIONAL_POSITIONALS.get(command, 0):
        missing = names[len(positionals)]
        raise CommandLineError(f"{command} needs {missing}.", usage_of(command))
    if len(positionals) > len(names) and not variadic:
        extra = positionals[len(names)]
        raise CommandLineError(f"Unexpected argument {_show(extra)} for {command}.", usage_of(command))
    return names


def _show(word: str) -> str:
    return repr(word if len(word) <= 40 else word[:40] + "…")


def _split_options(command: str, args: list[str], *, stop_at_positional: bool) -> tuple[dict[str, Any], list[str]]:
    """Options (by name) and positional words; `--` ends the options."""
    options: dict[str, Any] = {}
    positionals: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            if not stop_at_positional:
                positionals.extend(args[i + 1 :])
            break
        if word.startswith("--") and len(word) > 2:
            i = _read_option(command, args, i, options)
            continue
        if stop_at_positional:
            break
        positionals.append(word)
        i += 1
    if stop_at_positional:
        # The caller reads what follows the options itself (`add`'s NAME and target, `--` kept).
        options["__rest__"] = args[i:]
    return options, positionals


def _read_option(command: str, args: list[str], i: int, options: dict[str, Any]) -> int:
    """Store the option `args[i]` (`--name`, `--name=value` or `--name value`) in `options`;
    the index of the word after it."""
    name, eq, inline = args[i].partition("=")
    kind = OPTIONS.get(command, {}).get(name)
    if kind is None:
        raise CommandLineError(f"Unknown option {_show(name)} for {command}.", usage_of(command))
    if kind == "flag":
        if eq:
            raise CommandLineError(f"{name} takes no value.", usage_of(command))
        options[name] = True
        return i + 1
    if eq:
        value, after = inline, i + 1
    elif i + 1 >= len(args):
        raise CommandLineError(f"{name} needs a value.", usage_of(command))
    else:
        value, after = args[i + 1], i + 2
    if kind == "multi":
        options.setdefault(name, []).append(value)
    elif name in options:
        raise CommandLineError(f"{name} is given twice.", usage_of(command))
    else:
        options[name] = value
    return after


def _scope(command: str, options: dict[str, Any]) -> str:
    scope = options.get("--scope")
    if scope is None:
        raise CommandLineError(f"{command} needs --scope global or --scope project.", usage_of(command))
    if scope not in SCOPES:
        raise CommandLineError(f"--scope must be global or project, not {_show(scope)}.", usage_of(command))
    return str(scope)


def _selection(values: list[str] | None) -> tuple[str, ...] | None:
    if values is None:
        return None
    names = [name.strip() for value in values for name in value.split(",")]
    if not all(names):
        raise CommandLineError("--select takes server names separated by commas.", usage_of("import"))
    return tuple(dict.fromkeys(names))


def _parse_add(args: list[str]) -> ParsedCommand:
    usage = usage_of("add")
    options, _ = _split_options("add", args, stop_at_positional=True)
    rest: list[str] = options.pop("__rest__")
    scope = _scope("add", options)
    if not rest or rest[0] == "--":
        raise CommandLineError("add needs a server NAME (after the options).", usage)
    name, tail = rest[0], rest[1:]
    transport, definition = _add_target(name, tail, usage)
    _check_transport(options.get("--transport"), transport, usage)
    definition.update(_add_settings(options, usage))
    return ParsedCommand("add", server=name, scope=scope, replace=bool(options.get("--replace")), definition=definition)


def _add_target(name: str, tail: list[str], usage: str) -> tuple[str, dict[str, Any]]:
    """The transport the words after NAME give, and the definition's `command`/`args` or `url`."""
    if tail and tail[0] == "--":
        return "stdio", _stdio_target(tail[1:], usage)
    return "http", _http_target(name, tail, usage)


def _stdio_target(command: list[str], usage: str) -> dict[str, Any]:
    if not command:
        raise CommandLineError("add needs a COMMAND after --.", usage)
    definition: dict[str, Any] = {"command": command[0]}
    if command[1:]:
        definition["args"] = command[1:]
    return definition


def _http_target(name: str, tail: list[str], usage: str) -> dict[str, Any]:
    # Options are read only before NAME, so an option here is misplaced, not part of the URL.
    misplaced = next((w for w in tail if w.startswith("--")), None)
    if misplaced is not None:
        raise CommandLineError(
            f"Put options before the server name ({_show(misplaced)} comes after {_show(name)}).", usage
        )
    if not tail:
        raise CommandLineError("add needs a URL, or -- and a COMMAND, after the server name.", usage)
    if len(tail) > 1:
        raise CommandLineError(f"Unexpected argument {_show(tail[1])} after the URL (use -- COMMAND for stdio).", usage)
    return {"url": tail[0]}


def _check_transport(declared: str | None, transport: str, usage: str) -> None:
    """`--transport` only confirms the transport the target implies; it never changes it."""
    if declared is None:
        return
    if declared not in TRANSPORTS:
        raise CommandLineError(f"--transport must be http or stdio, not {_show(declared)}.", usage)
    if declared != transport:
        form = "a URL" if declared == "http" else "-- COMMAND [ARGS...]"
        raise CommandLineError(f"--transport {declared} needs {form} after the server name.", usage)


_OAUTH_VALUES = {
    "--oauth-client-id": "oauthClientId",
    "--oauth-client-secret": "oauthClientSecret",
    "--oauth-client-metadata-url": "oauthClientMetadataUrl",
    "--oauth-issuer": "oauthIssuer",
}
"""`add` options copied into the definition as written."""


def _add_settings(options: dict[str, Any], usage: str) -> dict[str, Any]:
    """The definition's entries that come from options: headers, env and the OAuth settings."""
    settings: dict[str, Any] = {}
    headers = _pairs(options.get("--header", []), ":", "--header", "'Name: value'", usage, fold=True)
    env = _pairs(options.get("--env", []), "=", "--env", "KEY=value", usage, fold=False)
    if headers:
        settings["headers"] = headers
    if env:
        settings["env"] = env
    settings.update({field: options[option] for option, field in _OAUTH_VALUES.items() if option in options})
    if options.get("--oauth-dpop"):
        settings["oauthDpop"] = True
    if "--oauth-scope" in options:
        settings["oauthScopes"] = list(options["--oauth-scope"])
    if "--oauth-callback-port" in options:
        port = options["--oauth-callback-port"]
        if not port.isdigit():
            raise CommandLineError(f"--oauth-callback-port must be a port number, not {_show(port)}.", usage)
        settings["oauthCallbackPort"] = int(port)
    return settings


def _pairs(values: list[str], separator: str, option: str, form: str, usage: str, *, fold: bool) -> dict[str, str]:
    """`Name: value` or `KEY=value` pairs with distinct names (header names compare case-insensitively)."""
    out: dict[str, str] = {}
    seen: set[str] = set()
    for value in values:
        key, sep, rest = value.partition(separator)
        key = key.strip()
        if not sep or not key or any(c.isspace() for c in key):
            raise CommandLineError(f"{option} takes {form}.", usage)
        folded = key.lower() if fold else key
        if folded in seen:
            raise CommandLineError(f"{option} {key} is given twice; repeat {option} for different names.", usage)
        seen.add(folded)
        out[key] = rest.strip() if separator == ":" else rest
    return out


# What the spec (`mcp/commandSpec`) offers as completions, keyed like the tables above.
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def parse_target(text: str) -> dict[str, Any]:
    """An `add` target as one string: a URL (`scheme://...`), else a stdio command line split like
    `add NAME -- COMMAND [ARGS...]` splits it. The definition's own rules are checked later."""
    usage = usage_of("add")
    stripped = text.strip()
    if not stripped:
        raise CommandLineError("The target is empty: give an http(s) URL or the command that starts the server.", usage)
    if _SCHEME.match(stripped):
        return {"url": stripped}
    words = split_words(stripped)
    if not words or not words[0]:
        raise CommandLineError("The command line names no command.", usage)
    definition: dict[str, Any] = {"command": words[0]}
    if words[1:]:
        definition["args"] = words[1:]
    return definition
