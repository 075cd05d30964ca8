// The sidecar's JSON-RPC protocol, typed for this extension.
// Mirrors sidecar/mcp_sidecar/protocol/methods.py and docs/protocol.md (the wire contract);
// src/test/unit/protocol.test.ts fails when a method or notification is added to either
// without being mirrored here, or mirrored here without being documented.
// Shapes list the fields the extension reads; the sidecar may send more.
import { NotificationType, RequestType } from "vscode-languageserver-protocol";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

// ---------------------------------------------------------------- shared shapes

export interface Diagnostic {
  code: string;
  operation: string;
  server?: string;
  message: string;
  hint: string;
  usage?: string;
  /** On `mcp/callTool` with `activate`: exact ids to retry with. */
  nearby?: string[];
}

/**
 * A server's icon that passed the sidecar's rules: a `data:` image URI (PNG, JPEG, GIF, WebP,
 * SVG; at most 64 KiB) or an `https:` URL (at most 2,048 printable ASCII characters); at most
 * four per entry. Render it as an image only (an SVG can hold script: never as a document).
 */
export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: "light" | "dark";
}

/** `needs_login`: the last connection attempt failed with `authentication_required`; a login fixes it. */
export type ServerState = "idle" | "connecting" | "connected" | "disabled" | "failed" | "needs_login";

export interface CatalogCounts {
  tools: number | null;
  resources: number | null;
  templates: number | null;
  prompts: number | null;
}

export interface StatusRow {
  name: string;
  scope: string;
  transport: string;
  state: ServerState;
  description: string | null;
  protocolVersion: string | null;
  catalog: CatalogCounts | null;
  catalogSource: "live" | "cache" | null;
  loaded: number;
  lastDiagnostic: Diagnostic | null;
  /** A project definition that is new or changed on disk and waits for the person's approval. */
  approvalRequired: boolean;
  /**
   * How many clients use this server's connection (its process, when it runs), this one included:
   * 1 in a sidecar of its own. Absent from sidecars that predate the engine.
   */
  sharedBy?: number;
  /** The server's own icons (`serverInfo.icons`), once it connected and declared valid ones. */
  icons?: Icon[];
  /**
   * What the tools its filters expose cost a model's context together, estimated in tokens
   * (`StatusResult.tokens.tokenizer`); null before its catalog was fetched and counted.
   */
  tokens: number | null;
}

/**
 * A project server definition (from the workspace's `.mcp.json`) that stays disabled until the
 * editor approves exactly this `definitionHash`: never approved yet (`new`, also at the first
 * sight of a trusted workspace) or `changed` since. `summary` is one line of what would run,
 * never cut: `command args (cwd: X; env: NAME=!cmd, REF=${VAR}, TOKEN=<literal hidden>;
 * also sets: roots=false; changed: args, env.TOKEN)` or `url (headers: ...; OAuth scopes: a b;
 * ...)`; only what looks like a credential is masked; invisible characters are escaped.
 */
export interface PendingApproval {
  server: string;
  change: "new" | "changed";
  definitionHash: string;
  /** `profile` for a project profile (its `server` is `profile:NAME`). */
  transport: "stdio" | "http" | "profile";
  summary: string;
  /** For `changed`: the fields that differ from the approved definition (`args`, `env.TOKEN`, `env.X (removed)`). Absent from older sidecars. */
  changedFields?: string[];
}

export interface ToolDefinition {
  id: string;
  modelName: string;
  server: string;
  name: string;
  title?: string | null;
  description?: string | null;
  inputSchema: JsonObject;
  outputSchema?: JsonObject | null;
  annotations?: JsonObject | null;
  icons?: Icon[];
  /** Its definition's cost to a model's context, estimated in tokens; absent without the tokenizer. */
  tokens?: number;
  ui?: ToolUi;
}

/** MCP Apps (SEP-1865): a tool's app (`mcp/app/resource` serves it) and who may call it. */
export interface ToolUi {
  resourceUri?: string;
  visibility: ("model" | "app")[];
}

export interface Watch {
  server: string;
  uri: string;
  changed: boolean;
  updates: number;
  subscribedAt: number;
  updatedAt: number | null;
}

export interface ReloadSummary {
  applied: boolean;
  added: string[];
  removed: string[];
  changed: string[];
  unchanged: string[];
  deactivated: { session: string; removed: string[]; reason: string }[];
  diagnostics: Diagnostic[];
}

export interface Spill {
  path: string;
  bytes: number;
}

export interface DisplayBlock {
  index?: number;
  field?: string;
  format: "json";
  text: string;
}

export interface ContentBlock {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  resource?: { uri: string; mimeType?: string; text?: string };
}

