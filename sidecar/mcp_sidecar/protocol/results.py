"""Typed results: the shape of every request's answer and every notification's payload.

Each TypedDict is what the sidecar sends, key for key; `NotRequired` marks a key that is
sometimes absent (a key whose value may be null is required, with `| None`). Shapes that
carry a server's own data unchanged (tool schemas, content blocks, filters) stay open dicts.
`RESULTS` and `NOTIFICATIONS` map each method to its type; the VS Code client mirrors these
as interfaces in `editor-clients/vscode/src/protocol.ts`, and a unit test compares the keys.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from mcp_sidecar.protocol import methods
from mcp_sidecar.protocol.errors import DiagnosticJson

Json = Any
"""A JSON value whose shape is the server's, not ours."""

# ---------------------------------------------------------------- shared shapes


class CatalogCounts(TypedDict):
    tools: int | None
    resources: int | None
    templates: int | None
    prompts: int | None


class Icon(TypedDict):
    """A server's icon that passed the sidecar's rules (`catalog/icons.py`): a `data:` image or an `https:` URL."""

    src: str
    mimeType: NotRequired[str]
    sizes: NotRequired[list[str]]
    theme: NotRequired[Literal["light", "dark"]]


class StatusRow(TypedDict):
    """One server's row: the `mcp/serverStatus` payload and `mcp/server/reconnect`'s result."""

    name: str
    scope: str
    transport: str
    state: str
    """idle, connecting, connected, disabled, failed, or needs_login (the server asked for authentication)."""
    description: str | None
    protocolVersion: str | None
    catalog: CatalogCounts
    catalogSource: str | None
    loaded: int
    lastDiagnostic: DiagnosticJson | None
    approvalRequired: bool
    sharedBy: int
    """How many clients use this server's connection (its process, when it runs), this one included:
    1 in a process of its own; in the engine, every window, host session and CLI run sharing it."""
    tokens: int | None
    """What the tools its filters expose cost a model's context together, estimated in tokens
    (`mcp/status`'s `tokens.tokenizer`); null before its catalog was fetched and counted."""
    icons: NotRequired[list[Icon]]
    """The server's own icons (`serverInfo.icons`), once it connected and declared valid ones."""


class PendingApproval(TypedDict):
    server: str
    change: Literal["new", "changed"]
    definitionHash: str
    transport: str
    summary: str
    changedFields: list[str]


class ToolUi(TypedDict):
    """A tool's MCP Apps metadata (`_meta.ui`, read by `catalog/apps.py`)."""

    resourceUri: NotRequired[str]
    """The tool's app: a `ui://` resource of the same server (`mcp/app/resource` serves it)."""
    visibility: list[Literal["model", "app"]]
    """Who may call the tool: the model, the server's app, or both (the default)."""


class ToolDefinition(TypedDict):
    """One tool: exact ids plus the keys of the server's MCP definition that it has."""

    id: str
    modelName: str
    server: str
    name: str
    title: NotRequired[Json]
    description: NotRequired[Json]
    inputSchema: NotRequired[Json]
    outputSchema: NotRequired[Json]
    annotations: NotRequired[Json]
    icons: NotRequired[list[Icon]]
    tokens: NotRequired[int]
    """Its definition's cost to a model's context, estimated in tokens; absent without the tokenizer."""
    ui: NotRequired[ToolUi]
    """MCP Apps: the tool's app and who may call it; absent when the server sent no `_meta.ui`."""


class Spill(TypedDict):
    path: str
    bytes: int


class DisplayBlock(TypedDict):
    """A pretty-printed JSON rendering of one content block (`index`) or of `structuredContent` (`field`)."""

    index: NotRequired[int]
    field: NotRequired[str]
    format: Literal["json"]
    text: str


class ActiveToolsChanged(TypedDict):
    """The `mcp/activeToolsChanged` payload, also listed in a reload summary's `deactivated`."""

    session: str
    removed: list[str]
    reason: str


class ReloadSummary(TypedDict):
    """`mcp/config/reload` and `mcp/workspace/setTrusted`'s result; `reload` in the edits' results."""

    applied: bool
    added: list[str]
    removed: list[str]
    changed: list[str]
    unchanged: list[str]
    deactivated: list[ActiveToolsChanged]
    diagnostics: list[DiagnosticJson]


class Watch(TypedDict):
    server: str
    uri: str
    changed: bool
    updates: int
    subscribedAt: float
    updatedAt: float | None


