"""Turn one server entry of another client's configuration into our `mcpServers` definition.

`config/imports.py` finds and reads the other client's file; each of its server entries comes here
as a `Candidate`. Conversion keeps the meaning of each value:
- `${env:VAR}` becomes our `${VAR}`; `${userHome}` becomes `${HOME}`.
- Values only the other client can fill in (VS Code `${input:id}`, `${workspaceFolder}`)
  become clear environment placeholders (`${VSCODE_INPUT_ID}`), listed in the preview, so a
  server never connects with a half-filled value.
- In `env` and `headers`, where our format gives `$` and a leading `!` a meaning, literal
  ones are escaped (`$$`, `$!`): an imported value never becomes a secret command.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_sidecar.config.model import MAX_TIMEOUT_MS, MIN_TIMEOUT_MS
from mcp_sidecar.config.validate import KNOWN_FIELDS, ConfigProblems, parse_server

if TYPE_CHECKING:
    from mcp_sidecar.protocol.results import Placeholder as PlaceholderJson

_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
# VS Code's (and Cursor's) predefined variables: only the other client knows their values.
_PREDEFINED = frozenset(
    {
        "workspaceFolder",
        "workspaceFolderBasename",
        "workspaceRoot",
        "file",
        "fileBasename",
        "fileDirname",
        "relativeFile",
        "cwd",
        "pathSeparator",
        "execPath",
        "lineNumber",
        "selectedText",
    }
)
_HTTP_TYPES = frozenset({"http", "streamable-http", "streamableHttp", "streamable_http"})
_CONNECTION_STRINGS = ("command", "cwd", "url")


@dataclass(slots=True)
class Placeholder:
    field: str
    variable: str
    source: str
    """What the other client would have filled in, e.g. `input:api-key` or `workspaceFolder`."""
    description: str | None = None

    def to_json(self) -> PlaceholderJson:
        return {"field": self.field, "variable": self.variable, "source": self.source, "description": self.description}


@dataclass(slots=True)
class Candidate:
    name: str
    definition: dict[str, Any] | None
    """Our `mcpServers` definition, or None when the server cannot be imported."""
    transport: str | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    placeholders: list[Placeholder] = field(default_factory=list)

    @property
    def importable(self) -> bool:
        return self.definition is not None and not self.problems


class _Converter:
    def __init__(self, candidate: Candidate, inputs: dict[str, str | None]) -> None:
        self.candidate = candidate
        self.inputs = inputs

    def string(self, value: str, field_name: str, *, escape: bool) -> str:
        """Convert one value; `escape` for env and headers, where `$` and `!` mean something to us."""
        pieces: list[str] = []
        position = 0
        for match in _REFERENCE.finditer(value):
            literal = value[position : match.start()]
            pieces.append(_escape_dollars(literal) if escape else literal)
            pieces.append(self.reference(match.group(1), field_name))
            position = match.end()
        tail = value[position:]
        pieces.append(_escape_dollars(tail) if escape else tail)
        out = "".join(pieces)
        if escape and out.startswith("!"):
            out = "$" + out  # `$!` is a literal `!`: never a secret command
        return out

    def reference(self, inner: str, field_name: str) -> str:
        if inner.startswith("env:") and _ENV_NAME.match(inner[4:]):
            return "${" + inner[4:] + "}"
        if inner == "userHome":
            return "${HOME}"
        if ":-" in inner and _ENV_NAME.match(inner.split(":-", 1)[0]):
            name = inner.split(":-", 1)[0]
            self.candidate.notes.append(
                f"`{field_name}`: the default of ${{{name}:-…}} is not supported; kept ${{{name}}}."
            )
            return "${" + name + "}"
        if _ENV_NAME.match(inner) and inner not in _PREDEFINED:
            return "${" + inner + "}"
        # Something only the other client can fill in: a clear placeholder for the user to define.
        kind, _, rest = inner.partition(":")
        words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", inner)  # workspaceFolder -> workspace_Folder
        variable = "VSCODE_" + re.sub(r"[^A-Za-z0-9]+", "_", words).strip("_").upper()
        description = self.inputs.get(rest) if kind == "input" else None
        self.candidate.placeholders.append(Placeholder(field_name, variable, inner, description))
        return "${" + variable + "}"

    def strings(self, values: Any, field_name: str) -> list[str] | None:
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            self.candidate.problems.append(f"`{field_name}` must be a list of strings.")
            return None
        return [self.string(v, field_name, escape=False) for v in values]

    def mapping(self, values: Any, field_name: str) -> dict[str, str] | None:
        if not isinstance(values, dict):
            self.candidate.problems.append(f"`{field_name}` must be an object of strings.")
            return None
        out: dict[str, str] = {}
        for key, value in values.items():
            if isinstance(value, bool | int | float) and not isinstance(value, bool):
                value = str(value)
            if not isinstance(value, str):
                self.candidate.problems.append(f"`{field_name}.{key}` must be a string.")
                continue
            out[str(key)] = self.string(value, f"{field_name}.{key}", escape=True)
        return out


def _escape_dollars(text: str) -> str:
    return text.replace("$", "$$")


def from_json(name: str, raw: Any, inputs: dict[str, str | None]) -> Candidate:
    candidate = Candidate(name, None)
    if not isinstance(raw, dict):
        candidate.problems.append("the definition is not an object.")
        return candidate
    declared = raw.get("type")
    if declared == "sse":
        candidate.problems.append("uses SSE, which is not supported (only stdio and Streamable HTTP).")
        return candidate
    if declared is not None and declared != "stdio" and declared not in _HTTP_TYPES:
        candidate.problems.append(f"has an unsupported transport type {str(declared)[:40]!r}.")
        return candidate
    convert = _Converter(candidate, inputs)
    definition: dict[str, Any] = {}
    for key, value in raw.items():
        if key != "type":
            _json_field(convert, definition, key, value)
    _finish(candidate, definition)
    return candidate


def _json_field(convert: _Converter, definition: dict[str, Any], key: str, value: Any) -> None:
    """Convert one field of a JSON definition into `definition`, or note why it was not."""
    candidate = convert.candidate
    if key in _CONNECTION_STRINGS:
        if isinstance(value, str):
            definition[key] = convert.string(value, key, escape=False)
        else:
            candidate.problems.append(f"`{key}` must be a string.")
    elif key == "args":
        converted = convert.strings(value, key)
        if converted is not None:
            definition[key] = converted
    elif key in ("env", "headers"):
        mapped = convert.mapping(value, key)
        if mapped is not None:
            definition[key] = mapped
    elif key in KNOWN_FIELDS:
        definition[key] = value
    else:
        candidate.notes.append(f"dropped `{key}`, which this sidecar does not support.")


@dataclass
class _CodexServer:
    """A Codex `[mcp_servers.NAME]` table being converted."""

    candidate: Candidate
    definition: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    timeouts: list[float] = field(default_factory=list)


def from_codex(name: str, raw: Any) -> Candidate:
    candidate = Candidate(name, None)
    if not isinstance(raw, dict):
        candidate.problems.append("the definition is not a table.")
        return candidate
    server = _CodexServer(candidate)
    for key, value in raw.items():
        convert = _CODEX_FIELDS.get(key)
        if convert is None:
            candidate.notes.append(f"dropped `{key}`, which this sidecar does not support.")
        else:
            convert(server, key, value)
    definition = server.definition
    if server.headers:
        definition["headers"] = server.headers
    if server.timeouts:
        ms = int(max(server.timeouts) * 1000)
        definition["timeoutMs"] = min(max(ms, MIN_TIMEOUT_MS), MAX_TIMEOUT_MS)
        if ms != definition["timeoutMs"]:
            candidate.notes.append(f"the timeout was clamped to {MIN_TIMEOUT_MS}..{MAX_TIMEOUT_MS} ms.")
    _finish(candidate, definition)
    return candidate


def _codex_string(server: _CodexServer, key: str, value: Any) -> None:
    if isinstance(value, str):
        # Codex does not interpolate: a literal `${` stays literal only by luck, so flag it.
        if "${" in value:
            server.candidate.notes.append(f"`{key}` contains `${{`, which this sidecar treats as a reference.")
        server.definition[key] = value
    else:
        server.candidate.problems.append(f"`{key}` must be a string.")


def _codex_args(server: _CodexServer, key: str, value: Any) -> None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        server.definition["args"] = list(value)
    else:
        server.candidate.problems.append("`args` must be a list of strings.")


def _codex_env(server: _CodexServer, key: str, value: Any) -> None:
    mapped = _literal_map(server.candidate, value, "env")
    if mapped is not None:
        server.definition.setdefault("env", {}).update(mapped)


def _codex_env_vars(server: _CodexServer, key: str, value: Any) -> None:
    if isinstance(value, list) and all(isinstance(v, str) and _ENV_NAME.match(v) for v in value):
        env = server.definition.setdefault("env", {})
        for variable in value:
            env.setdefault(variable, "${" + variable + "}")
    else:
        server.candidate.problems.append("`env_vars` must be a list of variable names.")


def _codex_http_headers(server: _CodexServer, key: str, value: Any) -> None:
    mapped = _literal_map(server.candidate, value, "http_headers")
    if mapped is not None:
        server.headers.update(mapped)


def _codex_env_http_headers(server: _CodexServer, key: str, value: Any) -> None:
    if isinstance(value, dict) and all(isinstance(v, str) and _ENV_NAME.match(v) for v in value.values()):
        server.headers.update({str(h): "${" + v + "}" for h, v in value.items()})
    else:
        server.candidate.problems.append("`env_http_headers` must map header names to variable names.")


def _codex_bearer_token(server: _CodexServer, key: str, value: Any) -> None:
    if isinstance(value, str) and _ENV_NAME.match(value):
        server.headers["Authorization"] = "Bearer ${" + value + "}"
    else:
        server.candidate.problems.append("`bearer_token_env_var` must be a variable name.")


def _codex_enabled(server: _CodexServer, key: str, value: Any) -> None:
    if value is False:
        server.definition["disabled"] = True


def _codex_tool_filter(server: _CodexServer, key: str, value: Any) -> None:
    server.definition["includeTools" if key == "enabled_tools" else "excludeTools"] = value


def _codex_timeout(server: _CodexServer, key: str, value: Any) -> None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        server.timeouts.append(value / 1000 if key.endswith("_ms") else float(value))


_CODEX_FIELDS: dict[str, Callable[[_CodexServer, str, Any], None]] = {
    "command": _codex_string,
    "cwd": _codex_string,
    "url": _codex_string,
    "args": _codex_args,
    "env": _codex_env,
    "env_vars": _codex_env_vars,
    "http_headers": _codex_http_headers,
    "env_http_headers": _codex_env_http_headers,
    "bearer_token_env_var": _codex_bearer_token,
    "enabled": _codex_enabled,
    "enabled_tools": _codex_tool_filter,
    "disabled_tools": _codex_tool_filter,
    "startup_timeout_sec": _codex_timeout,
    "tool_timeout_sec": _codex_timeout,
    "startup_timeout_ms": _codex_timeout,
}


def _literal_map(candidate: Candidate, value: Any, field_name: str) -> dict[str, str] | None:
    """Codex values are literal: escape what our format would interpret."""
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        candidate.problems.append(f"`{field_name}` must be a table of strings.")
        return None
    out: dict[str, str] = {}
    for key, text in value.items():
        escaped = _escape_dollars(text)
        out[str(key)] = "$" + escaped if escaped.startswith("!") else escaped
    return out


def _finish(candidate: Candidate, definition: dict[str, Any]) -> None:
    """Validate the converted definition with the same rules as our own files."""
    if candidate.problems:
        return
    try:
        config = parse_server(candidate.name, definition, "global")
    except ConfigProblems as exc:
        candidate.problems.extend(p.split(": ", 1)[1] if ": " in p else p for p in exc.problems)
        return
    candidate.definition = definition
    candidate.transport = config.transport


_REFERENCES_IN_VALUE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_])")


def inline_values(definition: dict[str, Any]) -> list[str]:
    """`env`, `headers` and `oauthClientSecret` fields holding only literal text: possibly an inline credential."""
    out: list[str] = []
    for group in ("env", "headers"):
        values = definition.get(group)
        if isinstance(values, dict):
            out += [f"{group}.{key}" for key, value in values.items() if _literal(value)]
    if _literal(definition.get("oauthClientSecret")):
        out.append("oauthClientSecret")
    return out


def _literal(value: Any) -> bool:
    return (
        isinstance(value, str) and bool(value) and not value.startswith("!") and not _REFERENCES_IN_VALUE.search(value)
    )
