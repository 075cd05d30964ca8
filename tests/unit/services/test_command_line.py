"""The `/mcp` command-line parser: shell-like words, never evaluated; usage on every mistake."""

from __future__ import annotations

import pytest

from mcp_sidecar.protocol.results import CommandOption
from mcp_sidecar.services.command_line import (
    COMMANDS,
    CommandLineError,
    ParsedCommand,
    parse_line,
    parse_target,
    split_words,
    usage_of,
)
from mcp_sidecar.services.command_spec import command_table


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("add  --scope\tglobal docs", ["add", "--scope", "global", "docs"]),
        ("""a 'single "double" inside' b""", ["a", 'single "double" inside', "b"]),
        ("""a "double 'single' inside" b""", ["a", "double 'single' inside", "b"]),
        (r'"escaped \"quote\" and \\ backslash"', ['escaped "quote" and \\ backslash']),
        (r'"C:\Users\me\server.exe"', [r"C:\Users\me\server.exe"]),  # other backslashes stay
        (r"'C:\Program Files\node\node.exe' 'D:\a\b'", [r"C:\Program Files\node\node.exe", r"D:\a\b"]),
        (r"my\ server with\ spaces", ["my server", "with spaces"]),
        (r"\'not-a-quote\'", ["'not-a-quote'"]),
        ("pre'fix'\"joined\"post", ["prefixjoinedpost"]),
        ("'' \"\"", ["", ""]),
        ("$(rm -rf /)", ["$(rm", "-rf", "/)"]),
        ("'$(rm -rf /)' \"$(id)\" `id` ${HOME} $HOME", ["$(rm -rf /)", "$(id)", "`id`", "${HOME}", "$HOME"]),
        ("a | b > c; d && e & *.py ~/x ?", ["a", "|", "b", ">", "c;", "d", "&&", "e", "&", "*.py", "~/x", "?"]),
        ('"\\$HOME"', ["$HOME"]),
        ("line\\\ncontinued", ["linecontinued"]),
        ("", []),
        ("   ", []),
    ],
)
def test_words(line: str, words: list[str]) -> None:
    assert split_words(line) == words


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("add 'unclosed", "The line has an unclosed single quote (')."),
        ('add "unclosed \\"', 'The line has an unclosed double quote (").'),
        ("add trailing\\", "The line ends with a backslash that escapes nothing."),
    ],
)
def test_unbalanced_lines_are_usage_errors(line: str, message: str) -> None:
    with pytest.raises(CommandLineError) as caught:
        split_words(line)
    assert caught.value.message == message
    assert caught.value.usage == usage_of()


def test_empty_line_and_status_mean_list() -> None:
    assert parse_line("") == ParsedCommand("list")
    assert parse_line("/mcp") == ParsedCommand("list")
    assert parse_line("status") == ParsedCommand("list")
    assert parse_line("/mcp list") == ParsedCommand("list")


def test_add_http_with_every_option() -> None:
    parsed = parse_line(
        "add --scope global --transport http --replace --header 'Authorization: Bearer ${DOCS_TOKEN}' "
        "--header=X-Team:core --oauth-client-id '${CLIENT_ID}' --oauth-scope read --oauth-scope write "
        "--oauth-callback-port 9000 --oauth-client-secret '!pass show docs' --oauth-dpop "
        "--oauth-client-metadata-url https://org.example/c.json docs https://mcp.example.com/mcp"
    )
    assert parsed.name == "add"
    assert (parsed.server, parsed.scope, parsed.replace) == ("docs", "global", True)
    assert parsed.definition == {
        "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": "core"},
        "oauthClientId": "${CLIENT_ID}",
        "oauthClientSecret": "!pass show docs",
        "oauthClientMetadataUrl": "https://org.example/c.json",
        "oauthDpop": True,
        "oauthScopes": ["read", "write"],
        "oauthCallbackPort": 9000,
    }