// ---------------------------------------------------------------- params and results

export interface ServerParams {
  server: string;
}

/** One client attached to the engine: its kind and workspace, nothing else of it. */
export interface EngineClient {
  /** An editor (`lsp`), a host's stdio gateway (`mcp`) or a CLI run (`cli`). */
  kind: "lsp" | "mcp" | "cli";
  workspace: string | null;
  /** When it attached (ISO 8601, UTC). */
  since: string;
  /** The client asking: this window. */
  thisClient: boolean;
}

/** The per-user engine serving this window (docs/engine.md). */
export interface EngineStatus {
  pid: number;
  version: string;
  /** When it started (ISO 8601, UTC). */
  since: string;
  uptimeSeconds: number;
  /** In the order they attached. */
  clients: EngineClient[];
}

export interface StatusResult {
  servers: StatusRow[];
  configFiles: { scope: string; path: string; exists: boolean; read: boolean }[];
  trustedWorkspace: boolean;
  diagnostics: Diagnostic[];
  /** Absent from sidecars that predate project approvals. */
  pendingApprovals?: PendingApproval[];
  /** The engine serving this window; null in a sidecar of its own; absent from sidecars that predate it. */
  engine?: EngineStatus | null;
  /** The profile this window chose, or null; absent from sidecars that predate profiles. */
  profile?: string | null;
  /** The profiles it can choose (defined, valid, approved); absent from sidecars that predate profiles. */
  profiles?: string[];
  /** What the tool definitions cost a model's context; null when the tokenizer's package is not installed. */
  tokens: ContextTokens | null;
  /** The session budget this window's sessions keep to; null when off (the default). */
  budget: SessionBudget | null;
}

/** What the tool definitions cost a model's context, estimated with one tokenizer (docs/context.md). */
export interface ContextTokens {
  /** `llama-2-bpe`: Llama 2's BPE, from the `wordllama` package. */
  tokenizer: string;
  /** Every enabled server's exposed tools together (`counted` servers): a host connected to each. */
  allTools: number;
  /** How many enabled servers `allTools` covers (the others' catalogs were not fetched or counted yet). */
  counted: number;
  /** How many servers are enabled. */
  enabled: number;
  /** `mcp_tools` itself; null until a count loaded the counter. */
  modelTool: number | null;
}

export interface ServerGetResult {
  name: string;
  scope: string;
  overridesGlobal: boolean;
  description: string | null;
  disabled: boolean;
  transport: string;
  protocol: { configured: string; negotiated: string | null };
  filters: JsonObject;
  timeouts: { requestMs: number; toolCallMs: number };
  /** Field names only: every value reads `hidden`. */
  connection: JsonObject;
  authentication: {
    kind: string;
    credentials: string;
    tokensStored: boolean | null;
    credentialStore: string | null;
    /** OAuth only: how the sidecar identifies itself to the authorization server (never the secret). */
    client?: "pre-registered" | "confidential" | "metadata document" | "dynamic";
    /** OAuth only: tokens are bound to a DPoP key (`oauthDpop`). */
    dpop?: boolean;
  };
  status: StatusRow;
  [key: string]: unknown;
}

export interface ServerToolsResult {
  server: string;
  source: string;
  hiddenByFilters: number;
  tools: ToolDefinition[];
  refused: { name: string; diagnostic: Diagnostic }[];
  /** The listed tools together, estimated in tokens; null without the tokenizer. */
  tokens: number | null;
}

export interface ServerLogsResult {
  server: string;
  lines: { time: number; text: string }[];
  dropped: number;
}

export interface ServerRefreshResult {
  server: string;
  status: StatusRow;
  toolsSource: string;
  diagnostics: { kind: string; diagnostic: Diagnostic }[];
}

export interface ActivateParams {
  ids: string[];
  session?: string;
}

export interface ActivationEntry {
  id: string;
  status: "loaded" | "already loaded" | "not loaded";
  reason?: string;
  nearby?: string[];
  diagnostic?: Diagnostic;
}

export interface ActivateResult {
  session: string;
  results: ActivationEntry[];
  tools: ToolDefinition[];
  text: string;
  /** What the tools this activation loaded added, and the session's total, in estimated tokens; null without the tokenizer. */
  tokens: { added: number; session: number } | null;
  /** The ids the session budget deactivated to make room (least recently used first); `text` names them. */
  evicted: string[];
  /** The session budget; null when off. */
  budget: SessionBudget | null;
  /** The tools this activation asked for exceed the budget on their own: active all the same. */
  overBudget: boolean;
}