class NextCall(TypedDict):
    """The exact request to send next: `mcp/activate`, `mcp/callTool`, `mcp/read` or `mcp/prompt/preview`."""

    method: str
    params: dict[str, Any]


# ---------------------------------------------------------------- status and servers


class ConfigFile(TypedDict):
    scope: str
    path: str
    exists: bool
    read: bool


class EngineClient(TypedDict):
    """One client attached to the engine: its kind and workspace, nothing else of it."""

    kind: str
    """`lsp`, `mcp` or `cli`: an editor (`lsp`), a host's stdio gateway (`mcp`) or a CLI run (`cli`)."""
    workspace: str | None
    since: str
    """When it attached (ISO 8601, UTC)."""
    thisClient: bool
    """The client asking."""


class EngineStatus(TypedDict):
    """The per-user engine serving this client (`docs/engine.md`)."""

    pid: int
    version: str
    since: str
    """When it started (ISO 8601, UTC)."""
    uptimeSeconds: int
    clients: list[EngineClient]
    """In the order they attached."""


class ContextTokens(TypedDict):
    """What the tool definitions cost a model's context, estimated with one tokenizer."""

    tokenizer: str
    """`llama-2-bpe`: Llama 2's BPE, from the `wordllama` package (docs/context.md says how far it is
    from the tokenizers of the models people use)."""
    allTools: int
    """Every enabled server's exposed tools together (`counted` servers): a host connected to each."""
    counted: int
    """How many enabled servers `allTools` covers (the others' catalogs were not fetched or counted yet)."""
    enabled: int
    """How many servers are enabled."""
    modelTool: int | None
    """`mcp_tools` itself (`mcp/modelTool/definition`); null until a count loaded the counter."""


class StatusResult(TypedDict):
    servers: list[StatusRow]
    configFiles: list[ConfigFile]
    trustedWorkspace: bool
    pendingApprovals: list[PendingApproval]
    diagnostics: list[DiagnosticJson]
    engine: EngineStatus | None
    """The engine serving this client; null in a process of its own (`MCP_SIDECAR_ENGINE=off`)."""
    profile: str | None
    """The profile this client chose (`mcp/profile`), whether or not it is usable (see `diagnostics`)."""
    profiles: list[str]
    """The profiles it can choose: defined, valid and approved."""
    tokens: ContextTokens | None
    """Null when the tokenizer's package is not installed."""
    budget: SessionBudget | None
    """The session budget this client's sessions keep to; null when off (the default)."""


class ProtocolVersions(TypedDict):
    configured: str
    negotiated: str | None


class Timeouts(TypedDict):
    requestMs: int
    toolCallMs: int


class Authentication(TypedDict):
    kind: Literal["header", "oauth", "none"]
    credentials: str
    tokensStored: bool | None
    credentialStore: str | None
    client: NotRequired[Literal["pre-registered", "confidential", "metadata document", "dynamic"]]
    """OAuth only: how the sidecar identifies itself to the authorization server (never the secret)."""
    dpop: NotRequired[bool]
    """OAuth only: tokens are bound to a DPoP key (`oauthDpop`)."""


class ServerGetResult(TypedDict):
    name: str
    scope: str
    overridesGlobal: bool
    description: str | None
    disabled: bool
    transport: str
    protocol: ProtocolVersions
    filters: dict[str, Any]
    timeouts: Timeouts
    connection: dict[str, Any]
    """Field names only; every value reads `hidden`."""
    authentication: Authentication
    status: StatusRow


class RefusedTool(TypedDict):
    name: str
    diagnostic: DiagnosticJson


class ServerToolsResult(TypedDict):
    server: str
    source: str
    tools: list[ToolDefinition]
    hiddenByFilters: int
    refused: list[RefusedTool]
    tokens: int | None
    """The listed tools together, estimated in tokens; null without the tokenizer."""


class LogLine(TypedDict):
    time: float
    text: str


class ServerLogsResult(TypedDict):
    server: str
    lines: list[LogLine]
    dropped: int


class KindDiagnostic(TypedDict):
    kind: str
    diagnostic: DiagnosticJson


class ServerRefreshResult(TypedDict):
    server: str
    status: StatusRow
    toolsSource: str
    diagnostics: list[KindDiagnostic]


# ---------------------------------------------------------------- activation and calls


