"""The result TypedDicts (protocol/results.py) and the VS Code client's interfaces (protocol.ts) agree.

Starting from each method's result type on both sides, every TypedDict is compared with the
TypeScript shape in the same place: the same required keys, the same optional (`?`) keys,
then the same comparison for each key whose Python type is a TypedDict (through lists,
`| None` and unions). Scalars are not compared. A small parser reads the subset of
TypeScript that protocol.ts uses for its shapes: interfaces (with `extends`), type aliases,
object literals, arrays, unions and string literals; index signatures are skipped.
"""

from __future__ import annotations

import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from mcp_sidecar.protocol import methods, results

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_TS = ROOT / "editor-clients" / "vscode" / "src" / "protocol.ts"

# ---------------------------------------------------------------- a small TypeScript type parser


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Obj:
    members: dict[str, tuple[bool, Any]]
    """key -> (optional, type)"""


@dataclass(frozen=True)
class Arr:
    item: Any


@dataclass(frozen=True)
class Union_:
    options: tuple[Any, ...]


@dataclass(frozen=True)
class Lit:
    text: str


TOKEN = re.compile(r"\s*(\"[^\"]*\"|'[^']*'|[A-Za-z_$][\w$]*|-?\d+(?:\.\d+)?|\[\]|[{}()\[\]<>|;:,?=&.])")


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot read TypeScript at {text[pos : pos + 40]!r}")
        out.append(m.group(1))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.t = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.t[self.i]
        if expected is not None and tok != expected:
            raise ValueError(f"expected {expected!r}, found {tok!r} at token {self.i}")
        self.i += 1
        return tok

    def type(self) -> Any:
        if self.peek() == "|":
            self.take()
        options = [self.postfix()]
        while self.peek() == "|":
            self.take()
            options.append(self.postfix())
        return options[0] if len(options) == 1 else Union_(tuple(options))

    def postfix(self) -> Any:
        t = self.primary()
        while self.peek() == "[]":
            self.take()
            t = Arr(t)
        return t

    def primary(self) -> Any:
        tok = self.take()
        if tok == "{":
            return self.members("}")
        if tok == "(":
            inner = self.type()
            self.take(")")
            return inner
        if tok[0] in "\"'" or tok[0].isdigit() or tok[0] == "-":
            return Lit(tok)
        if self.peek() == "<":  # generic: Record<...>, Array<T>
            self.take()
            args = [self.type()]
            while self.peek() == ",":
                self.take()
                args.append(self.type())
            self.take(">")
            return Arr(args[0]) if tok == "Array" else Ref(f"{tok}<>")
        return Ref(tok)

    def members(self, end: str) -> Obj:
        members: dict[str, tuple[bool, Any]] = {}
        while self.peek() != end:
            if self.peek() == "[":  # index signature: [key: string]: T
                while self.take() != "]":
                    pass
                self.take(":")
                self.type()
            else:
                name = self.take()
                optional = self.peek() == "?"
                if optional:
                    self.take()
                self.take(":")
                members[name] = (optional, self.type())
            if self.peek() in (";", ","):
                self.take()
        self.take(end)
        return Obj(members)


@dataclass
class TsProtocol:
    interfaces: dict[str, tuple[list[str], Obj]]
    aliases: dict[str, Any]
    requests: dict[str, Any]
    notifications: dict[str, Any]

    def resolve(self, t: Any) -> Any:
        """A named interface or alias, expanded one level (interfaces with their `extends`)."""
        seen = 0
        while isinstance(t, Ref) and seen < 20:
            seen += 1
            if t.name in self.interfaces:
                bases, body = self.interfaces[t.name]
                members: dict[str, tuple[bool, Any]] = {}
                for base in bases:
                    inherited = self.resolve(Ref(base))
                    assert isinstance(inherited, Obj), base
                    members.update(inherited.members)
                members.update(body.members)
                return Obj(members)
            if t.name in self.aliases:
                t = self.aliases[t.name]
                continue
            return t
        return t