/** The most tools, and the most tokens of tool definitions, a session keeps active; null: no limit. */
export interface SessionBudget {
  maxTools: number | null;
  maxTokens: number | null;
}

export interface SessionParams {
  session?: string;
}

export interface ActiveToolsResult {
  session: string;
  tools: ToolDefinition[];
  /** The session's active tools together, estimated in tokens; null without the tokenizer. */
  tokens: number | null;
  /** The session budget; null when off. */
  budget: SessionBudget | null;
}

export interface CallToolParams {
  id: string;
  arguments?: JsonObject;
  session?: string;
  /** Activate the tool into the session first, exactly as `mcp/activate` would. */
  activate?: boolean;
  /** A model reads the failure (a chat's call tool): the diagnostic's hint is written for it. */
  forModel?: boolean;
  /** LSP's WorkDoneProgressParams: the sidecar reports the call on it with `$/progress`. */
  workDoneToken?: string;
  /** Default true: past the client's threshold the call goes on in the background (`mcp/calls/*`). */
  background?: boolean;
}

export interface CallToolResult {
  id: string;
  server: string;
  tool: string;
  isError: boolean;
  content: ContentBlock[];
  structuredContent?: Json;
  truncated?: boolean;
  spill?: Spill;
  display?: DisplayBlock[];
  resourceLinks?: { uri: string; name: string; mimeType?: string; read: { method: string; params: JsonObject } }[];
  /** Only with `activate: true`. */
  activation?: { id: string; status: "loaded" | "already loaded" };
  /** Only when `isError`: a `tool_error` diagnostic (the content is the server's own text). */
  diagnostic?: Diagnostic;
  /** Only with an `elicitation_required` diagnostic: the URL steps the server asked for. */
  elicitations?: { elicitationId: string; url: string; action: "accept" | "decline" | "cancel"; completed: boolean }[];
  /** Only when there were some: how many occurrences of the server's own secrets became `***`. */
  redacted?: number;
  /** Only with `forModel: true`: the result as a model reads it (every block, sanitised). */
  text?: string;
  /** Only when the call went to the background: the call; its result comes from `mcp/calls/result`. */
  background?: BackgroundCallView;
}

export interface BackgroundCallView {
  callId: string;
  /** The tool id as called, `server.tool`. */
  tool: string;
  session: string;
  status: "running" | "completed" | "failed" | "cancelled";
  startedAt: string;
  endedAt?: string;
  progress?: { progress?: number; total?: number; message?: string };
}

export interface CallsParams {
  session?: string;
}

export interface CallsListResult {
  calls: BackgroundCallView[];
}

export interface CallIdParams {
  callId: string;
  /** `mcp/calls/result` only: seconds to wait for a running call (0 to 60, default 0). */
  wait?: number;
}

export interface CallsResultResult {
  call: BackgroundCallView;
  /** Once the call ended: its result, delivered once. */
  result?: CallToolResult;
  /** Once the call failed outright (a timeout, a lost connection): why. */
  diagnostic?: Diagnostic;
}

export type DiscoverKind = "all" | "tools" | "resources" | "prompts";

export interface DiscoverParams {
  query: string;
  kind?: DiscoverKind;
  server?: string;
  limit?: number;
  session?: string;
}

/** Which signal put a candidate where it is: an exact name, keywords (BM25F), meaning (embeddings). */
export interface Match {
  signals: ("exact" | "keyword" | "semantic")[];
  keywordRank?: number;
  semanticRank?: number;
  similarity?: number;
}

interface CandidateBase {
  server: string;
  name: string;
  title?: string | null;
  description: string;
  icons?: Icon[];
  next: { method: string; params: JsonObject };
  score: number;
  /** Present for a ranked query, not when browsing with an empty one. */
  match?: Match;
  /** Neither signal vouches for it: the nearest entry, not a match. */
  weak?: true;
}

export interface ToolCandidate extends CandidateBase {
  kind: "tool";
  id: string;
  required: string[];
  /** Active in the session with the definition the catalog has now: callable. */
  loaded: boolean;
  /** Active in the session, but the server's definition changed since: activate again. */
  changed?: boolean;
  /** The tool's MCP annotations (`readOnlyHint`, `destructiveHint`, ...), as the server sent them. */
  annotations?: JsonObject;
  /** What activating it adds to a model's context (its definition), estimated in tokens; absent without the tokenizer. */
  tokens?: number;
}

export interface ResourceCandidate extends CandidateBase {
  kind: "resource";
  uri: string;
  mimeType?: string | null;
}

export interface TemplateCandidate extends CandidateBase {
  kind: "template";
  label: "template";
  uriTemplate: string;
  variables: string[];
  mimeType?: string | null;
}

