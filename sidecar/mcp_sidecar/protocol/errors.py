"""Diagnostics: the one shape every failure takes on the wire.

A diagnostic is `{code, operation, server?, message, hint}`. Codes come from the spec's
troubleshooting table; situations it lacks get their own snake_case code here, and each code
has exactly one hint, written for the person reading it. Messages are written by us, never
copied from an exception, an HTTP body or a server's stderr.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

# JSON-RPC error codes the sidecar answers with.
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REQUEST_FAILED = -32000
"""A request that was understood but failed; `data` carries the diagnostic."""

DiagnosticCode = Literal[
    "configuration_invalid",
    "authentication_required",
    "permission_denied",
    "credential_store_unavailable",
    "secret_lookup_failed",
    "connection_failed",
    "timeout",
    "protocol_error",
    "tool_changed",
    "tool_error",
    "resource_invalid",
    "resource_not_found",
    "resources_unsupported",
    "completions_unsupported",
    "completion_invalid",
    "subscriptions_unsupported",
    "subscription_limit",
    "catalog_changed",
    "oauth_failed",
    "oauth_issuer_changed",
    "callback_unavailable",
    "busy",
    "cancelled",
    "operation_failed",
    "invalid_params",
    "server_not_found",
    "server_disabled",
    "tool_not_found",
    "tool_not_active",
    "not_supported",
    "command_invalid",
    "server_exists",
    "project_untrusted",
    "trust_required",
    "config_conflict",
    "config_write_failed",
    "import_invalid",
    "prompt_not_found",
    "prompt_invalid",
    "prompt_unsupported",
    "prompt_too_large",
    "preview_not_found",
    "call_not_found",
    "login_not_found",
    "oauth_refused",
    "directory_unsafe",
    "catalog_entry_invalid",
    "interactive_required",
    "elicitation_required",
    "server_starts_itself",
    "engine_restarted",
    "profile_not_found",
    "not_in_profile",
    "apps_not_offered",
    "app_not_declared",
    "app_resource_invalid",
    "app_call_refused",
]
"""Every diagnostic code; each has exactly one entry in `HINTS` (a unit test checks both ways)."""


class DiagnosticJson(TypedDict):
    """A diagnostic on the wire: in `data` of a failed request, and nested in results."""

    code: DiagnosticCode
    operation: str
    server: NotRequired[str]
    message: str
    hint: str
    usage: NotRequired[str]
    """The command's usage text, on `command_invalid` diagnostics of `mcp/command`."""
    nearby: NotRequired[list[str]]
    """Exact ids to retry with, on `mcp/callTool` with `activate` when the id did not load."""


