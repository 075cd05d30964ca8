--- The sidecar's `mcp_tools` model tool (discover → activate → call, deferred loading), in
--- the shapes CodeCompanion and avante.nvim register. The definition and every invocation
--- come from the sidecar (`mcp/modelTool/definition`, `mcp/modelTool/invoke`).
local Client = require("mcp_sidecar.client")
local Config = require("mcp_sidecar.config")
local P = require("mcp_sidecar.protocol")

local M = {}

local definition ---@type {name: string, description: string, inputSchema: table}?

--- The tool tables built below, with the keys they filled from the definition (weak: a chat
--- plugin that drops a table drops it here too).
local built = setmetatable({}, { __mode = "k" })

--- A reload changed the definition (`mcp/modelToolChanged`, its server directory): use the new
--- one, and let every tool table fill its fields again from it when next read.
---@param def table
function M.set_definition(def)
  if type(def) ~= "table" or type(def.description) ~= "string" then
    return
  end
  definition = def
  for t, keys in pairs(built) do
    for key in pairs(keys) do
      rawset(t, key, nil)
    end
    built[t] = {}
  end
end

--- The chat started over: end the session (`mcp/session/end`), so its activated tools and
--- pending prompt previews go and the next activation starts afresh.
---@param cb? fun(err: table?, result: table?)
function M.end_session(cb)
  Client.request(P.m.session_end, { session = Config.session }, function(err, result)
    if cb then
      cb(err, result)
    end
  end)
end

--- Fetch the definition in the background (the integrations below call it when built).
---@param cb? fun(def: table?)
function M.prefetch(cb)
  if definition then
    return cb and cb(definition)
  end
  Client.request(P.m.model_tool_definition, nil, function(_, result)
    definition = definition or result
    if cb then
      cb(definition)
    end
  end)
end

--- The tool definition. Chat plugins read tool tables synchronously, so when the background
--- fetch has not answered yet this waits for it (once, at most 10 s).
---@return {name: string, description: string, inputSchema: table}
function M.definition()
  if not definition then
    local err, result = Client.request_sync(P.m.model_tool_definition, nil, 10000)
    if err or not result then
      error("mcp_sidecar: could not get the mcp_tools definition: " .. (err and err.message or "no result"))
    end
    definition = result
  end
  return definition
end

--- A table whose definition-derived fields are filled in when first read.
---@param base table
---@param field fun(key: string, def: table): any
local function lazy(base, field)
  built[base] = {}
  return setmetatable(base, {
    __index = function(t, key)
      local value = field(key, M.definition())
      if value ~= nil then
        rawset(t, key, value)
        if built[t] then
          built[t][key] = true
        end
      end
      return value
    end,
  })
end

local ended_on_clear = false

--- CodeCompanion says when a chat is cleared or closed: the session ends with it. Every chat
--- shares `opts.session`, so the other chats' activated tools go too (they activate again).
local function end_session_with_codecompanion_chats()
  if ended_on_clear then
    return
  end
  ended_on_clear = true
  vim.api.nvim_create_autocmd("User", {
    group = vim.api.nvim_create_augroup("mcp_sidecar_chat_sessions", { clear = true }),
    pattern = { "CodeCompanionChatCleared", "CodeCompanionChatClosed" },
    callback = function()
      M.end_session()
    end,
  })
end

--- Invoke `mcp_tools` with what the model passed; `cb(text, is_error, details)`.
---@param arguments table
---@param cb fun(text: string, is_error: boolean, details: table?)
---@param opts? {session?: string}
function M.invoke(arguments, cb, opts)
  local params = { arguments = arguments or vim.empty_dict(), session = (opts and opts.session) or Config.session }
  Client.request(P.m.model_tool_invoke, params, function(err, result)
    if err then
      return cb(Client.format_error(err), true, err.data)
    end
    cb(result.text or "", result.isError == true, result.details)
  end)
end

--- Text for a prompt: control characters as spaces; bidirectional, zero-width and TAG
--- characters (which could disguise what is shown) removed.
---@param text string
---@return string
local function prompt_safe(text)
  text = text:gsub("\226\128[\139-\143\168-\174]", "")
  text = text:gsub("\226\129[\160-\175]", "")
  text = text:gsub("\239\187\191", "")
  text = text:gsub("\243\160[\128-\129][\128-\191]", "")
  return vim.trim((text:gsub("%c", " ")))
end

--- `mcp_call` for the model: call an activated tool by its exact id, after the person says yes
--- (`vim.ui.select`). The sidecar re-checks it against the live catalog and answers the result
--- as a model reads it (`mcp/callTool` with `forModel`). `cb(text, is_error)`.
---@param arguments table what the model passed: {id, arguments?}
---@param cb fun(text: string, is_error: boolean)
---@param opts? {session?: string}
function M.call(arguments, cb, opts)
  local id = type(arguments) == "table" and arguments.id or nil
  if type(id) ~= "string" or id == "" then
    return cb("mcp_call needs `id`: the exact id of a tool mcp_tools activated.", true)
  end
  local args = type(arguments.arguments) == "table" and arguments.arguments or vim.empty_dict()
  if next(args) == nil then
    args = vim.empty_dict()
  end
  local ok, shown = pcall(vim.json.encode, args)
  local prompt = ("The assistant wants to call the MCP tool %s with %s"):format(
    prompt_safe(id),
    prompt_safe(ok and shown or "?")
  )
  vim.ui.select({ "Call it", "Do not call it" }, { prompt = prompt }, function(choice)
    if choice ~= "Call it" then
      return cb(("The user declined the call of %s; do not retry it unasked."):format(id), true)
    end
    local params = {
      id = id,
      arguments = args,
      session = (opts and opts.session) or Config.session,
      forModel = true,
      workDoneToken = require("mcp_sidecar.progress").token(),
    }
    Client.request(P.m.call_tool, params, function(err, result)
      if err then
        return cb(("Calling %s failed: %s"):format(id, Client.format_error(err)), true)
      end
      cb(result.text or "", result.isError == true)
    end)
  end)