export interface PromptArgument {
  name: string;
  description?: string | null;
  required: boolean;
}

export interface PromptCandidate extends CandidateBase {
  kind: "prompt";
  arguments: PromptArgument[];
}

export type Candidate = ToolCandidate | ResourceCandidate | TemplateCandidate | PromptCandidate;

export interface DiscoverResult {
  query: string;
  kind: DiscoverKind;
  session: string;
  candidates: Candidate[];
  unavailable: { server: string; kind: string; diagnostic: Diagnostic }[];
  refused: RefusedEntry[];
  text: string;
  /** Present when `query` was longer than ranking reads: the part that was ranked. */
  rankedQuery?: string;
}

/** A catalog entry discovery left out: refused by its catalog (bad name or URI), or a tool whose model name collides. */
export interface RefusedEntry {
  server: string;
  kind: "tool" | "resource" | "template" | "prompt";
  name?: string;
  uri?: string;
  uriTemplate?: string;
  collidesWith?: string[];
  diagnostic: Diagnostic;
}

/** One enabled server in `mcp_tools`' server directory. */
export interface DirectoryEntry {
  name: string;
  /** The definition's `description`, else a summary of its cached tools, else empty. */
  summary: string;
  source: "description" | "catalog" | "none";
  /** The diagnostic code of a server that failed, needs a login or whose definition is broken. */
  unavailable?: string;
}

export interface ModelToolDefinition {
  name: string;
  /** The fixed description, then the server directory (`servers`, as text). */
  description: string;
  inputSchema: JsonObject;
  servers: DirectoryEntry[];
  /** `mcp_call`, the tool a chat calls activated tools with (`mcp/callTool` with `forModel`). */
  call: { name: string; description: string; inputSchema: JsonObject };
  /** This definition's cost to a model's context, estimated in tokens; null until a count loaded the counter, or without the tokenizer. */
  tokens: number | null;
}

/** `mcp/modelToolChanged`: a reload changed the definition; register this one instead. */
export interface ModelToolChangedParams {
  definition: ModelToolDefinition;
}

export interface SessionEndParams {
  session: string;
}

export interface SessionEndResult {
  session: string;
  /** The ids of the tools that were active in the session. */
  deactivated: string[];
  previewsDiscarded: number;
}

export interface ProfileParams {
  /** Absent: show; null: clear; a name: choose. */
  profile?: string | null;
  session?: string;
}

export interface ProfileJson {
  name: string;
  scope: string;
  description: string | null;
  /** null: every server. */
  servers: string[] | null;
  activate: string[];
  approvalRequired: boolean;
}

export interface ProfileResult {
  profile: ProfileJson | null;
  changed: boolean;
  profiles: ProfileJson[];
  activation: ActivateResult | null;
  deactivated: string[];
  diagnostics: Diagnostic[];
  text: string;
}

export interface ModelToolInvokeParams {
  arguments: JsonObject;
  session?: string;
  /** The registered description is fixed: begin the session's first query answer with the server directory. */
  includeDirectory?: boolean;
}

export interface ModelToolInvokeResult {
  text: string;
  isError: boolean;
  details: Json;
}

export interface CommandParams {
  line: string;
}

export interface CommandResult {
  command: string;
  data: Json;
  text: string;
}

export interface CommandSpecParams {
  command?: string;
}

export interface CommandOption {
  name: string;
  kind: "flag" | "value" | "multi";
  required: boolean;
  values: string[];
  placeholder: string | null;
}

export interface CommandPositional {
  name: string;
  completion: "server" | "command" | "file" | "tool" | "profile" | null;
  values: string[];
  /** May be left out (`tools NAME [TOOL]`); only the last positionals are. */
  optional: boolean;
}

export interface CommandEntry {
  name: string;
  usage: string;
  summary: string;
  options: CommandOption[];
  positionals: CommandPositional[];
  variadic: boolean;
  /** `config`: edits a configuration file; `status`: changes server rows; null: neither. */
  changes: "config" | "status" | null;
}

export interface CommandSpecResult {
  commands: CommandEntry[];
  servers: string[];
  scopes: string[];
  transports: string[];
}

export interface ConfigAddParams {
  scope: "global" | "project";
  server: string;
  /** One `mcpServers` entry; or `target` instead. */
  definition?: JsonObject;
  /** An http(s) URL or a stdio command line, split by the sidecar as `/mcp add` splits it. */
  target?: string;
  replace?: boolean;
}

export interface ConfigAddDryRunParams extends ConfigAddParams {
  dryRun: true;
}