class ActivationEntry(TypedDict):
    id: str
    status: Literal["loaded", "already loaded", "not loaded"]
    reason: NotRequired[str]
    diagnostic: NotRequired[DiagnosticJson]
    nearby: NotRequired[list[str]]


class ActivationOutcome(ActivationEntry, total=False):
    """One id's outcome inside the sidecar, before `tool` moves to the result's `tools` (not on the wire)."""

    tool: ToolDefinition


class ActivationTokens(TypedDict):
    added: int
    """The tools this activation loaded (not those already loaded), estimated in tokens."""
    session: int
    """Every tool now active in the session, together."""


class SessionBudget(TypedDict):
    """The most tools, and the most tokens of tool definitions, a session keeps active; null: no limit."""

    maxTools: int | None
    maxTokens: int | None


class ActivateResult(TypedDict):
    session: str
    results: list[ActivationEntry]
    tools: list[ToolDefinition]
    text: str
    tokens: ActivationTokens | None
    """Null without the tokenizer."""
    evicted: list[str]
    """The ids the session budget deactivated to make room (least recently used first); `text` names them."""
    budget: SessionBudget | None
    """The session budget (null: off)."""
    overBudget: bool
    """The tools this activation asked for exceed the budget on their own: active all the same."""


class ProfileJson(TypedDict):
    """A profile: the servers a client choosing it searches (null: every one) and the tools it activates."""

    name: str
    scope: str
    description: str | None
    servers: list[str] | None
    activate: list[str]
    approvalRequired: bool
    """A project profile new or changed since approved: it cannot be chosen until approved."""


class ProfileResult(TypedDict):
    """`mcp/profile`: the client's profile after the request, and the profiles it can choose from."""

    profile: ProfileJson | None
    changed: bool
    profiles: list[ProfileJson]
    activation: ActivateResult | None
    """The chosen profile's `activate` tools, activated in the request's session."""
    deactivated: list[str]
    """Tools of servers the new profile does not search, dropped from every session of this client."""
    diagnostics: list[DiagnosticJson]
    text: str


class ActiveToolsResult(TypedDict):
    session: str
    tools: list[ToolDefinition]
    tokens: int | None
    """The session's active tools together, estimated in tokens; null without the tokenizer."""
    budget: SessionBudget | None
    """The session budget (null: off)."""


class ResourceLink(TypedDict):
    uri: str
    name: Json
    mimeType: NotRequired[Json]
    read: NextCall


class Redacted(TypedDict, total=False):
    """Spread into a result: present only when the sidecar replaced some of the server's secrets."""

    redacted: int


class ShapedToolResult(TypedDict):
    """A tool's MCP result within the output limits; keys of the MCP result not listed here pass through."""

    isError: bool
    structuredContent: NotRequired[Json]
    truncated: NotRequired[bool]
    spill: NotRequired[Spill | None]
    """Null when the full result could not be saved."""
    content: list[dict[str, Any]]
    display: NotRequired[list[DisplayBlock]]
    resourceLinks: NotRequired[list[ResourceLink]]
    redacted: NotRequired[int]
    """Only when there were some: how many occurrences of the server's secrets became `***`."""


class Activation(TypedDict):
    id: str
    status: Literal["loaded", "already loaded"]


class CallToolResult(ShapedToolResult):
    id: str
    server: str
    tool: str
    activation: NotRequired[Activation]
    """Only with `activate: true`: what the activation before the call did."""
    diagnostic: NotRequired[DiagnosticJson]
    """Only when `isError`: `tool_error`, for a failed tool (an `isError` result or a JSON-RPC error answer)."""
    text: NotRequired[str]
    """Only with `forModel: true`: the result as a model reads it (every block, sanitised)."""
    elicitations: NotRequired[list[UrlStep]]
    """Only with an `elicitation_required` diagnostic: the URL steps the server asked for."""
    background: NotRequired[BackgroundCallView]
    """Only when the call went to the background: the call; its result comes from `mcp/calls/result`."""


class CallProgress(TypedDict, total=False):
    progress: float
    total: float
    message: str


class BackgroundCallView(TypedDict):
    callId: str
    tool: str
    session: str
    status: Literal["running", "completed", "failed", "cancelled"]
    startedAt: str
    endedAt: NotRequired[str]
    progress: NotRequired[CallProgress]


class CallsListResult(TypedDict):
    calls: list[BackgroundCallView]


