--- What can be done with a search candidate: activate, show schema, call (tools); read
--- (resources, templates filled with completion); preview (prompts).
local Client = require("mcp_sidecar.client")
local P = require("mcp_sidecar.protocol")
local Scratch = require("mcp_sidecar.ui.scratch")

local M = {}

local function api()
  return require("mcp_sidecar")
end

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "mcp" })
end

local function fail(err, what)
  if Client.unsupported(err) then
    return notify(
      ("%s is not supported by this mcp-sidecar yet (%s). Update mcp-sidecar to use it."):format(what, err.message),
      vim.log.levels.WARN
    )
  end
  notify(Client.format_error(err), vim.log.levels.ERROR)
end
M.fail = fail

--- One line for a candidate, as the search lists it.
---@param c table
---@return string
function M.format(c)
  -- A weak candidate (neither keywords nor meaning vouch for it) says so before its description.
  local desc = (c.weak and " [weak match]" or "")
    .. (c.description and (" — " .. c.description:gsub("\n.*", "")) or "")
  if c.kind == "tool" then
    return ("%s %s(%s)%s"):format(c.loaded and "●" or "○", c.id, table.concat(c.required or {}, ", "), desc)
  elseif c.kind == "resource" then
    return ("▤ %s · %s%s"):format(c.server, c.uri, desc)
  elseif c.kind == "template" then
    return ("▦ %s · %s%s"):format(c.server, c.uriTemplate, desc)
  elseif c.kind == "prompt" then
    local args = {}
    for _, a in ipairs(c.arguments or {}) do
      table.insert(args, a.name .. (a.required and "" or "?"))
    end
    return ("✎ %s · %s(%s)%s"):format(c.server, c.name, table.concat(args, ", "), desc)
  end
  return vim.inspect(c)
end

