--- mcp_sidecar: MCP servers in Neovim through the mcp-sidecar process.
--- The Lua API is asynchronous: every function takes `cb(err, result)`, called on the main
--- loop; `err` is nil or `{code, message, data = <diagnostic>}`.
local Client = require("mcp_sidecar.client")
local Config = require("mcp_sidecar.config")
local P = require("mcp_sidecar.protocol")
local State = require("mcp_sidecar.state")

local M = {}

---@param opts? mcp_sidecar.Config
function M.setup(opts)
  Config.setup(opts)
end

---@alias mcp_sidecar.Callback fun(err: mcp_sidecar.Error?, result: any)

local function session(opts)
  return (opts and opts.session) or Config.session
end

local function remember(cb)
  return function(err, result)
    if result then
      State.remember_tools(result.tools)
      State.remember_tools(result.candidates)
    end
    cb(err, result)
  end
end

--- Ranked search over tools, resources, templates and prompts (`mcp/discover`).
---@param query string
---@param opts? {kind?: "all"|"tools"|"resources"|"prompts", server?: string, limit?: integer, session?: string}
---@param cb mcp_sidecar.Callback
function M.discover(query, opts, cb)
  opts = opts or {}
  local params = { query = query, kind = opts.kind, server = opts.server, limit = opts.limit, session = session(opts) }
  Client.request(P.m.discover, params, remember(cb))
end

--- Activate exact tool ids (`server.tool`); the result holds their full schemas.
---@param ids string|string[]
---@param cb mcp_sidecar.Callback
---@param opts? {session?: string}
function M.activate(ids, cb, opts)
  ids = type(ids) == "string" and { ids } or ids
  Client.request(P.m.activate, { ids = ids, session = session(opts) }, remember(cb))
end

--- Call a tool, activating it first when it is not active in the session (the sidecar does
--- both: `mcp/callTool` with `activate`, exactly as `mcp/activate` would activate it). The call
--- carries a `workDoneToken`: its progress reaches vim.lsp's progress machinery (`LspProgress`).
---@param id string
---@param arguments? table
---@param cb mcp_sidecar.Callback
---@param opts? {session?: string, token?: string}
function M.call(id, arguments, cb, opts)
  local args = (arguments and next(arguments)) and arguments or vim.empty_dict()
  local token = (opts and opts.token) or require("mcp_sidecar.progress").token()
  local params = { id = id, arguments = args, session = session(opts), activate = true, workDoneToken = token }
  Client.request(P.m.call_tool, params, function(err, result)
    if err and err.data and err.data.nearby and #err.data.nearby > 0 then
      err.message = err.message .. " Did you mean: " .. table.concat(err.data.nearby, ", ") .. "?"
    end
    if result and result.activation then
      State.remember_tools({ result.activation })
    end
    cb(err, result)
  end)
end

--- Read a resource: `read(server, uri, cb)` or `read(server, {template = ..., arguments = {...}}, cb)`.
---@param server string
---@param target string|{template: string, arguments: table}
---@param cb mcp_sidecar.Callback
function M.read(server, target, cb)
  local params = { server = server }
  if type(target) == "table" then
    params.template, params.arguments = target.template, target.arguments
  else
    params.uri = target
  end
  Client.request(P.m.read, params, cb)
end

--- Complete an argument of a template or prompt (`mcp/complete`).
---@param params {server: string, template?: string, prompt?: string, argument: {name: string, value: string}, arguments?: table}
---@param cb mcp_sidecar.Callback
function M.complete(params, cb)
  Client.request(P.m.complete, params, cb)
end

--- Preview a prompt (`mcp/prompt/preview`); use or discard it with prompt_use / prompt_discard.
---@param server string
---@param name string
---@param arguments? table<string, string>
---@param cb mcp_sidecar.Callback
function M.prompt(server, name, arguments, cb)
  local args = (arguments and next(arguments)) and arguments or vim.empty_dict()
  Client.request(P.m.prompt_preview, { server = server, name = name, arguments = args }, cb)
end

---@param preview_id string
---@param cb mcp_sidecar.Callback
function M.prompt_use(preview_id, cb)
  Client.request(P.m.prompt_use, { previewId = preview_id }, cb)
end

---@param preview_id string
---@param cb? mcp_sidecar.Callback
function M.prompt_discard(preview_id, cb)
  Client.request(P.m.prompt_discard, { previewId = preview_id }, cb or function() end)
end