class CallsResultResult(TypedDict):
    call: BackgroundCallView
    result: NotRequired[CallToolResult]
    """Once the call completed (or failed as a tool): its result, delivered once."""
    diagnostic: NotRequired[DiagnosticJson]
    """Once the call failed (a timeout, a lost connection): why."""


class UrlStep(TypedDict):
    elicitationId: str
    url: str
    action: Literal["accept", "decline", "cancel"]
    completed: bool


# ---------------------------------------------------------------- discovery


class Unavailable(TypedDict):
    server: str
    kind: str
    diagnostic: DiagnosticJson


class RefusedEntry(TypedDict):
    """A catalog entry discovery left out: refused by the catalog, or a tool whose model name collides."""

    server: str
    kind: Literal["tool", "resource", "template", "prompt"]
    name: NotRequired[str]
    uri: NotRequired[str]
    uriTemplate: NotRequired[str]
    collidesWith: NotRequired[list[str]]
    diagnostic: DiagnosticJson


class Match(TypedDict):
    """Which signal put a candidate where it is (`catalog/hybrid.py`)."""

    signals: list[Literal["exact", "keyword", "semantic"]]
    keywordRank: NotRequired[int]
    """Its rank by keywords alone (BM25F), when its words matched."""
    semanticRank: NotRequired[int]
    """Its rank by meaning alone, when near the top."""
    similarity: NotRequired[float]
    """Cosine similarity of the query and the entry (the semantic signal on)."""


class ToolCandidate(TypedDict):
    kind: Literal["tool"]
    id: str
    server: str
    name: str
    title: NotRequired[Json]
    description: str
    required: list[str]
    loaded: bool
    """Active in the session with the definition the catalog has now: callable."""
    changed: NotRequired[bool]
    """True when active in the session but the server's definition changed since: activate again."""
    annotations: NotRequired[Json]
    """The tool's MCP annotations (`readOnlyHint`, `destructiveHint`, ...), as the server sent them."""
    icons: NotRequired[list[Icon]]
    next: NextCall
    score: float
    match: NotRequired[Match]
    """Present for a ranked query (not when browsing with an empty one)."""
    weak: NotRequired[Literal[True]]
    """Neither signal vouches for it: the nearest entry, not a match."""
    tokens: NotRequired[int]
    """What activating it adds to a model's context, estimated in tokens (its definition); absent
    without the tokenizer."""


class ResourceCandidate(TypedDict):
    kind: Literal["resource"]
    server: str
    name: Json
    uri: str
    title: NotRequired[Json]
    description: str
    mimeType: NotRequired[Json]
    icons: NotRequired[list[Icon]]
    next: NextCall
    score: float
    match: NotRequired[Match]
    """Present for a ranked query (not when browsing with an empty one)."""
    weak: NotRequired[Literal[True]]
    """Neither signal vouches for it: the nearest entry, not a match."""


class TemplateCandidate(TypedDict):
    kind: Literal["template"]
    label: Literal["template"]
    server: str
    name: Json
    uriTemplate: str
    variables: list[str]
    title: NotRequired[Json]
    description: str
    mimeType: NotRequired[Json]
    icons: NotRequired[list[Icon]]
    next: NextCall
    score: float
    match: NotRequired[Match]
    """Present for a ranked query (not when browsing with an empty one)."""
    weak: NotRequired[Literal[True]]
    """Neither signal vouches for it: the nearest entry, not a match."""


class PromptArgument(TypedDict):
    name: str
    required: bool


class PromptCandidate(TypedDict):
    kind: Literal["prompt"]
    server: str
    name: str
    title: NotRequired[Json]
    description: str
    arguments: list[PromptArgument]
    icons: NotRequired[list[Icon]]
    next: NextCall
    score: float
    match: NotRequired[Match]
    """Present for a ranked query (not when browsing with an empty one)."""
    weak: NotRequired[Literal[True]]
    """Neither signal vouches for it: the nearest entry, not a match."""


Candidate = ToolCandidate | ResourceCandidate | TemplateCandidate | PromptCandidate


class DiscoverResult(TypedDict):
    query: str
    kind: str
    session: str
    candidates: list[Candidate]
    unavailable: list[Unavailable]
    refused: list[RefusedEntry]
    text: str
    rankedQuery: NotRequired[str]
    """Present when `query` was longer than ranking reads: the part that was ranked."""