def test_add_stdio_keeps_everything_after_the_separator_literal() -> None:
    parsed = parse_line(
        "add --scope project --env 'API_KEY=!op read x' --env MODE=a=b local -- "
        "node \"/path with spaces/server.js\" --flag '$(rm -rf /)' '*.js' '|' 'C:\\dir\\x'"
    )
    assert parsed.definition == {
        "command": "node",
        "args": ["/path with spaces/server.js", "--flag", "$(rm -rf /)", "*.js", "|", "C:\\dir\\x"],
        "env": {"API_KEY": "!op read x", "MODE": "a=b"},
    }
    assert parsed.scope == "project"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("add docs https://x", "add needs --scope global or --scope project."),
        ("add --scope world docs https://x", "--scope must be global or project, not 'world'."),
        ("add --scope global", "add needs a server NAME (after the options)."),
        ("add --scope global docs", "add needs a URL, or -- and a COMMAND, after the server name."),
        ("add --scope global docs --", "add needs a COMMAND after --."),
        (
            "add --scope global docs https://x --replace",
            "Put options before the server name ('--replace' comes after 'docs').",
        ),
        (
            "add --scope global docs https://x extra",
            "Unexpected argument 'extra' after the URL (use -- COMMAND for stdio).",
        ),
        (
            "add --scope global --transport stdio docs https://x",
            "--transport stdio needs -- COMMAND [ARGS...] after the server name.",
        ),
        ("add --scope global --transport http docs -- node", "--transport http needs a URL after the server name."),
        ("add --scope global --transport sse docs https://x", "--transport must be http or stdio, not 'sse'."),
        ("add --scope global --header NoColon docs https://x", "--header takes 'Name: value'."),
        (
            "add --scope global --header 'A: 1' --header 'a: 2' docs https://x",
            "--header a is given twice; repeat --header for different names.",
        ),
        ("add --scope global --env NOEQUALS docs -- x", "--env takes KEY=value."),
        (
            "add --scope global --env A=1 --env A=2 docs -- x",
            "--env A is given twice; repeat --env for different names.",
        ),
        (
            "add --scope global --oauth-callback-port abc docs https://x",
            "--oauth-callback-port must be a port number, not 'abc'.",
        ),
        ("add --scope global --scope project docs https://x", "--scope is given twice."),
        ("add --scope global --bogus docs https://x", "Unknown option '--bogus' for add."),
        ("add --scope global --replace=yes docs https://x", "--replace takes no value."),
        ("add --scope", "--scope needs a value."),
    ],
)
def test_add_mistakes_answer_usage(line: str, message: str) -> None:
    with pytest.raises(CommandLineError) as caught:
        parse_line(line)
    assert caught.value.message == message
    assert caught.value.usage == usage_of("add")
    assert caught.value.usage.startswith("Usage: add --scope global|project ")


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("remove --scope project local", ParsedCommand("remove", server="local", scope="project")),
        ("remove local --scope=global", ParsedCommand("remove", server="local", scope="global")),
        ("get docs", ParsedCommand("get", server="docs")),
        ("tools docs", ParsedCommand("tools", server="docs")),
        ("tools docs search", ParsedCommand("tools", server="docs", rest=("search",))),
        ("tools docs -- --odd", ParsedCommand("tools", server="docs", rest=("--odd",))),
        ("reload", ParsedCommand("reload")),
        ("enable docs", ParsedCommand("enable", server="docs")),
        ("disable docs", ParsedCommand("disable", server="docs")),
        ("login docs --no-browser", ParsedCommand("login", server="docs", no_browser=True)),
        ("logout docs", ParsedCommand("logout", server="docs")),
        ("reconnect docs", ParsedCommand("reconnect", server="docs")),
        ("refresh docs", ParsedCommand("refresh", server="docs")),
        ("subscribe w schema://t/e", ParsedCommand("subscribe", server="w", uri="schema://t/e")),
        ("unsubscribe w schema://t/e", ParsedCommand("unsubscribe", server="w", uri="schema://t/e")),
        ("subscriptions", ParsedCommand("subscriptions")),
        ("prompt w review code=x", ParsedCommand("prompt", server="w", rest=("review", "code=x"))),
        ("help", ParsedCommand("help")),
        ("help add", ParsedCommand("help", topic="add")),
        (
            "import --scope global '/tmp/my config.json' --select a,b --select c,a --confirm --replace",
            ParsedCommand(
                "import", scope="global", file="/tmp/my config.json", select=("a", "b", "c"), confirm=True, replace=True
            ),
        ),
        ("import --scope project x.toml", ParsedCommand("import", scope="project", file="x.toml")),
    ],
)
def test_every_command_parses(line: str, expected: ParsedCommand) -> None:
    assert parse_line(line) == expected


@pytest.mark.parametrize(
    ("line", "message", "usage_for"),
    [
        ("lst", "Unknown command 'lst'. Did you mean 'list'?", None),
        ("frobnicate", "Unknown command 'frobnicate'.", None),
        ("get", "get needs NAME.", "get"),
        ("get a b", "Unexpected argument 'b' for get.", "get"),
        ("reload now", "Unexpected argument 'now' for reload.", "reload"),
        ("remove local", "remove needs --scope global or --scope project.", "remove"),
        ("subscribe w", "subscribe needs URI.", "subscribe"),
        ("tools docs --verbose", "Unknown option '--verbose' for tools.", "tools"),
        ("tools", "tools needs NAME.", "tools"),
        ("tools docs search more", "Unexpected argument 'more' for tools.", "tools"),
        ("import --scope global", "import needs FILE.", "import"),
        ("import --scope global f --select ,", "--select takes server names separated by commas.", "import"),
        ("help nothing", "help takes one command name.", None),
    ],
)
def test_mistakes_answer_the_commands_usage(line: str, message: str, usage_for: str | None) -> None:
    with pytest.raises(CommandLineError) as caught:
        parse_line(line)
    assert caught.value.message == message
    assert caught.value.usage == usage_of(usage_for)