export interface ConfigAddDryRunResult {
  dryRun: true;
  valid: boolean;
  server: string;
  scope: string;
  path: string | null;
  definition: JsonObject | null;
  action: "added" | "replaced" | null;
  overrides: "global" | null;
  overriddenBy: "project" | null;
  notes: string[];
  problems: { field: "target" | "server" | "definition" | "scope"; diagnostic: Diagnostic }[];
}

export interface ConfigAddResult {
  server: string;
  scope: string;
  path: string;
  action: "added" | "replaced";
  overrides: "global" | null;
  overriddenBy: "project" | null;
  notes: string[];
  reload: ReloadSummary;
}

export interface ConfigRemoveParams {
  scope: "global" | "project";
  server: string;
}

export interface ConfigRemoveResult {
  server: string;
  scope: string;
  path: string;
  remaining: string | null;
  notes: string[];
  reload: ReloadSummary;
}

export interface ConfigSetEnabledParams {
  server: string;
  enabled: boolean;
}

export interface ConfigSetEnabledResult {
  server: string;
  scope: string;
  path: string;
  enabled: boolean;
  changed: boolean;
  approvalRequired: boolean;
  deactivated: string[];
  reload: ReloadSummary;
}

export interface ConfigImportParams {
  file: string;
  scope: "global" | "project";
  select?: string[];
  confirm?: boolean;
  replace?: boolean;
}

export interface ImportServer {
  name: string;
  transport: string;
  importable: boolean;
  selected: boolean;
  connection: JsonObject;
  disabled: boolean;
  inlineValues: string[];
  placeholders: { field: string; variable: string; source: string; description: string | null }[];
  problems: string[];
  notes: string[];
  alreadyDefined: string[];
}

export interface ConfigImportResult {
  file: string;
  format: string;
  formatLabel: string;
  scope: string;
  path: string;
  written: boolean;
  imported: string[];
  servers: ImportServer[];
  reload?: ReloadSummary;
}

export interface ReadParams {
  server: string;
  uri?: string;
  template?: string;
  arguments?: { [name: string]: string | string[] };
}

export interface ReadResult {
  server: string;
  uri: string;
  template?: string;
  arguments?: { [name: string]: string | string[] };
  untrusted: boolean;
  truncated: boolean;
  spill?: Spill;
  contents: { uri: string; mimeType?: string; text?: string; blob?: string }[];
  display?: DisplayBlock[];
  /** Only when there were some: how many occurrences of the server's own secrets became `***`. */
  redacted?: number;
  text: string;
}

export interface CompleteParams {
  server: string;
  template?: string;
  prompt?: string;
  argument: { name: string; value: string };
  arguments?: { [name: string]: string };
}

export interface CompleteResult {
  server: string;
  template?: string;
  prompt?: string;
  argument: { name: string; value: string };
  values: string[];
  /** Server values left out for holding control or invisible characters (or a line break). */
  dropped: number;
  total?: number;
  hasMore?: boolean;
  untrusted: boolean;
  truncated: boolean;
  spill?: Spill;
  /** Only when there were some: how many occurrences of the server's own secrets became `***`. */
  redacted?: number;
  text: string;
}

export interface ResourceParams {
  server: string;
  uri: string;
}

/** `mcp/app/callTool`: an app's own call of a tool of its server (the server the app was read from). */
export interface AppCallParams {
  server: string;
  uri: string;
  name: string;
  arguments?: JsonObject;
}

/** `mcp/app/resource`: one MCP App's HTML document, checked by the sidecar; untrusted. */
export interface AppResourceResult {
  server: string;
  uri: string;
  mimeType: "text/html;profile=mcp-app";
  html: string;
  bytes: number;
  tools: string[];
  ui?: JsonObject;
  untrusted: true;
}

/** `mcp/app/open` (for clients without a webview, Neovim): the app on a loopback page in the browser. */
export interface AppOpenParams {
  server: string;
  uri: string;
  toolInput?: JsonObject;
  toolResult?: JsonObject;
}

export interface AppOpenResult {
  server: string;
  uri: string;
  url: string;
}

/** `mcp/app/confirmCall`: an app on a loopback page asks to call a tool; `{allow: true}` allows it. */
export interface AppConfirmCallParams {
  server: string;
  uri: string;
  name: string;
  arguments: JsonObject;
  requestId: string;
}

export interface SubscribeResult {
  watch: Watch;
  created: boolean;
}

export interface UnsubscribeResult {
  server: string;
  uri: string;
  removed: boolean;
}

export interface SubscriptionsResult {
  watches: Watch[];
  limitPerConnection: number;
}

export interface SpillListResult {
  directory: string;
  files: { path: string; bytes: number; modified: number }[];
  totalBytes: number;
}

