--- Method and notification names of the sidecar's JSON-RPC protocol.
--- Mirrors sidecar/mcp_sidecar/protocol/methods.py and docs/protocol.md;
--- tests/unit/test_nvim_protocol.py fails when they drift apart.
local M = {}

-- Requests, client to sidecar (documented in docs/protocol.md).
M.requests = {
  status = "mcp/status",
  server_get = "mcp/server/get",
  server_tools = "mcp/server/tools",
  server_reconnect = "mcp/server/reconnect",
  server_logs = "mcp/server/logs",
  server_refresh = "mcp/server/refresh",
  activate = "mcp/activate",
  active_tools = "mcp/activeTools",
  call_tool = "mcp/callTool",
  discover = "mcp/discover",
  model_tool_definition = "mcp/modelTool/definition",
  model_tool_invoke = "mcp/modelTool/invoke",
  session_end = "mcp/session/end",
  profile = "mcp/profile",
  command = "mcp/command",
  command_spec = "mcp/commandSpec",
  config_add = "mcp/config/add",
  config_remove = "mcp/config/remove",
  config_set_enabled = "mcp/config/setEnabled",
  config_reload = "mcp/config/reload",
  config_import = "mcp/config/import",
  workspace_set_trusted = "mcp/workspace/setTrusted",
  workspace_approve = "mcp/workspace/approve",
  auth_login = "mcp/auth/login",
  auth_complete_login = "mcp/auth/completeLogin",
  auth_logout = "mcp/auth/logout",
  read = "mcp/read",
  complete = "mcp/complete",
  resource_subscribe = "mcp/resource/subscribe",
  resource_unsubscribe = "mcp/resource/unsubscribe",
  resource_subscriptions = "mcp/resource/subscriptions",
  spill_list = "mcp/spill/list",
  spill_clean = "mcp/spill/clean",
  prompt_preview = "mcp/prompt/preview",
  prompt_use = "mcp/prompt/use",
  prompt_discard = "mcp/prompt/discard",
  calls_list = "mcp/calls/list",
  calls_cancel = "mcp/calls/cancel",
  calls_result = "mcp/calls/result",
  app_resource = "mcp/app/resource",
  app_call_tool = "mcp/app/callTool",
  app_open = "mcp/app/open",
}

-- Notifications, sidecar to client (documented in docs/protocol.md).
M.notifications = {
  server_status = "mcp/serverStatus",
  catalog_changed = "mcp/catalogChanged",
  active_tools_changed = "mcp/activeToolsChanged",
  resource_updated = "mcp/resourceUpdated",
  watches_cleared = "mcp/watchesCleared",
  approval_required = "mcp/approvalRequired",
  model_tool_changed = "mcp/modelToolChanged",
  elicitation_complete = "mcp/elicitationComplete",
  server_log = "mcp/serverLog",
  call_background = "mcp/call/background",
  call_progress = "mcp/call/progress",
  call_finished = "mcp/call/finished",
}

-- Requests, sidecar to client: a server asks the person, an app asks to call a tool (documented in docs/protocol.md).
M.client_requests = {
  elicit = "mcp/elicit",
  sample = "mcp/sample",
  app_confirm_call = "mcp/app/confirmCall",
}

-- LSP notifications the plugin handles besides the sidecar's own.
M.lsp = {
  progress = "$/progress",
  cancel_request = "$/cancelRequest",
  did_change_workspace_folders = "workspace/didChangeWorkspaceFolders",
}

--- The `workspace/executeCommand` command that runs one `/mcp` line.
M.execute_command = "mcp.command"

M.default_session = "default"

-- JSON-RPC error codes the plugin tells apart.
M.errors = {
  method_not_found = -32601,
  invalid_params = -32602,
  request_failed = -32000,
}

--- Every name by key, request or notification: `P.m.read` is "mcp/read".
M.m = setmetatable({}, {
  __index = function(_, key)
    return M.requests[key]
      or M.notifications[key]
      or M.client_requests[key]
      or M.lsp[key]
      or error("mcp_sidecar: unknown method " .. key)
  end,
})

return M