--- The text of a tool result or resource contents.
---@param items table[] MCP content items or resource contents
---@return string
function M.content_text(items)
  local parts = {}
  for _, item in ipairs(items or {}) do
    if type(item.text) == "string" then
      table.insert(parts, item.text)
    elseif item.blob then
      table.insert(parts, ("[binary %s, %d bytes of base64]"):format(item.mimeType or "data", #item.blob))
    else
      table.insert(parts, Scratch.json(item))
    end
  end
  return table.concat(parts, "\n")
end

---@type table<string, fun(c: table, opts?: table)>
M.actions = {}

function M.actions.activate(c, opts)
  api().activate(c.id, function(err, result)
    if err then
      return fail(err, "Activation")
    end
    local row = result.results[1] or {}
    notify(("%s · %s%s"):format(c.id, row.status or "?", row.reason and (": " .. row.reason) or ""))
    if opts and opts.done then
      opts.done(result)
    end
  end)
end

function M.actions.schema(c, opts)
  Client.request(P.m.server_tools, { server = c.server }, function(err, result)
    if err then
      return fail(err, "Tool schemas")
    end
    for _, tool in ipairs(result.tools or {}) do
      if tool.id == c.id then
        local buf = Scratch.open("mcp://schema/" .. c.id, Scratch.json(tool), { filetype = "json" })
        if opts and opts.done then
          opts.done(buf)
        end
        return
      end
    end
    notify(c.id .. " is no longer in the catalog", vim.log.levels.WARN)
  end)
end

--- The tool's definition (with `inputSchema`): the candidate's own, else the server's catalog.
---@param c table
---@param cb fun(tool: table?)
local function tool_definition(c, cb)
  if type(c.inputSchema) == "table" then
    return cb(c)
  end
  if not c.server then
    return cb(nil)
  end
  Client.request(P.m.server_tools, { server = c.server }, function(err, result)
    if err then
      return cb(nil)
    end
    for _, tool in ipairs(result.tools or {}) do
      if tool.id == c.id then
        return cb(tool)
      end
    end
    cb(nil)
  end)
end

--- One JSON line, for a tool whose schema is not known.
---@param c table
---@param run fun(arguments: table)
local function json_arguments(c, run)
  local skeleton = {}
  for _, name in ipairs(c.required or {}) do
    table.insert(skeleton, ('"%s": ""'):format(name))
  end
  vim.ui.input(
    { prompt = c.id .. " arguments (JSON): ", default = "{" .. table.concat(skeleton, ", ") .. "}" },
    function(input)
      if not input then
        return
      end
      local ok, decoded = pcall(vim.json.decode, input == "" and "{}" or input)
      if not ok or type(decoded) ~= "table" then
        return notify("Arguments must be a JSON object", vim.log.levels.ERROR)
      end
      run(decoded)
    end
  )
end

--- Call a tool: with `opts.arguments` at once, else after the person filled in the form built
--- from its input schema (each argument asked in turn, required ones marked, defaults
--- pre-filled, then Submit in the float). A result that needs a browser step first
--- (`elicitation_required`) offers a retry; nothing is called again by itself.
---@param c table
---@param opts? {arguments?: table, done?: fun(buf: integer?), form?: fun(view: mcp_sidecar.FormView)}
function M.actions.call(c, opts)
  opts = opts or {}
  local function run(arguments)
    api().call(c.id, arguments, function(err, result)
      if err then
        return fail(err, "Calling tools")
      end
      local text = M.content_text(result.content)
      if text == "" and result.structuredContent then
        text = Scratch.json(result.structuredContent)
      end
      local retried = require("mcp_sidecar.retry").after_call(c.id, result, function()
        M.actions.call(c, { arguments = arguments, done = opts.done })
      end)
      if result.isError and not retried then
        notify(c.id .. " reported an error", vim.log.levels.WARN)
      end
      local buf = Scratch.open("mcp://call/" .. c.id, text)
      if opts.done then
        opts.done(buf)
      end
    end)
  end
  if opts.arguments then
    return run(opts.arguments)
  end
  tool_definition(c, function(tool)
    if not tool or type(tool.inputSchema) ~= "table" then
      return json_arguments(c, run)
    end
    local description = type(tool.description) == "string" and vim.split(tool.description, "\n")[1] or nil
    local form = require("mcp_sidecar.ui.form").open(tool.inputSchema, {
      title = "Call " .. c.id,
      message = description,
      empty = "(no arguments)",
    }, function(action, content)
      if action == "accept" then
        run(content)
      end
    end)
    if opts.form then
      opts.form(form)
    end
  end)
end

local function show_read(c, target, opts, label)
  api().read(c.server, target, function(err, result)
    if err then
      return fail(err, "Reading resources (mcp/read)")
    end
    local contents = result.contents or {}
    local is_json = false
    for i, item in ipairs(contents) do
      local mime = item.mimeType or ""
      if mime:find("json") then
        is_json = true
      end
      for _, d in ipairs(result.display or {}) do
        if d.index == i - 1 and d.format == "json" then
          contents[i] = vim.tbl_extend("force", item, { text = d.text })
          is_json = true
        end
      end
    end
    local text = M.content_text(contents)
    if result.truncated and result.spill then
      notify(("Truncated: the whole response is in %s"):format(result.spill.path), vim.log.levels.WARN)
    end
    local ft = (is_json or Scratch.is_json(text)) and "json" or nil
    local buf = Scratch.open("mcp://" .. c.server .. "/" .. label, text, { filetype = ft })
    if opts and opts.done then
      opts.done(buf)
    end
  end)
end

--- Ask for each variable in turn; offers the server's completions when it has any.
---@param c table
---@param names string[]
---@param kind "template"|"prompt"
---@param done fun(values: table<string, string>)
local function fill(c, names, kind, done)
  local values = {}
  local function ask(i)
    if i > #names then
      return done(values)
    end
    local name = names[i]
    local params = { server = c.server, argument = { name = name, value = "" }, arguments = values }
    params[kind] = kind == "template" and c.uriTemplate or c.name
    api().complete(params, function(err, result)
      local choices = (not err and result and result.values) or {}
      local function take(value)
        if value == nil then
          return
        end
        values[name] = value
        ask(i + 1)
      end
      if #choices > 0 then
        vim.ui.select(choices, { prompt = name .. ": " }, take)
      else
        vim.ui.input({ prompt = name .. ": " }, take)
      end
    end)
  end
  ask(1)
end

function M.actions.read(c, opts)
  if c.kind == "resource" then
    return show_read(c, c.uri, opts, c.uri)
  end
  local function go(values)
    show_read(c, { template = c.uriTemplate, arguments = values }, opts, c.uriTemplate)
  end
  if opts and opts.arguments then
    return go(opts.arguments)
  end
  fill(c, c.variables or {}, "template", go)
end

function M.actions.preview(c, opts)
  local function go(values)
    api().prompt(c.server, c.name, values, function(err, result)
      if err then
        return fail(err, "Prompt previews (mcp/prompt/preview)")
      end
      require("mcp_sidecar.ui.preview").open(result, opts)
    end)
  end
  if opts and opts.arguments then
    return go(opts.arguments)
  end
  local names = {}
  for _, a in ipairs(c.arguments or {}) do
    table.insert(names, a.name)
  end
  fill(c, names, "prompt", go)
end

M.by_kind = {
  tool = { "activate", "schema", "call" },
  resource = { "read" },
  template = { "read" },
  prompt = { "preview" },
}

--- Offer the actions of a candidate.
---@param c table
function M.choose(c)
  local names = M.by_kind[c.kind] or {}
  if #names == 1 then
    return M.actions[names[1]](c)
  end
  vim.ui.select(names, { prompt = M.format(c) }, function(choice)
    if choice then
      M.actions[choice](c)
    end
  end)
end

return M