class DirectoryEntry(TypedDict):
    """One enabled server in `mcp_tools`' server directory."""

    name: str
    summary: str
    """The definition's `description`, else a summary of its cached tools, else empty."""
    source: Literal["description", "catalog", "none"]
    unavailable: NotRequired[str]
    """The diagnostic code of a server that failed, needs a login or whose definition is broken."""


class CallToolDefinition(TypedDict):
    name: str
    description: str
    inputSchema: dict[str, Any]


class ModelToolDefinition(TypedDict):
    name: str
    description: str
    """The fixed description, then the server directory (the `servers` below, as text)."""
    inputSchema: dict[str, Any]
    servers: list[DirectoryEntry]
    call: CallToolDefinition
    """`mcp_call`, the tool a chat calls activated tools with (`mcp/callTool` with `forModel`)."""
    tokens: int | None
    """This definition's cost to a model's context (name, description, inputSchema), estimated in
    tokens; null until a count loaded the counter, or without the tokenizer."""


class ModelToolChangedParams(TypedDict):
    """`mcp/modelToolChanged`: the configuration changed the definition; register this one instead."""

    definition: ModelToolDefinition


class SessionEndResult(TypedDict):
    session: str
    deactivated: list[str]
    """The ids of the tools that were active in the session."""
    previewsDiscarded: int


class ModelToolInvokeResult(TypedDict):
    text: str
    isError: bool
    details: Json
    """The result of the operation performed, or `{diagnostic}` when it failed."""


class CommandResult(TypedDict):
    command: str
    data: Json
    text: str


# ---------------------------------------------------------------- configuration


class AddOutcome(TypedDict):
    """What writing the definition did: the part of `mcp/config/add`'s result decided under the file lock."""

    action: Literal["added", "replaced"]
    overrides: Literal["global"] | None
    overriddenBy: Literal["project"] | None


class ConfigAddResult(AddOutcome):
    server: str
    scope: str
    path: str
    notes: list[str]
    reload: ReloadSummary


class AddProblem(TypedDict):
    field: Literal["target", "server", "definition", "scope"]
    diagnostic: DiagnosticJson


class ConfigAddDryRunResult(TypedDict):
    """`mcp/config/add` with `dryRun: true`: what would be written, and every refusal in order."""

    dryRun: Literal[True]
    valid: bool
    server: str
    scope: str
    path: str | None
    definition: dict[str, Any] | None
    action: Literal["added", "replaced"] | None
    overrides: Literal["global"] | None
    overriddenBy: Literal["project"] | None
    notes: list[str]
    problems: list[AddProblem]


class CommandOption(TypedDict):
    name: str
    kind: Literal["flag", "value", "multi"]
    required: bool
    values: list[str]
    placeholder: str | None


class CommandPositional(TypedDict):
    name: str
    completion: Literal["server", "command", "file", "tool", "profile"] | None
    values: list[str]
    optional: bool


class CommandEntry(TypedDict):
    name: str
    usage: str
    summary: str
    options: list[CommandOption]
    positionals: list[CommandPositional]
    variadic: bool
    changes: Literal["config", "status"] | None


class CommandSpecResult(TypedDict):
    commands: list[CommandEntry]
    servers: list[str]
    scopes: list[str]
    transports: list[str]


class ConfigRemoveResult(TypedDict):
    server: str
    scope: str
    path: str
    remaining: str | None
    notes: list[str]
    reload: ReloadSummary


class ConfigSetEnabledResult(TypedDict):
    server: str
    scope: str
    path: str
    enabled: bool
    changed: bool
    approvalRequired: bool
    deactivated: list[str]
    reload: ReloadSummary


class Placeholder(TypedDict):
    field: str
    variable: str
    source: str
    description: str | None


class ImportServer(TypedDict):
    name: str
    transport: str | None
    importable: bool
    selected: bool
    connection: dict[str, Any]
    disabled: bool
    inlineValues: list[str]
    placeholders: list[Placeholder]
    problems: list[str]
    notes: list[str]
    alreadyDefined: list[str]


class ConfigImportResult(TypedDict):
    file: str
    format: str
    formatLabel: str
    scope: str
    path: str
    written: bool
    servers: list[ImportServer]
    imported: list[str]
    reload: NotRequired[ReloadSummary]
    """Absent from a preview (`confirm` false), which writes nothing."""


class NotApproved(TypedDict):
    server: str
    reason: str


class ApproveResult(TypedDict):
    approved: list[str]
    notApproved: list[NotApproved]
    reload: ReloadSummary