def parse_protocol(text: str) -> TsProtocol:
    clean = _strip_comments(text)
    interfaces: dict[str, tuple[list[str], Obj]] = {}
    for m in re.finditer(r"(?:export\s+)?interface\s+(\w+)\s*(?:extends\s+([\w\s,]+?))?\s*\{", clean):
        start = m.end()
        depth, pos = 1, start
        while depth:
            depth += {"{": 1, "}": -1}.get(clean[pos], 0)
            pos += 1
        parser = _Parser([*_tokens(clean[start : pos - 1]), "}"])
        bases = [b.strip() for b in (m.group(2) or "").split(",") if b.strip()]
        interfaces[m.group(1)] = (bases, parser.members("}"))
    aliases: dict[str, Any] = {}
    for m in re.finditer(r"(?:export\s+)?type\s+(\w+)\s*=\s*(.*?);\s*\n", clean, flags=re.S):
        aliases[m.group(1)] = _Parser(_tokens(m.group(2))).type()
    call = r"new\s+{kind}<\s*(?:[^<>]|<[^<>]*>)*?>\s*\(\s*\"([^\"]+)\"\s*,?\s*\)"
    requests: dict[str, list[Any]] = {}
    for m in re.finditer(call.format(kind="RequestType"), clean):
        generic = m.group(0)[m.group(0).index("<") + 1 : m.group(0).rindex(">")]
        params = [p.strip() for p in re.split(r",(?![^<>]*>)", generic)]
        # A method with variants (`mcp/config/add` and its dry run) has one RequestType each.
        requests.setdefault(m.group(1), []).append(_Parser(_tokens(params[1])).type())
    notifications: dict[str, Any] = {}
    for m in re.finditer(call.format(kind="NotificationType"), clean):
        generic = m.group(0)[m.group(0).index("<") + 1 : m.group(0).rindex(">")]
        notifications[m.group(1)] = _Parser(_tokens(generic)).type()
    return TsProtocol(interfaces, aliases, requests, notifications)


# Known differences, each on purpose: (interface or TypedDict, key) -> why. Anything else fails.
ALLOWED: dict[tuple[str, str], str] = {
    ("StatusResult", "pendingApprovals"): "optional in TypeScript for sidecars that predate project approvals",
    ("PendingApproval", "changedFields"): "optional in TypeScript for older sidecars, which do not send it",
    ("StatusResult", "engine"): "optional in TypeScript for sidecars that predate the engine",
    ("StatusResult", "profile"): "optional in TypeScript for sidecars that predate profiles",
    ("StatusResult", "profiles"): "optional in TypeScript for sidecars that predate profiles",
    ("StatusRow", "sharedBy"): "optional in TypeScript for sidecars that predate the engine",
    ("ToolDefinition", "inputSchema"): (
        "MCP requires one of every tool and the SDK always dumps it; tool_view copies the keys present"
    ),
    ("PromptArgument", "description"): (
        "read by prompts.ts with a fallback; discovery never sends it (sending it would change the wire)"
    ),
}


# ---------------------------------------------------------------- the comparison


def _without_none(tp: Any) -> list[Any]:
    if get_origin(tp) in (Union, types.UnionType):
        return [a for a in get_args(tp) if a is not type(None)]
    return [tp]


def _ts_without_null(ts: TsProtocol, t: Any) -> list[Any]:
    t = ts.resolve(t)
    options = t.options if isinstance(t, Union_) else (t,)
    out: list[Any] = []
    for o in options:
        if isinstance(o, Ref) and o.name in ("null", "undefined"):
            continue
        resolved = ts.resolve(o)
        out.extend(resolved.options if isinstance(resolved, Union_) else [o])
    return out


def _contains_typeddict(tp: Any) -> bool:
    if is_typeddict(tp):
        return True
    return any(_contains_typeddict(a) for a in get_args(tp))


def keys(tp: Any) -> tuple[set[str], set[str]]:
    """(required, optional) keys. Read from the annotations: under `from __future__ import annotations`
    Python 3.11 cannot see `NotRequired` at class creation, so `__optional_keys__` misses those."""
    hints = get_type_hints(tp, include_extras=True)
    optional = {k for k, h in hints.items() if get_origin(h) is NotRequired} | set(tp.__optional_keys__)
    return set(hints) - optional, optional


def compare(py: Any, t: Any, ts: TsProtocol, path: str, out: list[str]) -> None:
    """Append one line per disagreement between Python type `py` and TypeScript type `t`."""
    if not _contains_typeddict(py):
        return
    py_options = _without_none(py)
    ts_options = _ts_without_null(ts, t)
    if len(py_options) > 1 or len(ts_options) > 1:
        _compare_unions(py_options, ts_options, ts, path, out)
        return
    [p], [t0] = py_options, ts_options
    target = ts.resolve(t0)
    if get_origin(p) is list:
        if not isinstance(target, Arr):
            out.append(f"{path}: a list in Python, {target} in TypeScript")
            return
        compare(get_args(p)[0], target.item, ts, f"{path}[]", out)
        return
    if not is_typeddict(p):
        return
    if not isinstance(target, Obj):
        out.append(f"{path}: {p.__name__} in Python has no object shape in TypeScript ({target})")
        return
    _compare_objects(p, getattr(t0, "name", None), target, ts, path, out)


def _compare_unions(py_options: list[Any], ts_options: list[Any], ts: TsProtocol, path: str, out: list[str]) -> None:
    """Unions match member for member, by name (TypedDict name = interface name)."""
    by_name = {o.__name__: o for o in py_options if is_typeddict(o)}
    ts_names = {o.name: o for o in ts_options if isinstance(o, Ref)}
    if set(by_name) != set(ts_names):
        out.append(f"{path}: union members {sorted(by_name)} (Python) vs {sorted(ts_names)} (TypeScript)")
    for name in sorted(set(by_name) & set(ts_names)):
        compare(by_name[name], ts_names[name], ts, f"{path}<{name}>", out)