def test_general_usage_lists_every_command() -> None:
    text = usage_of()
    for command in ("list", "add", "remove", "get", "tools", "reload", "enable", "disable", "login", "logout"):
        assert f"\n  {command}" in text
    for command in ("reconnect", "refresh", "subscribe", "unsubscribe", "subscriptions", "prompt", "import", "help"):
        assert f"\n  {command}" in text


def _sample(option: CommandOption) -> list[str]:
    if option["kind"] == "flag":
        return [option["name"]]
    value = option["values"][0] if option["values"] else {"--header": "X: y", "--env": "K=v"}.get(option["name"], "7")
    return [option["name"], value]


def test_the_command_table_offers_only_what_the_parser_accepts() -> None:
    table = command_table(["srv"])
    assert [entry["name"] for entry in table] == list(COMMANDS)
    for entry in table:
        name = entry["name"]
        words = [name]
        for option in entry["options"]:
            words += _sample(option)
        if name == "profile":  # its one option, `--clear`, is the other way to call it (no PROFILE with it)
            assert parse_line(" ".join(words)).clear is True
            words = [name]
        for positional in entry["positionals"]:
            if name == "add":
                words += ["new", "https://x.example/mcp"]
                break
            words.append(positional["values"][0] if positional["values"] else "word")
        line = " ".join(words).replace("X: y", "'X: y'")
        parsed = parse_line(line)
        assert parsed.name == ("list" if name == "status" else name), line
        for option in entry["options"]:
            if option["required"]:
                without = " ".join(_sample(option))
                with pytest.raises(CommandLineError, match="needs --scope"):
                    parse_line(line.replace(without, "", 1))


def test_profile_shows_chooses_or_clears_and_completes_the_profiles() -> None:
    assert parse_line("profile") == ParsedCommand("profile")
    assert parse_line("profile review").rest == ("review",)
    assert parse_line("profile --clear") == ParsedCommand("profile", clear=True)
    with pytest.raises(CommandLineError, match="not both"):
        parse_line("profile review --clear")
    with pytest.raises(CommandLineError, match="Unexpected argument"):
        parse_line("profile a b")
    table = {entry["name"]: entry for entry in command_table(["srv"], ["review", "triage"])}
    assert table["profile"]["positionals"] == [
        {"name": "PROFILE", "completion": "profile", "values": ["review", "triage"], "optional": True}
    ]
    assert table["profile"]["changes"] == "status"


def test_the_table_says_which_positionals_may_be_left_out() -> None:
    table = {entry["name"]: entry for entry in command_table(["srv"])}
    assert table["tools"]["usage"] == "tools NAME [TOOL]"
    assert table["tools"]["positionals"] == [
        {"name": "NAME", "completion": "server", "values": ["srv"], "optional": False},
        {"name": "TOOL", "completion": "tool", "values": [], "optional": True},
    ]
    assert table["help"]["positionals"][0]["optional"] is True
    assert parse_line("help") == ParsedCommand("help")
    for entry in table.values():
        name, positionals = entry["name"], entry["positionals"]
        required = [p["name"] for p in positionals if not p["optional"]]
        if name == "add" or not positionals:
            continue
        if len(required) < len(positionals):
            assert parse_line(" ".join([name, *required])).name == name, "the optional positionals can be left out"
        if required:
            with pytest.raises(CommandLineError, match=f"{name} needs {required[0]}"):
                parse_line(name)


def test_parse_target_splits_like_add() -> None:
    assert parse_target(" https://x.example/mcp ") == {"url": "https://x.example/mcp"}
    assert parse_target("npx -y 'a b'") == {"command": "npx", "args": ["-y", "a b"]}
    assert parse_target("server") == {"command": "server"}
    assert parse_target("npx -y 'a b'") == parse_line("add --scope global n -- npx -y 'a b'").definition
    for bad in ("", "  ", "x 'open", "''"):
        with pytest.raises(CommandLineError):
            parse_target(bad)


def test_add_takes_the_oauth_client_flags_as_written() -> None:
    parsed = parse_line(
        "add --scope project --oauth-client-id app --oauth-issuer https://auth.example/ --oauth-dpop "
        "crm https://crm.example.com/mcp"
    )
    assert parsed.definition == {
        "url": "https://crm.example.com/mcp",
        "oauthClientId": "app",
        "oauthIssuer": "https://auth.example/",
        "oauthDpop": True,
    }