# ---------------------------------------------------------------- authentication


class LoginResult(TypedDict):
    """`completed` carries `scopes`; `pending` (no browser) the login id and the address to open;
    `needs_approval` the step-up scopes the person must approve first (`extraScopes`)."""

    server: str
    status: Literal["completed", "pending", "needs_approval"]
    scopes: NotRequired[list[str]]
    extraScopes: NotRequired[list[str]]
    loginId: NotRequired[str]
    authorizationUrl: NotRequired[str]
    redirectUri: NotRequired[str]
    expiresInSeconds: NotRequired[int]
    text: str


class LogoutResult(TypedDict):
    server: str
    removed: bool
    revocation: str
    text: str


# ---------------------------------------------------------------- resources, completions, watches, spill files


class ReadResult(TypedDict):
    server: str
    uri: str
    template: NotRequired[str]
    arguments: NotRequired[dict[str, Any]]
    untrusted: bool
    contents: list[dict[str, Any]]
    truncated: bool
    spill: NotRequired[Spill]
    display: NotRequired[list[DisplayBlock]]
    redacted: NotRequired[int]
    """Only when there were some: how many occurrences of the server's secrets became `***`."""
    text: str


class AppResourceResult(TypedDict):
    """`mcp/app/resource`: one MCP App's document, checked (`services/apps.py`), for the editor to render."""

    server: str
    uri: str
    mimeType: Literal["text/html;profile=mcp-app"]
    html: str
    """The whole document (a blob decoded as UTF-8), at most 4 MiB, never truncated; the server's, untrusted."""
    bytes: int
    tools: list[str]
    """The server's tools whose app it is (their names), app-only tools included."""
    ui: NotRequired[dict[str, Json]]
    """The server's `_meta.ui` of the content (csp, permissions, domain, prefersBorder), as it sent it."""
    untrusted: Literal[True]


class AppOpenResult(TypedDict):
    """`mcp/app/open`: the loopback page that shows one MCP App in the person's browser."""

    server: str
    uri: str
    url: str
    """`http://127.0.0.1:<port>/<token>/`: whoever has it can use the app, until the client ends."""


class CompletionArgument(TypedDict):
    name: str
    value: str


class CompleteResult(TypedDict):
    server: str
    template: NotRequired[str]
    prompt: NotRequired[str]
    argument: CompletionArgument
    values: list[str]
    dropped: int
    """Server values left out for holding control or invisible characters (or a line break)."""
    total: NotRequired[Json]
    hasMore: NotRequired[Json]
    untrusted: bool
    truncated: bool
    spill: NotRequired[Spill]
    redacted: NotRequired[int]
    """Only when there were some: how many occurrences of the server's secrets became `***`."""
    text: str


class SubscribeResult(TypedDict):
    watch: Watch
    created: bool


class UnsubscribeResult(TypedDict):
    server: str
    uri: str
    removed: bool


class SubscriptionsResult(TypedDict):
    watches: list[Watch]
    limitPerConnection: int


class SpillFileInfo(TypedDict):
    path: str
    bytes: int
    modified: float


class SpillListResult(TypedDict):
    directory: str
    files: list[SpillFileInfo]
    totalBytes: int


class SpillCleanResult(TypedDict):
    directory: str
    removed: list[str]
    freedBytes: int
    kept: int


# ---------------------------------------------------------------- prompts


class PromptResource(TypedDict):
    uri: str
    mimeType: NotRequired[str]


class PromptText(TypedDict):
    type: Literal["text"]
    text: str


class PromptMessage(TypedDict):
    index: int
    role: Literal["user", "assistant"]
    resource: NotRequired[PromptResource]
    """The embedded resource the text came from, if it came from one."""
    content: PromptText


class PromptBody(TypedDict):
    """What a preview shows; `mcp/prompt/preview` and `mcp/prompt/use` add the preview id."""

    server: str
    name: str
    description: NotRequired[str]
    messageCount: int
    messages: list[PromptMessage]
    untrusted: bool
    redacted: NotRequired[int]
    """Only when there were some: how many occurrences of the server's secrets became `***`."""
    text: str


class PromptSnapshot(PromptBody):
    previewId: str


class PromptUseResult(PromptSnapshot):
    accepted: Literal[True]


class PromptDiscardResult(TypedDict):
    previewId: str
    server: str
    name: str
    discarded: Literal[True]


# ---------------------------------------------------------------- notification payloads