def _compare_objects(p: Any, ts_name: str | None, target: Obj, ts: TsProtocol, path: str, out: list[str]) -> None:
    """The same required and optional keys on both sides, then each key's type, recursively."""
    required, optional = keys(p)
    allowed = {key for (owner, key) in ALLOWED if owner in (p.__name__, ts_name)}
    ts_required = {k for k, (opt, _) in target.members.items() if not opt}
    ts_optional = {k for k, (opt, _) in target.members.items() if opt}
    checks = [
        (required - ts_required - ts_optional, "required in Python, missing in TypeScript"),
        (optional - ts_required - ts_optional, "optional in Python, missing in TypeScript"),
        ((ts_required | ts_optional) - required - optional, "in TypeScript, not sent by the sidecar"),
        (required & ts_optional, "always sent, optional (`?`) in TypeScript"),
        (optional & ts_required, "sometimes absent, required in TypeScript"),
    ]
    for found, why in checks:
        out.extend(f"{path}.{key}: {why}" for key in sorted(found - allowed))
    hints = get_type_hints(p)
    for key in sorted((required | optional) & set(target.members)):
        compare(hints[key], target.members[key][1], ts, f"{path}.{key}", out)


def mismatches(ts: TsProtocol) -> list[str]:
    out: list[str] = []
    for method, py in results.RESULTS.items():
        if method not in ts.requests:
            out.append(f"{method}: no RequestType in protocol.ts")
            continue
        variants = [py, *results.VARIANTS.get(method, ())]
        declared = ts.requests[method]
        if len(declared) != len(variants):
            out.append(f"{method}: {len(variants)} result type(s) in Python, {len(declared)} RequestType(s)")
            continue
        for py_type, ts_type in zip(variants, declared, strict=True):
            compare(py_type, ts_type, ts, method, out)
    for method, py in results.NOTIFICATIONS.items():
        if method not in ts.notifications:
            out.append(f"{method}: no NotificationType in protocol.ts")
            continue
        compare(py, ts.notifications[method], ts, method, out)
    return out


# ---------------------------------------------------------------- the tests


def test_every_method_has_a_result_type() -> None:
    assert set(results.RESULTS) == set(methods.REQUESTS)
    assert set(results.NOTIFICATIONS) == set(methods.NOTIFICATIONS)
    for tp in [*results.RESULTS.values(), *results.NOTIFICATIONS.values()]:
        assert is_typeddict(tp), tp


def test_every_result_typeddict_resolves() -> None:
    """Every annotation in results.py names something real (get_type_hints evaluates them all)."""
    for name, tp in vars(results).items():
        if is_typeddict(tp):
            assert get_type_hints(tp, include_extras=True), name


def test_protocol_ts_mirrors_every_result_key() -> None:
    ts = parse_protocol(PROTOCOL_TS.read_text(encoding="utf-8"))
    assert mismatches(ts) == []


@pytest.mark.parametrize(
    ("interface", "edit", "expected"),
    [
        (
            "SpillCleanResult",
            ("  kept: number;\n", "  kept: number;\n  extra: string;\n"),
            "mcp/spill/clean.extra: in TypeScript, not sent by the sidecar",
        ),
        (
            "SpillCleanResult",
            ("  kept: number;\n", ""),
            "mcp/spill/clean.kept: required in Python, missing in TypeScript",
        ),
        (
            "Watch",
            ("  updatedAt: number | null;\n", "  updatedAt?: number | null;\n"),
            "mcp/resource/subscriptions.watches[].updatedAt: always sent, optional (`?`) in TypeScript",
        ),
    ],
)
def test_a_key_on_one_side_only_is_caught(interface: str, edit: tuple[str, str], expected: str) -> None:
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    start = text.index(f"export interface {interface} ")
    end = text.index("\n}\n", start) + 1
    block = text[start:end]
    assert edit[0] in block
    changed = text[:start] + block.replace(edit[0], edit[1], 1) + text[end:]
    assert expected in mismatches(parse_protocol(changed))


def test_a_key_added_in_python_only_is_caught() -> None:
    ts = parse_protocol(PROTOCOL_TS.read_text(encoding="utf-8"))

    class Extended(results.SpillCleanResult, total=False):
        extra: str

    out: list[str] = []
    compare(Extended, ts.requests[methods.SPILL_CLEAN][0], ts, "spill", out)
    assert out == ["spill.extra: optional in Python, missing in TypeScript"]


def test_every_allowed_difference_is_still_there(monkeypatch: pytest.MonkeyPatch) -> None:
    ts = parse_protocol(PROTOCOL_TS.read_text(encoding="utf-8"))
    monkeypatch.setattr(sys.modules[__name__], "ALLOWED", {})
    found = mismatches(ts)
    for _, key in ALLOWED:
        assert any(f".{key}:" in line for line in found), key