export interface SpillCleanParams {
  olderThanDays?: number;
}

export interface SpillCleanResult {
  directory: string;
  removed: string[];
  freedBytes: number;
  kept: number;
}

export interface PromptPreviewParams {
  server: string;
  name: string;
  arguments?: { [name: string]: string };
  /** The session it belongs to: ending the session discards it (`mcp/session/end`). */
  session?: string;
}

export interface PromptMessage {
  index: number;
  role: "user" | "assistant";
  /** The embedded resource the text came from, if it came from one. */
  resource?: { uri: string; mimeType?: string };
  content: { type: "text"; text: string };
}

export interface PromptSnapshot {
  previewId: string;
  server: string;
  name: string;
  description?: string;
  messageCount: number;
  messages: PromptMessage[];
  untrusted: boolean;
  /** Only when there were some: how many occurrences of the server's own secrets became `***`. */
  redacted?: number;
  text: string;
}

export interface PreviewIdParams {
  previewId: string;
}

export interface PromptUseResult extends PromptSnapshot {
  accepted: true;
}

export interface PromptDiscardResult {
  previewId: string;
  server: string;
  name: string;
  discarded: true;
}

export interface SetTrustedParams {
  trusted: boolean;
}

export interface ApproveParams {
  approvals: { server: string; definitionHash: string }[];
}

export interface ApproveResult {
  approved: string[];
  notApproved: { server: string; reason: string }[];
  reload: ReloadSummary;
}

export interface LoginParams {
  server: string;
  noBrowser?: boolean;
  /**
   * The answer to a `needs_approval` result: its `extraScopes` (the login asks for them too), or
   * `[]` (the login goes without them and the sidecar drops the request). Absent: not asked yet.
   */
  approveScopes?: string[];
}

export interface LoginResult {
  server: string;
  /**
   * `needs_approval`: a tool call was refused for want of more scopes (403 insufficient_scope)
   * and the sidecar, having opened and sent nothing, waits for the person's answer, given by
   * calling `mcp/auth/login` again with `approveScopes`.
   */
  status: "completed" | "pending" | "needs_approval";
  /** Completed: the scopes granted. Needs approval: every scope the login would ask for, the extras included. */
  scopes?: string[];
  /** Needs approval: the scopes the server asked for beyond what the login had. */
  extraScopes?: string[];
  loginId?: string;
  authorizationUrl?: string;
  redirectUri?: string;
  /** Pending: how long the login waits for the pasted address. Needs approval: how long the request is kept. */
  expiresInSeconds?: number;
  text: string;
}

export interface CompleteLoginParams {
  loginId: string;
  callbackUrl: string;
}

export interface LogoutResult {
  server: string;
  removed: boolean;
  revocation: "accepted" | "unsupported" | "unconfirmed" | "none";
  text: string;
}

export interface CatalogChangedParams {
  server: string;
  kind: "tools" | "resources" | "prompts";
}

export interface ResourceUpdatedParams {
  server: string;
  uri: string;
  changed: true;
}

export interface WatchesClearedParams {
  server: string;
  uris: string[];
  reason: string;
}

export interface ApprovalRequiredParams {
  pending: PendingApproval[];
}

export interface ActiveToolsChangedParams {
  session: string;
  removed: string[];
  reason: string;
}

export interface ServerLogParams {
  server: string;
  /** `warning`, `error`, `critical`, `alert` or `emergency`. */
  level: string;
  logger?: string;
  /** The message's data on one line, sanitised, secrets redacted, at most 2,000 characters. */
  text: string;
}

export interface ElicitationCompleteParams {
  server: string;
  elicitationId: string;
}

// ---------------------------------------------------------------- requests, sidecar to client: params and results

/** What the editor can render for a server (`initializationOptions.mcpCapabilities`). */
export interface McpCapabilities {
  elicitation?: { form?: Record<string, never>; url?: Record<string, never> };
  sampling?: Record<string, never>;
  /** MCP Apps: `{"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}`. */
  extensions?: { [name: string]: { mimeTypes?: string[] } };
}

export interface ElicitFormParams {
  server: string;
  mode: "form";
  message: string;
  /** Checked and rebuilt by the sidecar: a flat object of primitive, enum and multi-select properties. */
  requestedSchema: JsonObject;
  /** The property names in the server's order. */
  order?: string[];
  /** This request's JSON-RPC id (what a `$/cancelRequest` names). */
  requestId?: string | number;
}

export interface ElicitUrlParams {
  server: string;
  mode: "url";
  message: string;
  url: string;
  /** The URL's host (punycode), for the person to read before consenting. */
  host: string;
  elicitationId?: string;
  requestId?: string | number;
}