class CatalogChangedParams(TypedDict):
    server: str
    kind: str


class ServerLogParams(TypedDict):
    server: str
    level: str
    logger: NotRequired[str]
    text: str


class ElicitationCompleteParams(TypedDict):
    server: str
    elicitationId: str


class ResourceUpdatedParams(TypedDict):
    server: str
    uri: str
    changed: Literal[True]


class WatchesClearedParams(TypedDict):
    server: str
    uris: list[str]
    reason: str


class ApprovalRequiredParams(TypedDict):
    pending: list[PendingApproval]


# ---------------------------------------------------------------- the tables

RESULTS: dict[str, object] = {
    methods.STATUS: StatusResult,
    methods.SERVER_GET: ServerGetResult,
    methods.SERVER_TOOLS: ServerToolsResult,
    methods.SERVER_RECONNECT: StatusRow,
    methods.SERVER_LOGS: ServerLogsResult,
    methods.ACTIVATE: ActivateResult,
    methods.ACTIVE_TOOLS: ActiveToolsResult,
    methods.CALL_TOOL: CallToolResult,
    methods.DISCOVER: DiscoverResult,
    methods.SERVER_REFRESH: ServerRefreshResult,
    methods.MODEL_TOOL_DEFINITION: ModelToolDefinition,
    methods.MODEL_TOOL_INVOKE: ModelToolInvokeResult,
    methods.SESSION_END: SessionEndResult,
    methods.PROFILE: ProfileResult,
    methods.COMMAND: CommandResult,
    methods.COMMAND_SPEC: CommandSpecResult,
    methods.CONFIG_ADD: ConfigAddResult,
    methods.CONFIG_REMOVE: ConfigRemoveResult,
    methods.CONFIG_SET_ENABLED: ConfigSetEnabledResult,
    methods.CONFIG_RELOAD: ReloadSummary,
    methods.CONFIG_IMPORT: ConfigImportResult,
    methods.WORKSPACE_SET_TRUSTED: ReloadSummary,
    methods.WORKSPACE_APPROVE: ApproveResult,
    methods.AUTH_LOGIN: LoginResult,
    methods.AUTH_COMPLETE_LOGIN: LoginResult,
    methods.AUTH_LOGOUT: LogoutResult,
    methods.READ: ReadResult,
    methods.COMPLETE: CompleteResult,
    methods.RESOURCE_SUBSCRIBE: SubscribeResult,
    methods.RESOURCE_UNSUBSCRIBE: UnsubscribeResult,
    methods.RESOURCE_SUBSCRIPTIONS: SubscriptionsResult,
    methods.SPILL_LIST: SpillListResult,
    methods.SPILL_CLEAN: SpillCleanResult,
    methods.PROMPT_PREVIEW: PromptSnapshot,
    methods.PROMPT_USE: PromptUseResult,
    methods.PROMPT_DISCARD: PromptDiscardResult,
    methods.CALLS_LIST: CallsListResult,
    methods.CALLS_CANCEL: BackgroundCallView,
    methods.CALLS_RESULT: CallsResultResult,
    methods.APP_RESOURCE: AppResourceResult,
    methods.APP_CALL_TOOL: CallToolResult,
    methods.APP_OPEN: AppOpenResult,
}
"""Each request method's result type."""

VARIANTS: dict[str, tuple[object, ...]] = {methods.CONFIG_ADD: (ConfigAddDryRunResult,)}
"""Other result types of a method, chosen by a parameter (`mcp/config/add` with `dryRun`)."""

NOTIFICATIONS: dict[str, object] = {
    methods.SERVER_STATUS: StatusRow,
    methods.ACTIVE_TOOLS_CHANGED: ActiveToolsChanged,
    methods.MODEL_TOOL_CHANGED: ModelToolChangedParams,
    methods.CATALOG_CHANGED: CatalogChangedParams,
    methods.RESOURCE_UPDATED: ResourceUpdatedParams,
    methods.WATCHES_CLEARED: WatchesClearedParams,
    methods.APPROVAL_REQUIRED: ApprovalRequiredParams,
    methods.SERVER_LOG: ServerLogParams,
    methods.ELICITATION_COMPLETE: ElicitationCompleteParams,
    methods.CALL_BACKGROUND: BackgroundCallView,
    methods.CALL_PROGRESS: BackgroundCallView,
    methods.CALL_FINISHED: BackgroundCallView,
}
"""Each notification's payload type."""
