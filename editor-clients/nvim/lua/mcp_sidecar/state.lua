--- What the plugin knows between requests: server rows (from mcp/status and mcp/serverStatus)
--- and tool ids seen in results, for the statusline and command-line completion.
local M = {}

---@type table<string, table> server name -> status row
M.servers = {}
---@type table<string, boolean> tool id -> true
M.tool_ids = {}
---@type table<string, boolean> "server uri" -> true (watched resources reported by the sidecar)
M.watched = {}
---@type table<string, mcp_sidecar.PendingApproval> server -> the changed project definition waiting for approval
M.pending = {}
M.sidecar = "stopped" ---@type "stopped"|"running"|"missing"
---@type string? the profile this Neovim chose (`mcp/status`'s `profile`; opts.profile, :Mcp profile NAME)
M.profile = nil
---@type {session: string, count: integer, tokens: integer?}? the session's active tools (context.lua)
M.active = nil
---@type table? the sidecar's `mcp/commandSpec` answer: its `/mcp` commands, options and completions
M.command_spec = nil

local function changed()
  vim.schedule(function()
    pcall(vim.api.nvim_exec_autocmds, "User", { pattern = "McpSidecarStatus", modeline = false })
    pcall(vim.cmd, "redrawstatus!")
  end)
end
M.changed = changed

---@param rows table[]
---@param silent? boolean do not announce (the caller is already showing them)
---@param profile? string|userdata the status's `profile` (vim.NIL or nil: none)
function M.set_servers(rows, silent, profile)
  M.profile = type(profile) == "string" and profile or nil
  M.servers = {}
  for _, row in ipairs(rows or {}) do
    M.servers[row.name] = row
  end
  if not silent then
    changed()
  end
end

---@param row table
---@return table? previous
function M.update_server(row)
  local previous = M.servers[row.name]
  M.servers[row.name] = row
  changed()
  return previous
end

---@param tools table[] tool definitions or candidates (with `id`)
function M.remember_tools(tools)
  for _, tool in ipairs(tools or {}) do
    if type(tool.id) == "string" then
      M.tool_ids[tool.id] = true
    end
  end
end

--- The session's active tools, from an `mcp/activeTools` answer; redraws the statusline when they changed.
---@param result table
function M.set_active(result)
  local active = {
    session = tostring(result.session),
    count = #(result.tools or {}),
    tokens = type(result.tokens) == "number" and result.tokens or nil,
  }
  if not vim.deep_equal(active, M.active) then
    M.active = active
    changed()
  end
end

---@return string[]
function M.server_names()
  local names = vim.tbl_keys(M.servers)
  table.sort(names)
  return names
end

---@return string[]
function M.tool_id_list()
  local ids = vim.tbl_keys(M.tool_ids)
  table.sort(ids)
  return ids
end

function M.set_sidecar(value)
  if M.sidecar ~= value then
    M.sidecar = value
    if value ~= "running" then
      M.servers = {}
      M.pending = {}
      M.command_spec = nil
      M.profile = nil
      M.active = nil
    end
    changed()
  end
end

return M
