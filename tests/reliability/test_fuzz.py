"""Fuzzing a real sidecar process with hypothesis: random and mutated JSON-RPC messages and
random configuration files.

One sidecar serves each test (state allows it: nothing the fuzzer sends can end the session),
so every example also proves the process survived all the examples before it. After each
example the test sends a resynchronising blank header block and a sentinel `mcp/status`
request: its answer within a bounded wait proves the sidecar neither died nor hung. The
reader thread parses every byte of stdout strictly as LSP frames holding JSON-RPC 2.0
objects, so a non-JSON answer (a bare `NaN`, say) fails the test too. Examples are
derandomized, so CI runs the same inputs every time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_sidecar.protocol import methods
from reliability.helpers import BlockingClient, figure, frame, mib, rss_kib

SETTINGS = settings(
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
EXAMPLES = 500
RSS_GROWTH_LIMIT_KIB = 200 * 1024
"""Generous: the bound catches a leak per message (hundreds of examples), not allocator noise."""

# Methods whose random params could change the configuration (and so start arbitrary commands
# on a later discovery), open a login, or end the session are left out of the random-params
# fuzzing; their params parsing is exercised by the e2e tests with exact inputs.
EXCLUDED = {
    methods.CONFIG_ADD,
    methods.CONFIG_IMPORT,
    methods.CONFIG_REMOVE,
    methods.CONFIG_SET_ENABLED,
    methods.COMMAND,
    *(m for m in methods.REQUESTS if m.startswith(("mcp/auth/", "mcp/workspace/"))),
}
FUZZED_METHODS = sorted(m for m in methods.REQUESTS if m not in EXCLUDED)
SIDECAR_NOTIFICATIONS = {*methods.NOTIFICATIONS, "window/logMessage", "window/showMessage", "$/progress"}

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["demo", "demo.add", "mcp__demo__add", "notes://readme", "default", "", "*"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=20,
)
param_keys = st.sampled_from(
    [
        *("server", "ids", "id", "arguments", "session", "query", "kind", "limit", "uri", "template", "name"),
        *("argument", "value", "previewId", "olderThanDays", "line", "scope", "definition", "cursor", "_meta"),
    ]
)
params = st.one_of(
    st.dictionaries(param_keys, json_values, max_size=6),
    json_values,
)
ids = st.one_of(
    st.integers(min_value=1, max_value=5),  # duplicates, within and across examples
    st.integers(min_value=-(2**63), max_value=2**70),
    st.text(max_size=10),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
)
method_names = st.one_of(
    st.sampled_from(FUZZED_METHODS),
    st.sampled_from(["mcp/nosuch", "textDocument/hover", "workspace/symbol", "$/nosuch", "initialize", ""]),
    st.text(max_size=20).filter(lambda m: m not in {"shutdown", "exit", "workspace/executeCommand"} | EXCLUDED),
)


@st.composite
def request_objects(draw: st.DrawFn) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2, None]))}
    if draw(st.booleans()):
        message["id"] = draw(ids)
    message["method"] = draw(st.one_of(method_names, method_names, json_scalars))
    if draw(st.booleans()):
        message["params"] = draw(params)
    if draw(st.integers(0, 9)) == 0:
        message.pop("jsonrpc")
    return message


cancels = st.builds(
    lambda msg_id: {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}},
    st.one_of(st.integers(), st.text(max_size=8), json_scalars),
)
odd_values = st.one_of(
    json_values, st.floats(), st.integers(min_value=-(10**300), max_value=10**300), st.text(max_size=2000)
)
calls = st.builds(
    lambda msg_id, tool, arguments: {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": methods.CALL_TOOL,
        "params": {"id": tool, "arguments": arguments},
    },
    ids,
    st.sampled_from(["demo.add", "demo.echo", "demo.count_words", "mcp__demo__add", "demo.nosuch"]),
    st.one_of(st.dictionaries(st.sampled_from(["a", "b", "text", "x"]), odd_values, max_size=3), odd_values),
)
"""Calls that reach a real server (the built-in demo's tools are activated first) with odd values:
NaN and infinities (which Python's json writes as bare, invalid tokens), huge integers, long text."""
# `/mcp` command lines: the parser (quotes, escapes, options) gets random arguments, but only
# after verbs that change no configuration, so no random command can ever be started.
SAFE_VERBS = ("list", "status", "get", "tools", "help", "subscriptions", "unsubscribe", "prompt", "refresh")
command_lines = st.builds(
    lambda prefix, verb, rest: {
        "jsonrpc": "2.0",
        "id": 7,
        "method": methods.COMMAND,
        "params": {"line": f"{prefix}{verb} {rest}"},
    },
    st.sampled_from(["/mcp ", "mcp ", ""]),
    st.sampled_from(SAFE_VERBS),
    st.one_of(
        st.text(max_size=40),
        st.sampled_from(["demo", "'demo", '"de\\"mo"', "demo --nope", "--scope", "demo readme x=1 y", "\\"]),
    ),
)
structured = st.one_of(
    request_objects(),
    request_objects(),
    calls,
    command_lines,
    cancels,
    st.lists(st.one_of(request_objects(), calls, command_lines), max_size=3),
)


def encode(message: Any) -> bytes:
    return json.dumps(message).encode()


@st.composite
def mutated_bodies(draw: st.DrawFn) -> bytes:
    """A valid request mutated at the byte level: flips, insertions, deletions, truncations."""
    body = bytearray(encode(draw(request_objects())))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "splice"]))
        at = draw(st.integers(0, max(0, len(body) - 1)))
        if kind == "flip" and body:
            body[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            body[at:at] = draw(
                st.one_of(
                    st.binary(max_size=8),
                    st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"NaN", b"-Infinity", b"1e999"]),
                )
            )
        elif kind == "delete":
            del body[at : at + draw(st.integers(1, 8))]
        elif kind == "truncate":
            del body[at:]
        elif kind == "splice":
            body[at:at] = encode(draw(json_values))
    return bytes(body)


