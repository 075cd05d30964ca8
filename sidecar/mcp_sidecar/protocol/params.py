"""Typed parameters for each request, checked in one place.

Clients send camelCase JSON objects. Each `parse_*` function turns one into a frozen
dataclass or raises `invalid_params` naming the offending field; nothing downstream sees
an unchecked dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import SidecarError, invalid_params

MAX_ACTIVATE_IDS = 50
MAX_DISCOVER_LIMIT = 50
DEFAULT_DISCOVER_LIMIT = 5
MAX_QUERY_BYTES = 64 * 1024
"""A query may be as long as a pasted message (UTF-8 bytes); ranking reads its first `RANKED_QUERY_CHARS`."""
RANKED_QUERY_CHARS = 1_000
DISCOVER_KINDS = ("all", "tools", "resources", "prompts")
MAX_SESSION_LENGTH = 200


def _object(operation: str, params: Any) -> Mapping[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise invalid_params(operation, "Params must be a JSON object.")
    return params


def _str(operation: str, params: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    value = params.get(name)
    if value is None:
        if required:
            raise invalid_params(operation, f"`{name}` is required.")
        return None
    if not isinstance(value, str) or not value:
        raise invalid_params(operation, f"`{name}` must be a non-empty string.")
    return value


def _session(operation: str, params: Mapping[str, Any]) -> str:
    session = _str(operation, params, "session", required=False) or methods.DEFAULT_SESSION
    if len(session) > MAX_SESSION_LENGTH:
        raise invalid_params(operation, f"`session` must be at most {MAX_SESSION_LENGTH} characters.")
    return session


@dataclass(frozen=True, slots=True)
class ServerParams:
    server: str


@dataclass(frozen=True, slots=True)
class ActivateParams:
    ids: tuple[str, ...]
    session: str


@dataclass(frozen=True, slots=True)
class SessionParams:
    session: str


@dataclass(frozen=True, slots=True)
class CallToolParams:
    id: str
    arguments: dict[str, Any]
    session: str
    activate: bool = False
    """Activate the tool into the session first, exactly as `mcp/activate` would."""
    for_model: bool = False
    """A model reads the failure (a chat's call tool): its diagnostic gets the model's hint."""
    work_done_token: int | str | None = None
    """LSP's `workDoneToken`: the call's progress is reported on it with `$/progress`."""
    background: bool = True
    """The call may go to the background past the client's threshold (`mcp/calls/*`)."""


@dataclass(frozen=True, slots=True)
class DiscoverParams:
    query: str
    kind: str
    server: str | None
    limit: int
    session: str


@dataclass(frozen=True, slots=True)
class ModelToolParams:
    arguments: dict[str, Any]
    session: str
    include_directory: bool = False


def parse_discover(operation: str, params: Any) -> DiscoverParams:
    p = _object(operation, params)
    query = p.get("query", "")
    if not isinstance(query, str):
        raise invalid_params(operation, "`query` must be a string.")
    if len(query) * 4 > MAX_QUERY_BYTES and len(query.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES:
        raise invalid_params(operation, "`query` must be at most 64 KiB; a few words about the capability rank best.")
    kind = p.get("kind", "all")
    if kind not in DISCOVER_KINDS:
        raise invalid_params(operation, f"`kind` must be one of {', '.join(DISCOVER_KINDS)}.")
    server = _str(operation, p, "server", required=False)
    limit = p.get("limit", DEFAULT_DISCOVER_LIMIT)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_DISCOVER_LIMIT:
        raise invalid_params(operation, f"`limit` must be an integer from 1 to {MAX_DISCOVER_LIMIT}.")
    return DiscoverParams(query=query, kind=kind, server=server, limit=limit, session=_session(operation, p))


def parse_model_tool(operation: str, params: Any) -> ModelToolParams:
    p = _object(operation, params)
    arguments = p.get("arguments", {})
    if not isinstance(arguments, Mapping):
        raise invalid_params(operation, "`arguments` must be a JSON object.")
    include = p.get("includeDirectory", False)
    if not isinstance(include, bool):
        raise invalid_params(operation, "`includeDirectory` must be a boolean.")
    return ModelToolParams(arguments=dict(arguments), session=_session(operation, p), include_directory=include)


def parse_server(operation: str, params: Any) -> ServerParams:
    p = _object(operation, params)
    server = _str(operation, p, "server")
    assert server is not None
    return ServerParams(server=server)


def parse_session(operation: str, params: Any) -> SessionParams:
    return SessionParams(session=_session(operation, _object(operation, params)))


@dataclass(frozen=True, slots=True)
class ProfileParams:
    """`mcp/profile`: `profile` absent shows the client's profile; null clears it; a name chooses it."""

    profile: str | None
    change: bool
    session: str


def parse_profile(operation: str, params: Any) -> ProfileParams:
    p = _object(operation, params)
    profile = p.get("profile")
    if profile is not None and (not isinstance(profile, str) or not profile):
        raise invalid_params(operation, "`profile` must be a profile's name, or null to clear it.")
    return ProfileParams(profile, "profile" in p, _session(operation, p))


def parse_activate(operation: str, params: Any) -> ActivateParams:
    p = _object(operation, params)
    ids = p.get("ids")
    if not isinstance(ids, list) or not ids:
        raise invalid_params(operation, f"`ids` must be a list of 1 to {MAX_ACTIVATE_IDS} tool ids.")
    if len(ids) > MAX_ACTIVATE_IDS:
        raise invalid_params(operation, f"`ids` accepts at most {MAX_ACTIVATE_IDS} tool ids.")
    if not all(isinstance(i, str) and i for i in ids):
        raise invalid_params(operation, "Every entry of `ids` must be a non-empty string.")
    # Duplicates are ignored; the first occurrence keeps its place.
    unique = tuple(dict.fromkeys(ids))
    return ActivateParams(ids=unique, session=_session(operation, p))


def parse_call_tool(operation: str, params: Any) -> CallToolParams:
    p = _object(operation, params)
    tool_id = _str(operation, p, "id")
    assert tool_id is not None
    arguments = p.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise invalid_params(operation, "`arguments` must be a JSON object.")
    activate = p.get("activate", False)
    if not isinstance(activate, bool):
        raise invalid_params(operation, "`activate` must be true or false.")
    for_model = p.get("forModel", False)
    if not isinstance(for_model, bool):
        raise invalid_params(operation, "`forModel` must be true or false.")
    token = p.get("workDoneToken")
    if token is not None and (isinstance(token, bool) or not isinstance(token, int | str)):
        raise invalid_params(operation, "`workDoneToken` must be a string or an integer.")
    background = p.get("background", True)
    if not isinstance(background, bool):
        raise invalid_params(operation, "`background` must be true or false.")
    return CallToolParams(tool_id, dict(arguments), _session(operation, p), activate, for_model, token, background)


@dataclass(frozen=True, slots=True)
class CallsParams:
    session: str | None
    """Only this session's calls; None: every call of the client."""


def parse_calls(operation: str, params: Any) -> CallsParams:
    p = _object(operation, params)
    return CallsParams(_session(operation, p) if "session" in p else None)


@dataclass(frozen=True, slots=True)
class CallIdParams:
    call_id: str
    wait: float
    """Seconds to wait for a running call (`mcp/calls/result`); 0: answer at once."""


MAX_RESULT_WAIT_S = 60.0


def parse_call_id(operation: str, params: Any) -> CallIdParams:
    p = _object(operation, params)
    call_id = _str(operation, p, "callId")
    assert call_id is not None
    wait = p.get("wait", 0)
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait <= MAX_RESULT_WAIT_S:
        raise invalid_params(operation, f"`wait` must be a number of seconds from 0 to {MAX_RESULT_WAIT_S:g}.")
    return CallIdParams(call_id, float(wait))


@dataclass(frozen=True, slots=True)
class ReadParams:
    server: str
    uri: str | None
    template: str | None
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CompleteParams:
    server: str
    kind: str
    """`template` or `prompt`."""
    name: str
    argument_name: str
    argument_value: str
    arguments: dict[str, str]


@dataclass(frozen=True, slots=True)
class ResourceParams:
    server: str
    uri: str


@dataclass(frozen=True, slots=True)
class AppCallParams:
    server: str
    uri: str
    """The app that calls: a `ui://` URI a tool of `server` names."""
    name: str
    """The server's own tool name, as the app's `tools/call` names it."""
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AppOpenParams:
    server: str
    uri: str
    tool_input: dict[str, Any] | None
    """The arguments of the call the app shows (`ui/notifications/tool-input`), when there was one."""
    tool_result: dict[str, Any] | None
    """That call's result (`ui/notifications/tool-result`: content, structuredContent, isError)."""


@dataclass(frozen=True, slots=True)
class SpillCleanParams:
    older_than_days: float | None


def parse_read(operation: str, params: Any) -> ReadParams:
    """`{server, uri}` or `{server, template, arguments?}`, never both."""
    p = _object(operation, params)
    server = _str(operation, p, "server")
    assert server is not None
    uri = p.get("uri")
    template = p.get("template")
    if (uri is None) == (template is None):
        raise invalid_params(operation, "Pass exactly one of `uri` or `template`.")
    if uri is not None and (not isinstance(uri, str) or not uri):
        raise invalid_params(operation, "`uri` must be a non-empty string.")
    if template is not None and (not isinstance(template, str) or not template):
        raise invalid_params(operation, "`template` must be a non-empty string.")
    arguments = p.get("arguments")
    if arguments is not None and uri is not None:
        raise invalid_params(operation, "`arguments` go with `template`, not `uri`.")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise invalid_params(operation, "`arguments` must be a JSON object.")
    return ReadParams(server=server, uri=uri, template=template, arguments=dict(arguments))


def parse_complete(operation: str, params: Any) -> CompleteParams:
    """`{server, template | prompt, argument: {name, value}, arguments?: {name: string}}`."""
    p = _object(operation, params)
    server = _str(operation, p, "server")
    assert server is not None
    template = _str(operation, p, "template", required=False)
    prompt = _str(operation, p, "prompt", required=False)
    if (template is None) == (prompt is None):
        raise invalid_params(operation, "Pass exactly one of `template` or `prompt`.")
    argument = p.get("argument")
    if not isinstance(argument, Mapping):
        raise invalid_params(operation, "`argument` must be an object {name, value}.")
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(name, str) or not name:
        raise invalid_params(operation, "`argument.name` must be a non-empty string.")
    if not isinstance(value, str):
        raise invalid_params(operation, "`argument.value` must be a string (it may be empty).")
    context = p.get("arguments") or {}
    if not isinstance(context, Mapping) or not all(isinstance(v, str) for v in context.values()):
        raise invalid_params(operation, "`arguments` must be an object of strings (no arrays).")
    kind, ref = ("template", template) if template is not None else ("prompt", prompt)
    assert ref is not None
    return CompleteParams(server, kind, ref, name, value, dict(context))


@dataclass(frozen=True, slots=True)
class PromptPreviewParams:
    server: str
    name: str
    arguments: dict[str, str]
    session: str


@dataclass(frozen=True, slots=True)
class PreviewIdParams:
    preview_id: str


def parse_prompt_preview(operation: str, params: Any) -> PromptPreviewParams:
    """`{server, name, arguments?: {name: string}}`."""
    p = _object(operation, params)
    server = _str(operation, p, "server")
    name = _str(operation, p, "name")
    assert server is not None
    assert name is not None
    arguments = p.get("arguments") or {}
    if not isinstance(arguments, Mapping) or not all(isinstance(v, str) for v in arguments.values()):
        raise invalid_params(operation, "`arguments` must be an object of strings.")
    return PromptPreviewParams(server, name, dict(arguments), _session(operation, p))


def parse_session_end(operation: str, params: Any) -> str:
    """`{session}`: required, so ending the default session is said out loud."""
    p = _object(operation, params)
    if "session" not in p:
        raise invalid_params(operation, "`session` is required.")
    return _session(operation, p)


def parse_preview_id(operation: str, params: Any) -> PreviewIdParams:
    preview_id = _str(operation, _object(operation, params), "previewId")
    assert preview_id is not None
    return PreviewIdParams(preview_id)


def parse_resource(operation: str, params: Any) -> ResourceParams:
    p = _object(operation, params)
    server = _str(operation, p, "server")
    uri = _str(operation, p, "uri")
    assert server is not None
    assert uri is not None
    return ResourceParams(server=server, uri=uri)


def parse_app_call(operation: str, params: Any) -> AppCallParams:
    """`{server, uri, name, arguments?}`."""
    p = _object(operation, params)
    server, uri, name = (_str(operation, p, key) for key in ("server", "uri", "name"))
    assert server is not None
    assert uri is not None
    assert name is not None
    arguments = p.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        raise invalid_params(operation, "`arguments` must be a JSON object.")
    return AppCallParams(server, uri, name, dict(arguments))


def _optional_object(operation: str, p: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    value = p.get(name)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise invalid_params(operation, f"`{name}` must be a JSON object.")
    return dict(value)


def parse_app_open(operation: str, params: Any) -> AppOpenParams:
    """`{server, uri, toolInput?, toolResult?}`."""
    p = _object(operation, params)
    server, uri = (_str(operation, p, key) for key in ("server", "uri"))
    assert server is not None
    assert uri is not None
    tool_input = _optional_object(operation, p, "toolInput")
    tool_result = _optional_object(operation, p, "toolResult")
    return AppOpenParams(server, uri, tool_input, tool_result)


def parse_spill_clean(operation: str, params: Any) -> SpillCleanParams:
    p = _object(operation, params)
    days = p.get("olderThanDays")
    if days is not None and (isinstance(days, bool) or not isinstance(days, int | float) or days < 0):
        raise invalid_params(operation, "`olderThanDays` must be a number of days, 0 or more.")
    return SpillCleanParams(older_than_days=None if days is None else float(days))


__all__ = [
    "ActivateParams",
    "CallToolParams",
    "CompleteParams",
    "DiscoverParams",
    "ModelToolParams",
    "PreviewIdParams",
    "PromptPreviewParams",
    "ReadParams",
    "ResourceParams",
    "ServerParams",
    "SessionParams",
    "SidecarError",
    "SpillCleanParams",
    "parse_activate",
    "parse_call_tool",
    "parse_complete",
    "parse_discover",
    "parse_model_tool",
    "parse_preview_id",
    "parse_prompt_preview",
    "parse_read",
    "parse_resource",
    "parse_server",
    "parse_session",
    "parse_spill_clean",
]