HINTS: dict[DiagnosticCode, str] = {
    # From the spec's troubleshooting table.
    "configuration_invalid": (
        "Check JSON syntax, supported fields, transport type and required environment variables, "
        "then reload the configuration."
    ),
    "authentication_required": "Log in to the server (mcp login <server>), or check its Authorization header.",
    "permission_denied": "Check account permissions, OAuth scopes and the service's access policy.",
    "credential_store_unavailable": "Unlock or enable the OS keyring; Linux needs a Secret Service session.",
    "secret_lookup_failed": "Check the secret helper's installation, login, exit status, output and size.",
    "connection_failed": (
        "Check the server executable, working directory, endpoint, network and TLS configuration; "
        "the server log (mcp/server/logs) may say more."
    ),
    "timeout": "Check the server's responsiveness and the applicable time limit (timeoutMs).",
    "protocol_error": "Check the server's MCP compatibility and the `protocol` setting (auto or legacy).",
    "tool_changed": (
        "Check the server's tool filters and activate the exact tool again for its current schema; "
        "reload if the connection configuration changed."
    ),
    "tool_error": "Check the server's tool result and inputs; verify the outcome before retrying.",
    "resource_invalid": "Use an exact absolute resource URI from discovery or a tool-returned link.",
    "resource_not_found": "Refresh resource metadata or obtain a new link.",
    "resources_unsupported": "Use the server's tools instead, or choose a resource-capable server.",
    "completions_unsupported": "Supply known template values; ask the user when a value is missing.",
    "completion_invalid": "Use an advertised template variable and a string prefix.",
    "subscriptions_unsupported": "Choose a server with subscription support, or read the resource when needed.",
    "subscription_limit": "Remove a watch before adding another; the limit is 50 per connection.",
    "catalog_changed": "Retry discovery (or the same request) in a moment, once the server's catalog settles.",
    "oauth_failed": (
        "Check browser access to the callback, and the client the server expects "
        "(oauthClientId, oauthClientSecret, oauthClientMetadataUrl)."
    ),
    "oauth_issuer_changed": "Verify the authorization-server change, then log out and log in again.",
    "callback_unavailable": "Another process uses the callback port; change oauthCallbackPort or use --no-browser.",
    "busy": "Wait for the running discovery to finish before reconnecting.",
    "cancelled": "Retry when ready; verify any interrupted tool operation first.",
    "operation_failed": "An unclassified failure; inspect the server's status and configuration.",
    # Our own, for situations the table lacks (listed in docs/troubleshooting.md).
    "invalid_params": "Check the request against docs/protocol.md.",
    "server_not_found": "Check the server name with mcp/status; names are case-sensitive.",
    "server_disabled": "Enable the server first (mcp enable <server>).",
    "tool_not_found": "Use an exact tool id from discovery or mcp/server/tools.",
    "tool_not_active": "Activate the tool in this session with mcp/activate before calling it.",
    "not_supported": "This version of the sidecar does not offer this operation yet; see docs/protocol.md.",
    "command_invalid": "Check the command against its usage (mcp help <command>); quote values with spaces.",
    "server_exists": "Choose another name, or pass --replace to replace the definition or override the other scope.",
    "project_untrusted": "Trust the workspace (trustedWorkspace, or --trust-project on the CLI) or use --scope global.",
    "trust_required": (
        "Its definition in the project's .mcp.json is new or changed since it was approved: review what it runs "
        "and approve it (editors ask; scripts call mcp/workspace/approve; CLI subcommands approve with "
        "--trust-project)."
    ),
    "config_conflict": "Make the global and project configuration separate files, then edit by scope.",
    "config_write_failed": "Check the configuration directory's permissions and free space, then retry.",
    "import_invalid": "Check the file's path and format: mcpServers JSON, VS Code `servers` JSON or Codex TOML.",
    "prompt_not_found": "Use an exact prompt name from discovery (kind prompts); refresh the server's metadata.",
    "prompt_invalid": "Supply every required argument of the prompt, strings only, nothing it does not declare.",
    "prompt_unsupported": "Only text and embedded text resources in user or assistant messages can be previewed.",
    "prompt_too_large": "Prompts are refused whole, never truncated; use shorter arguments or another prompt.",
    "preview_not_found": "Preview the prompt again: a preview is used once; discard, reload and disconnection end it.",
    "call_not_found": (
        "List the background calls: a result is delivered once, and the session's end releases its calls."
    ),
    "login_not_found": "Start the login again (mcp login <server> --no-browser); a pending login lasts 10 minutes.",
    "oauth_refused": (
        "The server's OAuth setup breaks a rule the sidecar enforces (HTTPS, PKCE S256, no private or "
        "metadata addresses, resource metadata on the server's origin, DPoP or client secrets as "
        "configured); its operator must fix it."
    ),
    "directory_unsafe": (
        "The sidecar's spill or cache directory must be a real directory owned by you: remove the link or "
        "the other user's directory (the sidecar recreates it, private) or set MCP_SIDECAR_HOME elsewhere."
    ),
    "catalog_entry_invalid": (
        "The server must rename the entry (1 to 128 ASCII letters, digits, `_`, `-` or `.`), remove control "
        "characters from its URI, or nest its schema at most 64 levels deep; retrying or refreshing will not help. "
        "For tools whose model names collide, rename one of their servers in the configuration."
    ),
    "interactive_required": (
        "Watches need an interactive client: editors send initializationOptions.interactive = true; "
        "scripts read the resource when needed instead."
    ),
    "elicitation_required": (
        "Finish the step the server opened in the browser (the editor showed its address), then call the "
        "tool again; nothing was retried."
    ),
    "server_starts_itself": (
        "mcp-sidecar cannot be one of its own servers: remove the definition, or keep the gateway's definition "
        "in a file mcp-sidecar does not read (for Claude Code, `claude mcp add --scope local` or `--scope user` "
        "rather than the project's .mcp.json); see docs/gateway.md."
    ),
    "engine_restarted": (
        "The sidecar's engine stopped and a new one took over; nothing was retried. Send the request again if "
        "it is still wanted (a tool call may or may not have reached its server)."
    ),
    "profile_not_found": (
        "Check the profile's name with /mcp profile (profiles are defined under `profiles` in the global "
        "or a trusted project mcp.json), or clear it with /mcp profile --clear."
    ),
    "not_in_profile": (
        "The chosen profile does not search this server: choose a profile that does (/mcp profile NAME), "
        "or clear it (/mcp profile --clear)."
    ),
    "apps_not_offered": (
        "Declare MCP Apps in initializationOptions.mcpCapabilities "
        '(extensions: {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}).'
    ),
    "app_not_declared": "Open the app a tool of that server names (the ui.resourceUri of its tool).",
    "app_call_refused": "An app may call only its own server's tools that allow apps (visibility with app).",
    "app_resource_invalid": (
        "Only the server can fix its app: one HTML document served as text/html;profile=mcp-app, at most 4 MiB."
    ),
}