@st.composite
def pathological_bodies(draw: st.DrawFn) -> bytes:
    """Inputs a parser chokes on: deep nesting, huge numbers, invalid UTF-8, odd literals."""
    depth = draw(st.sampled_from([50, 500, 900, 1_000, 5_000, 100_000]))
    digits = draw(st.sampled_from([20, 400, 4_300, 4_301, 5_000, 50_000]))
    method = draw(st.sampled_from(FUZZED_METHODS))
    head = b'{"jsonrpc": "2.0", "id": %d, "method": "%s", "params": ' % (draw(st.integers(1, 10**6)), method.encode())
    value = draw(
        st.sampled_from(
            [
                b'{"ids": ' + b"[" * depth + b"]" * depth + b"}",
                b'{"server": ' + b'{"a":' * depth + b"1" + b"}" * depth + b"}",
                b'{"limit": ' + b"9" * digits + b"}",
                b'{"limit": -' + b"9" * digits + b"}",
                b'{"limit": 1e999}',
                b'{"limit": NaN, "query": Infinity}',
                b'{"olderThanDays": -Infinity}',
                b'{"limit": 0.' + b"0" * digits + b"1}",
                b'{"query": "\xff\xfe"}',
                b'{"query": "\\ud800"}',
                b'{"query": "' + b"q" * digits * 10 + b'"}',
            ]
        )
    )
    return head + value + b"}"


@st.composite
def framings(draw: st.DrawFn) -> bytes:
    """A body under a damaged header; the declared length is padded so the stream stays in step."""
    body = draw(st.one_of(structured.map(encode), st.binary(max_size=64)))
    length = draw(st.one_of(st.just(len(body)), st.integers(0, len(body) + 32)))
    header = draw(
        st.sampled_from(
            [
                b"Content-Length: %d" % length,
                b"content-length:%d" % length,
                b"Content-Length: %d\r\nContent-Type: application/json; charset=latin-1" % length,
                b"Content-Type: application/vscode-jsonrpc",
                b"Content-Length: -%d" % length,
                b"Content-Length: %dx" % length,
                b"Content-Length: 0x10",
                b"Content-Length:",
                b"X" * 70_000,
                b"Content-Length: %d\r\nContent-Length: %d" % (length, length),
                b"\xff\xfe: %d" % length,
                b"no colon here",
            ]
        )
    )
    if length > len(body):
        body += b" " * (length - len(body))
    return header + b"\r\n\r\n" + body