--- Run one `/mcp` command line (`mcp/command`), exactly as the sidecar documents it.
---@param line string
---@param cb mcp_sidecar.Callback
function M.command(line, cb)
  Client.request(P.m.command, { line = line }, cb)
end

--- Any protocol method, for what the helpers above do not cover.
---@param method string
---@param params? table
---@param cb mcp_sidecar.Callback
function M.request(method, params, cb)
  Client.request(method, params, cb)
end

--- Offer another folder to servers as a root (`workspace/didChangeWorkspaceFolders`), now and
--- on every restart of the sidecar. `vim.lsp.buf.add_workspace_folder()` does not reach the
--- sidecar: it is attached to no buffer.
---@param dir string
---@return boolean ok
---@return string? problem
function M.add_folder(dir)
  return require("mcp_sidecar.offer").add_folder(dir)
end

---@param dir string
---@return boolean ok
---@return string? problem
function M.remove_folder(dir)
  return require("mcp_sidecar.offer").remove_folder(dir)
end

--- The workspace folders of the current sidecar (paths), the root first.
---@return string[]
function M.folders()
  local client = Client.ensure()
  local out = {}
  for _, f in ipairs(client and client.workspace_folders or {}) do
    table.insert(out, f.name)
  end
  return out
end

---@type fun(snapshot: table, text: string): boolean?
local prompt_handlers = {}

--- Register a chat integration that takes accepted prompt snapshots. Return true from
--- `fn(snapshot, text)` to take it; otherwise the text goes to the configured register.
---@param fn fun(snapshot: table, text: string): boolean?
function M.on_prompt(fn)
  table.insert(prompt_handlers, fn)
end

---@private
function M._deliver_prompt(snapshot, text)
  for _, fn in ipairs(prompt_handlers) do
    local ok, taken = pcall(fn, snapshot, text)
    if ok and taken then
      return "handler"
    end
  end
  vim.fn.setreg(Config.prompt.register, text)
  return "register"
end

--- Ask again about project servers whose definitions changed on disk and wait for approval
--- (vim.ui.select per server, showing what it would run); `server` limits it to one.
---@param server? string
---@param cb? fun(count: integer) how many questions were asked
function M.review(server, cb)
  require("mcp_sidecar.approvals").review(server, cb)
end

--- Statusline component: "MCP ●2 ✘1 ⚿1 ⚠1 ⟳1 ⚙3 1,215 tok" (connected / failed / needs login /
--- waiting for approval / tool calls running / the session's active tools and what their definitions
--- cost a model's context, estimated), "MCP[review] ●2 ..." with a profile chosen, "" when the sidecar
--- is not running.
---@return string
function M.status()
  if State.sidecar == "missing" then
    return "MCP " .. Config.icons.failed .. " sidecar missing"
  end
  if State.sidecar ~= "running" then
    return ""
  end
  local connected, failed, logins, approvals, total = 0, 0, 0, 0, 0
  for _, row in pairs(State.servers) do
    total = total + 1
    if row.approvalRequired then
      approvals = approvals + 1
    elseif row.state == "connected" then
      connected = connected + 1
    elseif row.state == "failed" then
      failed = failed + 1
    elseif row.state == "needs_login" then
      logins = logins + 1 -- not a failure: `:Mcp login NAME` fixes it
    end
  end
  local text = ("MCP %s%d"):format(Config.icons.connected, connected)
  if failed > 0 then
    text = text .. (" %s%d"):format(Config.icons.failed, failed)
  end
  if logins > 0 then
    text = text .. (" %s%d"):format(Config.icons.login, logins)
  end
  if approvals > 0 then
    text = text .. (" %s%d"):format(Config.icons.approval, approvals)
  end
  if total == 0 then
    text = "MCP"
  end
  if State.profile then
    text = text:gsub("^MCP", "MCP[" .. State.profile .. "]", 1)
  end
  local running = #require("mcp_sidecar.progress").list()
  if running > 0 then
    text = text .. (" %s%d"):format(Config.icons.running, running)
  end
  local context = M.context()
  if context ~= "" then
    text = text .. " " .. context
  end
  return text
end

--- Statusline component of its own: "⚙3 1,215 tok", the session's active tools and their definitions'
--- estimated cost to a model's context (docs/context.md); "" with none active. status() ends with it.
---@return string
function M.context()
  return require("mcp_sidecar.context").status()
end

--- Ready-made `mcp_tools` definitions for chat plugins (see :h mcp_sidecar-chat).
M.tools = setmetatable({}, {
  __index = function(_, key)
    return require("mcp_sidecar.tools")[key]
  end,
})

return M