# With a server, these hints name it, so the fix can be copied as it is.
SERVER_HINTS: dict[DiagnosticCode, str] = {
    "authentication_required": (
        "Run mcp-sidecar login {server} (in an editor: /mcp login {server}), or check its Authorization header."
    ),
    "permission_denied": (
        "Check account permissions, OAuth scopes and the service's access policy; to ask for the missing "
        "scopes, run mcp-sidecar login {server} (in an editor: /mcp login {server})."
    ),
}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: DiagnosticCode
    operation: str
    message: str
    server: str | None = None
    hint: str = ""
    usage: str | None = None
    """The command's usage text, on `command_invalid` diagnostics of `mcp/command`."""
    nearby: tuple[str, ...] | None = None
    """Exact ids to retry with, on the activation diagnostics of `mcp/callTool` with `activate`."""

    def to_json(self) -> DiagnosticJson:
        out: DiagnosticJson
        if self.server is not None:
            out = {
                "code": self.code,
                "operation": self.operation,
                "server": self.server,
                "message": self.message,
                "hint": self.hint,
            }
        else:
            out = {"code": self.code, "operation": self.operation, "message": self.message, "hint": self.hint}
        if self.usage is not None:
            out["usage"] = self.usage
        if self.nearby is not None:
            out["nearby"] = list(self.nearby)
        return out

    def render(self) -> str:
        prefix = f"{self.server}: " if self.server else ""
        return f"{prefix}[{self.code}] {self.message} {self.hint}".rstrip()


def diagnostic(code: DiagnosticCode, operation: str, message: str, server: str | None = None) -> Diagnostic:
    """The only constructor of diagnostics: it attaches the code's hint."""
    if code not in HINTS:
        raise ValueError(f"unknown diagnostic code {code!r}")
    return Diagnostic(code=code, operation=operation, message=message, server=server, hint=hint_of(code, server))


def hint_of(code: DiagnosticCode, server: str | None = None) -> str:
    """The code's hint; for a few codes, naming the server when there is one."""
    template = SERVER_HINTS.get(code) if server else None
    return template.format(server=_command_word(server)) if template and server else HINTS[code]


def _command_word(word: str) -> str:
    """A server name as one shell word (names are configuration keys and may hold anything)."""
    import shlex

    return shlex.quote(word)


class SidecarError(Exception):
    """A failure that reaches the client as a diagnostic."""

    def __init__(self, diag: Diagnostic, rpc_code: int = REQUEST_FAILED) -> None:
        super().__init__(diag.message)
        self.diagnostic = diag
        self.rpc_code = rpc_code


def fail(code: DiagnosticCode, operation: str, message: str, server: str | None = None) -> SidecarError:
    return SidecarError(diagnostic(code, operation, message, server))


def refused_disabled(operation: str, server: str, approval_required: bool = False) -> SidecarError:
    """A request for a disabled server; one kept disabled until its definition is approved says so."""
    if approval_required:
        return fail(
            "trust_required",
            operation,
            "This project server waits for approval, so it does not run.",
            server,
        )
    return fail("server_disabled", operation, "The server is disabled.", server)


def outside_profile(operation: str, server: str, profile: str | None) -> SidecarError:
    """A request for a server the client's profile does not search."""
    return fail("not_in_profile", operation, f"Server {server!r} is not in profile {profile!r}.", server)


def invalid_params(operation: str, message: str) -> SidecarError:
    return SidecarError(diagnostic("invalid_params", operation, message), rpc_code=INVALID_PARAMS)


def command_invalid(operation: str, message: str, usage: str) -> SidecarError:
    """A command line that does not parse: invalid params, with the usage text to show."""
    diag = diagnostic("command_invalid", operation, message)
    return SidecarError(
        Diagnostic(diag.code, diag.operation, diag.message, hint=diag.hint, usage=usage), rpc_code=INVALID_PARAMS
    )
