--- Tool calls in flight: `mcp/callTool` carries a `workDoneToken` and the sidecar reports the call
--- on it with LSP `$/progress` (begin, a report per server progress notification, end). vim.lsp's
--- own handler does the rest (`LspProgress` autocommands, `vim.lsp.status()`, fidget.nvim and
--- statusline components); this keeps the running ones for `:Mcp`, the statusline and `:checkhealth`.
local State = require("mcp_sidecar.state")
local Text = require("mcp_sidecar.text")

local M = {}
local uv = vim.uv or vim.loop

---@class mcp_sidecar.Running
---@field token string
---@field title string the tool id
---@field message? string
---@field percentage? number
---@field started integer

---@type table<string, mcp_sidecar.Running>
M.running = {}
local count = 0

--- A fresh token for one call.
---@return string
function M.token()
  count = count + 1
  return ("mcp_sidecar/%d/%d"):format(vim.fn.getpid(), count)
end

--- Follow one `$/progress` notification.
---@param params {token: string|integer, value: table}
function M.track(params)
  if type(params) ~= "table" or type(params.value) ~= "table" then
    return
  end
  local token, value = tostring(params.token), params.value
  if value.kind == "begin" then
    M.running[token] = { token = token, title = Text.one_line(value.title or "?"), started = uv.now() }
  end
  local entry = M.running[token]
  if not entry then
    return
  end
  if value.kind == "end" then
    M.running[token] = nil
  else
    if type(value.message) == "string" then
      entry.message = Text.one_line(value.message)
    end
    if type(value.percentage) == "number" then
      entry.percentage = value.percentage
    end
  end
  State.changed()
end

--- The `$/progress` handler: ours, then vim.lsp's.
function M.handler(err, params, ctx)
  M.track(params)
  return vim.lsp.handlers["$/progress"](err, params, ctx)
end

---@return mcp_sidecar.Running[] oldest first
function M.list()
  local out = vim.tbl_values(M.running)
  table.sort(out, function(a, b)
    return a.started < b.started
  end)
  return out
end

--- One line for a running call: `everything.long 40% · step 2 of 5`.
---@param entry mcp_sidecar.Running
---@return string
function M.describe(entry)
  local text = entry.title
  if entry.percentage then
    text = ("%s %d%%"):format(text, entry.percentage)
  end
  if entry.message and entry.message ~= "" then
    text = text .. " · " .. entry.message
  end
  return text
end

--- The sidecar stopped: nothing of it runs any more.
function M.clear()
  if next(M.running) then
    M.running = {}
    State.changed()
  end
end

return M
