"""Every custom JSON-RPC method and notification the sidecar speaks.

`docs/protocol.md` documents each of these; a test fails when one is missing there, and the
editor clients mirror this table.
"""

from __future__ import annotations

# Requests, client to sidecar.
STATUS = "mcp/status"
SERVER_GET = "mcp/server/get"
SERVER_TOOLS = "mcp/server/tools"
SERVER_RECONNECT = "mcp/server/reconnect"
SERVER_LOGS = "mcp/server/logs"
ACTIVATE = "mcp/activate"
ACTIVE_TOOLS = "mcp/activeTools"
CALL_TOOL = "mcp/callTool"
DISCOVER = "mcp/discover"
SERVER_REFRESH = "mcp/server/refresh"
MODEL_TOOL_DEFINITION = "mcp/modelTool/definition"
MODEL_TOOL_INVOKE = "mcp/modelTool/invoke"
SESSION_END = "mcp/session/end"
PROFILE = "mcp/profile"
COMMAND = "mcp/command"
COMMAND_SPEC = "mcp/commandSpec"
CONFIG_ADD = "mcp/config/add"
CONFIG_REMOVE = "mcp/config/remove"
CONFIG_SET_ENABLED = "mcp/config/setEnabled"
CONFIG_RELOAD = "mcp/config/reload"
CONFIG_IMPORT = "mcp/config/import"
WORKSPACE_SET_TRUSTED = "mcp/workspace/setTrusted"
WORKSPACE_APPROVE = "mcp/workspace/approve"
AUTH_LOGIN = "mcp/auth/login"
AUTH_COMPLETE_LOGIN = "mcp/auth/completeLogin"
AUTH_LOGOUT = "mcp/auth/logout"
READ = "mcp/read"
COMPLETE = "mcp/complete"
RESOURCE_SUBSCRIBE = "mcp/resource/subscribe"
RESOURCE_UNSUBSCRIBE = "mcp/resource/unsubscribe"
RESOURCE_SUBSCRIPTIONS = "mcp/resource/subscriptions"
SPILL_LIST = "mcp/spill/list"
SPILL_CLEAN = "mcp/spill/clean"
PROMPT_PREVIEW = "mcp/prompt/preview"
PROMPT_USE = "mcp/prompt/use"
PROMPT_DISCARD = "mcp/prompt/discard"
CALLS_LIST = "mcp/calls/list"
CALLS_CANCEL = "mcp/calls/cancel"
CALLS_RESULT = "mcp/calls/result"
APP_RESOURCE = "mcp/app/resource"
APP_CALL_TOOL = "mcp/app/callTool"
APP_OPEN = "mcp/app/open"

REQUESTS: tuple[str, ...] = (
    STATUS,
    SERVER_GET,
    SERVER_TOOLS,
    SERVER_RECONNECT,
    SERVER_LOGS,
    ACTIVATE,
    ACTIVE_TOOLS,
    CALL_TOOL,
    DISCOVER,
    SERVER_REFRESH,
    MODEL_TOOL_DEFINITION,
    MODEL_TOOL_INVOKE,
    SESSION_END,
    PROFILE,
    COMMAND,
    COMMAND_SPEC,
    CONFIG_ADD,
    CONFIG_REMOVE,
    CONFIG_SET_ENABLED,
    CONFIG_RELOAD,
    CONFIG_IMPORT,
    WORKSPACE_SET_TRUSTED,
    WORKSPACE_APPROVE,
    AUTH_LOGIN,
    AUTH_COMPLETE_LOGIN,
    AUTH_LOGOUT,
    READ,
    COMPLETE,
    RESOURCE_SUBSCRIBE,
    RESOURCE_UNSUBSCRIBE,
    RESOURCE_SUBSCRIPTIONS,
    SPILL_LIST,
    SPILL_CLEAN,
    PROMPT_PREVIEW,
    PROMPT_USE,
    PROMPT_DISCARD,
    CALLS_LIST,
    CALLS_CANCEL,
    CALLS_RESULT,
    APP_RESOURCE,
    APP_CALL_TOOL,
    APP_OPEN,
)

EXECUTE_COMMAND = "mcp.command"
"""The `workspace/executeCommand` command that runs one `/mcp` line (for generic LSP clients)."""

# Notifications, sidecar to client.
SERVER_STATUS = "mcp/serverStatus"
ACTIVE_TOOLS_CHANGED = "mcp/activeToolsChanged"
CATALOG_CHANGED = "mcp/catalogChanged"
RESOURCE_UPDATED = "mcp/resourceUpdated"
WATCHES_CLEARED = "mcp/watchesCleared"
APPROVAL_REQUIRED = "mcp/approvalRequired"
MODEL_TOOL_CHANGED = "mcp/modelToolChanged"
ELICITATION_COMPLETE = "mcp/elicitationComplete"
SERVER_LOG = "mcp/serverLog"
CALL_BACKGROUND = "mcp/call/background"
CALL_PROGRESS = "mcp/call/progress"
CALL_FINISHED = "mcp/call/finished"

NOTIFICATIONS: tuple[str, ...] = (
    SERVER_STATUS,
    ACTIVE_TOOLS_CHANGED,
    CATALOG_CHANGED,
    RESOURCE_UPDATED,
    WATCHES_CLEARED,
    APPROVAL_REQUIRED,
    MODEL_TOOL_CHANGED,
    ELICITATION_COMPLETE,
    SERVER_LOG,
    CALL_BACKGROUND,
    CALL_PROGRESS,
    CALL_FINISHED,
)

# Requests, sidecar to client: a server asks the person (MCP elicitation and sampling), and an app
# in a loopback page asks to call a tool (`mcp/app/open`).
ELICIT = "mcp/elicit"
SAMPLE = "mcp/sample"
APP_CONFIRM_CALL = "mcp/app/confirmCall"

CLIENT_REQUESTS: tuple[str, ...] = (ELICIT, SAMPLE, APP_CONFIRM_CALL)
CANCEL_REQUEST = "$/cancelRequest"

DEFAULT_SESSION = "default"