class Fuzz:
    """The long-lived sidecar of one test, with the bookkeeping every example shares."""

    def __init__(self, client: BlockingClient) -> None:
        self.client = client
        self.tried = 0
        self.answers = 0
        self.start_rss = 0
        self.reported = (0, 0)

    def check(self) -> None:
        """Resynchronise, send the sentinel, and check everything received since the last check."""
        self.client.send_bytes(b"\r\n\r\n")
        sentinel = self.client.request(methods.STATUS, {}, timeout=60)
        assert "result" in sentinel, sentinel
        for message in self.client.take_all():
            if "method" in message:
                assert message["method"] in SIDECAR_NOTIFICATIONS, message
                assert "id" not in message, f"the sidecar sent a request: {message!r}"
                continue
            assert ("result" in message) != ("error" in message), message
            self.answers += 1
            if "error" in message:
                error = message["error"]
                assert isinstance(error["code"], int), message
                assert isinstance(error["message"], str), message
                if "data" in error:
                    assert isinstance(error["data"], dict), message
                    assert {"code", "operation", "message", "hint"} <= set(error["data"]), message
        self.tried += 1
        if self.tried == 1:
            self.start_rss = rss_kib(self.client.proc.pid)


@pytest.fixture(scope="module")
def fuzz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fuzz]:
    home = tmp_path_factory.mktemp("fuzz-home")
    client = BlockingClient(home)
    activated = client.request(methods.ACTIVATE, {"ids": ["demo.add", "demo.echo", "demo.count_words"]}, 60)
    assert [r["status"] for r in activated["result"]["results"]] == ["loaded"] * 3
    try:
        yield Fuzz(client)
    finally:
        alive = client.proc.poll() is None
        client.close()
        assert alive, f"the sidecar died: {(home / 'sidecar.stderr').read_text(errors='replace')[-2000:]}"


def finish(fuzz: Fuzz, scenario: str, examples: int) -> None:
    """Record the figures of one test, and check the number of inputs and the memory bound."""
    end = rss_kib(fuzz.client.proc.pid)
    tried, answers = fuzz.tried - fuzz.reported[0], fuzz.answers - fuzz.reported[1]
    fuzz.reported = (fuzz.tried, fuzz.answers)
    figure(
        scenario,
        f"{tried} inputs, {answers} answers; "
        f"sidecar RSS {mib(fuzz.start_rss)} after the first input, {mib(end)} after the last",
    )
    assert tried >= examples // 2
    assert end - fuzz.start_rss < RSS_GROWTH_LIMIT_KIB, (fuzz.start_rss, end)
    assert fuzz.client.violations == []


def test_random_json_rpc_messages(fuzz: Fuzz) -> None:
    """Random requests, notifications, batches and cancels: each answered, none fatal."""

    @settings(SETTINGS, max_examples=EXAMPLES)
    @given(st.lists(structured, min_size=1, max_size=4))
    def example(batch: list[Any]) -> None:
        fuzz.client.send_bytes(b"".join(frame(encode(m)) for m in batch))
        fuzz.check()

    example()
    finish(fuzz, "fuzz: JSON-RPC messages", EXAMPLES)


def test_mutated_and_pathological_bytes(fuzz: Fuzz) -> None:
    """Byte mutations, deep nesting, huge numbers, invalid UTF-8 and damaged framing."""

    @settings(SETTINGS, max_examples=EXAMPLES)
    @given(st.one_of(mutated_bodies().map(frame), pathological_bodies().map(frame), framings()))
    def example(data: bytes) -> None:
        fuzz.client.send_bytes(data)
        fuzz.check()

    example()
    finish(fuzz, "fuzz: mutated bytes and framing", EXAMPLES)