export type ElicitParams = ElicitFormParams | ElicitUrlParams;

export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: JsonObject;
}

export interface SamplingContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  [key: string]: Json | undefined;
}

export interface SamplingMessage {
  role: "user" | "assistant";
  content: SamplingContent | SamplingContent[];
}

export interface SampleParams {
  server: string;
  messages: SamplingMessage[];
  maxTokens: number;
  systemPrompt?: string;
  modelPreferences?: JsonObject;
  temperature?: number;
  stopSequences?: string[];
  includeContext?: string;
  tools?: JsonObject[];
  toolChoice?: JsonObject;
  requestId?: string | number;
}

export interface SampleResult {
  role: "assistant";
  content: { type: "text"; text: string };
  model: string;
  stopReason?: string;
}

// ---------------------------------------------------------------- requests, client to sidecar

type Empty = Record<string, never>;

export const status = new RequestType<Empty, StatusResult, void>("mcp/status");
export const serverGet = new RequestType<ServerParams, ServerGetResult, void>("mcp/server/get");
export const serverTools = new RequestType<ServerParams, ServerToolsResult, void>("mcp/server/tools");
export const serverReconnect = new RequestType<ServerParams, StatusRow, void>("mcp/server/reconnect");
export const serverLogs = new RequestType<ServerParams, ServerLogsResult, void>("mcp/server/logs");
export const serverRefresh = new RequestType<ServerParams, ServerRefreshResult, void>("mcp/server/refresh");
export const activate = new RequestType<ActivateParams, ActivateResult, void>("mcp/activate");
export const activeTools = new RequestType<SessionParams, ActiveToolsResult, void>("mcp/activeTools");
export const callTool = new RequestType<CallToolParams, CallToolResult, void>("mcp/callTool");
export const discover = new RequestType<DiscoverParams, DiscoverResult, void>("mcp/discover");
export const modelToolDefinition = new RequestType<Empty, ModelToolDefinition, void>("mcp/modelTool/definition");
export const modelToolInvoke = new RequestType<ModelToolInvokeParams, ModelToolInvokeResult, void>(
  "mcp/modelTool/invoke",
);
export const sessionEnd = new RequestType<SessionEndParams, SessionEndResult, void>("mcp/session/end");
export const profile = new RequestType<ProfileParams, ProfileResult, void>("mcp/profile");
export const command = new RequestType<CommandParams, CommandResult, void>("mcp/command");
export const commandSpec = new RequestType<CommandSpecParams, CommandSpecResult, void>("mcp/commandSpec");
export const configAdd = new RequestType<ConfigAddParams, ConfigAddResult, void>("mcp/config/add");
/** `mcp/config/add` with `dryRun: true`: the same method, answering what would be written. */
export const configAddDryRun = new RequestType<ConfigAddDryRunParams, ConfigAddDryRunResult, void>("mcp/config/add");
export const configRemove = new RequestType<ConfigRemoveParams, ConfigRemoveResult, void>("mcp/config/remove");
export const configSetEnabled = new RequestType<ConfigSetEnabledParams, ConfigSetEnabledResult, void>(
  "mcp/config/setEnabled",
);
export const configReload = new RequestType<Empty, ReloadSummary, void>("mcp/config/reload");
export const configImport = new RequestType<ConfigImportParams, ConfigImportResult, void>("mcp/config/import");
export const workspaceSetTrusted = new RequestType<SetTrustedParams, ReloadSummary, void>("mcp/workspace/setTrusted");
export const workspaceApprove = new RequestType<ApproveParams, ApproveResult, void>("mcp/workspace/approve");
export const authLogin = new RequestType<LoginParams, LoginResult, void>("mcp/auth/login");
export const authCompleteLogin = new RequestType<CompleteLoginParams, LoginResult, void>("mcp/auth/completeLogin");
export const authLogout = new RequestType<ServerParams, LogoutResult, void>("mcp/auth/logout");
export const read = new RequestType<ReadParams, ReadResult, void>("mcp/read");
export const complete = new RequestType<CompleteParams, CompleteResult, void>("mcp/complete");
export const resourceSubscribe = new RequestType<ResourceParams, SubscribeResult, void>("mcp/resource/subscribe");
export const resourceUnsubscribe = new RequestType<ResourceParams, UnsubscribeResult, void>("mcp/resource/unsubscribe");
export const resourceSubscriptions = new RequestType<Empty, SubscriptionsResult, void>("mcp/resource/subscriptions");
export const spillList = new RequestType<Empty, SpillListResult, void>("mcp/spill/list");
export const spillClean = new RequestType<SpillCleanParams, SpillCleanResult, void>("mcp/spill/clean");
export const promptPreview = new RequestType<PromptPreviewParams, PromptSnapshot, void>("mcp/prompt/preview");
export const promptUse = new RequestType<PreviewIdParams, PromptUseResult, void>("mcp/prompt/use");
export const promptDiscard = new RequestType<PreviewIdParams, PromptDiscardResult, void>("mcp/prompt/discard");
export const callsList = new RequestType<CallsParams, CallsListResult, void>("mcp/calls/list");
export const callsCancel = new RequestType<CallIdParams, BackgroundCallView, void>("mcp/calls/cancel");
export const callsResult = new RequestType<CallIdParams, CallsResultResult, void>("mcp/calls/result");
export const appResource = new RequestType<ResourceParams, AppResourceResult, void>("mcp/app/resource");
export const appCallTool = new RequestType<AppCallParams, CallToolResult, void>("mcp/app/callTool");
export const appOpen = new RequestType<AppOpenParams, AppOpenResult, void>("mcp/app/open");