end

--- CodeCompanion v20+ calls output callbacks as (self, stdout, meta) with meta.tools.chat;
--- earlier versions as (self, tools, cmd, stdout) with tools.chat (or tools.agent.chat).
local function cc_output(self, a, b, c)
  local chat, out
  if c ~= nil then
    chat, out = a.chat or (a.agent and a.agent.chat), c
  else
    chat, out = b and b.tools and b.tools.chat, a
  end
  local text = type(out) == "table" and table.concat(vim.iter(out):flatten():totable(), "\n") or tostring(out)
  chat:add_tool_output(self, text)
end

--- A CodeCompanion tool named `name` that runs `run(args, done)`; `spec(def)` picks its
--- definition ({name, description, inputSchema}) out of the sidecar's.
---@param name string
---@param run fun(args: table, cb: fun(text: string, is_error: boolean))
---@param spec fun(def: table): table
local function cc_tool(name, run, spec)
  return lazy({
    name = name,
    cmds = {
      -- CodeCompanion v20+: function(self, args, opts) with opts.output_cb;
      -- earlier versions: function(self, args, input, output_handler).
      function(_, args, opts_or_input, output_handler)
        local done = type(opts_or_input) == "table" and opts_or_input.output_cb or output_handler
        run(args, function(text, is_error)
          done({ status = is_error and "error" or "success", data = text })
        end)
      end,
    },
    output = {
      success = function(self, ...)
        cc_output(self, ...)
      end,
      error = function(self, ...)
        cc_output(self, ...)
      end,
    },
  }, function(key, def)
    local tool = spec(def)
    if key == "schema" then
      return {
        type = "function",
        ["function"] = { name = tool.name, description = tool.description, parameters = tool.inputSchema },
      }
    elseif key == "system_prompt" then
      return tool.description
    end
  end)
end

local function mcp_tools_spec(def)
  return def
end

local function mcp_call_spec(def)
  return def.call or { inputSchema = {} }
end

--- A CodeCompanion tool: `strategies.chat.tools.mcp_tools = { callback = require("mcp_sidecar").tools.codecompanion(), description = "..." }`.
---@return table
function M.codecompanion()
  M.prefetch()
  end_session_with_codecompanion_chats()
  return cc_tool("mcp_tools", M.invoke, mcp_tools_spec)
end

--- The CodeCompanion `mcp_call` tool, beside `codecompanion()`: `mcp_call = { callback = require("mcp_sidecar").tools.codecompanion_call(), description = "..." }`.
---@return table
function M.codecompanion_call()
  M.prefetch()
  return cc_tool("mcp_call", M.call, mcp_call_spec)
end

local function avante_fields(def)
  local fields = {}
  for name, prop in pairs(def.inputSchema.properties or {}) do
    local kind = prop.type
    if type(kind) == "table" then
      kind = kind[1]
    end
    if kind == "array" or kind == "object" then
      kind = "table"
    end
    table.insert(
      fields,
      { name = name, description = prop.description or name, type = kind or "string", optional = true }
    )
  end
  table.sort(fields, function(a, b)
    return a.name < b.name
  end)
  return fields
end

--- An avante.nvim tool named `name` that runs `run(params, done)` (see `cc_tool`).
---@param name string
---@param returns table
---@param run fun(args: table, cb: fun(text: string, is_error: boolean))
---@param spec fun(def: table): table
local function avante_tool(name, returns, run, spec)
  return lazy({
    name = name,
    returns = returns,
    -- avante calls func(params, on_log, on_complete) (older) or func(params, opts) (newer).
    func = function(params, on_log_or_opts, on_complete)
      if type(on_log_or_opts) == "table" then
        on_complete = on_log_or_opts.on_complete
      end
      run(params, function(text, is_error)
        if is_error then
          on_complete(nil, text)
        else
          on_complete(text, nil)
        end
      end)
    end,
  }, function(key, def)
    local tool = spec(def)
    if key == "description" then
      return tool.description
    elseif key == "param" then
      return { type = "table", fields = avante_fields(tool) }
    end
  end)
end

--- An avante.nvim custom tool: `custom_tools = function() return { require("mcp_sidecar").tools.avante() } end`.
---@return table
function M.avante()
  M.prefetch()
  return avante_tool("mcp_tools", {
    { name = "result", description = "What mcp_tools answered", type = "string" },
    { name = "error", description = "Set when the operation failed", type = "string", optional = true },
  }, M.invoke, mcp_tools_spec)
end

--- The avante.nvim `mcp_call` tool, beside `avante()`.
---@return table
function M.avante_call()
  M.prefetch()
  return avante_tool("mcp_call", {
    { name = "result", description = "What the tool answered", type = "string" },
    { name = "error", description = "Set when the call failed or was declined", type = "string", optional = true },
  }, M.call, mcp_call_spec)
end

return M