# -- configuration files ----------------------------------------------------------------------

# Commands are never run here: the test only reloads and reads status, which start nothing.
definitions = st.fixed_dictionaries(
    {},
    optional={
        "type": st.one_of(st.sampled_from(["stdio", "http", "sse", "streamable-http", "ws"]), json_scalars),
        "command": st.one_of(st.sampled_from(["/nonexistent/mcp-server", "true", ""]), json_scalars),
        "args": st.one_of(st.lists(st.text(max_size=10), max_size=3), json_values),
        "env": st.one_of(
            st.dictionaries(
                st.text(max_size=8),
                st.one_of(
                    st.sampled_from(["${HOME}", "${MCP_FUZZ_UNSET}", "$", "${", "${A:-b}", "!true", "!", "$$"]),
                    st.text(max_size=20),
                    json_scalars,
                ),
                max_size=3,
            ),
            json_values,
        ),
        "url": st.one_of(st.sampled_from(["http://127.0.0.1:9/mcp", "ftp://x/", "not a url", "http://"]), json_scalars),
        "headers": st.one_of(st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=2), json_values),
        "cwd": st.one_of(st.sampled_from(["/", "relative/dir", "/nonexistent"]), json_scalars),
        "disabled": json_scalars,
        "timeoutMs": st.one_of(st.integers(), st.floats(), json_scalars),
        "protocol": st.one_of(st.sampled_from(["auto", "legacy", "modern"]), json_scalars),
        "tools": json_values,
        "extra": json_values,
    },
)
config_documents = st.one_of(
    st.fixed_dictionaries(
        {"mcpServers": st.dictionaries(st.text(max_size=30), st.one_of(definitions, json_values), max_size=4)}
    ),
    st.dictionaries(st.sampled_from(["mcpServers", "servers", "inputs", "x"]), json_values, max_size=3),
    json_values,
)


@st.composite
def config_files(draw: st.DrawFn) -> bytes:
    text = json.dumps(draw(config_documents), indent=draw(st.sampled_from([None, 2]))).encode()
    damage = draw(st.sampled_from(["none", "none", "truncate", "flip", "binary", "bom", "empty"]))
    if damage == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if damage == "flip" and text:
        at = draw(st.integers(0, len(text) - 1))
        return text[:at] + bytes([draw(st.integers(0, 255))]) + text[at + 1 :]
    if damage == "binary":
        return draw(st.binary(max_size=200))
    if damage == "bom":
        return b"\xef\xbb\xbf" + text
    return b"" if damage == "empty" else text


def test_random_configuration_files(home: Path) -> None:
    """Every file is reloaded into a summary or a `configuration_invalid` diagnostic; status still answers."""
    client = BlockingClient(home)
    fuzz = Fuzz(client)
    outcomes: dict[str, int] = {}
    try:

        @settings(SETTINGS, max_examples=EXAMPLES // 2)
        @given(config_files())
        def example(data: bytes) -> None:
            (home / "mcp.json").write_bytes(data)
            response = client.request(methods.CONFIG_RELOAD, {}, timeout=60)
            if "error" in response:
                code = response["error"]["data"]["code"]
                assert code == "configuration_invalid", response
            else:
                code = "applied" if response["result"]["applied"] else "not applied"
            outcomes[code] = outcomes.get(code, 0) + 1
            status = client.request(methods.STATUS, {}, timeout=60)
            assert isinstance(status["result"]["servers"], list), status
            fuzz.check()

        example()
        assert client.proc.poll() is None
        finish(fuzz, "fuzz: configuration files", EXAMPLES // 2)
        figure("fuzz: configuration files", f"reload outcomes {dict(sorted(outcomes.items()))}")
        assert len(outcomes) >= 2  # both valid and invalid files were tried
    finally:
        client.close()