// ---------------------------------------------------------------- notifications, sidecar to client

export const serverStatus = new NotificationType<StatusRow>("mcp/serverStatus");
export const catalogChanged = new NotificationType<CatalogChangedParams>("mcp/catalogChanged");
export const resourceUpdated = new NotificationType<ResourceUpdatedParams>("mcp/resourceUpdated");
export const watchesCleared = new NotificationType<WatchesClearedParams>("mcp/watchesCleared");
export const activeToolsChanged = new NotificationType<ActiveToolsChangedParams>("mcp/activeToolsChanged");
export const approvalRequired = new NotificationType<ApprovalRequiredParams>("mcp/approvalRequired");
export const modelToolChanged = new NotificationType<ModelToolChangedParams>("mcp/modelToolChanged");
export const serverLog = new NotificationType<ServerLogParams>("mcp/serverLog");
export const elicitationComplete = new NotificationType<ElicitationCompleteParams>("mcp/elicitationComplete");
export const callBackground = new NotificationType<BackgroundCallView>("mcp/call/background");
export const callProgress = new NotificationType<BackgroundCallView>("mcp/call/progress");
export const callFinished = new NotificationType<BackgroundCallView>("mcp/call/finished");

// ---------------------------------------------------------------- requests, sidecar to client

export const elicit = new RequestType<ElicitParams, ElicitResult, void>("mcp/elicit");
export const sample = new RequestType<SampleParams, SampleResult, void>("mcp/sample");
export const appConfirmCall = new RequestType<AppConfirmCallParams, { allow: boolean }, void>("mcp/app/confirmCall");

/** Every request this file mirrors, for the protocol test. */
export const REQUESTS = [
  status,
  serverGet,
  serverTools,
  serverReconnect,
  serverLogs,
  serverRefresh,
  activate,
  activeTools,
  callTool,
  discover,
  modelToolDefinition,
  modelToolInvoke,
  sessionEnd,
  profile,
  command,
  commandSpec,
  configAdd,
  configRemove,
  configSetEnabled,
  configReload,
  configImport,
  workspaceSetTrusted,
  workspaceApprove,
  authLogin,
  authCompleteLogin,
  authLogout,
  read,
  complete,
  resourceSubscribe,
  resourceUnsubscribe,
  resourceSubscriptions,
  spillList,
  spillClean,
  promptPreview,
  promptUse,
  promptDiscard,
  callsList,
  callsCancel,
  callsResult,
  appResource,
  appCallTool,
  appOpen,
].map((type) => type.method);

/** Every notification this file mirrors, for the protocol test. */
export const NOTIFICATIONS = [
  serverStatus,
  catalogChanged,
  resourceUpdated,
  watchesCleared,
  activeToolsChanged,
  approvalRequired,
  modelToolChanged,
  serverLog,
  elicitationComplete,
  callBackground,
  callProgress,
  callFinished,
].map((type) => type.method);

/** Every request the sidecar sends this client (a server asks the person), for the protocol test. */
export const CLIENT_REQUESTS = [elicit, sample, appConfirmCall].map((type) => type.method);

/** The `workspace/executeCommand` command that runs one `/mcp` line (generic LSP clients). */
export const EXECUTE_COMMAND = "mcp.command";

export const DEFAULT_SESSION = "default";

/** JSON-RPC error codes the extension tells apart. */
export const ErrorCodes = {
  methodNotFound: -32601,
  invalidParams: -32602,
  requestFailed: -32000,
  requestCancelled: -32800,
} as const;
